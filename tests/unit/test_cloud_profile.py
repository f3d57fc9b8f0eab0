"""The cloud profile's loader: a profile that would aim a fault wrongly
is refused whole, naming the file and the key (exit 2 on the command
line), and what it writes it reads back the same."""

import copy

import pytest
import yaml

from faultdriver.cloud import profile
from faultdriver.cmd import cloud as cloud_cmd
from faultdriver.cmd import main


def host(name):
    return {'ssh': 'fd-' + name, 'host': 'compute-' + name,
            'nodename': 'node-' + name, 'manager': 'systemd',
            'unit': 'devstack@n-cpu', 'socket': '/run/fd/%s.sock' % name,
            'journal': '/var/lib/fd/%s.jsonl' % name,
            'log': {'journald': 'devstack@n-cpu'},
            'start_rules': '/var/lib/fd/%s.start.json' % name}


GOOD = {'format': 1, 'cloud': 'devstack-admin',
        'fault_injection_allowed': True,
        'hosts': {'src': host('a'), 'dest': host('b')}}


def write(tmp_path, data):
    path = tmp_path / 'c.yaml'
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(path)


def test_a_good_profile_loads_as_typed_records(tmp_path):
    loaded = profile.load(path=write(tmp_path, GOOD))
    assert loaded.cloud == 'devstack-admin'
    assert loaded.hosts['dest'].host == 'compute-b'
    assert loaded.hosts['dest'].log == ('journald', 'devstack@n-cpu')
    assert loaded.network == 'none'
    assert loaded.by_host('compute-a').alias == 'src'


def test_what_dump_writes_loads_the_same(tmp_path):
    loaded = profile.load(path=write(tmp_path, GOOD))
    again = profile.load(path=write(tmp_path, profile.dump(loaded)))
    assert again == loaded


def test_a_host_s_libvirt_is_optional_and_read_back(tmp_path):
    data = changed(lambda d: d['hosts']['src'].update(libvirt={}))
    data['hosts']['dest']['libvirt'] = {'uri': 'qemu+tcp://b/system',
                                        'container': 'nova_libvirt'}
    loaded = profile.load(path=write(tmp_path, data))
    assert loaded.hosts['src'].libvirt == profile.Libvirt(
        uri='qemu:///system', container=None)
    assert loaded.hosts['dest'].libvirt.container == 'nova_libvirt'
    assert profile.load(path=write(tmp_path, GOOD)).hosts['src'].libvirt \
        is None
    again = profile.load(path=write(tmp_path, profile.dump(loaded)))
    assert again == loaded


def changed(edit):
    data = copy.deepcopy(GOOD)
    edit(data)
    return data


@pytest.mark.parametrize('edit, key, expected', [
    (lambda d: d.pop('fault_injection_allowed'),
     'fault_injection_allowed', 'explicit opt-in'),
    (lambda d: d.update(fault_injection_allowed='yes'),
     'fault_injection_allowed', 'expected true'),
    (lambda d: d.update(format=2), 'format', 'expected 1'),
    (lambda d: d.pop('cloud'), 'cloud', 'a string'),
    (lambda d: d.update(colud='x'), 'colud', 'one of format'),
    (lambda d: d.update(hosts={}), 'hosts', 'a mapping'),
    (lambda d: d['hosts']['src'].update(manager='upstart'),
     'hosts.src.manager', 'one of systemd'),
    (lambda d: d['hosts']['dest'].pop('nodename'),
     'hosts.dest.nodename', 'a string'),
    (lambda d: d['hosts']['src'].update(socket='run/fd.sock'),
     'hosts.src.socket', 'an absolute path'),
    (lambda d: d['hosts']['src'].update(log={'syslog': 'x'}),
     'hosts.src.log', '{file: PATH} or {journald: UNIT}'),
    (lambda d: d['hosts']['dest'].update(host='compute-a'),
     'hosts.dest.host', 'hosts.src has it too'),
    (lambda d: d.update(broker={'vhost': '/'}), 'broker.ssh', 'a string'),
    (lambda d: d['hosts']['src'].update(libvirt='qemu:///system'),
     'hosts.src.libvirt', 'a mapping of uri, container'),
    (lambda d: d['hosts']['src'].update(libvirt={'url': 'x'}),
     'hosts.src.libvirt.url', 'one of uri, container'),
])
def test_a_wrong_key_is_named_with_the_file(tmp_path, edit, key, expected):
    path = write(tmp_path, changed(edit))
    with pytest.raises(profile.ProfileError) as caught:
        profile.load(path=path)
    assert str(caught.value).startswith('%s: key %s: ' % (path, key))
    assert expected in str(caught.value)


def test_a_missing_profile_says_how_to_write_one(tmp_path, monkeypatch):
    monkeypatch.setenv('HOME', str(tmp_path))
    with pytest.raises(profile.ProfileError) as caught:
        profile.load('lab')
    assert str(tmp_path / '.config/faultdriver/clouds/lab.yaml') in str(
        caught.value)
    assert 'faultdriver cloud init lab' in str(caught.value)


def test_no_opt_in_is_exit_2_on_the_command_line(tmp_path, capfd):
    path = write(tmp_path, changed(
        lambda d: d.update(fault_injection_allowed=False)))
    app = main.FaultDriverApp()
    app.command_manager.add_command('cloud check', cloud_cmd.CloudCheck)
    code = app.run(['cloud', 'check', 'lab', '--profile', path])
    assert code == 2
    assert '%s: key fault_injection_allowed' % path in capfd.readouterr().err
