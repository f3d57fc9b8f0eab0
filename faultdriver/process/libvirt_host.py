"""One compute host's real libvirt: libvirtd and virtlogd from Debian's
packages, in private mount, UTS and network namespaces on this machine.

Several hosts on one machine must not see each other's libvirt state, so
each host's daemons run with their own copies of ``/etc/libvirt`` and
``/var/lib/libvirt`` and their own run, log and cache directories bound
over the standard paths, their own hostname (else both report the same
``hypervisor_hostname``), their own ``host_uuid`` (else libvirt refuses
to migrate "to the same host"), their own cgroup subtree (else a migrated
guest can land in its source's cgroup), their own network namespace
(else a port's tap, named after the port, clashes with the same port's
tap on the other host during a live migration), and their own loopback
address for libvirt's TCP listener and QEMU's incoming migrations,
which the stack's relays (:mod:`faultdriver.process.netns_relay`) make
reachable from the other hosts' namespaces.

Nova does not rewrite local disk paths on a live migration, so every host
binds its own directory over the same instances path, and Nova's
privsep daemon creates a port's tap where the guest's QEMU opens it:
that host's nova-compute must run inside the namespaces too
(:meth:`enter`).

Guests are QEMU processes that libvirt starts with an environment of its
own, so they escape :func:`procs.reap`; they live in the host's cgroup
subtree, and :func:`kill_cgroups` (also run by the stack's guardian when
the runner dies) ends them there.
"""

import glob
import os
import shutil
import signal
import socket
import typing
import uuid

from faultdriver.process import procs
from faultdriver.scenario import prereqs
from faultdriver import waiting

LIBVIRT_PORT = 16509
#: QEMU's incoming migrations and NBD servers (block migration) take
#: their ports from a range of this many per host, each host's its own:
#: libvirt takes a port only if nothing listens on it at any address of
#: its namespace, and the other hosts' ranges are taken there (by the
#: relays to them).  Few, as the relays listen on each.
MIGRATION_PORTS_PER_HOST = 8
MIGRATION_PORTS_START = 49152
#: The standard paths bound over per host (inside the namespace only).
BOUND = {'etc': '/etc/libvirt', 'lib': '/var/lib/libvirt',
         'run': '/run/libvirt', 'log': '/var/log/libvirt',
         'cache': '/var/cache/libvirt'}
CGROUP_ROOT = '/sys/fs/cgroup'
CGROUP_CONTROLLERS = ('cpu', 'cpuacct', 'cpuset', 'memory', 'devices',
                      'freezer', 'blkio', 'pids', 'unified')
CGROUP_PREFIX = 'faultdriver-'
#: libvirt's domain states (VIR_DOMAIN_<STATE>), named as scenarios do.
GUEST_STATES = ('NOSTATE', 'RUNNING', 'BLOCKED', 'PAUSED', 'SHUTDOWN',
                'SHUTOFF', 'CRASHED', 'PMSUSPENDED')
LIBVIRTD_CONF = '''
# --- faultdriver host %(name)s ---
listen_tls = 0
listen_tcp = 1
listen_addr = "%(address)s"
tcp_port = "%(port)d"
auth_tcp = "none"
auth_unix_ro = "none"
auth_unix_rw = "none"
unix_sock_group = "root"
host_uuid = "%(host_uuid)s"
log_outputs = "3:file:/var/log/libvirt/libvirtd.log"
'''
QEMU_CONF = '''
# --- faultdriver host %(name)s ---
migration_address = "%(address)s"
migration_host = "%(address)s"
migration_port_min = %(port_min)d
migration_port_max = %(port_max)d
user = "root"
group = "root"
vnc_listen = "%(address)s"
spice_listen = "%(address)s"
'''


def free_addresses(count: int) -> list[str]:
    """``count`` loopback addresses on which libvirt's port is free.

    Loopback's whole 127.0.0.0/8 answers without configuration, so no
    address is added (or left behind); each stack takes its own block so
    that stacks run side by side (one per scenario variant).
    """
    # Stacks starting at the same time (sweep workers) begin their search
    # in different places, so they do not both pick a block not yet bound.
    first = os.getpid() % 254
    for third in [1 + (first + i) % 254 for i in range(254)]:
        for base in range(2, 250, count):
            block = ['127.0.%d.%d' % (third, base + i) for i in range(count)]
            if not any(procs.port_open(LIBVIRT_PORT, a) for a in block) \
                    and all(_bindable(a) for a in block):
                return block
    raise RuntimeError('no free loopback address for libvirt')


def _bindable(address: str) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind((address, LIBVIRT_PORT))
            return True
        except OSError:
            return False


def cgroup_name(stack_dir: str, host: str) -> str:
    return '%s%s-%s' % (CGROUP_PREFIX, os.path.basename(stack_dir), host)


def kill_cgroups(stack_dir: str, host: str = '*') -> list[int]:
    """SIGKILL every process in the stack's cgroup subtrees (of one host,
    or of all), then remove them; returns the pids killed."""
    tops = [path for controller in CGROUP_CONTROLLERS
            for path in glob.glob(os.path.join(
                CGROUP_ROOT, controller, cgroup_name(stack_dir, host)))]
    killed: set[int] = set()

    def emptied() -> bool:
        pids = {pid for top in tops for folder, _dirs, _files in os.walk(top)
                for pid in _read_pids(os.path.join(folder, 'cgroup.procs'))}
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except ProcessLookupError:
                pass
        return not pids
    waiting.until(emptied, 5, 'cgroups of %s emptied' % stack_dir,
                  interval=0.1, fail=False)
    for top in tops:
        for folder, _dirs, _files in sorted(os.walk(top), reverse=True):
            try:
                os.rmdir(folder)
            except OSError:
                pass
    return sorted(killed)


def _read_pids(path: str) -> list[int]:
    try:
        with open(path) as stream:
            return [int(line) for line in stream if line.strip()]
    except OSError:
        return []


class LibvirtHost:
    """libvirtd + virtlogd of one host; ``uri`` reaches it from anywhere
    on this machine, :meth:`enter` runs a command inside its namespaces.
    """

    def __init__(self, stack_dir: str, name: str, address: str,
                 instances_path: str,
                 env: typing.Optional[typing.Mapping[str, str]] = None,
                 index: int = 0) -> None:
        self.name = name
        self.address = address
        start = MIGRATION_PORTS_START + index * MIGRATION_PORTS_PER_HOST
        #: Where QEMU listens for this host's incoming migrations.
        self.migration_ports = range(start, start + MIGRATION_PORTS_PER_HOST)
        self.instances_path = instances_path
        self.env = env or {}
        self.dir = os.path.join(stack_dir, 'libvirt-%s' % name)
        self.cgroup = cgroup_name(stack_dir, name)
        self.stack_dir = stack_dir
        self.host_uuid = str(uuid.uuid4())
        self.process: typing.Optional[procs.Process] = None

    @property
    def uri(self) -> str:
        """libvirt's socket, reached from this machine's namespaces
        (its directory is the one bound over ``/run/libvirt``)."""
        return 'qemu+unix:///system?socket=%s' % self.path(
            'run/libvirt-sock')

    @property
    def netns(self) -> str:
        """The host's network namespace (a path for ``setns``)."""
        process = self.process
        assert process is not None and process.pid is not None, \
            'a host has a namespace once started'
        return '/proc/%d/ns/net' % process.pid

    @property
    def log(self) -> str:
        return os.path.join(self.dir, 'log', 'libvirtd.log')

    def path(self, part: str) -> str:
        return os.path.join(self.dir, part)

    # -- lifecycle ----------------------------------------------------------

    def prepare(self) -> None:
        """Per-host copies of libvirt's configuration and state."""
        os.makedirs(self.dir)
        shutil.copytree(BOUND['etc'], self.path('etc'), symlinks=True)
        shutil.copytree(BOUND['lib'], self.path('lib'), symlinks=True)
        for part in ('run', 'log/qemu', 'cache', 'instances', 'sys'):
            os.makedirs(self.path(part), exist_ok=True)
        values = {'name': self.name, 'address': self.address,
                  'port': LIBVIRT_PORT, 'host_uuid': self.host_uuid,
                  'port_min': self.migration_ports[0],
                  'port_max': self.migration_ports[-1]}
        with open(self.path('etc/libvirtd.conf'), 'a') as out:
            out.write(LIBVIRTD_CONF % values)
        with open(self.path('etc/qemu.conf'), 'a') as out:
            out.write(QEMU_CONF % values)
        self._make_cgroups()

    def _make_cgroups(self) -> None:
        for controller in CGROUP_CONTROLLERS:
            parent = os.path.join(CGROUP_ROOT, controller)
            if not os.path.isdir(parent):
                continue
            folder = os.path.join(parent, self.cgroup)
            os.makedirs(folder, exist_ok=True)
            if controller == 'cpuset':
                # A v1 cpuset starts empty: no task may join it until it
                # has the parent's CPUs and memory nodes.
                for key in ('cpuset.cpus', 'cpuset.mems'):
                    with open(os.path.join(parent, key)) as src, \
                            open(os.path.join(folder, key), 'w') as dst:
                        dst.write(src.read())

    def _script(self) -> str:
        lines = ['set -e', 'hostname %s' % self.name,
                 # A new network namespace's loopback is down.
                 'ip link set lo up']
        # sysfs shows the devices of the namespace that mounted it: Nova
        # asks /sys/class/net whether a port's tap exists (to create or
        # delete it), so the host's own devices go over what sysfs shows
        # there (the rest of /sys stays, the cgroup mounts with it).
        lines.append('mount -t sysfs sysfs %s' % self.path('sys'))
        for part in ('class/net', 'devices/virtual/net'):
            lines.append('mount --bind %s /sys/%s' % (
                self.path('sys/' + part), part))
        for part, target in BOUND.items():
            lines.append('mount --bind %s %s' % (self.path(part), target))
        lines.append('mount --bind %s %s' % (self.path('instances'),
                                             self.instances_path))
        for controller in CGROUP_CONTROLLERS:
            folder = os.path.join(CGROUP_ROOT, controller, self.cgroup)
            if os.path.isdir(folder):
                lines.append('mount --bind %s %s' % (
                    folder, os.path.join(CGROUP_ROOT, controller)))
        lines.append('%s -d -p /run/libvirt/virtlogd.pid'
                     % prereqs.program('virtlogd'))
        lines.append('exec %s --listen -p /run/libvirt/libvirtd.pid'
                     % prereqs.program('libvirtd'))
        return '\n'.join(lines)

    def start(self, timeout: float = 60) -> 'LibvirtHost':
        """Start the daemons; returns once libvirt answers on its TCP
        port.  The mount points exist after Debian's packages, except
        ``/run/libvirt`` (created here once, as the package would)."""
        self.prepare()
        os.makedirs(BOUND['run'], exist_ok=True)
        os.makedirs(self.instances_path, exist_ok=True)
        self.process = procs.Process('libvirtd-%s' % self.name, [
            'unshare', '--mount', '--uts', '--net', '--propagation',
            'private',
            'bash', '-c', self._script()],
            os.path.join(self.dir, 'libvirtd.out'), env=self.env).start()
        try:
            procs.wait_until(
                lambda: procs.port_open(LIBVIRT_PORT, self.address,
                                        netns=self.netns),
                timeout, 'libvirtd of %s on %s' % (self.name, self.address),
                process=self.process)
        except RuntimeError as exc:
            # It exited: libvirtd logs why to its own file.
            raise RuntimeError('%s; %s%s' % (exc, self.log, procs.tail(
                self.log))) from exc
        return self

    def enter(self, argv: typing.Iterable[str]) -> list[str]:
        """``argv`` run inside this host's namespaces (as its
        nova-compute must, to see its instances directory)."""
        assert self.process is not None, 'a host is entered once started'
        return ['nsenter', '--target', str(self.process.pid), '--mount',
                '--uts', '--net', '--'] + list(argv)

    def stop(self) -> None:
        """Destroy the guests, stop the daemons, remove the cgroups.

        Nothing is kept, so nothing is stopped gracefully; guests are
        killed through their cgroups (what :func:`kill_cgroups` finds of
        this host), which also ends virtlogd and libvirtd.
        """
        if self.process is not None:
            self.process.stop(grace=0)
        pidfile = self.path('run/virtlogd.pid')
        try:
            with open(pidfile) as stream:
                os.kill(int(stream.read().strip()), signal.SIGKILL)
        except (OSError, ValueError):
            pass
        kill_cgroups(self.stack_dir, self.name)

    # -- what the hypervisor has ---------------------------------------------

    def interfaces(self) -> set[str]:
        """The names of the network devices in the host's namespace
        (a guest's tap appears here when Nova plugs its port); empty
        before it started and once the namespace's processes are gone."""
        if self.process is None or self.process.pid is None:
            return set()
        try:
            with open('/proc/%d/net/dev' % self.process.pid) as stream:
                lines = stream.readlines()[2:]
        except OSError:
            return set()
        return {line.split(':', 1)[0].strip() for line in lines}

    def guest_disks(self) -> dict[str, list[typing.Optional[str]]]:
        """``{instance uuid: [source path]}``: each domain's disks as
        its definition names them (a file, or a block device such as a
        volume's loop device)."""
        import xml.etree.ElementTree as ElementTree

        import libvirt
        conn = libvirt.open(self.uri)
        try:
            found: dict[str, list[typing.Optional[str]]] = {}
            for domain in conn.listAllDomains():
                tree = ElementTree.fromstring(domain.XMLDesc(0))
                found[domain.UUIDString()] = [
                    source.get('dev') or source.get('file')
                    for source in tree.findall('./devices/disk/source')]
            return found
        finally:
            conn.close()

    def guests(self) -> dict[str, str]:
        """``{instance uuid: state name}`` of the domains libvirt has,
        running or defined."""
        import libvirt
        names = {getattr(libvirt, 'VIR_DOMAIN_' + state): state.lower()
                 for state in GUEST_STATES}
        conn = libvirt.open(self.uri)
        try:
            return {domain.UUIDString(): names.get(domain.state()[0], '?')
                    for domain in conn.listAllDomains()}
        finally:
            conn.close()
