"""tests.golden: what a golden report comparison masks and what it
still sees (a comparison that masked everything could never fail)."""

import copy
import json
import os

from tests import golden

RUN = os.path.join(os.path.dirname(__file__), '..', 'functional', 'data',
                   'seed-report.golden.json')
SWEEP = os.path.join(os.path.dirname(__file__), '..', 'functional', 'data',
                     'sweep-ab.golden.json')
SERVER = '4f25175c-f191-4aa9-8eaa-af366a46cfe5'
MIGRATION = 'ae3cccc8-b3f2-4bac-a36a-2f5b77eb2b31'


def run(server=SERVER, migration=MIGRATION, when=1796570329.18):
    """A small run document in the shape ``scenario run -f json``
    writes."""
    return {
        'scenario': 'seed', 'file': '/work/x/seed.yaml',
        'mode': 'threading', 'exit_code': 0,
        'verdicts': {'stock': 'bug reproduced'},
        'variants': {'stock': {
            'variant': 'stock', 'mode': 'threading',
            'timeline': [{'index': 1, 'step': 'wait-migration server=s1',
                          'start': 0.81, 'seconds': 0.09, 'status': 'ok',
                          'detail': 'migration 1 (%s) error'
                          % migration[:8]}],
            'state': {
                'migrations': [{'server': 's1', 'id': 1, 'uuid': migration,
                                'status': 'error',
                                'created_at': '2026-12-06T15:18:48.88'}],
                'hosts': {'src': {'allocations': {
                    server: {'PCPU': 2},
                    'b0000000-0000-4000-8000-000000000000': {'PCPU': 1}}}},
                'faults': [{'kind': 'fault', 'time': when, 'hit': 1}],
                'servers': {'s1': {'id': server, 'status': 'ACTIVE'}},
            },
            'expectations': [{'kind': 'faults', 'met': True, 'actual': 1,
                              'seconds': 0.0}],
            'steps_started_at': when - 1, 'wall_seconds': 9.5,
            'cpu_seconds': {'setup': 1.9, 'steps': 3.6},
            'verdict': 'bug reproduced'}}}


def test_what_differs_per_run_is_masked():
    other = run(server='11111111-2222-4333-8444-555555555555',
                migration='99999999-2222-4333-8444-555555555555',
                when=1800000000.0)
    other['mode'] = other['variants']['stock']['mode'] = 'eventlet'
    other['file'] = '/elsewhere/seed.yaml'
    other['variants']['stock']['wall_seconds'] = 12.0
    # The cloud's order of a host's consumers is not the run's.
    allocations = other['variants']['stock']['state']['hosts']['src'][
        'allocations']
    allocations.update(reversed(list(allocations.items())))
    assert golden.differences(golden.dumps(run()), other) == []


def test_names_stay_readable():
    text = golden.dumps(run())
    assert '<server stock/s1>' in text
    assert 'migration 1 (<migration stock/s1#1>) error' in text
    assert '<time>' in text and '<seconds>' in text
    assert SERVER not in text and MIGRATION[:8] not in text


def changed(edit):
    doc = run()
    edit(doc['variants']['stock'])
    return golden.differences(golden.dumps(run()), doc)


def test_a_value_the_run_decides_is_seen():
    assert changed(lambda r: r.update(verdict='ok'))
    assert changed(lambda r: r['state']['migrations'][0].update(
        status='completed'))
    assert changed(lambda r: r['expectations'][0].update(actual=2))


def test_the_shape_is_seen():
    # A key renamed, dropped, added, reordered or retyped.
    assert changed(lambda r: r['state'].update(
        hosts_end=r['state'].pop('hosts')))
    assert changed(lambda r: r['expectations'][0].pop('seconds'))
    assert changed(lambda r: r.update(compute_log=None))
    assert changed(lambda r: r['state'].update(
        migrations=r['state'].pop('migrations')))
    assert changed(lambda r: r['expectations'][0].update(actual='1'))
    assert changed(lambda r: r['timeline'][0].update(index=1.0))


def test_the_golden_report_is_normalised():
    """The saved golden file is what ``dumps`` makes of itself (nothing
    left unmasked in it), and a deep copy compares equal."""
    with open(RUN, encoding='utf-8') as saved:
        text = saved.read()
    doc = json.loads(text)
    assert golden.dumps(copy.deepcopy(doc)) == text
    assert golden.UUID.search(text) is None


def sweep(results='/tmp/sweep-x1', verdict='expectations not met',
          wall=53.9):
    """A small A/B sweep document in the shape ``faultdriver sweep --ab
    -f json`` writes, its results under ``results``."""
    def side(name, broken):
        return {'results': '%s/%s' % (results, name), 'mode': 'threading',
                'cases': [{'id': 'pre_live_migration.before@dest:crash',
                           'verdict': verdict, 'broken': broken,
                           'scenario': '%s/%s/cases/case-x.yaml'
                           % (results, name),
                           'seconds': 13.2,
                           'step_seconds': {'settle': 1.1}}],
                'findings': [{'invariant': b, 'known': 'F1',
                              'scenario': '%s/%s/findings/%s-x.yaml'
                              % (results, name, b)} for b in broken],
                'wall_seconds': wall}
    return {'format_version': 2, 'a': side('a', ['periodics-clean']),
            'b': side('b', []), 'ab': {'removed': [{'known': 'F1'}]}}


def test_a_sweeps_results_directory_and_times_are_masked():
    text = golden.sweep_dumps(sweep(), '/tmp/sweep-x1')
    assert '/tmp/sweep-x1' not in text
    assert '"<results>/a/findings/periodics-clean-x.yaml"' in text
    assert golden.differences(text, sweep('/var/tmp/other', wall=80.0),
                              '/var/tmp/other') == []


def test_a_sweeps_verdict_or_finding_changed_is_seen():
    text = golden.sweep_dumps(sweep(), '/tmp/sweep-x1')
    assert golden.differences(text, sweep(verdict='ok'), '/tmp/sweep-x1')
    other = sweep()
    other['a']['cases'][0]['broken'] = ['periodics-clean',
                                        'moves-again']
    assert golden.differences(text, other, '/tmp/sweep-x1')
    other = sweep()
    other['ab']['removed'][0]['known'] = None
    assert golden.differences(text, other, '/tmp/sweep-x1')
    # A file of a case renamed is seen, its directory is not.
    other = sweep()
    other['a']['cases'][0]['scenario'] = '/tmp/sweep-x1/a/cases/y.yaml'
    assert golden.differences(text, other, '/tmp/sweep-x1')


def test_the_golden_sweep_is_normalised():
    with open(SWEEP, encoding='utf-8') as saved:
        text = saved.read()
    doc = json.loads(text)
    assert golden.sweep_dumps(copy.deepcopy(doc), '/nowhere') == text
    assert golden.UUID.search(text) is None and '/tmp/' not in text
    assert [c['verdict'] for c in doc['a']['cases']] == [
        'expectations not met'] * 2
