"""Two runs of a scenario on two tiers compared field by field after
masking (faultdriver.cloud.compare): what may differ between two correct
runs is masked, each with its why; anything else that differs is found,
named by its path."""

import json

from faultdriver.cloud import compare

UUID = '6a5269a4-1b2c-4d3e-8f90-0123456789ab'
OTHER = 'f79013ec-aaaa-4bbb-8ccc-dddddddddddd'


def run(backend, server_id, seconds, migrations, fault_host='dest'):
    return {'scenario': 'seed', 'exit_code': 0, 'variants': {'stock': {
        'backend': backend, 'wall_seconds': seconds,
        'topology': {'src': {'host': backend}},
        'timeline': [{'index': 1, 'step': 'wait-migration', 'start': seconds,
                      'seconds': 1.5, 'status': 'ok',
                      'detail': 'migration 1 (%s) error' % server_id[:8]}],
        'state': {'servers': {'s1': {'id': server_id, 'host': 'src'}},
                  'migrations': migrations,
                  'hosts': {'dest': {'allocations': {server_id: {'PCPU': 2}}}},
                  'faults': [{'kind': 'fault', 'host': fault_host,
                              'time': seconds, 'instance': server_id,
                              'rule_index': 7}]},
        'verdict': 'bug reproduced'}}}


def test_runs_that_differ_only_in_masked_fields_are_equal():
    a = run('process', UUID, 84.4, [{'id': 1, 'status': 'error'}])
    b = run('cloud', OTHER, 90.8, [{'id': 12, 'status': 'error'}])
    assert compare.differences(compare.masked(a), compare.masked(b)) == []


def test_a_difference_outside_the_masks_is_found_by_its_path():
    a = run('process', UUID, 84.4, [{'id': 1, 'status': 'error'}])
    b = run('cloud', OTHER, 90.8, [{'id': 12, 'status': 'completed'}],
            fault_host='src')
    assert compare.differences(compare.masked(a), compare.masked(b)) == [
        'variants.stock.state.faults[0].host: "dest" != "src"',
        'variants.stock.state.migrations[0].status: "error" != "completed"']


def test_masked_keys_keep_how_many_there_are():
    # Placement's allocations by consumer uuid: masked alike, not merged.
    a = run('process', UUID, 1, [])
    b = run('cloud', OTHER, 1, [])
    b['variants']['stock']['state']['hosts']['dest']['allocations'][
        UUID] = {'PCPU': 2}
    assert compare.differences(compare.masked(a), compare.masked(b)) == [
        'variants.stock.state.hosts.dest.allocations.<uuid>: '
        '[{"PCPU": 2}] != [{"PCPU": 2}, {"PCPU": 2}]']


def test_a_missing_step_or_field_is_a_difference():
    a = run('process', UUID, 1, [])
    b = run('cloud', UUID, 1, [])
    b['variants']['stock']['timeline'] = []
    del b['variants']['stock']['verdict']
    found = compare.differences(compare.masked(a), compare.masked(b))
    assert found[0].startswith('variants.stock.timeline: [')
    assert found[1] == 'variants.stock.verdict: only in the first'


def test_every_mask_says_why():
    assert all(why.strip() for why in compare.MASKED_KEYS.values())
    assert all(why.strip() for _p, _r, why in compare.MASKED_TEXTS)


def test_the_command_exits_1_on_a_difference_2_on_a_bad_file(tmp_path,
                                                             capsys):
    a, b, bad = (tmp_path / n for n in ('a.json', 'b.json', 'bad.json'))
    a.write_text(json.dumps(run('process', UUID, 1, [])))
    b.write_text(json.dumps(run('cloud', OTHER, 2, [])))
    assert compare.main([str(a), str(b)]) == 0
    b.write_text(json.dumps(run('cloud', OTHER, 2, [], fault_host='src')))
    assert compare.main([str(a), str(b)]) == 1
    assert 'faults[0].host' in capsys.readouterr().out
    bad.write_text('{"variants": []}')
    assert compare.main([str(a), str(bad)]) == 2
    assert '%s: key variants' % bad in capsys.readouterr().err


def sweep(cases, clean_broken=None):
    return {'workflow': 'live-migration', 'backend': 'x',
            'clean_run': {'verdict': 'expectations not met',
                          'broken': clean_broken} if clean_broken else None,
            'cases': [{'id': case, 'verdict': verdict, 'broken': broken,
                       'internal_error': False, 'not_reached': None,
                       'seconds': 60.0, 'details': [{'actual': case}]}
                      for case, verdict, broken in cases]}


CASES = [('pre_live_migration.before@dest:crash', 'expectations not met',
          ['periodics-clean', 'outcome-after-failure']),
         ('live_migration.before@src:raise', 'ok', [])]


def test_two_sweeps_compare_by_their_cases_verdicts(tmp_path, capsys):
    """Sweeps compare by case: same ids, verdicts and broken invariants
    (in any order) are equal whatever their timings and details; a case
    with another verdict, or only in one sweep, is a difference."""
    same = [(i, v, list(reversed(b))) for i, v, b in CASES]
    assert compare.differences(compare.verdicts(sweep(CASES)),
                               compare.verdicts(sweep(same))) == []
    other = [CASES[0], (CASES[1][0], 'expectations not met',
                        ['servers-settled'])]
    paths = [tmp_path / 'a.json', tmp_path / 'b.json']
    for path, doc in zip(paths, (sweep(CASES), sweep(other))):
        path.write_text(json.dumps(doc))
    assert compare.main([str(p) for p in paths]) == 1
    said = capsys.readouterr().out
    assert "cases.live_migration.before@src:raise.verdict: " \
        '"ok" != "expectations not met"' in said
    assert compare.differences(
        compare.verdicts(sweep(CASES)),
        compare.verdicts(sweep(CASES[:1], ['servers-settled']))) == [
        'cases.live_migration.before@src:raise: only in the first',
        'clean_run: [] != ["servers-settled"]']


def test_a_sweep_is_not_compared_with_a_scenario_run(tmp_path, capsys):
    paths = [tmp_path / 'a.json', tmp_path / 'b.json']
    paths[0].write_text(json.dumps(sweep(CASES)))
    paths[1].write_text(json.dumps(run('cloud', UUID, 1.0, [])))
    assert compare.main([str(p) for p in paths]) == 2
    assert 'expected two of a kind' in capsys.readouterr().err


def test_sweeps_whose_cases_did_not_run_are_not_equal(tmp_path, capsys):
    """Two sweeps whose case errored on both tiers have equal verdicts;
    a case that did not run is never an equality."""
    doc = sweep(CASES[:1])
    doc['cases'][0].update(verdict='internal error', internal_error=True)
    paths = [tmp_path / 'a.json', tmp_path / 'b.json']
    for path in paths:
        path.write_text(json.dumps(doc))
    assert compare.main([str(p) for p in paths]) == 1
    said = capsys.readouterr().out
    assert '%s: case %s did not run (internal error)' % (
        paths[0], CASES[0][0]) in said
