"""nova.conf, placement.conf and api-paste.ini of a process-tier stack.

Timings are shortened (service reports every second, RPC calls to a dead
peer time out in seconds) so that a crash is seen quickly; everything
else is Nova's default.
"""

import configparser
import os
import sys
import typing

from faultdriver.process import backing
from faultdriver.process import keystone
from faultdriver.process import libvirt_host
from faultdriver.process import standins
from faultdriver.scenario import tiers

#: One setting: a key and its value (written with ``%s``; a bool as
#: ``true``/``false``).
Item = tuple[str, object]
#: ``{section: [(key, value), ...]}`` (keys may repeat).
Sections = dict[str, list[Item]]


class ComputeFaults(typing.TypedDict, total=False):
    """A nova-compute's fault-injection settings (:func:`compute`)."""

    rules: list[str]
    tracker_patches: list[str]
    inner_driver: str
    enabled: bool
    #: More settings, ``{section: {key: value}}``.
    extra: dict[str, dict[str, object]]


class Stack(typing.Protocol):
    """What the settings read of a stack (:class:`stack.Stack`, which
    imports this module)."""

    @property
    def keystone(self) -> bool: ...

    @property
    def keystone_url(self) -> typing.Optional[str]: ...

    @property
    def password(self) -> typing.Optional[str]: ...

    @property
    def rabbit(self) -> backing.RabbitMQ: ...

    @property
    def db(self) -> backing.MariaDB: ...

    @property
    def placement_url(self) -> str: ...

    @property
    def glance(self) -> standins.StandIn: ...

    @property
    def neutron(self) -> standins.StandIn: ...

    @property
    def cinder(self) -> standins.StandIn: ...

    @property
    def dir(self) -> str: ...

    @property
    def api_paste(self) -> str: ...

    @property
    def hosts(self) -> typing.Sequence[str]: ...

    @property
    def libvirt(self) -> typing.Mapping[str, libvirt_host.LibvirtHost]: ...

    @property
    def instances_path(self) -> str: ...

    @property
    def compute_common_conf(self) -> str: ...

    def compute_conf(self, host: str) -> str: ...

    def control_socket(self, host: str) -> str: ...


#: Settings shared by every Nova service of the stack.
TIMINGS = {
    'report_interval': 1,
    # More than Nova's first report after a start (5 s after joining).
    'service_down_time': 10,
    'rpc_response_timeout': tiers.PROCESSES_RPC_TIMEOUT,
    'long_rpc_timeout': 60,
    'heal_instance_info_cache_interval': -1,
    **tiers.SHUTDOWN_TIMEOUTS,
}
PERIODIC_INTERVAL = 2           # [DEFAULT] update_resources_interval
#: Nova's default filters plus the NUMA one pinned servers need (as the
#: embedded Nova's).
FILTERS = ('ComputeFilter', 'ComputeCapabilitiesFilter',
           'ImagePropertiesFilter', 'ServerGroupAntiAffinityFilter',
           'ServerGroupAffinityFilter', 'NUMATopologyFilter')


def render(sections: Sections) -> str:
    """INI text from ``{section: [(key, value), ...]}`` (keys may repeat,
    as oslo.config's MultiStrOpt needs)."""
    lines: list[str] = []
    for section, items in sections.items():
        lines.append('[%s]' % section)
        for key, value in items:
            if isinstance(value, bool):
                value = 'true' if value else 'false'
            lines.append('%s = %s' % (key, value))
        lines.append('')
    return '\n'.join(lines)


def write(path: str, sections: Sections) -> str:
    with open(path, 'w') as out:
        out.write(render(sections))
    return path


def api_paste(path: str) -> str:
    """Nova's api-paste.ini without keystonemiddleware's authtoken.

    Nova 34 has no noauth compute API; ``keystonecontext`` still builds
    the request context from the X-User-Id/X-Project-Id/X-Roles headers.
    """
    source = installed_api_paste()
    parser = _CaseKeeping()
    parser.read(source)
    for section in parser.sections():
        if section.startswith('composite:openstack_compute_api'):
            for key, value in parser.items(section):
                parser.set(section, key, ' '.join(
                    p for p in value.split() if p != 'authtoken'))
    with open(path, 'w') as out:
        parser.write(out)
    return path


class _CaseKeeping(configparser.RawConfigParser):
    """Keys as written (a RawConfigParser lowercases them)."""

    def optionxform(self, optionstr: str) -> str:
        return optionstr


def installed_api_paste() -> str:
    """The wheel puts api-paste.ini under <prefix>/etc/nova/ (the
    environment's prefix: the nova package imported may be a Nova under
    test's copy elsewhere)."""
    candidates = [
        os.path.join(sys.prefix, 'etc', 'nova', 'api-paste.ini'),
        '/etc/nova/api-paste.ini',
    ]
    for candidate in candidates:
        if os.path.exists(candidate):
            return os.path.normpath(candidate)
    raise RuntimeError('api-paste.ini not found (looked in %s)'
                       % ', '.join(candidates))


def nova_common(stack: Stack) -> Sections:
    """Sections every Nova service reads."""
    sections = _nova_common(stack)
    if stack.keystone:
        sections.update(_keystone_clients(stack))
    return sections


def _keystone_clients(stack: Stack) -> Sections:
    """With Keystone: nova-api's authtoken, and Nova's clients of
    placement, Neutron, Cinder and Glance with the nova user's password,
    their endpoints from the catalog (no endpoint overrides)."""
    url = stack.keystone_url
    password = stack.password
    assert url is not None and password is not None   # with Keystone

    def auth() -> list[Item]:
        return keystone.password_auth(url, 'nova', password,
                                      keystone.SERVICE_PROJECT)
    return {
        'keystone_authtoken': [('www_authenticate_uri', url), *auth()],
        'placement': auth() + [('valid_interfaces', 'public')],
        'neutron': auth() + [('valid_interfaces', 'public')],
        'glance': [('region_name', keystone.REGION),
                   ('valid_interfaces', 'public'), ('num_retries', 0)],
        'cinder': [('catalog_info', 'volumev3::publicURL'),
                   ('os_region_name', keystone.REGION)] + auth(),
    }


def _nova_common(stack: Stack) -> Sections:
    return {
        'DEFAULT': [
            ('debug', True),
            ('transport_url', stack.rabbit.url),
            ('my_ip', '127.0.0.1'),
            ('use_rootwrap_daemon', False),
            ('update_resources_interval', PERIODIC_INTERVAL),
            # Periodic tasks (scheduler host discovery included) start at
            # once, not after a random delay of up to a minute.
            ('periodic_fuzzy_delay', 0),
        ] + sorted(TIMINGS.items()),
        'api_database': [('connection', stack.db.url('nova_api'))],
        'database': [('connection', stack.db.url('nova_cell1'))],
        'placement': [('auth_type', 'admin_token'), ('token', 'admin'),
                      ('endpoint_override', stack.placement_url)],
        'glance': [('endpoint_override', stack.glance.url + '/'),
                   ('num_retries', 0)],
        'neutron': [('auth_type', 'admin_token'), ('token', 'admin'),
                    ('endpoint_override', stack.neutron.url + '/')],
        'oslo_concurrency': [('lock_path', os.path.join(stack.dir, 'lock'))],
        'oslo_messaging_notifications': [('driver', 'noop')],
        'wsgi': [('api_paste_config', stack.api_paste)],
        'api': [('auth_strategy', 'keystone')],
        # The scheduler maps new computes to the cell (no nova-manage).
        'scheduler': [('discover_hosts_in_cells_interval', 1),
                      ('workers', 1)],
        'filter_scheduler': [('enabled_filters', ','.join(FILTERS))],
        'conductor': [('workers', 1)],
        'vnc': [('enabled', False)],
        # The block-storage stand-in (the project's id in the path, as
        # Cinder's endpoints have it); calls made without a user's token
        # (a periodic's admin context) use the admin token.
        'cinder': [('catalog_info', 'volumev3::publicURL'),
                   ('endpoint_template',
                    stack.cinder.url + '/v3/%(project_id)s'),
                   ('auth_type', 'admin_token'), ('token', 'admin')],
    }


#: Sections a nova-compute does not get (devstack's nova-cpu.conf has
#: neither): it reaches the databases through the conductor.
NOT_FOR_COMPUTES = ('api_database', 'database')


def compute_common(common: Sections) -> Sections:
    """:func:`nova_common`'s sections for a nova-compute."""
    return {name: items for name, items in common.items()
            if name not in NOT_FOR_COMPUTES}


def compute(stack: Stack, host: str, faults: ComputeFaults) -> Sections:
    """A nova-compute's own settings, read after :func:`compute_common`.

    ``faults``: ``{'rules': [...], 'tracker_patches': [...],
    'inner_driver': ..., 'enabled': bool}``.
    """
    state = os.path.join(stack.dir, 'compute-%s' % host)
    os.makedirs(os.path.join(state, 'instances'), exist_ok=True)
    section: list[Item] = [
        ('enabled', faults.get('enabled', True)),
        ('inner_driver', faults.get('inner_driver', 'fake_numa')),
        ('journal_path', os.path.join(state, 'journal.jsonl')),
        ('control_socket', os.path.join(state, 'control.sock')),
        # periodic(host=...): the other computes' sockets, on this machine.
        ('peer_control_sockets', ','.join(
            '%s:%s' % (peer, stack.control_socket(peer))
            for peer in stack.hosts if peer != host)),
    ]
    patches = faults.get('tracker_patches') or []
    if patches:
        section.append(('tracker_patches', ','.join(patches)))
    section.extend(('rules', rule) for rule in faults.get('rules', ()))
    instances = os.path.join(state, 'instances')
    if host in stack.libvirt:
        instances = stack.instances_path
    sections: Sections = {
        'DEFAULT': [('host', host),
                    ('compute_driver', 'faultdriver.FaultDriver'),
                    ('state_path', state),
                    ('instances_path', instances),
                    ('log_file', os.path.join(stack.dir, 'logs',
                                              'nova-compute-%s.log' % host))],
        'fault_injection': section,
    }
    if host in stack.libvirt:
        for name, items in libvirt(stack, host).items():
            sections.setdefault(name, []).extend(items)
    else:
        sections['fake_numa'] = [('network_agent_url',
                                  stack.neutron.url + '/faultdriver/plugged')]
    for name, settings in faults.get('extra', {}).items():
        sections.setdefault(name, []).extend(settings.items())
    return sections


def libvirt(stack: Stack, host: str) -> Sections:
    """Settings of a nova-compute on real libvirt (inside its host's
    namespaces, where ``qemu:///system`` is that host's libvirtd).

    QEMU emulates (TCG): a guest that only runs a boot sector needs no
    KVM, and KVM here does not get a Linux kernel going.  Peers reach the
    host's libvirtd and QEMU's incoming migration on the host's own
    loopback address.  We run as root, so Nova's privsep daemons start
    without sudo or rootwrap.
    """
    helper = '%s --config-file %s --config-file %s' % (
        os.path.join(os.path.dirname(sys.executable), 'privsep-helper'),
        stack.compute_common_conf, stack.compute_conf(host))
    return {
        'libvirt': [('virt_type', 'qemu'),
                    ('connection_uri', 'qemu:///system'),
                    ('live_migration_inbound_addr',
                     stack.libvirt[host].address)],
        'nova_sys_admin': [('helper_command', helper)],
        'privsep_osbrick': [('helper_command', helper)],
    }


def placement(stack: Stack) -> Sections:
    sections: Sections = {
        'DEFAULT': [('debug', False)],
        'api': [('auth_strategy', 'noauth2')],
        'placement_database': [('connection', stack.db.url('placement'))],
    }
    if stack.keystone:
        url = stack.keystone_url
        password = stack.password
        assert url is not None and password is not None   # with Keystone
        sections['api'] = [('auth_strategy', 'keystone')]
        sections['keystone_authtoken'] = [
            ('www_authenticate_uri', url)] + \
            keystone.password_auth(url, 'placement', password,
                                   keystone.SERVICE_PROJECT)
    return sections
