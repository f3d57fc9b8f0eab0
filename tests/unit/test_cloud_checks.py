"""What makes a compute unusable for the cloud tier, from its own
``ctl status``: each refusal names the host (its SSH target) and the
fact; advice is said, not refused."""

import pytest

from faultdriver.cloud import checks
from faultdriver.cloud import profile

HOST = profile.HostProfile(
    alias='dest', ssh='fd-b', host='compute-b', nodename='node-b',
    manager='systemd', unit='u', socket='/run/fd.sock', journal='/j',
    log=('file', '/l'), start_rules='/r')

GOOD = {'host': 'compute-b', 'nodenames': ['node-b'], 'rpc_started': True,
        'nova_version': '34.0.0', 'rules': 0, 'held': {},
        'settings': {'report_interval': 2, 'debug': True,
                     'rpc_response_timeout': 8}}


def facts(**changed):
    return [(r.host, r.fact) for r in checks.refusals(HOST,
                                                      dict(GOOD, **changed))]


def test_a_good_compute_is_not_refused():
    assert facts() == []
    assert checks.dirt(HOST, GOOD) == []


@pytest.mark.parametrize('changed, fact', [
    ({'rpc_started': None, 'nodenames': None}, checks.NOT_FAULTDRIVER),
    ({'nova_version': '33.0.2'}, checks.NOT_NOVA_34),
    ({'host': 'compute-c'}, checks.HOST_MISMATCH),
    ({'nodenames': ['node-c']}, checks.NODENAME_MISMATCH),
])
def test_each_refusal_names_the_host_and_the_fact(changed, fact):
    assert facts(**changed) == [('fd-b', fact)]


def test_what_a_run_left_is_dirt():
    status = dict(GOOD, rules=2, held={'away': 1}, timer=False,
                  tracker_fixes=['stale_migration_context'],
                  start_rules={'run_id': 'r1', 'deadline': 0,
                               'tracker_patches': [
                                   'stale_migration_context']})
    assert checks.dirt(HOST, status, start_rules_left=True) == [
        '2 rules armed', 'barriers held: away=1', 'timer periodic off',
        "fixes stale_migration_context from run r1's start rules",
        'start rules file /r waits']
    # Fixes nova.conf gives (no start-rules file) are the cloud's own.
    assert checks.dirt(HOST, dict(GOOD, tracker_fixes=['x'])) == []
    refused = checks.dirty(HOST, checks.dirt(HOST, status))
    assert (refused.host, refused.fact) == ('fd-b', checks.DIRTY)
    assert 'cloud restore' in str(refused)


def test_slow_timings_no_debug_and_skew_are_advice():
    reading = checks.Reading(dict(GOOD, settings={
        'report_interval': 120, 'debug': False}), offset=7.5)
    said = checks.advice(HOST, reading)
    assert 'service_down_time' in said[0] and '720s' in said[0]
    assert 'debug = True' in said[1]
    assert '+7.5s' in said[2]
    assert checks.advice(HOST, checks.Reading(GOOD, 0.1)) == []


def test_every_host_must_share_the_rpc_timeout():
    same = {h: checks.Reading(GOOD, 0) for h in ('src', 'dest')}
    assert checks.same_setting(same, 'rpc_response_timeout') == 8.0
    other = dict(same, dest=checks.Reading(dict(GOOD, settings={
        'rpc_response_timeout': 60}), 0))
    assert checks.same_setting(other, 'rpc_response_timeout') is None


def remote_catalogue(drop=(), relock=()):
    """What a host's ``points`` op answers, from this runner's own
    catalogue, with points dropped or their tracker lock flipped."""
    from faultdriver import points
    return [{'name': p.name, 'kind': p.kind,
             'tracker_lock': p.tracker_lock != (p.name in relock)}
            for p in points.catalogue().values() if p.name not in drop]


def test_a_host_whose_faultdriver_knows_other_points_is_refused():
    from faultdriver import points
    local = points.catalogue()
    status = dict(GOOD, faultdriver_version='0.1.dev1')
    assert checks.catalogue_refusal(
        HOST, status, remote_catalogue(), local) is None
    # Points only the host knows are not the runner's to use.
    extra = remote_catalogue() + [{'name': 'future_step', 'kind': 'driver'}]
    assert checks.catalogue_refusal(HOST, status, extra, local) is None

    missing = checks.catalogue_refusal(
        HOST, status, remote_catalogue(drop={'pre_live_migration'}), local)
    assert (missing.host, missing.fact) == ('fd-b', checks.POINTS_DIFFER)
    assert 'lacks 1 of this runner\'s points (pre_live_migration)' in str(
        missing)
    assert 'faultdriver 0.1.dev1' in str(missing)

    locked = next(name for name, p in local.items() if p.tracker_lock)
    changed = checks.catalogue_refusal(
        HOST, status, remote_catalogue(relock={locked}), local)
    assert 'knows %s with another kind or tracker lock' % locked in str(
        changed)
