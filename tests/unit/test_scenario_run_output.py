"""What ``scenario run`` hands the user (the variants' reports come from
a recorded run of the seed, tests/unit/data/stale-context-run.json; the
CLI around them is real).

Invariants: the text report starts with the scenario's description; an
HTML page is written by default, NAME.html in the current directory,
and its path is the last line (stderr); ``--no-html`` writes none, and
neither do the machine formats unless ``--html`` asks; a current
directory that cannot take the page does not refuse the run (the page
goes to the temporary directory).
"""

import os
from unittest import mock

import pytest

from faultdriver.cmd import main
from faultdriver.cmd import scenario as scenario_cmd
from faultdriver.scenario import launch
from faultdriver.scenario import model

from tests.unit import test_late_internal_error as recorded_run

SEED = 'stale-error-migration-context'


def run(*args):
    with mock.patch.object(launch, 'run', autospec=True,
                           return_value=recorded_run.recorded()):
        return main.FaultDriverApp().run(['scenario', 'run', SEED] +
                                         list(args))


def test_the_text_report_says_what_the_bug_is_and_where_the_page_is(
        tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert run() == main.EXIT_OK
    out, err = capsys.readouterr()
    first = ' '.join(model.load(SEED).description.split())[:60]
    assert out.startswith('Scenario %s\n\n' % SEED)
    assert first in ' '.join(out[:2000].split())
    assert ("shows the bug: 'CPUPinningInvalid' logged 2 times"
            in out)
    page = tmp_path / ('%s.html' % SEED)
    assert err.strip().splitlines()[-1] == 'HTML report: %s' % page
    text = page.read_text(encoding='utf-8')
    assert text.startswith('<!DOCTYPE html>')
    assert 'shows the bug' in text


@pytest.mark.parametrize('args', [['--no-html'], ['-f', 'json'],
                                  ['-f', 'value']])
def test_no_page_when_told_or_for_a_program(tmp_path, monkeypatch, capsys,
                                            args):
    monkeypatch.chdir(tmp_path)
    assert run(*args) == main.EXIT_OK
    _out, err = capsys.readouterr()
    assert list(tmp_path.iterdir()) == []
    assert 'HTML report' not in err


def test_html_and_no_html_together_are_bad_input(tmp_path, capsys):
    assert run('--no-html', '--html', str(tmp_path / 'x.html')) == \
        main.EXIT_BAD_INPUT
    assert '--no-html and --html' in capsys.readouterr().err


def test_a_directory_that_cannot_take_the_page_does_not_refuse(tmp_path):
    missing = tmp_path / 'gone'
    path = scenario_cmd.default_html(SEED, str(missing))
    assert path == os.path.join(os.path.dirname(path), SEED + '.html')
    assert not path.startswith(str(missing))
    assert scenario_cmd.default_html(SEED, str(tmp_path)) == str(
        tmp_path / (SEED + '.html'))
