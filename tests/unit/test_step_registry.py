"""A step kind registered in one module is seen by every user of step
kinds.

Invariant: a kind registered here (by a fixture that registers and
unregisters it) is accepted by the scenario schema (and refused once it
is gone), carried out by the interpreter, refused on a tier that lacks
what its ``run`` declares it needs (naming the step), written into the
generated scenario reference and by the exporter with its own export.
"""

import pathlib
import sys

import pytest

from faultdriver import exception
from faultdriver import export
from faultdriver.scenario import model
from faultdriver.scenario import specs
from faultdriver.scenario import stepkinds
from faultdriver.scenario import steps as steps_module
from faultdriver.scenario import tiers

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / 'doc' / 'source' / '_ext'))

from faultdriver_docs import generate  # noqa: E402

NAME = 'dummy-note'
DESCRIPTION = 'Note a text in the run, a sentence no other text has.'


@tiers.needs(on_guest=tiers.Provision.REAL_HYPERVISOR)
def _run(steps, text, on_guest=False):
    steps.periodics.append(('note', text))
    return 'noted %s' % text


def _export(writer, where, text, on_guest=False):
    writer.comment('The scenario notes %s here.' % text)


@pytest.fixture
def dummy():
    kind = stepkinds.register(stepkinds.StepKind(NAME, _run, {
        'description': DESCRIPTION, 'type': 'object',
        'additionalProperties': False, 'required': ['text'],
        'properties': {'text': {'type': 'string', 'maxLength': 100},
                       'on-guest': {'type': 'boolean'}}}, _export))
    yield kind
    stepkinds.unregister(NAME)


SCENARIO = '''\
name: t
description: a scenario with a registered step.
topology: {hosts: [src, dest]}
variants:
  stock: {description: stock}
steps:
  - boot: {server: s1, host: src}
  - %s: {text: hello%s}
expectations:
  - servers-settled: {}
'''


def _write(tmp_path, extra=''):
    path = tmp_path / 't.yaml'
    path.write_text(SCENARIO % (NAME, extra))
    return str(path)


def test_the_schema_accepts_it_while_registered(tmp_path, dummy):
    scenario = model.load(_write(tmp_path))
    assert [s.kind for s in scenario.steps] == ['boot', NAME]
    with pytest.raises(exception.ScenarioError, match='unknown key'):
        model.load(_write(tmp_path, ', colour: red'))


def test_the_schema_refuses_it_once_unregistered(tmp_path):
    with pytest.raises(exception.ScenarioError, match=NAME):
        model.load(_write(tmp_path))


def test_a_bundled_kinds_name_is_refused():
    stepkinds.register(stepkinds.StepKind('boot', _run, {}))
    try:
        with pytest.raises(ValueError, match="'boot'"):
            model.schema()
    finally:
        stepkinds.unregister('boot')


def test_the_interpreter_runs_it(dummy):
    steps = steps_module.Steps(None, None, 'stock')
    done = steps.run(specs.StepSpec(NAME, {'text': 'hello'}))
    assert done == 'noted hello'
    assert steps.periodics == [('note', 'hello')]


def test_a_tier_lacking_what_it_needs_refuses_it(tmp_path, dummy):
    scenario = model.read(_write(tmp_path, ', on-guest: true'))
    with pytest.raises(exception.ScenarioError) as raised:
        model.check_tier(scenario, 'embedded')
    assert 'steps[1].%s' % NAME in str(raised.value)
    assert 'real hypervisor' in str(raised.value)


def test_the_generated_reference_describes_it(dummy):
    text = ''.join(t for p, t in generate.stale().items()
                   if p.name == 'scenario-reference.rst')
    assert DESCRIPTION in text


def test_the_exporter_writes_its_lines(tmp_path, dummy):
    assert '# The scenario notes hello here.' in export.export(
        _write(tmp_path))
