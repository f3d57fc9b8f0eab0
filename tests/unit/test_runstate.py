"""The run's records (faultdriver.scenario.runstate): a saved run reads
back into them and writes the same JSON; what does not fit a record is
refused naming the key."""

import json
import os
import re

import pytest

from faultdriver.scenario import runstate

GOLDEN = os.path.join(os.path.dirname(__file__), '..', 'functional', 'data',
                      'seed-report.golden.json')


def _numbers(value):
    """The golden report with its masked times and durations numbers
    again (the records hold numbers there)."""
    if isinstance(value, dict):
        return {k: 1.5 if k in ('time', 'start', 'seconds') and
                isinstance(v, str) else _numbers(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_numbers(v) for v in value]
    return value


def golden_reports():
    """The seed run's reports, as saved for the golden test."""
    with open(GOLDEN, encoding='utf-8') as stream:
        return _numbers(json.load(stream)['variants'])


@pytest.mark.parametrize('variant', ['stock', 'fix'])
def test_a_run_round_trips_key_for_key(variant):
    report = golden_reports()[variant]
    state = runstate.RunState.from_json(report['state'])
    assert json.dumps(state.to_json()) == json.dumps(report['state'])
    for key, record in (('timeline', runstate.TimelineEntry),
                        ('expectations', runstate.ExpectationResult)):
        read = [record.from_json(item, key) for item in report[key]]
        assert json.dumps([r.to_json() for r in read]) == json.dumps(
            report[key])


def test_records_are_frozen():
    entry = runstate.TimelineEntry(index=1, step='boot', start=0.0,
                                   status='ok', seconds=0.1, detail='')
    with pytest.raises(AttributeError):
        entry.status = 'failed'


@pytest.mark.parametrize('change, message', [
    (lambda s: s['servers']['s1'].pop('status'),
     "state.servers.s1 has no 'status'"),
    (lambda s: s['migrations'][0].update(id='1'),
     'state.migrations[0].id is str, not int'),
    (lambda s: s['hosts']['src'].update(matches=1),
     'state.hosts.src.matches is int, not bool'),
    (lambda s: s.update(move_end={'src': {'pinned_cpus': []}}),
     "state.move_end.src has no 'placement_pcpu'"),
])
def test_what_does_not_fit_is_refused_naming_the_key(change, message):
    state = golden_reports()['stock']['state']
    change(state)
    with pytest.raises(ValueError, match=re.escape(message)):
        runstate.RunState.from_json(state)


def test_a_result_saved_before_kinds_and_timings_writes_back_as_it_was():
    old = {'expectation': 'faults == 1', 'met': True, 'actual': 1}
    result = runstate.ExpectationResult.from_json(old, 'e')
    assert result.kind is None and result.to_json() == old
    step = {'index': 1, 'step': 'boot server=s1 host=src', 'start': 0.0,
            'status': 'ok', 'seconds': 0.5, 'detail': ''}
    assert runstate.TimelineEntry.from_json(step, 't').to_json() == step


#: The modules that read a run (collect.py reads the backend's API
#: views, the contract's, into the records).
READERS = ('expect.py', 'facts.py', 'report.py', 'timeline.py',
           'variant_report.py', 'htmlreport.py', 'play.py', 'launch.py') + \
    tuple(os.path.join('invariants', name) for name in (
        'attachments.py', 'ended.py', 'outcome.py', 'pcpus.py',
        'periodics.py', 'placement.py', 'tasks.py', 'usable.py'))
#: A key read of a report, the run state or one of its records (the
#: names these modules give them).
KEYED = re.compile(r"""\b(?:state|report|entry|result|verdict|counted|
                       fault|m|s|f|e|v|r)(?:\[['"]|\.get\(['"])""", re.X)


def test_the_run_is_read_by_field_not_by_key():
    """Issue 39 counted 36 string-keyed reads of the run state in these
    modules; the records leave none (a dict slipping back in shows
    here)."""
    folder = os.path.join(os.path.dirname(runstate.__file__))
    found = []
    for name in READERS:
        with open(os.path.join(folder, name), encoding='utf-8') as source:
            for number, line in enumerate(source, 1):
                if KEYED.search(line):
                    found.append('%s:%d: %s' % (name, number, line.strip()))
    assert found == []
