"""The registry of tiers (faultdriver.scenario.tiers) is the one list of
them: the schema, the command line, the prerequisites and the process
stack read it, its values agree with the Nova each tier configures, and
no other module spells the list again."""

import importlib.util
import pathlib
import re

import pytest

from faultdriver import exception
from faultdriver.process import config
from faultdriver.process import stack
from faultdriver.scenario import model
from faultdriver.scenario import prereqs
from faultdriver.scenario import tiers
from faultdriver.sweep import cases

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_every_runner_module_exists():
    for tier in tiers.TIERS.values():
        assert importlib.util.find_spec(tier.runner[0]), tier.name


def test_comparisons_name_tiers():
    for names in tiers.COMPARED.values():
        assert names and set(names) <= set(tiers.NAMES)
    assert not set(tiers.COMPARED) & set(tiers.NAMES)
    assert tiers.compared('both') == ('embedded', 'process')
    assert tiers.compared('libvirt') == ('libvirt',)


def test_an_unknown_tier_names_the_choices():
    with pytest.raises(ValueError, match="tier 'proces': expected one of "
                       'embedded, process, libvirt'):
        tiers.get('proces')


def test_rpc_timeouts_are_the_novas_the_tiers_configure():
    from faultdriver.harness import embedded
    assert tiers.get('embedded').rpc_timeout == \
        embedded.EmbeddedNova.RPC_TIMEOUT
    for name in tiers.with_processes():
        assert tiers.get(name).rpc_timeout == \
            config.TIMINGS['rpc_response_timeout']


@pytest.mark.parametrize('name', tiers.NAMES)
def test_a_sweep_delay_outlasts_the_rpc_timeout(name):
    tier = tiers.get(name)
    assert tier.delay > tier.rpc_timeout
    case = cases.Case('pre_live_migration', 'dest', 'before', 'delay')
    assert case.rule(name) == 'pre_live_migration.before: 1*delay(%d)' \
        % tier.delay


def test_prerequisites_are_groups_of_needs():
    groups = {need.tier for need in prereqs.NEEDS}
    assert prereqs.TIERS == ('process', 'libvirt')
    for name in prereqs.TIERS:
        assert set(tiers.get(name).prerequisites) <= groups
    assert {need.tier for need in prereqs.needs('process')} == {'process'}


def test_each_process_tier_has_its_hypervisor():
    assert stack.HYPERVISORS == ('fake_numa', 'libvirt')
    for name in tiers.with_processes():
        tier = tiers.get(name)
        assert tiers.of_hypervisor(tier.hypervisor) is tier
    with pytest.raises(ValueError, match="hypervisor 'qemu': expected one "
                       'of fake_numa, libvirt'):
        tiers.of_hypervisor('qemu')


def test_the_schema_takes_its_backends_from_the_registry():
    assert model.schema()['$defs']['tier']['enum'] == list(tiers.NAMES)
    data = {'name': 'n', 'description': 'd', 'backends': ['qemu'],
            'steps': [{'periodic': {'host': 'src'}}],
            'variants': {'v': {}}}
    with pytest.raises(exception.ScenarioError,
                       match=r"backends\[0\]: 'qemu' is not one of "
                       r"\['embedded', 'process', 'libvirt', 'cloud'\]"):
        model.validate(data)


#: Two tier names in a row, quoted as a list or tuple spells them.
LISTED = re.compile(r"""['"](embedded|process|libvirt)['"],\s*"""
                    r"""['"](embedded|process|libvirt)['"]""")


def test_no_other_module_lists_the_tiers():
    found = [str(path.relative_to(ROOT))
             for path in (ROOT / 'faultdriver').rglob('*.py')
             if LISTED.search(path.read_text(encoding='utf-8'))]
    assert found == ['faultdriver/scenario/tiers.py']
