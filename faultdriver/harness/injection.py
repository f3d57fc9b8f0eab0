"""A fixture that puts faultdriver into a Nova functional test.

Documented (doc/source/tiers.rst) as
``faultdriver.fixture.FaultInjection``, which re-exports it; it lives
here, next to the crash it drives.

Usage, in any ``nova.tests.functional`` test case (set it up *before* the
base class's ``setUp`` starts services, so the short RPC timeouts and the
driver wrapping reach every service)::

    class TestSomething(base.ServersTestBase):
        CAST_AS_CALL = False        # a crash needs casts to stay casts

        def setUp(self):
            self.faults = self.useFixture(FaultInjection(self, rules={
                'dest': ['pre_live_migration: crash']}))
            super().setUp()

        def test_it(self):
            ...
            self.faults.wait_for_hit('dest', 'pre_live_migration')
            self.faults.restart('dest')

Every compute service the test starts gets a ``faultdriver.FaultDriver``
where Nova's loader would load its driver, wrapping the driver the test
asked for (and handing the engine this fixture's simulated crash); rules
apply to the host they are listed under (``'*'`` for every host) and are
enabled; ``patches`` picks candidate tracker fixes per host the same way.
With ``control_dir`` every host also serves its control socket at
``<control_dir>/<host>.sock`` (:meth:`FaultInjection.control` is a
client for it), as ``[fault_injection] control_socket`` does in a real
nova-compute.  On cleanup every held thread is released, crashed hosts
are reaped and the engines are closed, so nothing leaks into the next
test.  Setting it up checks faultdriver's assumptions about Nova and its
test fixtures (:mod:`faultdriver.novacompat`), so a Nova that changed
under the harness fails the test with the symbol, not with a fault that
silently never happened.
"""

import os
import time
import typing

import fixtures

from nova import conf as nova_conf

from faultdriver import conf
from faultdriver.control import client as control_client
from faultdriver import driver as driver_module
from faultdriver import engine as engine_module
from faultdriver import exception
from faultdriver.harness import crash as crash_module
from faultdriver.harness import shutdown as shutdown_module
from faultdriver import novacompat
from faultdriver.novacompat import patchfixtures
from faultdriver import points
from faultdriver import rules as rules_module
from faultdriver.scenario import backend
from faultdriver.scenario import backend_records as records
from faultdriver.scenario import tiers
from faultdriver import waiting

CONF = nova_conf.CONF
SHIM = 'faultdriver.FaultDriver'
ALL_HOSTS = '*'


class FaultInjection(fixtures.Fixture):
    """Rules per host, run-time control and faithful crashes for a test."""

    def __init__(self, test: typing.Any,
                 rules: typing.Optional[
                     typing.Mapping[str, typing.Sequence[str]]] = None,
                 patches: typing.Optional[
                     typing.Mapping[str, typing.Sequence[str]]] = None,
                 crash: bool = True, rpc_timeout: float = 2,
                 report_interval: float = 1, service_down_time: float = 3,
                 control_dir: typing.Optional[str] = None,
                 dead_host_wait: float = 0.5) -> None:
        super().__init__()
        self.test = test
        #: Directory of the hosts' control sockets; None: no sockets.
        self.control_dir = control_dir
        #: host -> its current FaultDriver.
        self.drivers: typing.Dict[str, driver_module.FaultDriver] = {}
        #: Every FaultDriver of the test.
        self._adopted: typing.List[driver_module.FaultDriver] = []
        self._rules: typing.Dict[str, typing.List[rules_module.Rule]] = {}
        for host, texts in (rules or {}).items():
            self.set_rules(host, texts)
        #: host (or '*') -> candidate tracker fixes for its services.
        self.patches = dict(patches or {})
        self._use_crash = crash
        self._crash_args: typing.Dict[str, float] = dict(
            rpc_timeout=rpc_timeout, report_interval=report_interval,
            service_down_time=service_down_time,
            dead_host_wait=dead_host_wait)
        self.crash: typing.Optional[crash_module.InProcessCrash] = None
        #: Graceful stops (the ``shutdown`` action, stop_host).
        self.stops = shutdown_module.GracefulStops(
            test, on_stopped=self._end_stopped if crash else None)
        #: host -> (cell name, fake connection) of a host whose start a
        #: fault ended: what starting it again needs.
        self._failed_starts: typing.Dict[
            str, typing.Tuple[str, typing.Any]] = {}

    def _setUp(self) -> None:
        novacompat.verify(novacompat.HARNESS_GROUPS)
        conf.register_opts(CONF)
        self.test.flags(**tiers.SHUTDOWN_TIMEOUTS)
        if self._use_crash:
            self.crash = self.useFixture(
                crash_module.InProcessCrash(self.test, **self._crash_args))
        self.useFixture(patchfixtures.Patch(
            'nova.virt.driver.load_compute_driver', self._load_wrapped))
        self._refuse_executors_after_stop()
        self.addCleanup(self._close_all)

    # -- loading ------------------------------------------------------------

    def _load_wrapped(self, virtapi: typing.Any,
                      compute_driver: typing.Optional[str] = None
                      ) -> driver_module.FaultDriver:
        """Nova's loader, for a test's service: a FaultDriver wrapping the
        driver the test asked for."""
        requested = compute_driver or CONF.compute_driver
        if requested != SHIM:
            self.test.flags(inner_driver=requested, group='fault_injection')
        # The service being started has set CONF.host to its own name.
        self.test.flags(tracker_patches=list(self.patches.get(
            CONF.host, self.patches.get(ALL_HOSTS, ()))),
            group='fault_injection')
        self.test.flags(control_socket=self.control_socket(CONF.host),
                        group='fault_injection')
        # Built here rather than by Nova's loader (which passes the
        # virtapi only): the engine gets this fixture's simulated crash at
        # construction.
        driver = driver_module.FaultDriver(
            virtapi, crash_handler=self._crash_from_point,
            shutdown_handler=self._shutdown_from_point,
            peer_periodic=self._peer_periodic)
        self._adopt(driver)
        return driver

    def _adopt(self, driver: driver_module.FaultDriver) -> None:
        engine = driver.engine
        host = engine.host
        rules = self._rules.get(host, []) + self._rules.get(ALL_HOSTS, [])
        engine.set_rules(rules)
        engine.set_enabled(True)
        self.drivers[host] = driver
        self._adopted.append(driver)

    def _close_all(self) -> None:
        for driver in self._adopted:
            driver.close()

    # -- rules and control --------------------------------------------------

    def _peer_periodic(self, host: str, timeout: float) -> None:
        """``periodic(host=...)`` here: ``host``'s manager runs its
        periodic in the calling thread (every host is in this process);
        a host that is down runs none, as its socket would not answer."""
        from faultdriver.actions import periodic

        if host not in self.drivers or self.is_crashed(host) or \
                self.is_stopped(host):
            raise LookupError('host %s is not running (started: %s)' % (
                host, ', '.join(sorted(self.drivers)) or 'none'))
        periodic.run_now(self.drivers[host])

    @staticmethod
    def parse(text: str) -> rules_module.Rule:
        """Parse and validate one rule exactly as nova.conf would, and
        refuse what the embedded Nova does not provide (its tier's
        ``provides``; a point family and an action class declare what
        they need, :mod:`faultdriver.scenario.provisions`): one process
        runs every host, so it cannot kill one (``shutdown(kill_after=
        ...)``) nor run another host's periodic while the hit thread
        holds the one tracker lock, and Nova's Neutron and Cinder
        fixtures make no HTTP request for a ``network.*`` or
        ``volume.*`` rule to fire at."""
        from faultdriver.scenario import provisions
        rule = conf.RuleType()(text)
        embedded = tiers.get(tiers.DEFAULT)
        for what, needed in provisions.rule_needs(text):
            missing = embedded.lacks(needed)
            if missing:
                raise exception.ConfigError(
                    'rule %r: %s needs %s, which the embedded Nova lacks: '
                    '%s; run it on --backend %s' % (
                        text, what, provisions.describe(missing),
                        '; '.join(p.why.replace('``', '') for p in sorted(
                            missing, key=lambda p: p.name)),
                        ' or '.join(tiers.providing(missing))))
        return rule

    def set_rules(self, host: str, rules: typing.Sequence[str]) -> None:
        """Rules (texts) for ``host``'s next start (and now, if it
        runs)."""
        self._rules[host] = [self.parse(t) for t in rules]
        if host in self.drivers:
            self.engine(host).set_rules(self._rules[host])

    def add_rule(self, host: str, rule: str) -> int:
        """Add a rule (text) to the running ``host``; returns its
        index."""
        return self.engine(host).add_rule(self.parse(rule))

    def remove_rule(self, host: str, index: int) -> bool:
        """Remove rule ``index`` (as add_rule returned it) from the running
        ``host``; False if it has no such rule."""
        return self.engine(host).remove_rule(index)

    def engine(self, host: str) -> engine_module.Engine:
        try:
            return self.drivers[host].engine
        except KeyError:
            raise KeyError('no FaultDriver started for host %r; started: %s'
                           % (host, ', '.join(sorted(self.drivers))))

    def control_socket(self, host: str) -> typing.Optional[str]:
        """Path of ``host``'s control socket (None without
        ``control_dir``)."""
        if self.control_dir is None:
            return None
        return os.path.join(self.control_dir, '%s.sock' % host)

    def control(self, host: str) -> control_client.Client:
        """A client of ``host``'s control socket, as ``faultdriver ctl``
        uses."""
        if self.control_dir is None:
            raise RuntimeError('FaultInjection(control_dir=None) starts no '
                               'control sockets')
        return control_client.Client(
            os.path.join(self.control_dir, '%s.sock' % host))

    def wait_for_hit(self, host: str, point: str, count: int = 1,
                     timeout: float = backend.WAIT_TIMEOUT,
                     phase: str = 'before') -> object:
        """Block until ``point`` was hit ``count`` times on ``host``."""
        return self.engine(host).wait_for_hit(point, count, timeout, phase)

    def release(self, host: str, barrier: typing.Optional[str] = None) -> int:
        """Release threads held by ``hang`` on ``host`` (one barrier, or
        all); returns how many."""
        return self.engine(host).release(barrier)

    def held(self, host: str) -> records.Held:
        """``{barrier: threads held}`` on ``host``."""
        return self.engine(host).held()

    def journal(self, host: typing.Optional[str] = None
                ) -> typing.List[records.JournalEntry]:
        """Fired faults (and periodic reports), of one host or all."""
        hosts = [host] if host else list(self.drivers)
        return [entry for h in hosts
                for entry in self.engine(h).journal.entries()]

    def history(self) -> list[records.JournalEntry]:
        """Every journal entry of the test, including those of services
        since restarted or crashed, oldest first."""
        entries = [entry for driver in self._adopted
                   for entry in driver.engine.journal.entries()]
        return sorted(entries, key=lambda e: e.get('time', 0))

    def wait_for_journal(
            self, host: str,
            predicate: typing.Callable[[records.JournalEntry], bool],
            count: int = 1, timeout: float = backend.WAIT_TIMEOUT
    ) -> typing.List[records.JournalEntry]:
        """Block until ``count`` journal entries of ``host`` satisfy
        ``predicate`` (e.g. a periodic's report); returns them."""
        def found() -> typing.Optional[typing.List[records.JournalEntry]]:
            entries = [e for e in self.journal(host) if predicate(e)]
            return entries if len(entries) >= count else None
        return waiting.until(found, timeout, lambda: (
            '%d journal entries on %s; it has %s' % (
                count, host, self.journal(host))), interval=0.05)

    # -- crash and restart --------------------------------------------------

    def _crash_from_point(self, hit: engine_module.Hit) -> None:
        crash = self._crash(hit.host)
        crash.crashing(hit.host)
        try:
            self._mark_crashed(hit.host)
            crash.crash(hit.host)
        finally:
            crash.not_crashing()

    def _crash(self, host: str) -> crash_module.InProcessCrash:
        """The crash this fixture drives; refused, naming ``host``,
        without one."""
        if self.crash is None:
            raise RuntimeError('FaultInjection(crash=False) cannot crash '
                               'host %s' % host)
        return self.crash

    def _mark_crashed(self, host: str) -> None:
        crash = self._crash(host)
        engine = self.engine(host)
        crash.crash(host, block_current_thread=False)
        engine.mark_crashed(crash.blocker(host), points.catalogue())

    def crash_host(self, host: str) -> None:
        """Crash ``host`` now, from the test's thread."""
        self._mark_crashed(host)

    # -- graceful stop ------------------------------------------------------

    def _shutdown_from_point(self, hit: engine_module.Hit,
                             hold: typing.Optional[float] = None,
                             kill_after: typing.Optional[float] = None
                             ) -> None:
        # A hit the engine announces names it.
        assert hit.engine is not None
        self.stops.start(hit.host, journal=hit.engine.journal, hit=hit,
                         hold=hold, kill_after=kill_after)

    def _refuse_executors_after_stop(self) -> None:
        """Executors refuse the threads working for a host once its
        drain began (harness/shutdown.py): a thread works for the host
        whose manager recorded a task in it, and a call it spawns does
        too."""
        from nova import manager as nova_manager
        from nova import thread_pool_factory
        real = thread_pool_factory.ThreadPoolFactory.get_executor
        record = nova_manager.Manager._record_task_start
        spawn_on = thread_pool_factory.spawn_on
        stops = self.stops

        def get_executor(factory: typing.Any,
                         executor_type: typing.Any) -> typing.Any:
            refused = stops.refusal(executor_type)
            if refused is not None:
                raise refused
            return real(factory, executor_type)

        def record_task_start(manager: typing.Any, *args: typing.Any,
                              **kwargs: typing.Any) -> typing.Any:
            stops.working_for(manager.host)
            return record(manager, *args, **kwargs)

        def spawn_carrying_host(executor_type: typing.Any,
                                func: typing.Callable[..., typing.Any],
                                *args: typing.Any,
                                **kwargs: typing.Any) -> typing.Any:
            return spawn_on(executor_type, stops.carried(func), *args,
                            **kwargs)
        self.useFixture(patchfixtures.Patch(
            'nova.thread_pool_factory.ThreadPoolFactory.get_executor',
            get_executor))
        self.useFixture(patchfixtures.Patch(
            'nova.manager.Manager._record_task_start', record_task_start))
        self.useFixture(patchfixtures.Patch(
            'nova.thread_pool_factory.spawn_on', spawn_carrying_host))

    def _end_stopped(self, host: str) -> None:
        """The stop returned: the process would end now, and every
        thread of the host the stop did not wait for with it."""
        self._mark_crashed(host)

    def stop_host(self, host: str) -> None:
        """Stop ``host``'s nova-compute as ``systemctl stop`` does
        (Nova's graceful shutdown, which waits for the operations in
        progress); returns once it stopped."""
        self.stops.start(host)
        if not self.stops.wait(host, tiers.SHUTDOWN_BOUND):
            raise AssertionError('the graceful stop of %s did not end in '
                                 '%ss' % (host, tiers.SHUTDOWN_BOUND))

    def is_stopped(self, host: str) -> bool:
        """Whether ``host``'s nova-compute was stopped gracefully (by a
        rule or a step) and not started again."""
        return self.stops.is_stopped(host)

    def queued(self, host: str) -> typing.List[crash_module.Queued]:
        """RPC messages waiting for crashed ``host``: ``[(topic, method,
        'call'|'cast', expired)]``."""
        return self._crash(host).queued(host)

    def wait_for_queued(self, host: str, method: str, expired: bool = True,
                        timeout: float = backend.WAIT_TIMEOUT) -> object:
        """Block until a message for ``method`` waits for crashed ``host``
        (and, by default, its caller has given up on it)."""
        waiting.until(
            lambda: any(m == method and (e or not expired)
                        for _t, m, _k, e in self.queued(host)),
            timeout, lambda: '%s%s message queued for %s; queued: %s' % (
                'expired ' if expired else '', method, host,
                self.queued(host)), interval=0.1)
        return None

    def wait_callers_gave_up(self, host: str,
                             timeout: float = backend.WAIT_TIMEOUT) -> object:
        """Wait (bounded, never failing) until no caller still waits for
        crashed ``host``: for one whole RPC timeout, no call queued for it
        that has not expired.  The whole timeout, because a caller may
        send its next call after the first failed (a live migration's
        rollback asks the dead destination to drop its claim).  What an
        operator who restarts a dead compute minutes later gets; one who
        restarts it at once lets it answer those calls."""
        quiet_since = [time.monotonic()]
        rpc_timeout = self._crash(host).rpc_timeout

        def quiet() -> bool:
            now = time.monotonic()
            if any(kind == 'call' and not expired
                   for _t, _m, kind, expired in self.queued(host)):
                quiet_since[0] = now
            return now - quiet_since[0] >= rpc_timeout
        waiting.until(quiet, timeout, 'callers of %s gave up' % host,
                      interval=0.1, fail=False)
        return None

    @property
    def rpc_timeout(self) -> float:
        """Seconds a caller waits for an RPC reply in this Nova."""
        timeout: float = CONF.rpc_response_timeout
        return timeout

    def is_crashed(self, host: str) -> bool:
        """Whether ``host``'s nova-compute is dead: crashed, or its start
        failed (what recover restarts)."""
        return host in self._failed_starts or (
            self.crash is not None and self.crash.is_crashed(host) and
            not self.stops.is_stopped(host))

    def restart(self, host: str, rules: typing.Sequence[str] = ()) -> None:
        """Restart ``host`` (crashed, failed to start or running) on the
        same fake hypervisor.

        The new service starts with ``rules`` (none by default: a fault that
        already happened should not happen again unless asked).  A start
        that a fault of these rules ends (a crash or an exception in
        init_host or the first resource update) raises StartFailed and
        leaves the host down, as nova-compute exits when its start fails;
        a later restart starts it again.
        """
        if self.crash is not None:
            # A crash the journal shows may not have taken hold yet.
            self.crash.wait_for_crashes(host)
        self.set_rules(host, rules)
        self.drivers.pop(host).close()
        # A host stopping gracefully starts again once its stop ended.
        self.stops.forget(host, tiers.SHUTDOWN_BOUND)
        if not hasattr(self.test, 'start_compute'):   # Nova's plain base
            service = self.test.restart_compute_service(
                self.test.computes[host])
            self.test.computes[host] = service
            return
        again = self._failed_starts.pop(host, None)
        keep = again or self._start_again_args(host)
        try:
            if again is not None:
                cell_name, connection = again
                self.test.start_compute(host, cell_name=cell_name,
                                        connection=connection)
                return
            if self.crash is not None and self.crash.is_crashed(host):
                self.crash.restart(host)   # crashed or stopped
                return
            self.test.restart_compute_service(host)
        except (Exception, exception.SimulatedCrash) as exc:
            driver = self.drivers.get(host)
            failed = exception.StartFailed.by_fault(
                host, driver.engine.journal.entries() if driver else (), exc)
            if failed is None:
                raise
            self._failed_starts[host] = keep
            raise failed from exc

    def _start_again_args(self, host: str) -> typing.Tuple[str, typing.Any]:
        """What starting running ``host`` again after a failed start
        needs, as Nova's restart_compute_service keeps it: the cell, and
        the fake libvirt connection (its guests; None for another inner
        driver, which keeps its own state)."""
        driver = self.test.computes[host].manager.driver
        try:
            connection: typing.Any = driver._get_connection()
        except AttributeError:
            connection = None
        cell: str = self.test.host_mappings[host].cell_mapping.name
        return cell, connection
