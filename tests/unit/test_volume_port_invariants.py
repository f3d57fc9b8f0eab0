"""The volume-attachments and port-bindings invariants on hand-made
states: each way a volume or a port can be left behind a move is named;
a server attached and bound where it is holds; a server without volumes
or ports holds trivially.  And a scenario that boots a server with a
volume or a port on a tier without those stand-ins is refused, naming
the step's key."""

import pytest

from faultdriver import exception
from faultdriver.scenario import expect
from faultdriver.scenario import model
from tests import runstates

VOLUME, PORT = 'vol-1234567', 'port-1234567'


def server(host, volumes=None, ports=None):
    return {'s1': {'host': host, 'volumes': volumes or {},
                   'ports': ports or {}}}


def attached(*hosts, bdm='a0'):
    return {VOLUME: {'attachments': [{'id': 'a%d' % i, 'host': host}
                                     for i, host in enumerate(hosts)],
                     'bdm': bdm}}


def volume_check(servers):
    return expect.KINDS['volume-attachments'](
        None, runstates.state({'servers': servers}))


def port_check(servers):
    return expect.KINDS['port-bindings'](
        None, runstates.state({'servers': servers}))


def test_a_volume_attached_where_its_server_is_holds():
    met, _text, actual = volume_check(server('dest', attached('dest')))
    assert met and actual == 'all attached where their servers are'
    assert volume_check(server('src'))[0]       # no volume: nothing to say


def test_a_volume_attached_to_two_hosts_is_named():
    met, _text, actual = volume_check(server('src', attached('src', 'dest')))
    assert not met
    assert actual == ['volume vol-1234 of s1 has 2 attachments (src, dest)']


def test_a_volume_connected_elsewhere_or_nowhere_is_named():
    assert volume_check(server('src', attached('dest')))[2] == [
        'volume vol-1234 of s1 is connected to dest, the server is on src']
    assert volume_check(server('src', attached(None)))[2] == [
        'volume vol-1234 of s1 is connected to no host, the server is on '
        'src']


def test_a_mapping_naming_another_attachment_is_named():
    met, _text, actual = volume_check(server('src', attached(
        'src', bdm='gone')))
    assert not met
    assert actual == ['the block device mapping of s1 names attachment '
                      'gone, not one of volume vol-1234']


def test_a_port_bound_once_active_where_its_server_is_holds():
    assert port_check(server('dest', ports={PORT: {'dest': 'ACTIVE'}}))[0]
    assert port_check(server('dest'))[0]


@pytest.mark.parametrize('bindings, text', [
    ({'dest': 'ACTIVE', 'src': 'INACTIVE'}, 'dest ACTIVE, src INACTIVE'),
    ({'src': 'ACTIVE'}, 'src ACTIVE'),
    ({'dest': 'INACTIVE'}, 'dest INACTIVE'),
    ({}, 'none'),
])
def test_a_port_left_bound_elsewhere_is_named(bindings, text):
    met, _text, actual = port_check(server('dest', ports={PORT: bindings}))
    assert not met
    assert actual == ['port port-123 of s1 (on dest) has bindings ' + text]


def test_a_server_from_a_volume_with_a_port_is_accepted_on_libvirt():
    """The libvirt tier gives a volume a loop device (real QEMU opens
    it as the guest's disk) and a port a tap in the host's own network
    namespace."""
    scenario = model.load('live-migration-bfv-libvirt')
    assert scenario.backends == ('libvirt',)
    boot = scenario.steps[0]
    assert (boot.kind, boot.args.get('volume'), boot.args.get('port')) == (
        'boot', True, True)


def test_the_seed_from_a_volume_runs_on_every_tier():
    scenario = model.load('stale-error-migration-context-bfv')
    assert set(scenario.backends) == {'embedded', 'process', 'libvirt'}


@pytest.mark.parametrize('steps, where, text', [
    ('  - boot: {server: s1}\n'
     '  - detach-volume: {server: s1, volume: v1}\n',
     r'steps\[1\]\.detach-volume\.volume',
     "volume 'v1' is not attached by an earlier step"),
])
def test_volume_steps_are_checked_before_anything_runs(tmp_path, steps,
                                                       where, text):
    path = tmp_path / 'volumes.yaml'
    backends = ('' if 'attach-volume' in steps
                else 'backends: [embedded, process]\n')
    path.write_text('name: volumes\ndescription: d\n' + backends +
                    'variants: {stock: {description: d}}\nsteps:\n' + steps)
    with pytest.raises(exception.ScenarioError, match=where + ': ' + text):
        model.load(str(path))


def test_a_real_guest_without_the_volume_disk_is_named():
    """Real libvirt: the attachment says dest, the guest on dest does not
    have the volume's device (a connection never made)."""
    volumes = {VOLUME: {'attachments': [{'id': 'att-1', 'host': 'dest'}],
                        'bdm': 'att-1',
                        'guest_disk': {'src': True, 'dest': False}}}
    found = expect.misattached_volumes(runstates.state({'servers': {
        's1': {'host': 'dest', 'volumes': volumes}}}).servers)
    assert found == ['the guest of s1 on dest does not have volume '
                     '%s as a disk' % VOLUME[:8]]
    volumes[VOLUME]['guest_disk']['dest'] = True
    assert expect.misattached_volumes(runstates.state({'servers': {
        's1': {'host': 'dest', 'volumes': volumes}}}).servers) == []
