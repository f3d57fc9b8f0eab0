"""An error after the expectations were checked still fails the run.

A variant whose expectations were all met but whose run then raised (a
cleanup, collecting state) cannot be trusted: its verdict is ``internal
error``, ``scenario run`` exits 3 and the text report shows the error
below the tables.  The variant reports come from a recorded run
(tests/unit/data/stale-context-run.json).
"""

import copy
import json
import os
from unittest import mock

from faultdriver.cmd import main
from faultdriver.scenario import launch
from faultdriver.scenario import report as report_module
from faultdriver.scenario import variant_report

RUN = os.path.join(os.path.dirname(__file__), 'data',
                   'stale-context-run.json')
ERROR = ('Traceback (most recent call last):\n'
         'RuntimeError: cleanup failed after the expectations\n')


def recorded(late_error=None):
    with open(RUN, encoding='utf-8') as stream:
        variants = json.load(stream)['variants']
    reports = {}
    for name, variant in variants.items():
        variant = copy.deepcopy(variant)
        variant.pop('verdict', None)
        if late_error and name == 'fix':
            variant['internal_error'] = late_error
        reports[name] = variant_report.VariantReport.from_json(variant)
    return reports


def test_met_expectations_then_an_error_is_an_internal_error():
    reports = recorded(ERROR)
    assert all(e.met for e in reports['fix'].expectations)
    assert reports['fix'].verdict == 'internal error'
    assert reports['stock'].verdict == 'bug reproduced'


def test_text_report_shows_the_late_error_with_the_tables():
    text = report_module.text(recorded(ERROR))
    fix = text[text.index('Variant fix'):]
    assert 'Expectations' in fix
    assert 'RuntimeError: cleanup failed after the expectations' in fix
    assert 'INTERNAL ERROR' in fix


def test_scenario_run_exits_3(capsys):
    for late_error, code in ((None, main.EXIT_OK),
                             (ERROR, main.EXIT_INTERNAL)):
        with mock.patch.object(launch, 'run', autospec=True,
                               return_value=recorded(late_error)):
            assert main.FaultDriverApp().run(
                ['scenario', 'run', 'stale-error-migration-context',
                 '-f', 'value']) == code
        out, _err = capsys.readouterr()
        assert ('fix internal error' in out) == bool(late_error)


def test_the_progress_line_says_what_went_wrong_before_the_traceback(capfd):
    """A log cut to a few lines around 'internal error' (CI's summary
    of a failed stage) still shows why: the traceback's last line comes
    first, on the marker's own line."""
    from faultdriver.scenario import play
    play.progress_internal_error(
        'fix', 'Traceback (most recent call last):\n  File "x.py"\n'
        '    raise\n'
        'PartFailed: nova-compute src did not start: it exited\n'
        'The logs of the stack that did not start are kept in /tmp/k\n')
    lines = capfd.readouterr().err.splitlines()
    assert lines[0] == ('[fix] internal error: PartFailed: nova-compute src '
                        'did not start: it exited The logs of the stack '
                        'that did not start are kept in /tmp/k')
    assert lines[1] == 'Traceback (most recent call last):'
