"""A cloud whose computes name their libvirt provides a real
hypervisor: the scenarios written for the libvirt tier's guests run
there, and only what needs more (a limited transfer) is still refused,
naming the key."""

import dataclasses

import pytest

from faultdriver.cloud import profile
from faultdriver.cloud import provides
from faultdriver import exception
from faultdriver.scenario import model
from faultdriver.scenario import tiers

#: Guests asked of libvirt (guest expectations, backends: [libvirt]).
GUESTS = 'graceful-stop-libvirt'
#: Also a transfer limited by live-migration-bandwidth.
LIMITED = 'graceful-stop-during-transfer-libvirt'


def host(alias, libvirt):
    return profile.HostProfile(
        alias=alias, ssh='fd-' + alias, host='compute-' + alias,
        nodename='node-' + alias, manager='systemd', unit='u',
        socket='/s', journal='/j', log=('journald', 'u'),
        start_rules='/r', libvirt=libvirt)


def cloud(src, dest, network='none'):
    return profile.Profile(path='/p.yaml', cloud='c',
                           fault_injection_allowed=True,
                           hosts={'src': host('src', src),
                                  'dest': host('dest', dest)},
                           network=network)


#: The seed report's server: from a volume, with a port.
SEED_SERVER = 'stale-error-migration-context-bfv'


@pytest.fixture(autouse=True)
def cloud_tier(monkeypatch):
    """The cloud tier as it is at import, put back after each test."""
    monkeypatch.setitem(tiers.TIERS, tiers.CLOUD, tiers.TIERS[tiers.CLOUD])


def test_a_cloud_of_fake_computes_provides_no_guests():
    for fake in (cloud(None, None), cloud(profile.Libvirt(), None)):
        assert provides.of(fake) == frozenset()
        provides.use(fake)
        assert not model.load(GUESTS).runs_on(tiers.CLOUD)
    # Only the hosts a scenario uses count.
    assert provides.of(cloud(profile.Libvirt(), None), ['src']) == {
        tiers.Provision.REAL_HYPERVISOR}


def test_libvirt_computes_run_the_libvirt_tier_s_guest_scenarios():
    provides.use(cloud(profile.Libvirt(), profile.Libvirt('qemu+ssh://x')))
    assert tiers.Provision.REAL_HYPERVISOR in \
        tiers.get(tiers.CLOUD).provides
    scenario = model.load(GUESTS)
    assert scenario.runs_on(tiers.CLOUD)
    model.check_tier(scenario, tiers.CLOUD)     # refuses nothing
    # Not another local tier's scenario, nor more than a hypervisor.
    assert not model.load('data-volumes-live-migration').runs_on(
        tiers.CLOUD)
    with pytest.raises(exception.ScenarioError) as caught:
        model.check_tier(model.load(LIMITED), tiers.CLOUD)
    assert 'live-migration-bandwidth' in str(caught.value)
    assert 'backend cloud lacks it' in str(caught.value)


def test_use_widens_only_the_cloud_tier_s_provisions():
    before = dict(tiers.TIERS)
    provides.use(cloud(profile.Libvirt(), profile.Libvirt()))
    after = dict(tiers.TIERS)
    assert {n: t for n, t in after.items() if n != tiers.CLOUD} == {
        n: t for n, t in before.items() if n != tiers.CLOUD}
    assert dataclasses.replace(after[tiers.CLOUD], provides=frozenset()) \
        == dataclasses.replace(before[tiers.CLOUD], provides=frozenset())
    assert after[tiers.CLOUD].provides == before[tiers.CLOUD].provides | {
        tiers.Provision.REAL_HYPERVISOR}


def test_a_profile_s_network_gives_ports_volumes_come_with_the_tier():
    """Block storage is every cloud's (Cinder through the catalog); a
    port needs the profile's network: without one the seed report's
    server is refused when it loads, naming the step and what it lacks,
    with one it runs."""
    provides.use(cloud(None, None))
    with pytest.raises(exception.ScenarioError) as caught:
        model.check_tier(model.load(SEED_SERVER), tiers.CLOUD)
    assert 'steps[0].boot: needs a network; backend cloud lacks it' in \
        str(caught.value)
    assert tiers.Provision.BLOCK_STORAGE in tiers.get(tiers.CLOUD).provides

    with_network = cloud(None, None, network='3cb9bc59-net')
    assert provides.of(with_network) == {tiers.Provision.NETWORK}
    provides.use(with_network)
    model.check_tier(model.load(SEED_SERVER), tiers.CLOUD)  # refuses nothing
