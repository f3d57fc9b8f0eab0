"""The scenario loader: bundled files load, wrong ones are rejected with a
message naming the file, the key path and what was expected."""

import copy

import pytest
import yaml

from faultdriver import exception
from faultdriver.scenario import model

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
    data = copy.deepcopy(VALID)
    *parents, last = path
    node = data
    for key in parents:
        node = node[key]
    if value is KeyError:
        del node[last]
    else:
        node[last] = value
    return data


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
]


@pytest.mark.parametrize('data, message', INVALID,
                         ids=[m[:40] for _d, m in INVALID])
def test_invalid_scenario(data, message):
    with pytest.raises(exception.ScenarioError) as caught:
        model.validate(data, 'bad.yaml')
    assert str(caught.value).startswith('bad.yaml: ')
    assert message in str(caught.value)


def test_unreadable_yaml_names_the_file(tmp_path):
    path = tmp_path / 'broken.yaml'
    path.write_text('name: [unclosed\n')
    with pytest.raises(exception.ScenarioError, match='broken.yaml: cannot '
                       'read'):
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
