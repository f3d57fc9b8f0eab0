"""The cloud tier in the registry and on the contract: its backend keeps
the scenario contract, it is run with --cloud (never --backend, never in
a comparison), and what a cloud cannot do is refused before anything is
reached."""

import types

import pytest

from faultdriver.cloud import api
from faultdriver.cloud import backend
from faultdriver.cloud import profile
from faultdriver.cloud import runner
from faultdriver.cmd import main
from faultdriver import exception
from faultdriver.scenario import conformance
from faultdriver.scenario import launch
from faultdriver.scenario import tiers

HOSTS = {alias: profile.HostProfile(
    alias=alias, ssh='fd-' + alias, host='compute-' + alias,
    nodename='node-' + alias, manager='systemd', unit='u', socket='/s',
    journal='/j', log=('file', '/l'), start_rules='/r')
    for alias in ('src', 'dest')}
PROFILE = profile.Profile(path='/p/lab.yaml', cloud='lab',
                          fault_injection_allowed=True, hosts=HOSTS)


def test_the_backend_keeps_the_contract():
    assert conformance.problems(backend.CloudNova) == []
    assert conformance.fault_control_problems(backend.CloudFaults) == []


def test_the_tier_is_registered_but_reached_only_with_cloud():
    cloud = tiers.get('cloud')
    assert cloud.remote and cloud.runner == ('faultdriver.cloud.runner',)
    assert tiers.Provision.PROCESS_PER_HOST in cloud.provides
    assert 'cloud' in tiers.NAMES          # a scenario's backends key
    assert 'cloud' not in tiers.backend_choices()
    assert 'cloud' not in tiers.compared('all')


def test_a_cloud_runner_needs_a_profile(monkeypatch):
    monkeypatch.delenv(launch.CLOUD_PROFILE, raising=False)
    with pytest.raises(exception.ScenarioError, match='--cloud NAME'):
        launch.remote_args(tiers.get('cloud'))
    monkeypatch.setenv(launch.CLOUD_PROFILE, '/p/lab.yaml')
    assert launch.remote_args(tiers.get('cloud')) == ('--profile',
                                                      '/p/lab.yaml')
    assert launch.remote_args(tiers.get('process')) == ()


def scenario(hosts=('src', 'dest'), nova_patches=(), cells=None):
    return types.SimpleNamespace(
        path='/s.yaml', name='s', hosts=list(hosts),
        data={'topology': {'cells': cells}} if cells else {},
        nova_patches=lambda v: list(nova_patches), nova_tree=lambda v: None)


@pytest.mark.parametrize('given, said', [
    (scenario(nova_patches=['fix.diff']), 'runs its own Nova'),
    (scenario(cells=2), 'one cell only'),
    (scenario(hosts=('src', 'third')), 'the scenario s has hosts third'),
])
def test_what_a_cloud_cannot_do_is_refused(given, said):
    with pytest.raises(exception.ScenarioError, match=said):
        runner.refuse_unrunnable(given, 'v', PROFILE)


def test_a_rule_names_the_real_host_of_periodic():
    nova = types.SimpleNamespace(aliases=api.Aliases(HOSTS))
    faults = backend.CloudFaults(nova, 8)
    assert faults.rule('pre_live_migration@dest: 1*periodic(host=src)') \
        == 'pre_live_migration@dest: 1*periodic(host=compute-src)'
    assert faults.rule('spawn: 1*off') == 'spawn: 1*off'


def test_cloud_and_backend_together_are_refused(capfd):
    code = main.main(['scenario', 'run', 'stale-error-migration-context',
                      '--cloud', 'lab', '--backend', 'process'])
    assert code == 2
    assert '--backend process and --cloud' in capfd.readouterr().err


def test_the_periodic_error_names_the_scenario_host():
    # Nova names the node; the steps count the marker by the alias.
    nova = types.SimpleNamespace(aliases=api.Aliases(HOSTS),
                                 hosts=['src', 'dest'])
    text = ('x Error updating resources for node node-dest: y\n'
            'Error updating resources for node elsewhere\n')
    assert backend.CloudNova.aliased_log(nova, text) == (
        'x Error updating resources for node dest: y\n'
        'Error updating resources for node elsewhere\n')


def test_a_cloud_runs_a_scenario_that_names_no_backends():
    from faultdriver.scenario import model
    seed = model.read('stale-error-migration-context')
    assert seed.backends == tiers.LOCAL and seed.runs_on('cloud')
    only = model.read('compute-crash-running-guest')     # [libvirt]
    assert not only.runs_on('cloud')
