"""``faultdriver GROUP --help`` (scenario, ctl, sweep) says what each of
the group's commands does; a command's own --help is unchanged.

Invariant: every command of the group is listed with the first sentence
of its docstring (cliff printed a bare list of names).
"""

import pytest

from faultdriver.cmd import main
from faultdriver.cmd import scenario


def run(capsys, *argv):
    code = main.FaultDriverApp().run(list(argv))
    out, _err = capsys.readouterr()
    return code, out


@pytest.mark.parametrize('argv', [['scenario', '--help'],
                                  ['help', 'scenario']])
def test_a_group_lists_its_commands_with_what_they_do(capsys, argv):
    code, out = run(capsys, *argv)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith('faultdriver scenario: one of these commands')
    listed = {line.split()[1]: line for line in lines[1:]}
    assert sorted(listed) == ['list', 'report', 'run', 'show']
    assert listed['run'].endswith(
        "Run a scenario's variants on an embedded Nova (or real processes) "
        'and report.')
    assert listed['list'].endswith(scenario.ScenarioList.__doc__.strip())


def test_a_command_keeps_its_own_help(capsys):
    code, out = run(capsys, 'scenario', 'run', '--help')
    assert code == 0
    assert 'usage: ' in out and '--no-html' in out
