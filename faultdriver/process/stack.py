"""Bring a whole Nova up as real processes on 127.0.0.1, and down again.

Order matters: databases and broker, schema, placement and nova-api
(gunicorn), conductor and scheduler, then the computes (a compute that
starts before the conductor waits on it), then host discovery.  Nothing
starts unless every prerequisite is there
(:mod:`faultdriver.scenario.prereqs`).  A part that does not start raises
:class:`PartFailed` naming it, without waiting for what depends on it.
``stop`` always runs (context manager), whatever ``start`` got to: it
kills what is left of every process group and removes the temp directory
unless asked to keep it; it waits on nothing that never started.
"""

import concurrent.futures
import contextlib
import logging
import os
import secrets
import shutil
import subprocess
import tempfile
import time
import typing

from faultdriver import journal as journal_module
from faultdriver.process import backing
from faultdriver.process import client
from faultdriver.process import config
from faultdriver.process import guardian
from faultdriver.process import image_standin
from faultdriver.process import keystone as keystone_module
from faultdriver.process import libvirt_host
from faultdriver.process import netns_relay
from faultdriver.process import network_standin
from faultdriver.process import procs
from faultdriver.process import schema
from faultdriver.process import servicefaults
from faultdriver.process import standins
from faultdriver.process import tap_agent
from faultdriver.process import volume_standin
from faultdriver.scenario import controlsteps
from faultdriver.scenario import prereqs
from faultdriver.scenario import tiers

LOG = logging.getLogger(__name__)
T = typing.TypeVar('T')
#: What the computes run on: faultdriver's fake hypervisor, or real
#: libvirtd + QEMU per host (:mod:`faultdriver.process.libvirt_host`);
#: each is a tier's (:mod:`faultdriver.scenario.tiers`).
HYPERVISORS = tiers.HYPERVISORS
GUNICORN_CONF = '''\
bind = "127.0.0.1:%(port)d"
wsgi_app = "%(app)s"
workers = 1
threads = 8
timeout = 120
raw_env = %(env)r
accesslog = None
errorlog = "%(log)s"
control_socket_disable = True
'''


class PartFailed(RuntimeError):
    """Part ``part`` of the stack (mariadb, rabbitmq, glance, placement,
    nova-conductor, nova-compute HOST, libvirtd HOST, ...) did not
    start; the message names it and why."""

    def __init__(self, part: str, cause: object) -> None:
        super().__init__('%s did not start: %s' % (part, cause))
        self.part = part


#: The control-plane services a scenario may stop and start
#: (``stop-service``/``start-service``): the broker, Nova's conductor
#: and scheduler, placement.  nova-api and the stand-ins are the
#: runner's way in and out, not faults.
CONTROL_SERVICES = controlsteps.SERVICES
#: Seconds a stopped control-plane service has to end after SIGTERM (a
#: service manager's stop timeout), then SIGKILL.
CONTROL_STOP_GRACE = 10.0


def _control_process(name: str) -> str:
    """The stack's process name of control-plane service ``name``;
    ValueError naming the services for another."""
    if name not in CONTROL_SERVICES or name == 'rabbitmq':
        raise ValueError('no control-plane process %r: expected one of %s'
                         % (name, ', '.join(CONTROL_SERVICES)))
    return name


class Stack:
    """A running Nova: ``with Stack(hosts) as stack: ...``."""

    def __init__(self, hosts: typing.Iterable[str] = ('src', 'dest'),
                 faults: typing.Optional[
                     typing.Mapping[str, config.ComputeFaults]] = None,
                 mode: str = 'threading',
                 workdir: typing.Optional[str] = None, keep: bool = False,
                 progress: typing.Optional[
                     typing.Callable[[str], None]] = None,
                 hypervisor: str = 'fake_numa',
                 keystone: bool = False) -> None:
        if hypervisor not in HYPERVISORS:
            raise ValueError('hypervisor %r: expected one of %s'
                             % (hypervisor, ', '.join(HYPERVISORS)))
        self.hosts = list(hosts)
        #: Real Keystone in front of nova-api and placement
        #: (:mod:`faultdriver.process.keystone`); without it nova-api
        #: takes the identity from headers and placement runs noauth2.
        self.keystone = keystone
        self.hypervisor = hypervisor
        # host -> compute faults dict
        self.faults: dict[str, config.ComputeFaults] = dict(faults or {})
        self.mode = mode
        self.keep = keep
        self.progress: typing.Callable[[str], None] = progress or (
            lambda text: LOG.info('%s', text))
        # What can fail here comes before the directory, which only
        # stop() removes.
        addresses: typing.Sequence[str] = (
            libvirt_host.free_addresses(len(self.hosts))
            if hypervisor == 'libvirt' else ())
        self.dir = workdir or tempfile.mkdtemp(prefix='faultdriver-stack-')
        self.logs = os.path.join(self.dir, 'logs')
        self.db = backing.MariaDB(self.dir, env=self.env)
        self.rabbit = backing.RabbitMQ(self.dir, env=self.env)
        #: The images a shelve made (and deleted).
        self.images = image_standin.Images()
        self.glance = standins.StandIn('glance', self.images.route,
                                       procs.free_port())
        #: The network's and the block storage's state (what the
        #: port and volume invariants read).
        self.network = network_standin.Network(client.PROJECT)
        self.block_storage = volume_standin.BlockStorage(
            os.path.join(self.dir, 'volumes'),
            block_devices=hypervisor == 'libvirt')
        #: Each stand-in's service-side faults (its pseudo-host's rules:
        #: faultdriver.process.servicefaults), by pseudo-host.
        self.service_sides = {
            name: servicefaults.ServiceSide(
                name, route, journal_module.Journal(
                    self.journal_path(name)))
            for name, route in (('neutron', self.network.route),
                                ('cinder', self.block_storage.route))}
        self.neutron = standins.StandIn(
            'neutron', self.service_sides['neutron'].route,
            procs.free_port())
        self.cinder = standins.StandIn(
            'cinder', self.service_sides['cinder'].route, procs.free_port())
        self.placement_port = procs.free_port()
        self.api_port = procs.free_port()
        self.placement_url = 'http://127.0.0.1:%d' % self.placement_port
        self.api_url = 'http://127.0.0.1:%d/v2.1' % self.api_port
        self.network.api_url = self.api_url
        self.network.api_headers = client.HEADERS
        self.keystone_port: typing.Optional[int] = (
            procs.free_port() if keystone else None)
        self.keystone_url: typing.Optional[str] = (
            'http://127.0.0.1:%d' % self.keystone_port
            if self.keystone_port is not None else None)
        #: Every Keystone user's password (admin and the services').
        self.password: typing.Optional[str] = (
            secrets.token_hex(12) if keystone else None)
        if keystone:
            # Its events to nova-api carry the neutron user's token.
            self.network.api_headers = {}
            url, password = self._keystone_login()
            self.network.api_auth = keystone_module.TokenAuth(
                url, 'neutron', password,
                keystone_module.SERVICE_PROJECT)
        self.api_paste = os.path.join(self.dir, 'api-paste.ini')
        self.processes: dict[str, procs.Process] = {}     # by name
        self.computes: dict[str, procs.Process] = {}      # by host
        self.api: typing.Optional[client.Client] = None
        self.timings: dict[str, float] = {}
        self.guardian: typing.Optional['subprocess.Popen[bytes]'] = None
        #: One path for every host, each binding its own directory over
        #: it (libvirt): Nova keeps local disk paths across a migration.
        self.instances_path = os.path.join(self.dir, 'instances')
        self.libvirt = {host: libvirt_host.LibvirtHost(
            self.dir, host, address, self.instances_path, env=self.env,
            index=index)
            for index, (host, address) in enumerate(zip(self.hosts,
                                                        addresses))}
        #: The libvirt hosts' ways out of their network namespaces, and
        #: the agent that reports their taps (:meth:`_connect_hosts`).
        self.relay = netns_relay.Relay()
        self.tap_agent = tap_agent.TapAgent(self.network, self.libvirt)

    # -- lifecycle ------------------------------------------------------

    def __enter__(self) -> 'Stack':
        try:
            self.start()
        except BaseException as exc:
            try:
                self._kill()
                kept = self.keep_logs('faultdriver-failed-start-')
                if kept:
                    exc.add_note('The logs of the stack that did not start '
                                 'are kept in %s' % kept)
                    self.progress('did not start; its logs are kept in %s'
                                  % kept)
            finally:
                self.stop()
            raise
        return self

    def keep_logs(self, prefix: str) -> typing.Optional[str]:
        """Copy the logs of a stack whose start or run failed (the Nova
        services', each libvirtd's) to a directory of their own (named
        ``prefix`` and a random tail) and return its path (None if none
        was written yet): a run that fails once in many (CI's libvirt
        stage has seen a compute exit, a follow-up move fail) can be read
        after the run, not only what the report quotes.  A stack kept
        (``keep``) keeps them where they are."""
        if self.keep:
            return self.dir
        sources = [source for source in [self.logs] + [
            host.dir for host in self.libvirt.values()]
            if any(names for _root, _dirs, names in os.walk(source))]
        if not sources:
            return None
        kept = tempfile.mkdtemp(prefix=prefix)
        for source in sources:
            shutil.copytree(source, os.path.join(
                kept, os.path.basename(source)),
                ignore=shutil.ignore_patterns('*.sock', 'run', 'lib', 'cache',
                                              'instances'),
                ignore_dangling_symlinks=True)
        return kept

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def env(self) -> dict[str, str]:
        """Environment of every Nova process: the concurrency mode."""
        return {'OS_NOVA_DISABLE_EVENTLET_PATCHING':
                'True' if self.mode == 'threading' else 'False',
                'PYTHONWARNINGS': 'ignore',
                procs.MARKER: self.dir}

    @property
    def tier(self) -> str:
        """The tier this stack is, as ``--backend`` names it."""
        return tiers.of_hypervisor(self.hypervisor).name

    @contextlib.contextmanager
    def _part(self, part: str) -> typing.Iterator[None]:
        """Errors of starting ``part`` become PartFailed naming it."""
        try:
            yield
        except PartFailed:
            raise
        except Exception as exc:
            raise PartFailed(part, exc) from exc

    def _step(self, name: str, func: typing.Callable[..., T], *args: object,
              part: typing.Optional[str] = None) -> T:
        start = time.monotonic()
        with self._part(part or name):
            result = func(*args)
        self.timings[name] = round(time.monotonic() - start, 2)
        self.progress('%s: %.1fs' % (name, self.timings[name]))
        return result

    def command(self, part: str, argv: list[str]) -> list[str]:
        """The command line that starts ``part`` (placement, nova-api,
        nova-conductor, nova-scheduler, nova-compute HOST): ``argv``.

        A test hook: a subclass returns another command to make that
        part's start fail for real (a program that exits at once)."""
        return argv

    def start(self) -> None:
        prereqs.refuse(self.tier)
        os.makedirs(self.logs, exist_ok=True)
        begin = time.monotonic()
        self.guardian = guardian.start(self.dir, self.env, self.keep)
        for host, hypervisor in self.libvirt.items():
            self._step('libvirtd %s' % host, hypervisor.start)
        if self.libvirt:
            self._step('host namespaces', self._connect_hosts)
        for part in (self.glance, self.neutron, self.cinder):
            with self._part(part.name):
                part.start()
        # The broker starts while MariaDB does, from this thread: a child
        # dies with the thread that started it (procs.Process), and
        # rabbitmqctl finds the broker through that child's epmd.
        with self._part('rabbitmq'):
            self.rabbit.launch()
        template = schema.cached(self.keystone)
        # No template with Keystone yet: the one without, Keystone's
        # schema and catalog added (then saved with them).
        base = (schema.cached() if self.keystone and not template
                else None)
        keys: typing.Optional[concurrent.futures.ThreadPoolExecutor] = None
        if self.keystone:
            # Keystone's keys need no database: made while MariaDB starts.
            keys = concurrent.futures.ThreadPoolExecutor(1)
            keys_done = keys.submit(self._keystone_keys)
        try:
            self._step('mariadb', self.db.start, 60, template or base)
        finally:
            if keys is not None:
                keys.shutdown()
        if keys is not None:
            with self._part('keystone'):
                keys_done.result()
        self._write_configs()
        if self.keystone:
            assert self.keystone_port is not None   # with Keystone
            # Its app loads (seconds) while the schema is made.
            with self._part('keystone'):
                self._start_wsgi(
                    'keystone', 'keystone.wsgi.api:application',
                    self.keystone_port,
                    {'OS_KEYSTONE_CONFIG_FILES': self.keystone_conf})
        self._step('rabbitmq', self.rabbit.wait_ready)
        if template:
            self._step('schema (cached)', schema.adopt, self, part='schema')
        elif base:
            self._step('schema (cached, keystone added)', self._add_keystone,
                       part='schema')
        else:
            self._step('schema', self._build_schema)
        self._step('placement', self._start_wsgi, 'placement',
                   'placement.wsgi.api:application', self.placement_port,
                   {'OS_PLACEMENT_CONFIG_DIR': self.placement_dir})
        # nova-api reads the cell mappings once, at start.
        self._step('nova-api', self._start_wsgi, 'nova-api',
                   'nova.wsgi.osapi_compute:application', self.api_port,
                   {'OS_NOVA_CONFIG_DIR': self.api_dir})
        if self.keystone:
            self._step('keystone', self._keystone_ready)
        self.api = client.Client(self)
        services = ('nova-conductor', 'nova-scheduler')
        for name in services:
            with self._part(name):
                self._start_service(name)
        for name in services:
            self._step(name.split('-')[1], self.api.wait_for_service,
                       name, None, 'up', 90, [self.processes[name]],
                       part=name)
        for host in self.hosts:
            with self._part('nova-compute %s' % host):
                self.start_compute(host)
        for host in self.hosts:
            self._step('compute %s' % host, self.api.wait_for_service,
                       'nova-compute', host, 'up', 90, [self.computes[host]],
                       part='nova-compute %s' % host)
        self._step('compute nodes', self.api.wait_for_hypervisors,
                   len(self.hosts), 60, list(self.computes.values()),
                   part='nova-compute')
        self.timings['total'] = round(time.monotonic() - begin, 2)
        self.progress('stack up in %.1fs (%s)' % (
            self.timings['total'], self.dir))

    def wait_schedulable(self, timeout: float = 60) -> None:
        """Wait until every host is mapped to the cell (the scheduler
        discovers hosts each second) and has its provider's inventory in
        placement: a boot right after :meth:`start` is then scheduled,
        not refused with NoValidHost.  A scenario run boots later than
        that anyway; a standing cloud's first user may not."""
        api = self.api
        assert api is not None, 'wait_schedulable() follows start()'

        def ready() -> bool:
            mapped = {row['host'] for row in self.db.query(
                'nova_api', 'SELECT host FROM host_mappings')}
            if not set(self.hosts) <= mapped:
                return False
            for host in self.hosts:
                uuid = api.provider(host)
                if not uuid or not api.get(
                        '/resource_providers/%s/inventories' % uuid,
                        placement=True)['inventories']:
                    return False
            return True
        self._step('schedulable', api.wait, ready,
                   'every host mapped and in placement', timeout,
                   part='nova-scheduler')

    def _connect_hosts(self) -> None:
        """Each libvirt host's namespace reaches the controller's
        services on its own ``127.0.0.1`` and the other hosts' libvirtd
        and QEMU migration ports on their addresses
        (:mod:`faultdriver.process.netns_relay`); the tap agent starts."""
        services = [self.rabbit.port, self.db.port, self.glance.port,
                    self.neutron.port, self.cinder.port,
                    self.placement_port, self.api_port]
        for host in self.libvirt.values():
            for port in services:
                self.relay.forward(host.netns, '127.0.0.1', port, None)
            for peer in self.libvirt.values():
                if peer is host:
                    continue
                for port in [libvirt_host.LIBVIRT_PORT] + list(
                        peer.migration_ports):
                    self.relay.forward(host.netns, peer.address, port,
                                       peer.netns)
        self.tap_agent.start()

    def stop(self) -> None:
        """Kill everything this stack started; safe to call twice, and
        whatever ``start`` got to (each part stops only what it started).

        Nothing here needs a graceful stop (the data is thrown away), so
        every process group gets SIGKILL, then anything that escaped its
        group but carries the stack's marker.
        """
        self._kill()
        self.tap_agent.stop()
        self.relay.stop()
        if self.libvirt:
            volume_standin.detach_loops(self.dir)
        if not self.keep and os.path.isdir(self.dir):
            shutil.rmtree(self.dir, ignore_errors=True)
        if self.guardian is not None:
            guardian.dismiss(self.guardian)
            self.guardian = None

    def _kill(self) -> None:
        """Kill whatever this stack started (safe to call twice)."""
        for process in list(self.computes.values()) + list(
                self.processes.values()):
            process.stop(grace=0)
        for hypervisor in self.libvirt.values():
            hypervisor.stop()
        self.rabbit.stop(grace=0)
        self.db.stop(grace=0)
        procs.reap(self.dir)
        libvirt_host.kill_cgroups(self.dir)
        for part in (self.glance, self.neutron, self.cinder):
            part.stop()

    # -- configuration ----------------------------------------------------

    @property
    def nova_conf(self) -> str:
        return os.path.join(self.dir, 'nova.conf')

    @property
    def compute_common_conf(self) -> str:
        """What every nova-compute reads before its own file: the common
        settings without the database connections, as devstack's
        ``nova-cpu.conf`` (a compute reaches the database through the
        conductor).  With ``[api_database] connection`` set, Nova 34's
        compute checks service versions across cells from two native
        threads at start, which can kill it (doc/findings.rst F13)."""
        return os.path.join(self.dir, 'nova-cpu.conf')

    @property
    def api_dir(self) -> str:
        return os.path.join(self.dir, 'nova-api')

    @property
    def placement_dir(self) -> str:
        return os.path.join(self.dir, 'placement')

    def compute_conf(self, host: str) -> str:
        return os.path.join(self.dir, 'nova-compute-%s.conf' % host)

    @property
    def keystone_dir(self) -> str:
        return os.path.join(self.dir, 'keystone')

    @property
    def keystone_conf(self) -> str:
        return os.path.join(self.keystone_dir, 'keystone.conf')

    def _write_configs(self) -> None:
        if self.keystone:
            # The installed api-paste, authtoken and all.
            shutil.copy(config.installed_api_paste(), self.api_paste)
        else:
            config.api_paste(self.api_paste)
        common = config.nova_common(self)
        config.write(self.nova_conf, common)
        config.write(self.compute_common_conf, config.compute_common(common))
        os.makedirs(self.api_dir)
        config.write(os.path.join(self.api_dir, 'nova.conf'), dict(
            common, DEFAULT=common['DEFAULT'] + [
                ('log_file', os.path.join(self.logs, 'nova-api.log'))]))
        shutil.copy(self.api_paste, os.path.join(self.api_dir,
                                                 'api-paste.ini'))
        os.makedirs(self.placement_dir)
        config.write(os.path.join(self.placement_dir, 'placement.conf'),
                     config.placement(self))
        for host in self.hosts:
            self.write_compute_conf(host)

    def write_compute_conf(
            self, host: str,
            faults: typing.Optional[config.ComputeFaults] = None) -> None:
        if faults is not None:
            self.faults[host] = faults
        config.write(self.compute_conf(host),
                     config.compute(self, host, self.faults.get(host, {})))

    # -- one-off commands -------------------------------------------------

    def _run(self, name: str, argv: list[str],
             env: typing.Optional[typing.Mapping[str, str]] = None) -> None:
        log = os.path.join(self.logs, '%s.log' % name)
        process = procs.Process(name, argv, log, env=dict(self.env,
                                                          **(env or {})))
        code = process.start().wait(300)
        if code != 0:
            raise RuntimeError('%s failed (exit %s); log: %s'
                               % (' '.join(argv), code, log))

    def _manage(self, *args: str) -> None:
        self._run('nova-manage-' + '-'.join(args[:2]), [
            prereqs.script('nova-manage'), '--config-file', self.nova_conf] +
            list(args))

    def _keystone_manage(self, *args: str) -> None:
        self._run('keystone-manage-' + args[0], [
            prereqs.script('keystone-manage'), '--config-file',
            self.keystone_conf] + list(args))

    def _keystone_keys(self) -> None:
        """keystone.conf, and the fernet and credential keys."""
        os.makedirs(self.keystone_dir, exist_ok=True)
        os.makedirs(self.logs, exist_ok=True)
        config.write(self.keystone_conf, keystone_module.settings(
            self.db.url('keystone'), self.keystone_dir,
            os.path.join(self.logs, 'keystone.log')))
        owner = keystone_module.owner_args()
        self._keystone_manage('fernet_setup', *owner)
        self._keystone_manage('credential_setup', *owner)

    def _keystone_login(self) -> tuple[str, str]:
        """Keystone's URL and every user's password (a stack with
        Keystone has both)."""
        assert self.keystone_url is not None and self.password is not None, \
            'a stack with Keystone'
        return self.keystone_url, self.password

    def keystone_endpoints(self) -> dict[str, tuple[str, str]]:
        """The catalog: ``{type: (service name, URL)}``."""
        url, _password = self._keystone_login()
        return {
            'identity': ('keystone', url),
            'compute': ('nova', self.api_url),
            'placement': ('placement', self.placement_url),
            'image': ('glance', self.glance.url),
            'network': ('neutron', self.neutron.url),
            'volumev3': ('cinderv3',
                         self.cinder.url + '/v3/$(project_id)s'),
        }

    def _keystone_setup(self) -> None:
        """Once its schema is synced: ``bootstrap`` (admin, region,
        identity endpoint), then the service users and the catalog
        through Keystone's API (kept in the cached schema: later stacks
        only rewrite URLs and passwords, :func:`keystone.adopt`)."""
        url, password = self._keystone_login()
        self._keystone_manage(*keystone_module.bootstrap_args(
            password, url))
        catalog = keystone_module.Catalog(url, password)
        catalog.wait_ready()
        endpoints = self.keystone_endpoints()
        del endpoints['identity']
        catalog.register(password, endpoints)

    def _keystone_ready(self) -> None:
        """Keystone answers and gives the admin a token with this
        stack's catalog (a cached one rewritten wrongly fails here)."""
        url, password = self._keystone_login()
        keystone_module.Catalog(url, password).wait_ready()
        _token, body = keystone_module.token(
            url, keystone_module.ADMIN, password,
            keystone_module.ADMIN)
        keystone_module.check_catalog(body, self.keystone_endpoints())

    def _add_keystone(self) -> None:
        schema.adopt(self, keystone=False)
        self.db.create_databases(schema.KEYSTONE_DATABASE)
        self._keystone_manage('db_sync')
        self._keystone_setup()
        schema.save(self)

    def _build_schema(self) -> None:
        self.db.create_databases(*schema.databases(self.keystone))
        with concurrent.futures.ThreadPoolExecutor(
                3 if self.keystone else 2) as pool:
            if self.keystone:
                keystone_sync = pool.submit(self._keystone_manage, 'db_sync')
            placement = pool.submit(self._run, 'placement-manage', [
                prereqs.script('placement-manage'), '--config-file',
                os.path.join(self.placement_dir, 'placement.conf'),
                'db', 'sync'])
            self._manage('api_db', 'sync')
            cell0 = pool.submit(self._manage, 'cell_v2', 'map_cell0',
                                '--database_connection',
                                self.db.url('nova_cell0'))
            self._manage('cell_v2', 'create_cell', '--name', 'cell1')
            cell0.result()
            placement.result()
            if self.keystone:
                keystone_sync.result()
        if self.keystone:
            self._keystone_setup()
        # Syncs cell1 ([database]) and the mapped cell0.
        self._manage('db', 'sync')
        schema.save(self)

    # -- the control plane, stopped and started by a scenario ------------

    def stop_control(self, name: str) -> None:
        """Stop control-plane service ``name`` (:data:`CONTROL_SERVICES`)
        as its service manager would: SIGTERM, SIGKILL after
        :data:`CONTROL_STOP_GRACE` seconds."""
        if name == 'rabbitmq':
            self.rabbit.stop_broker(CONTROL_STOP_GRACE)
        else:
            self.processes[_control_process(name)].stop(CONTROL_STOP_GRACE)

    def start_control(self, name: str) -> None:
        """Start control-plane service ``name`` again after
        :meth:`stop_control`; returns once it listens (the broker,
        placement) or runs (nova-conductor and nova-scheduler: the caller
        waits for their heartbeat, :class:`faultdriver.process.nova.
        ProcessNova`)."""
        if name == 'rabbitmq':
            self.rabbit.relaunch().wait_ready()
            return
        process = self.processes[_control_process(name)]
        if process.alive():
            raise RuntimeError('%s is not stopped (pid %s)'
                               % (name, process.pid))
        if name == 'placement':
            self._start_wsgi('placement', 'placement.wsgi.api:application',
                             self.placement_port,
                             {'OS_PLACEMENT_CONFIG_DIR': self.placement_dir})
        else:
            self._start_service(name)

    # -- services ---------------------------------------------------------

    def _start_wsgi(self, name: str, app: str, port: int,
                    env: typing.Mapping[str, str]) -> None:
        folder = os.path.join(self.dir, name + '-gunicorn')
        # Exists when a scenario starts the service again.
        os.makedirs(folder, exist_ok=True)
        # One log: gunicorn's errors (a port in use) end a failed start's
        # message (procs.check_alive).
        log = os.path.join(self.logs, name + '.out')
        # gunicorn is started without arguments: Nova's WSGI app parses
        # sys.argv as its own command line.
        with open(os.path.join(folder, 'gunicorn.conf.py'), 'w') as out:
            out.write(GUNICORN_CONF % {
                'port': port, 'app': app,
                'env': ['%s=%s' % kv for kv in sorted(env.items())],
                'log': log})
        # Nova 34's WSGI entry points run on native threads whatever the
        # services' mode (nova.wsgi.* patches for 'threading' itself).
        environ = dict(self.env, **env)
        environ['OS_NOVA_DISABLE_EVENTLET_PATCHING'] = 'True'
        process = procs.Process(name, self.command(name, [
            prereqs.script('gunicorn')]), log, env=environ, cwd=folder)
        self.processes[name] = process.start()
        procs.wait_until(lambda: procs.port_open(port), 60, name,
                         process=process)

    def _start_service(self, name: str) -> procs.Process:
        log = os.path.join(self.logs, name + '.log')
        process = procs.Process(name, self.command(name, [
            prereqs.script(name), '--config-file', self.nova_conf,
            '--log-file', log]), os.path.join(self.logs, name + '.out'),
            env=self.env)
        self.processes[name] = process.start()
        return process

    def start_compute(self, host: str) -> procs.Process:
        """Start (or restart) ``host``'s nova-compute process."""
        old = self.computes.get(host)
        if old is not None and old.alive():
            raise RuntimeError('nova-compute on %s is still running (pid %s)'
                               % (host, old.pid))
        argv = self.command('nova-compute %s' % host, [
            prereqs.script('nova-compute'), '--config-file',
            self.compute_common_conf, '--config-file',
            self.compute_conf(host)])
        if host in self.libvirt:
            argv = self.libvirt[host].enter(argv)
        process = procs.Process(
            'nova-compute-%s' % host, argv,
            os.path.join(self.logs, 'nova-compute-%s.out' % host),
            env=self.env)
        self.computes[host] = process.start()
        return process

    def compute_log(self, host: str) -> str:
        return os.path.join(self.logs, 'nova-compute-%s.log' % host)

    def journal_path(self, host: str) -> str:
        """The fault journal of compute ``host``, or of the stand-in
        service whose pseudo-host it is (``neutron``, ``cinder``)."""
        if host in servicefaults.SERVICES and host not in self.hosts:
            return os.path.join(self.dir, 'standin-%s.jsonl' % host)
        return os.path.join(self.dir, 'compute-%s' % host, 'journal.jsonl')

    def control_socket(self, host: str) -> str:
        return os.path.join(self.dir, 'compute-%s' % host, 'control.sock')
