"""The variant report is one declared record: every runner builds it the
same way, it round-trips through JSON, and what reads it back checks it
(a malformed report is named, never rendered half)."""

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
        assert read == json.load(stream)


def test_a_worker_report_missing_or_malformed_is_an_internal_error(
        tmp_path):
    out = tmp_path / 'out.json'
    missing = worker.read(str(out), 'v', 'eventlet', 'embedded', 'died')
    assert missing['internal_error'] == 'died'
    out.write_text(json.dumps({'variant': 'v', 'mode': 'eventlet',
                               'wall_seconds': 'x'}), encoding='utf-8')
    bad = worker.read(str(out), 'v', 'eventlet', 'embedded', 'died')
    assert bad['internal_error'].startswith(
        'the worker wrote a malformed report: the report of variant v.'
        'wall_seconds is str')
