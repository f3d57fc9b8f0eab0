"""An invariant is declared once, and every user of it reads that
declaration.

Invariant: an invariant registered in one module (here, this one, by a
fixture that registers and unregisters it) is checked by expectations,
added to every sweep case, accepted by the scenario schema (and its
name refused once it is gone), written into the generated scenario
reference and into an exported test's FIXME comment -- with nothing
else declared anywhere.
"""

import pathlib
import sys

import pytest

from faultdriver import exception
from faultdriver import export
from faultdriver.scenario import expect
from faultdriver.scenario import invariants
from faultdriver.scenario import model
from faultdriver.scenario import specs
from faultdriver.sweep import cases
from tests import runstates

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / 'doc' / 'source' / '_ext'))

from faultdriver_docs import generate  # noqa: E402

NAME = 'dummy-holds'
DESCRIPTION = 'the dummy should hold, a sentence no other text has'


def _check(steps, state, servers=None):
    """Broken when a server is named ``s-broken``."""
    found = sorted(alias for alias in state.servers if alias == 's-broken')
    return not found, 'the dummy holds', found or 'all fine'


def _export(writer):
    return invariants.NovaForm((), 'self._dummy_breakers(%s)'
                               % writer.server_dict(), '[]')


@pytest.fixture
def dummy():
    invariant = invariants.register(invariants.Invariant(
        NAME, DESCRIPTION, _check, _export,
        details='Declared by tests/unit/test_invariant_registry.py.'))
    yield invariant
    invariants.unregister(NAME)


SCENARIO = '''\
name: t
description: F99 (test) the dummy breaks.
topology: {hosts: [src, dest]}
variants:
  stock: {description: stock, expect: bug}
steps:
  - boot: {server: s1, host: src}
  - live-migrate: {server: s1, host: dest}
  - wait-migration: {server: s1, status: completed}
expectations:
  - %s: {broken: true}
''' % NAME


def test_expectations_check_it(dummy):
    state = {'migrations': [], 'hosts': {}, 'faults': [],
             'servers': {'s-broken': {'status': 'ACTIVE', 'host': 'src',
                                      'task_state': None}}}
    [held, broken] = expect.evaluate(None, [
        specs.ExpectationSpec(NAME, {}),
        specs.ExpectationSpec(NAME, {'broken': True})],
        runstates.state(state))
    assert (held.met, held.expectation, held.actual) == (
        False, 'the dummy holds', ['s-broken'])
    assert (broken.met, broken.expectation) == (True,
                                                'BROKEN: the dummy holds')


def test_every_sweep_case_gets_it(dummy):
    workflow = model.load('live-migration')
    case = cases.Case('pre_live_migration', 'dest', 'before', 'crash')
    data = cases.case_scenario(workflow, case)
    assert {NAME: {}} in data['expectations']
    model.validate(data, 'case.yaml')


def test_the_schema_accepts_it_while_registered(tmp_path, dummy):
    path = tmp_path / 't.yaml'
    path.write_text(SCENARIO)
    scenario = model.load(str(path))
    assert [e.kind for e in scenario.common_expectations()] == [NAME]
    # Its arguments are what it declares: none but broken.
    path.write_text(SCENARIO.replace('{broken: true}', '{servers: 3}'))
    with pytest.raises(exception.ScenarioError) as raised:
        model.load(str(path))
    assert NAME in str(raised.value)


def test_the_schema_refuses_it_once_unregistered(tmp_path):
    path = tmp_path / 't.yaml'
    path.write_text(SCENARIO)
    with pytest.raises(exception.ScenarioError) as raised:
        model.load(str(path))
    assert NAME in str(raised.value)


def test_the_generated_reference_describes_it(dummy):
    pages = generate.stale()
    text = ''.join(t for p, t in pages.items()
                   if p.name == 'scenario-reference.rst')
    assert '\n%s\n%s\n' % (NAME, '-' * len(NAME)) in text
    assert 'Invariant: %s. Declared by' % DESCRIPTION in text


def test_the_exported_fixme_says_it(tmp_path, dummy):
    path = tmp_path / 't.yaml'
    path.write_text(SCENARIO)
    stock = export.export(str(path))
    comments = ' '.join(line.strip().lstrip('#').strip()
                        for line in stock.splitlines()
                        if line.strip().startswith('#'))
    assert 'FIXME(faultdriver): this is the bug (F99): %s.' % DESCRIPTION \
        in comments
    assert 'self.assertNotEqual([], self._dummy_breakers(' in stock
    fixed = export.export(str(path), fixed=True)
    assert 'self.assertEqual([], self._dummy_breakers(' in fixed


def test_a_name_is_registered_once(dummy):
    with pytest.raises(ValueError):
        invariants.register(dummy)
