"""The variant report is one declared record: every runner builds it the
same way, it round-trips through JSON, and what reads it back checks it
(a malformed report is named, never rendered half)."""

import dataclasses
import json
import os
import re

import pytest

from faultdriver.scenario import model
from faultdriver.scenario import rundoc
from faultdriver.scenario import variant_report
from faultdriver.scenario import worker

FIXTURE = os.path.join(os.path.dirname(__file__), 'data',
                       'stale-context-run.json')
Report = variant_report.VariantReport


def test_begin_fills_what_every_report_has_and_round_trips():
    scenario = model.load('stale-error-migration-context')
    report = Report.begin(scenario, 'fix', 'threading', 'process')
    data = report.to_json()
    assert data['backend'] == 'process' and data['mode'] == 'threading'
    assert data['patches'] == ['stale_migration_context']
    assert data['nova'] is None and 'started' not in data
    assert Report.from_json(json.loads(json.dumps(data))) == report


def test_a_report_that_could_not_run_says_why():
    data = Report.failed('stock', 'eventlet', 'libvirt',
                         scenario_error='bad').to_json()
    assert data == {'variant': 'stock', 'mode': 'eventlet',
                    'backend': 'libvirt', 'nova': None, 'expect': 'ok',
                    'patches': [], 'timeline': [], 'step_failed': None,
                    'scenario_error': 'bad', 'internal_error': None}


@pytest.mark.parametrize('change, message', [
    ({'colour': 'red'}, 'report has unknown fields colour'),
    ({'wall_seconds': 'slow'}, 'report.wall_seconds is str, not int or '
                               'float'),
    ({'backend': 'vmware'}, "report.backend 'vmware'; expected one of"),
    ({'state': {'faults': [{'time': 1, 'host': 'src', 'point': 'spawn',
                            'kind': 'nap'}]}},
     "report.state.faults[0]: journal entry kind 'nap'"),
])
def test_a_malformed_report_is_refused_by_field(change, message):
    data = dict(Report.failed('stock', 'eventlet', 'embedded').to_json(),
                **change)
    with pytest.raises(ValueError, match=re.escape(message)):
        Report.from_json(data)


def test_a_run_saved_before_kinds_and_backends_still_reads(tmp_path):
    with open(FIXTURE, encoding='utf-8') as stream:
        doc = json.load(stream)
    for report in doc['variants'].values():
        del report['backend']
        for fault in report['state']['faults']:
            if fault.pop('kind') == 'periodic':
                fault['event'] = 'periodic'
    old = tmp_path / 'old.json'
    old.write_text(json.dumps(doc), encoding='utf-8')
    read = rundoc.load(str(old))
    with open(FIXTURE, encoding='utf-8') as stream:
        saved = json.load(stream)
    assert {name: report.to_json() for name, report in
            read['variants'].items()} == {
        name: Report.from_json(report).to_json()
        for name, report in saved['variants'].items()}
    assert [r.verdict for r in read['variants'].values()] == [
        r['verdict'] for r in saved['variants'].values()]


def test_a_worker_report_missing_or_malformed_is_an_internal_error(
        tmp_path):
    out = tmp_path / 'out.json'
    missing = worker.read(str(out), 'v', 'eventlet', 'embedded', 'died')
    assert missing.internal_error == 'died'
    assert missing.verdict == 'internal error'
    out.write_text(json.dumps({'variant': 'v', 'mode': 'eventlet',
                               'wall_seconds': 'x'}), encoding='utf-8')
    bad = worker.read(str(out), 'v', 'eventlet', 'embedded', 'died')
    assert bad.internal_error.startswith(
        'the worker wrote a malformed report: the report of variant v.'
        'wall_seconds is str')


def _ran(expect='ok', met=(True,), **fields):
    """A report that ran its steps, its expectations ``met``."""
    with open(FIXTURE, encoding='utf-8') as stream:
        data = json.load(stream)['variants']['stock']
    report = Report.from_json(data)
    report.expect = expect
    report.expectations = report.expectations[:len(met)]
    report.expectations = [
        dataclasses.replace(e, met=m)
        for e, m in zip(report.expectations, met)]
    for name, value in fields.items():
        setattr(report, name, value)
    return report


@pytest.mark.parametrize('report, verdict', [
    (lambda: _ran(), 'ok'),
    (lambda: _ran(met=(True, False)), 'expectations not met'),
    (lambda: _ran(expect='bug'), 'bug reproduced'),
    (lambda: _ran(expect='bug', met=(False,)), 'bug not reproduced'),
    (lambda: _ran(step_failed='boot'), 'step failed'),
    (lambda: _ran(internal_error='late'), 'internal error'),
    (lambda: Report.failed('v', 'eventlet', 'embedded', internal_error='x'),
     'internal error'),
])
def test_the_verdict_is_the_reports_own(report, verdict):
    report = report()
    assert report.verdict == verdict
    data = report.to_json()
    # Written last, where the launcher used to add it; read back the same.
    assert list(data)[-1] == 'verdict' and data['verdict'] == verdict
    assert Report.from_json(json.loads(json.dumps(data))).verdict == verdict


def test_a_saved_verdict_is_not_read_over_the_reports_own():
    data = _ran().to_json()
    data['verdict'] = 'bug reproduced'
    assert Report.from_json(data).verdict == 'ok'


def test_a_run_read_back_is_written_byte_for_byte(tmp_path):
    """``scenario report -f json`` of a run writes what ``scenario run -f
    json`` wrote (the verdict last, as the launcher puts it)."""
    from faultdriver.cmd import scenario as scenario_cmd

    def written(path):
        return json.dumps(scenario_cmd.as_json(rundoc.load(str(path))),
                          indent=2, default=str)
    first = tmp_path / 'first.json'
    first.write_text(written(FIXTURE), encoding='utf-8')
    assert written(first) == first.read_text(encoding='utf-8')
    for report in json.loads(first.read_text())['variants'].values():
        assert list(report)[-1] == 'verdict'
