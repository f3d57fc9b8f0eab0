"""``cloud init`` without ``--host``: the computes the compute API lists
(faultdriver.cloud.survey.listed_computes) -- enabled nova-compute
services that are up with one hypervisor each, picked and ordered by
``--compute``; a wanted host the API does not list so is refused naming
it.  The reach and status read after it are the process tier's test
(tests/process/test_cloud_refusals.py) and the cloud line's."""

import pytest

from faultdriver.cloud import checks
from faultdriver.cloud import errors
from faultdriver.cloud import profile as profile_module
from faultdriver.cloud import survey


class API:
    """The two answers listed_computes reads, as the compute API (2.53+)
    gives them."""

    def __init__(self, services, hypervisors):
        self.answers = {
            '/os-services?binary=nova-compute': {'services': services},
            '/os-hypervisors/detail': {'hypervisors': hypervisors}}

    def get(self, path, translate=True):
        assert translate is False      # real names, before any profile
        return self.answers[path]


def service(host, status='enabled', state='up'):
    return {'host': host, 'status': status, 'state': state}


def node(host, name=None):
    return {'hypervisor_hostname': name or host, 'service': {'host': host}}


CLOUD = API([service('compute2'), service('compute1'),
             service('compute3', state='down'),
             service('compute4', status='disabled'), service('compute5')],
            [node('compute1'), node('compute2', 'node2.example'),
             node('compute3'), node('compute4'), node('compute5'),
             node('compute5', 'compute5-b')])


def test_the_usable_computes_sorted_by_host():
    # compute3 down, compute4 disabled, compute5 has two nodes.
    assert survey.listed_computes(CLOUD) == [
        ('compute1', 'compute1'), ('compute2', 'node2.example')]


def test_wanted_computes_in_their_order():
    assert survey.listed_computes(CLOUD, ['compute2', 'compute1']) == [
        ('compute2', 'node2.example'), ('compute1', 'compute1')]


def test_a_wanted_compute_the_api_does_not_list_so_is_refused():
    with pytest.raises(errors.HostRefused) as caught:
        survey.listed_computes(CLOUD, ['compute1', 'compute3'])
    assert (caught.value.host, caught.value.fact) == (
        'compute3', checks.HOST_MISMATCH)
    assert 'compute1, compute2' in str(caught.value)


def test_host_in_a_template_needs_the_listed_host():
    assert survey._filled('/s/{host}.sock', 'c1', '--socket') == \
        '/s/c1.sock'
    assert survey._filled('/s/plain.sock', None, '--socket') == \
        '/s/plain.sock'
    with pytest.raises(profile_module.ProfileError) as caught:
        survey._filled('/s/{host}.sock', None, '--socket')
    assert '--socket /s/{host}.sock' in str(caught.value)


def report(ssh, host, rpc):
    return survey.HostReport(
        alias=host, ssh=ssh, host=host, nodename=host, nova='34.0.0',
        faultdriver='1', reached_by='forward', clock_offset=0.0, advice=(),
        rpc_timeout=rpc)


def test_the_computes_one_rpc_timeout_rounded_up():
    assert survey.rpc_timeout([report('a', 'c1', 30.0),
                               report('b', 'c2', 30.0)]) == 30
    assert survey.rpc_timeout([report('a', 'c1', 7.5)]) == 8
    assert survey.rpc_timeout([report('a', 'c1', None)]) is None
    with pytest.raises(errors.HostRefused) as caught:
        survey.rpc_timeout([report('a', 'c1', 30), report('b', 'c2', 60)])
    assert caught.value.host == 'a, b'
    assert 'c1: 30s, c2: 60s' in str(caught.value)


def test_a_sweep_delay_on_the_cloud_outlasts_its_rpc_timeout(monkeypatch):
    from faultdriver.cmd import cloud as cloud_cmd
    from faultdriver.scenario import tiers
    from faultdriver.sweep import cases
    monkeypatch.setitem(tiers.TIERS, tiers.CLOUD, tiers.TIERS[tiers.CLOUD])
    case = cases.Case('pre_live_migration', 'dest', 'before', 'delay')
    cloud_cmd.use_rpc_timeout(60)      # devstack's default
    assert case.rule(tiers.CLOUD) == 'pre_live_migration.before: 1*delay(61)'
    cloud_cmd.use_rpc_timeout(None)    # a host that does not say
    assert case.rule(tiers.CLOUD) == 'pre_live_migration.before: 1*delay(61)'
