"""The scenario loader: bundled files load, wrong ones are rejected with a
message naming the file, the key path and what was expected."""

import copy
import pathlib
import textwrap

import pytest
import yaml

from faultdriver import exception
from faultdriver.scenario import model
from tests.unit import badinput

VALID = {
    'name': 'tiny',
    'description': 'A server boots and live-migrates.',
    'topology': {'hosts': ['src', 'dest'], 'pinned': True},
    'variants': {'stock': {}, 'fix': {'patches': ['stale_migration_context'],
                                      'expect': 'ok'}},
    'steps': [{'boot': {'server': 's1', 'host': 'src'}},
              {'live-migrate': {'server': 's1', 'host': 'dest'}},
              {'wait-migration': {'server': 's1', 'status': 'completed'}}],
    'expectations': [{'server': {'server': 's1', 'host': 'dest'}}],
}


def changed(path, value):
    return badinput.changed(VALID, path, value)


@pytest.mark.parametrize('name', sorted(model.bundled()))
def test_bundled_scenarios_load(name):
    scenario = model.load(name)
    assert scenario.name == name
    assert scenario.steps and scenario.variants


def test_valid_scenario():
    scenario = model.validate(copy.deepcopy(VALID), 'tiny.yaml')
    assert scenario.hosts == ['src', 'dest']
    assert scenario.patches('fix') == ['stale_migration_context']
    assert not scenario.expects_bug('stock')
    assert len(scenario.expectations('fix')) == 1


INVALID = [
    (changed(['name'], KeyError), "(top level): 'name' is a required"),
    (changed(['steps', 1], {'live-migrat': {'server': 's1'}}),
     "steps[1]: unknown key 'live-migrat'; did you mean 'live-migrate'?"),
    (changed(['steps', 1], {'boot': {'server': 's2'},
                            'periodic': {'host': 'src'}}),
     'steps[1]: expected exactly one key, the kind'),
    (changed(['steps', 0, 'boot', 'host'], 3),
     "steps[0].boot.host: 3 is not of type 'string'"),
    (changed(['steps', 1, 'live-migrate', 'host'], 'dst'),
     "steps[1].live-migrate.host: unknown host 'dst'; did you mean "
     "'dest'?; the topology has src, dest"),
    (changed(['steps', 1, 'live-migrate', 'server'], 's9'),
     "steps[1].live-migrate.server: server 's9' is not booted by an "
     "earlier step; booted so far: s1"),
    (changed(['steps', 1], {'add-rule': {'host': 'dest',
                                         'rule': 'pre_live_migrate: crash'}}),
     "steps[1].add-rule.rule: invalid rule:"),
    (changed(['variants', 'fix', 'patches'], ['stale_context']),
     "variants.fix.patches[0]: unknown tracker fix 'stale_context'"),
    (changed(['variants', 'fix', 'expect'], 'maybe'),
     "variants.fix.expect: 'maybe' is not one of ['ok', 'bug']"),
    (changed(['expectations', 0], {'log': {'count': 1}}),
     "expectations[0].log: 'text' is a required property"),
    (changed(['steps', 0, 'boot', 'flavor'], 'huge'),
     "steps[0].boot.flavor: unknown flavor 'huge'"),
    # Topology: CPU sets Nova would refuse, on each host's own CPUs.
    (changed(['topology', 'per-host'], {'dest': {'cpu_dedicated_set':
                                                 '2-5'}}),
     "topology.per-host.dest.cpu_dedicated_set: '2-5' names CPU 4, 5, "
     "which host dest does not have: its CPUs are 0-3 (cpu_nodes 1 x "
     "cpu_sockets 1 x cpu_cores 4 x cpu_threads 1)"),
    (changed(['topology', 'per-host'], {'dst': {'cpu_cores': 2}}),
     "topology.per-host.dst: unknown host 'dst'; did you mean 'dest'?"),
    (changed(['topology', 'defaults'], {'cpu_dedicated_set': '0-1',
                                        'cpu_shared_set': '1-3'}),
     "topology.defaults.cpu_shared_set: host src: CPUs [1] are in both "
     "cpu_dedicated_set and cpu_shared_set"),
    (changed(['topology', 'per-host'], {'src': {'cpu_shared_set': '3',
                                                'cpu_dedicated_set': '0-2'}}),
     "topology.per-host.src.cpu_shared_set: cpu_shared_set is set for src "
     "but not for dest: the embedded Nova can vary its value per host, "
     "not whether it is set"),
    (changed(['topology', 'defaults'], {'cpu_dedicated_set': '0-x'}),
     "topology.defaults.cpu_dedicated_set: Invalid range expression "
     "'0-x'"),
    (changed(['topology', 'defaults'], {'cpu_dedicated_set': '0-1,^0-1'}),
     "topology.defaults.cpu_dedicated_set: '0-1,^0-1' leaves no CPU"),
    (changed(['topology', 'defaults'], {'cpu_nodes': 2, 'cpu_cores': 8}),
     "topology: host src has 16 CPUs (cpu_nodes 2 x cpu_sockets 1 x "
     "cpu_cores 8 x cpu_threads 1); the embedded Nova allows at most 15"),
    (changed(['topology', 'defaults'], {'memory_mb': 100}),
     "topology.defaults.memory_mb: 100 is less than the minimum of 1024"),
    # The step kinds of moves and host failures.
    (changed(['steps', 1], {'evacuate': {'server': 's2'}}),
     "steps[1].evacuate.server: server 's2' is not booted"),
    (changed(['steps', 1], {'abort': {'server': 's1', 'index': 0}}),
     "steps[1].abort.index: 0 is less than the minimum of 1"),
    (changed(['steps', 1], {'stop': {'host': 'source'}}),
     "steps[1].stop.host: unknown host 'source'"),
    (changed(['steps', 1], {'stop': {}}),
     "steps[1].stop: 'host' is a required property"),
    (changed(['steps', 1], {'force-down': {'host': 'src', 'down': 'yes'}}),
     "steps[1].force-down.down: 'yes' is not of type 'boolean'"),
    (changed(['steps', 1], {'boot': {'server': 's2', 'status': 'BUILD'}}),
     "steps[1].boot.status: 'BUILD' is not one of ['ACTIVE', 'ERROR', "
     "'ACTIVE-OR-ERROR']"),
]


@pytest.mark.parametrize('data, message', INVALID,
                         ids=[m[:40] for _d, m in INVALID])
def test_invalid_scenario(data, message):
    with pytest.raises(exception.ScenarioError) as caught:
        model.validate(data, 'bad.yaml')
    assert str(caught.value).startswith('bad.yaml: ')
    assert message in str(caught.value)


def test_host_shapes():
    data = changed(['topology', 'per-host'], {'dest': {
        'cpu_nodes': 2, 'cpu_cores': 3, 'cpu_dedicated_set': '1-2,4-5'}})
    shapes = model.validate(data, 'tiny.yaml').host_shapes()
    assert shapes['src'] == model.PINNED_HOST
    assert shapes['dest'] == model.PINNED_HOST.replace(
        cpu_nodes=2, cpu_cores=3, cpu_dedicated_set='1-2,4-5')
    unpinned = changed(['topology'], {})
    assert model.validate(unpinned).host_shapes() == {
        'src': model.NOVA_HOST, 'dest': model.NOVA_HOST}
    assert not model.validate(unpinned).dedicated_cpus


def test_one_host_shape_type_for_every_tier():
    """The model, the embedded harness and the process tier share one
    shape type and one default memory (fakelibvirt's)."""
    from nova.tests.fixtures import libvirt as fakelibvirt

    from faultdriver.harness import topology
    from faultdriver import hostshape
    from faultdriver.process import runner
    assert topology.HostShape is hostshape.HostShape
    assert topology.PINNED == model.PINNED_HOST
    assert model.NOVA_HOST == hostshape.HostShape()
    default_kb = fakelibvirt.HostInfo().kB_mem
    assert hostshape.DEFAULT_MEMORY_MB == default_kb // 1024
    settings = runner.host_settings(model.NOVA_HOST)['fake_numa']
    assert settings['memory_mb_per_cell'] * settings['cells'] == \
        hostshape.DEFAULT_MEMORY_MB


def test_unreadable_yaml_names_the_file(tmp_path):
    path = tmp_path / 'broken.yaml'
    path.write_text('name: [unclosed\n')
    with pytest.raises(exception.ScenarioError, match='broken.yaml: not '
                       'valid YAML: .*line 2'):
        model.load(str(path))


def test_unknown_scenario_name_suggests():
    with pytest.raises(exception.ScenarioError,
                       match="did you mean 'bug-1879878'"):
        model.load('bug-187987')


def test_schema_documents_every_step_and_expectation():
    defs = model.schema()['$defs']
    for kind in ('step', 'expectation'):
        for name, spec in defs[kind]['properties'].items():
            assert spec.get('description'), '%s %s' % (kind, name)


def test_file_round_trip(tmp_path):
    path = tmp_path / 'tiny.yaml'
    path.write_text(yaml.safe_dump(VALID))
    assert model.load(str(path)).data == VALID


def test_docs_example_is_valid():
    """The scenarios page's minimal scenario loads (it is what users
    copy)."""
    page = pathlib.Path(__file__).parents[2] / 'doc/source/scenarios.rst'
    lines = page.read_text(encoding='utf-8').splitlines()
    start = lines.index('    name: refuse-live-migration')
    block = []
    for line in lines[start:]:
        if line and not line.startswith('    '):
            break
        block.append(line)
    scenario = model.validate(yaml.safe_load(textwrap.dedent(
        '\n'.join(block))), 'doc/source/scenarios.rst')
    assert scenario.host_shapes()['dest'].cpu_nodes == 2
    assert scenario.patches('fix') == ['stale_migration_context']


def test_a_variant_names_its_nova_tree_relative_to_the_file(tmp_path):
    """``nova-tree`` is resolved against the scenario file and normalised,
    so a run given the same tree by another spelling is not refused, and
    one given another tree is (launch._tree)."""
    from faultdriver.scenario import launch
    data = yaml.safe_load(open(model.load('live-migration').path))
    data['variants'] = {'mine': {'description': 'my branch',
                                 'nova-tree': '../src/nova'}}
    (tmp_path / 'scenarios').mkdir()
    path = tmp_path / 'scenarios' / 'mine.yaml'
    path.write_text(yaml.safe_dump(data))
    scenario = model.load(str(path))
    tree = str(tmp_path / 'src' / 'nova')
    assert scenario.nova_tree('mine') == tree
    assert launch._tree(scenario, 'mine', None) == tree
    assert launch._tree(scenario, 'mine', tree + '/.') == tree
    with pytest.raises(exception.ScenarioError,
                       match='variant mine of .* names its own nova-tree'):
        launch._tree(scenario, 'mine', str(tmp_path / 'other'))
