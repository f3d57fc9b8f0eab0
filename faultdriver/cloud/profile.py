"""The cloud profile: which real computes a scenario's hosts are, and
how to reach them (``~/.config/faultdriver/clouds/NAME.yaml`` or
``--profile PATH``; the format is in ``doc/source/tiers.rst``).

Loaded and checked whole before anything reaches a host: a profile that
names a key wrongly would aim a crash at the wrong machine, so every
mistake is exit 2 naming the file and the key (``hosts.src.manager``)
and what was expected.  Nothing outside the ``hosts`` map is ever
touched; ``fault_injection_allowed: true`` is the owner's explicit
opt-in.
"""

import dataclasses
import os
import typing

import yaml

from faultdriver import exception

FORMAT = 1
#: Where ``--cloud NAME`` finds NAME.yaml.
DIRECTORY = os.path.join('~', '.config', 'faultdriver', 'clouds')
MANAGERS = ('systemd', 'docker', 'podman', 'stack')
HOST_KEYS = ('ssh', 'host', 'nodename', 'manager', 'unit', 'socket',
             'journal', 'log', 'start_rules')
#: Optional per host: its hypervisor is libvirt, asked with ``virsh``.
OPTIONAL_HOST_KEYS = ('libvirt',)
LIBVIRT_KEYS = ('uri', 'container')
LIBVIRT_URI = 'qemu:///system'
TOP_KEYS = ('format', 'cloud', 'clouds_yaml', 'fault_injection_allowed',
            'ssh_config', 'hosts', 'broker', 'image', 'network')
BROKER_KEYS = ('ssh', 'vhost', 'container')


class ProfileError(exception.ScenarioError):
    """A profile that cannot be used (exit 2, naming file and key)."""


@dataclasses.dataclass(frozen=True)
class HostProfile:
    """One of the scenario's hosts as a real compute."""

    #: The scenario's name of it (``src``).
    alias: str
    #: What ``ssh`` takes: an ssh_config alias or ``user@host``.
    ssh: str
    #: Nova's service host (``CONF.host``) as the API shows it.
    host: str
    #: Its hypervisor_hostname (placement's provider name).
    nodename: str
    manager: str
    unit: str
    socket: str
    journal: str
    #: ``('file', PATH)`` or ``('journald', UNIT)``.
    log: typing.Tuple[str, str]
    start_rules: str
    #: Its hypervisor, where it is libvirt: ``virsh`` on the host (in
    #: ``container`` on kolla) answers for its guests.  None: a
    #: hypervisor the cloud tier does not ask (fake drivers).
    libvirt: typing.Optional['Libvirt'] = None


@dataclasses.dataclass(frozen=True)
class Libvirt:
    """How a compute's libvirt is asked: ``virsh -c URI``, run on the
    host over SSH (or with ``docker exec CONTAINER`` there)."""

    uri: str = LIBVIRT_URI
    container: typing.Optional[str] = None


@dataclasses.dataclass(frozen=True)
class Broker:
    ssh: str
    vhost: str = '/'
    container: typing.Optional[str] = None


@dataclasses.dataclass(frozen=True)
class Profile:
    """A whole profile, checked."""

    path: str
    cloud: str
    fault_injection_allowed: bool
    hosts: typing.Dict[str, HostProfile]
    clouds_yaml: typing.Optional[str] = None
    ssh_config: typing.Optional[str] = None
    broker: typing.Optional[Broker] = None
    image: typing.Optional[str] = None
    network: str = 'none'

    def by_host(self, host: str) -> HostProfile:
        """The profile's host whose Nova host is ``host``."""
        for each in self.hosts.values():
            if each.host == host:
                return each
        raise KeyError(host)


def path_of(name: str) -> str:
    """The profile file of cloud ``name``."""
    return os.path.join(os.path.expanduser(DIRECTORY), name + '.yaml')


def _fail(path: str, key: str, expected: str, found: object = None,
          given: bool = True) -> typing.NoReturn:
    raise ProfileError('%s: key %s: expected %s%s' % (
        path, key, expected, ', found %r' % (found,) if given else
        ' (missing)'))


def _unknown(path: str, where: str, data: typing.Mapping[str, object],
             known: typing.Sequence[str]) -> None:
    for key in data:
        if key not in known:
            _fail(path, where + str(key), 'one of ' + ', '.join(known),
                  key)


def _text(path: str, key: str, data: typing.Mapping[str, object],
          name: str, absolute: bool = False,
          required: bool = True) -> typing.Optional[str]:
    if name not in data or data[name] is None:
        if required:
            _fail(path, key + name, 'a string', given=False)
        return None
    value = data[name]
    if not isinstance(value, str) or not value.strip():
        _fail(path, key + name, 'a non-empty string', value)
    if absolute and not os.path.isabs(value):
        _fail(path, key + name, 'an absolute path', value)
    return value


def _host(path: str, alias: str, data: object) -> HostProfile:
    key = 'hosts.%s.' % alias
    if not isinstance(data, dict):
        _fail(path, key[:-1], 'a mapping of ' + ', '.join(HOST_KEYS), data)
    _unknown(path, key, data, HOST_KEYS + OPTIONAL_HOST_KEYS)
    text = {name: typing.cast(str, _text(
        path, key, data, name,
        absolute=name in ('socket', 'journal', 'start_rules')))
        for name in HOST_KEYS if name != 'log'}
    if text['manager'] not in MANAGERS:
        _fail(path, key + 'manager', 'one of ' + ', '.join(MANAGERS),
              text['manager'])
    log = data.get('log')
    if not isinstance(log, dict) or len(log) != 1 or \
            next(iter(log)) not in ('file', 'journald'):
        _fail(path, key + 'log', '{file: PATH} or {journald: UNIT}', log,
              given='log' in data)
    [(kind, where)] = log.items()
    where = _text(path, key + 'log.', log, kind, absolute=kind == 'file')
    return HostProfile(alias=alias, ssh=text['ssh'], host=text['host'],
                       nodename=text['nodename'], manager=text['manager'],
                       unit=text['unit'], socket=text['socket'],
                       journal=text['journal'],
                       log=(kind, typing.cast(str, where)),
                       start_rules=text['start_rules'],
                       libvirt=_libvirt(path, key, data))


def _libvirt(path: str, key: str, data: typing.Mapping[str, object]
             ) -> typing.Optional[Libvirt]:
    if data.get('libvirt') is None:
        return None
    raw = data['libvirt']
    if not isinstance(raw, dict):
        _fail(path, key + 'libvirt', 'a mapping of ' +
              ', '.join(LIBVIRT_KEYS) + ' (each optional: {} is '
              'virsh -c %s on the host)' % LIBVIRT_URI, raw)
    _unknown(path, key + 'libvirt.', raw, LIBVIRT_KEYS)
    return Libvirt(
        uri=_text(path, key + 'libvirt.', raw, 'uri', required=False)
        or LIBVIRT_URI,
        container=_text(path, key + 'libvirt.', raw, 'container',
                        required=False))


def parse(path: str, data: object) -> Profile:
    """The Profile ``data`` (a profile file's YAML) says; ProfileError
    naming ``path`` and the key otherwise."""
    if not isinstance(data, dict):
        _fail(path, '(top)', 'a mapping', data)
    _unknown(path, '', data, TOP_KEYS)
    if data.get('format') != FORMAT:
        _fail(path, 'format', str(FORMAT), data.get('format'),
              'format' in data)
    allowed = data.get('fault_injection_allowed')
    if allowed is not True:
        _fail(path, 'fault_injection_allowed',
              'true: the explicit opt-in of whoever owns the cloud to '
              'faults being injected into its computes', allowed,
              'fault_injection_allowed' in data)
    hosts = data.get('hosts')
    if not isinstance(hosts, dict) or not hosts:
        _fail(path, 'hosts', 'a mapping of scenario host names (src, '
              'dest) to computes', hosts, 'hosts' in data)
    parsed = {str(alias): _host(path, str(alias), each)
              for alias, each in hosts.items()}
    for field in ('host', 'nodename', 'ssh', 'socket'):
        seen: typing.Dict[str, str] = {}
        for alias, each in parsed.items():
            value = getattr(each, field)
            if field == 'socket':
                value = '%s:%s' % (each.ssh, value)
            if value in seen and (field != 'ssh'):
                _fail(path, 'hosts.%s.%s' % (alias, field),
                      'a value no other host has (hosts.%s has it too)'
                      % seen[value], getattr(each, field))
            seen[value] = alias
    broker = None
    if data.get('broker') is not None:
        raw = data['broker']
        if not isinstance(raw, dict):
            _fail(path, 'broker', 'a mapping of ' + ', '.join(BROKER_KEYS),
                  raw)
        _unknown(path, 'broker.', raw, BROKER_KEYS)
        broker = Broker(
            ssh=typing.cast(str, _text(path, 'broker.', raw, 'ssh')),
            vhost=_text(path, 'broker.', raw, 'vhost', required=False)
            or '/',
            container=_text(path, 'broker.', raw, 'container',
                            required=False))
    return Profile(
        path=path,
        cloud=typing.cast(str, _text(path, '', data, 'cloud')),
        fault_injection_allowed=True, hosts=parsed,
        clouds_yaml=_text(path, '', data, 'clouds_yaml', absolute=True,
                          required=False),
        ssh_config=_text(path, '', data, 'ssh_config', absolute=True,
                         required=False),
        broker=broker,
        image=_text(path, '', data, 'image', required=False),
        network=_text(path, '', data, 'network', required=False) or 'none')


def load(name: typing.Optional[str] = None,
         path: typing.Optional[str] = None) -> Profile:
    """Cloud ``name``'s profile, or the one at ``path``."""
    if path is None:
        if not name:
            raise ProfileError('--cloud NAME or --profile PATH: expected '
                               'one of them')
        path = path_of(name)
    try:
        with open(path, encoding='utf-8') as f:
            data = yaml.safe_load(f)
    except FileNotFoundError:
        raise ProfileError('%s: no such profile%s' % (
            path, '; write it with `faultdriver cloud init %s`' % name
            if name else '')) from None
    except (OSError, yaml.YAMLError) as exc:
        raise ProfileError('%s: cannot read it as YAML: %s' % (
            path, exc)) from None
    return parse(path, data)


def dump(profile: Profile) -> typing.Dict[str, object]:
    """The profile as its file says it (``cloud init`` writes it)."""
    data: typing.Dict[str, object] = {
        'format': FORMAT, 'cloud': profile.cloud,
        'fault_injection_allowed': profile.fault_injection_allowed}
    if profile.clouds_yaml:
        data['clouds_yaml'] = profile.clouds_yaml
    if profile.ssh_config:
        data['ssh_config'] = profile.ssh_config
    data['hosts'] = {alias: _dump_host(h)
                     for alias, h in profile.hosts.items()}
    if profile.broker:
        data['broker'] = {'ssh': profile.broker.ssh,
                          'vhost': profile.broker.vhost,
                          'container': profile.broker.container}
    if profile.image:
        data['image'] = profile.image
    data['network'] = profile.network
    return data


def _dump_host(host: HostProfile) -> typing.Dict[str, object]:
    data: typing.Dict[str, object] = {
        'ssh': host.ssh, 'host': host.host, 'nodename': host.nodename,
        'manager': host.manager, 'unit': host.unit, 'socket': host.socket,
        'journal': host.journal, 'log': {host.log[0]: host.log[1]},
        'start_rules': host.start_rules}
    if host.libvirt is not None:
        libvirt = {'uri': host.libvirt.uri}
        if host.libvirt.container:
            libvirt['container'] = host.libvirt.container
        data['libvirt'] = libvirt
    return data
