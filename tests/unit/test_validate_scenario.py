"""``faultdriver validate`` takes scenario and workflow files too.

Invariants: a scenario file (``.yaml``, or a bundled name) is checked as
``scenario run`` checks it before anything starts -- bad input is exit
2 naming the file and the key, nothing started -- and on success the
kind of file it took is said (a scenario, or a sweep workflow: steps
that end in ``recover``) and its rules are listed in canonical form; a
nova.conf is checked as before (tests/unit/test_devstack_plugin.py,
test_input_novaconf.py).
"""

import pytest
import yaml

from tests.unit import badinput

SCENARIO = {
    'name': 'mine', 'description': 'a user scenario',
    'rules': {'dest': ['pre_live_migration: 1*crash']},
    'variants': {'stock': {}},
    'expectations': [{'log': {'text': 'CPUPinningInvalid', 'count': 0}}],
    'steps': [{'boot': {'server': 's1', 'host': 'src'}},
              {'live-migrate': {'server': 's1', 'host': 'dest'}}]}


def write(tmp_path, data, name='mine.yaml'):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(path)


def test_a_scenario_is_checked_and_named(tmp_path, capsys):
    path = write(tmp_path, SCENARIO)
    code, out, err = badinput.cli(capsys, 'validate', path, '-f', 'value')
    assert code == 0, err
    assert out == '%s pre_live_migration: 1*crash\n' % path
    assert '%s: a valid scenario (mine: 1 variant, 2 steps)' % path in err


def test_a_workflow_is_named_so(tmp_path, capsys):
    data = dict(SCENARIO, steps=SCENARIO['steps'] + [{'settle': {}},
                                                     {'recover': {}}])
    path = write(tmp_path, data)
    code, _out, err = badinput.cli(capsys, 'validate', path)
    assert code == 0, err
    assert '%s: a valid sweep workflow (mine: 1 variant, 4 steps)' % (
        path) in err


def test_a_bundled_name_is_a_scenario(capsys):
    code, _out, err = badinput.cli(capsys, 'validate', 'live-migration')
    assert code == 0, err
    assert 'live-migration: a valid sweep workflow' in err


@pytest.mark.parametrize('change, message', [
    ({'steps': [{'bot': {'server': 's1'}}]},
     "steps[0]: unknown key 'bot'; did you mean 'boot'?"),
    ({'rules': {'dest': ['pre_live_migraton: crash']}},
     "rules.dest[0]: invalid rule: rule 'pre_live_migraton: crash' at "
     "column 1: unknown point 'pre_live_migraton'; did you mean "
     "'pre_live_migration'?"),
    ({'expectations': [{'log': {'text': 'CPUPinningInvaild', 'count': 0}}]},
     "expectations[0].log.text: 'CPUPinningInvaild' is logged by neither"),
    ({'variants': {'stock': {'nova-patches': ['missing.diff']}}},
     ': variants.stock: Nova change '),
    # A text only the variant's change would log, which is not there.
    ({'variants': {'stock': {'nova-patches': ['missing.diff'],
                             'expectations': [{'log': {
                                 'text': 'Frobnicated', 'count': 0}}]}}},
     'variants.stock.expectations[0].log.text'),
])
def test_bad_input_is_exit_2_naming_the_key(tmp_path, capsys, change,
                                            message):
    path = write(tmp_path, dict(SCENARIO, **change))
    before = badinput.tree(tmp_path)
    code, out, err = badinput.cli(capsys, 'validate', path)
    assert code == 2, err
    assert out == ''
    assert message in err, err
    assert err.startswith(path), err
    assert badinput.tree(tmp_path) == before
