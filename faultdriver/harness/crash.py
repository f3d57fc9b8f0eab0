"""A faithful crash of one nova-compute service inside one process.

A crash is not an exception: the crashed host runs none of Nova's error
handlers, its RPC servers and timers (heartbeat, periodics) stop without a
graceful shutdown, the handler thread that hit the fault never replies,
and callers get ``MessagingTimeout``.  Casts queued while it is down are
delivered after restart; calls whose caller already timed out are dropped
(RabbitMQ publishes call requests with a TTL; oslo.messaging's fake driver
does not, so calls are stamped with an expiry here).

How, in Nova 34 terms:

* ``service.rpcserver`` / ``rpcserver_alt`` (topics ``compute`` and
  ``compute-alt``) get ``stop()`` only: polling ends, nothing replies.
  ``wait()`` runs later from the test's thread, never from the host's own
  handler threads (a self-join is what hangs the crash test Nova excludes
  in threading mode).
* ``service.tg.stop_timers()`` ends the heartbeat and the periodics.
* A caller waiting for a dead host gives up after ``dead_host_wait``
  (default 0.5 s), shorter than the wait for a live host
  (``rpc_timeout``, 2 s): in a cloud both are 60 s
  (``rpc_response_timeout``, and the call monitor's missing heartbeats
  for long calls such as ``pre_live_migration``), and the harness
  compresses them; a live host under load must not be cut short, a dead
  one answers nothing however long one waits.  A call sent to a crashed
  host waits that long; a call in flight when its host crashed is
  answered ``MessagingTimeout`` that long after the crash (a timer on
  its reply queue: the fake transport has no heartbeats).
  ``long_rpc_timeout`` is 60 s, so long calls to live hosts under load
  are not cut short either.
* The service's ``stop()`` is replaced so every later stop/kill (fixture
  cleanup, restart helpers) only reaps: no ``graceful_shutdown``, no
  ``cleanup_host``.
* The crashed thread waits on an event, then unwinds with
  :class:`~faultdriver.exception.SimulatedCrash` (a ``BaseException``:
  Nova's handlers and oslo.messaging catch ``Exception`` only, so none of
  them runs and no reply is sent).  Context-manager exits that run on any
  exception and write state (the instance-action event, the claim abort)
  are skipped on such unwinding threads, and so that ``finally:`` blocks
  (which a dead process never runs either) change nothing, such a thread
  gets SimulatedCrash again at its first database statement, placement
  request or RPC message.
* Every host of the embedded Nova shares one process, so one tracker lock
  (``COMPUTE_RESOURCE_SEMAPHORE``, a lock in the process, not a file),
  which a real dead nova-compute's siblings never share.  A crashed
  thread holding it lets it go while it waits (the lock died with the
  process; another host starting or running its periodic takes it), and
  takes it back before it unwinds, so the unwinding releases what it
  holds.
"""

import collections
import threading
import time
import typing
import weakref

import fixtures
from oslo_concurrency import lockutils
import oslo_messaging
from oslo_messaging._drivers import impl_fake
from oslo_messaging.rpc import client as rpc_client
import sqlalchemy
from sqlalchemy.engine import Engine

from nova.compute import resource_tracker
import nova.conf
import nova.service

from faultdriver import exception
from faultdriver.novacompat import patchfixtures
from faultdriver.novacompat import patching

#: Seconds reaping a host waits for the threads that hit its crash to
#: block (they only record the crash and stop its servers first).
REAP_WAIT = 30

#: Key stamped on call requests; plays the role of AMQP's message TTL.
_EXPIRES = '_faultdriver_expires_at'

#: ``(topic, method, 'call' or 'cast', expired)``: an RPC message
#: waiting for a crashed host.
Queued = typing.Tuple[str, typing.Optional[str], str, bool]

#: ``__exit__`` methods that run on any exception and write state; a
#: crashed thread unwinding through them must not run them.
_GUARDED_EXITS = (
    'nova.compute.utils.EventReporter.__exit__',   # action event -> Error
    'nova.compute.claims.NopClaim.__exit__',        # claim abort
)

#: Where placement requests and RPC messages leave a service.
_EFFECTS = tuple(
    ['nova.scheduler.client.report.SchedulerReportClient.' + name
     for name in ('get', 'post', 'put', 'delete')] +
    ['oslo_messaging.rpc.client._BaseCallContext.' + name
     for name in ('cast', 'call')])


def _tracker_lock() -> typing.Any:
    return lockutils.internal_fair_lock(
        resource_tracker.COMPUTE_RESOURCE_SEMAPHORE)


def _let_go_of_tracker_lock() -> int:
    """Release the tracker lock if this (crashing) thread holds it; how
    many times it had entered it."""
    lock, entries = _tracker_lock(), 0
    while lock.is_writer(check_pending=False):
        lock.release_write_lock()
        entries += 1
    return entries


def _take_back_tracker_lock(entries: int) -> None:
    """Enter the tracker lock ``entries`` times again (waiting for it):
    the crashed thread's unwinding then releases it as it would have."""
    lock = _tracker_lock()
    for _ in range(entries):
        lock.acquire_write_lock()


class _CrashedService(nova.service.Service):  # type: ignore[misc]
    """What a crashed Service becomes: stop() and kill() only reap."""

    def stop(self) -> None:
        self._faultdriver_crash.reap(self.host)

    def kill(self) -> None:
        self._faultdriver_crash.reap(self.host)


class _Corpse:
    """What is left of a crashed host until it is reaped."""

    def __init__(self, service: typing.Any) -> None:
        self.released = threading.Event()
        self.timers: typing.List[typing.Any] = list(service.tg.timers)
        self.servers: typing.List[typing.Any] = [
            s for s in (service.rpcserver, service.rpcserver_alt)
            if s is not None]
        self.topics: typing.List[str] = [
            t for t in (service.topic, service.topic_alt) if t]
        self.idents: typing.Set[int] = set()
        self.reaped = False


class InProcessCrash(fixtures.Fixture):
    """Crash and restart compute hosts of a Nova functional test.

    Set it up before the test base's ``setUp`` starts services, so the
    short timeouts reach them.  ``test.computes`` maps host names to
    services, as in Nova's functional bases.
    """

    def __init__(self, test: typing.Any, rpc_timeout: float = 2,
                 report_interval: float = 1, service_down_time: float = 3,
                 long_rpc_timeout: float = 60,
                 dead_host_wait: float = 0.5) -> None:
        super().__init__()
        self.test = test
        self.rpc_timeout = rpc_timeout
        #: Seconds a caller waits for a crashed host (module docstring).
        self.dead_host_wait = min(dead_host_wait, rpc_timeout)
        self.long_rpc_timeout = long_rpc_timeout
        self.report_interval = report_interval
        self.service_down_time = service_down_time
        self._corpses: typing.Dict[str, _Corpse] = {}
        #: Idents of released threads still unwinding.
        self._zombies: typing.Set[int] = set()
        # host -> [(weakref to a call's reply queue, its message)]
        self._in_flight: typing.DefaultDict[
            str, typing.List[typing.Tuple[typing.Any, typing.Any]]] = (
                collections.defaultdict(list))
        self._pending = threading.local()
        self._timers: typing.List[threading.Timer] = []
        #: host -> threads that hit a crash of it and have not blocked
        #: yet; reaping waits for them (a restart right after the fault
        #: was seen must not let one unwind as a live thread).
        self._crashing: typing.Counter[str] = collections.Counter()
        self._crashing_cond = threading.Condition()

    def _setUp(self) -> None:
        if getattr(self.test, 'CAST_AS_CALL', False):
            raise ValueError('a faithful crash needs casts to stay casts: set '
                             'CAST_AS_CALL = False on %s'
                             % type(self.test).__name__)
        # Calls to live hosts time out after rpc_response_timeout, calls
        # to dead ones after dead_host_wait (send_like_rabbit, _give_up_on).
        # rpc_response_timeout exists only once the transport is built.
        nova.conf.CONF.register_opts(rpc_client._client_opts)
        # long_rpc_timeout: long enough for live hosts under load, short
        # enough that a failing test never waits half an hour in cleanup.
        self.test.flags(rpc_response_timeout=self.rpc_timeout,
                        long_rpc_timeout=self.long_rpc_timeout,
                        report_interval=self.report_interval,
                        service_down_time=self.service_down_time)
        self.useFixture(patchfixtures.Patch(
            'nova.servicegroup.api.INITIAL_REPORTING_DELAY', 0))
        self._stamp_call_expiry()
        for path in _GUARDED_EXITS:
            self._guard(path)
        self._refuse_dead_effects()
        self.addCleanup(self.release_all)

    def _refuse_if_dead(self) -> None:
        if threading.get_ident() in self._zombies:
            raise exception.SimulatedCrash('effect of a crashed host')

    def _refuse_dead_effects(self) -> None:
        """Database, placement and RPC refuse unwinding crashed threads.

        ``confirm_resize``'s ``finally:`` would otherwise delete the
        migration's allocation and the stashed flavors after the "crash".
        """
        def refuse_sql(*ignored: object) -> None:
            self._refuse_if_dead()
        sqlalchemy.event.listen(Engine, 'before_cursor_execute', refuse_sql)
        self.addCleanup(sqlalchemy.event.remove, Engine,
                        'before_cursor_execute', refuse_sql)
        for path in _EFFECTS:
            self._refuse_in(path)

    def _refuse_in(self, path: str) -> None:
        module, cls, attr = path.rsplit('.', 2)
        real = getattr(getattr(__import__(module, fromlist=[cls]), cls), attr)

        def refusing(*args: typing.Any, **kwargs: typing.Any) -> typing.Any:
            self._refuse_if_dead()
            return real(*args, **kwargs)
        self.useFixture(patchfixtures.Patch(path, refusing))

    def _stamp_call_expiry(self) -> None:
        send = impl_fake.FakeDriver.send
        deliver = impl_fake.FakeExchange.deliver_message

        def send_like_rabbit(driver: typing.Any, target: typing.Any,
                             ctxt: typing.Any, message: typing.Any,
                             wait_for_reply: typing.Optional[bool] = None,
                             timeout: typing.Optional[float] = None,
                             call_monitor_timeout: typing.Optional[
                                 float] = None,
                             *args: typing.Any,
                             **kwargs: typing.Any) -> typing.Any:
            if wait_for_reply and timeout is not None:
                message = dict(message)
                if self.is_crashed(target.server):
                    timeout = min(timeout, self.dead_host_wait)
                else:
                    self._pending.server = target.server
                message[_EXPIRES] = time.monotonic() + timeout
            try:
                return send(driver, target, ctxt, message, wait_for_reply,
                            timeout, call_monitor_timeout, *args, **kwargs)
            finally:
                self._pending.server = None

        def deliver_and_watch(exchange: typing.Any, topic: str,
                              ctxt: typing.Any, message: typing.Any,
                              server: typing.Optional[str] = None,
                              fanout: bool = False,
                              reply_q: typing.Any = None) -> typing.Any:
            watched_server = getattr(self._pending, 'server', None)
            if reply_q is not None and server and server == watched_server:
                watched = [w for w in self._in_flight[server]
                           if w[0]() is not None]     # finished calls go
                watched.append((weakref.ref(reply_q), message))
                self._in_flight[server] = watched
            return deliver(exchange, topic, ctxt, message, server=server,
                           fanout=fanout, reply_q=reply_q)

        self.useFixture(patchfixtures.Patch(
            'oslo_messaging._drivers.impl_fake.FakeDriver.send',
            send_like_rabbit))
        self.useFixture(patchfixtures.Patch(
            'oslo_messaging._drivers.impl_fake.FakeExchange.deliver_message',
            deliver_and_watch))

    def _give_up_on(self, host: str) -> None:
        """Calls in flight to ``host`` time out ``dead_host_wait`` after
        its crash: nothing of it will answer them."""
        for ref, message in self._in_flight.pop(host, ()):
            if ref() is None:
                continue

            def time_out(ref: typing.Any = ref,
                         message: typing.Any = message) -> None:
                reply_queue = ref()
                if reply_queue is not None:
                    # Still queued (not taken before the crash): expired.
                    message[_EXPIRES] = min(message[_EXPIRES],
                                            time.monotonic())
                    reply_queue.put((None, oslo_messaging.MessagingTimeout(
                        'no reply from crashed host %s' % host)))
            timer = threading.Timer(self.dead_host_wait, time_out)
            timer.daemon = True
            timer.start()
            self._timers.append(timer)

    def _guard(self, path: str) -> None:
        module, cls, attr = path.rsplit('.', 2)
        real = getattr(getattr(__import__(module, fromlist=[cls]), cls), attr)

        def guarded(obj: object, *args: typing.Any) -> typing.Any:
            if threading.get_ident() in self._zombies:
                return False    # neither run it nor swallow the unwinding
            return real(obj, *args)
        self.useFixture(patchfixtures.Patch(path, guarded))

    # -- public -----------------------------------------------------------

    def is_crashed(self, host: str) -> bool:
        return host in self._corpses

    def crashing(self, host: str) -> None:
        """The calling thread hit a crash of ``host`` and is about to
        block in it (:meth:`crash`): reaping ``host`` waits until it has.
        The journal already says the fault fired, so a scenario's next
        step (a restart) can come before the thread blocks; reaped first,
        it would unwind as a live thread and run the ``finally:`` blocks
        a dead process never runs."""
        with self._crashing_cond:
            self._crashing[host] += 1
        self._pending.crashing = host

    def not_crashing(self) -> None:
        """The calling thread is done with :meth:`crashing` (it blocked,
        or the crash raised before it could)."""
        host = getattr(self._pending, 'crashing', None)
        if host is None:
            return
        self._pending.crashing = None
        with self._crashing_cond:
            self._crashing[host] -= 1
            self._crashing_cond.notify_all()

    def wait_for_crashes(self, host: str) -> None:
        """Until every thread that hit a crash of ``host`` has blocked in
        it (a restart must find the host crashed, its threads held)."""
        with self._crashing_cond:
            if not self._crashing_cond.wait_for(
                    lambda: not self._crashing[host], timeout=REAP_WAIT):
                raise RuntimeError(
                    '%d thread(s) that hit a crash of %s did not block in '
                    '%ss' % (self._crashing[host], host, REAP_WAIT))

    def crash(self, host: str, block_current_thread: bool = True) -> None:
        """Crash ``host``.

        From a fault point (the default) the calling thread never returns:
        it waits until the host is restarted or the test ends, then unwinds
        with SimulatedCrash.  From the test's own thread pass
        ``block_current_thread=False``.
        """
        corpse = self._corpses.get(host)
        if corpse is None and host not in self.test.computes:
            # Its start is under way: Nova's Service.start runs init_host
            # and pre_start_hook (where every such hit is) before it starts
            # its RPC servers and timers, so nothing of this service runs
            # yet.  The dying start unwinds, running none of Nova's
            # handlers; faults.restart tells the start failed.
            raise exception.SimulatedCrash(host)
        if corpse is None:
            service = self.test.computes[host]
            corpse = self._corpses[host] = _Corpse(service)
            service.tg.stop_timers()
            for server in corpse.servers:
                server.stop()
            self._give_up_on(host)
            service._faultdriver_crash = self
            service.__class__ = _CrashedService
            for name in ('stop', 'kill'):
                patching.replace_on(
                    service, name,
                    getattr(_CrashedService, name).__get__(service),
                    'nova.service.Service.' + name)
        if block_current_thread:
            self._block(host, corpse)

    def blocker(self, host: str) -> typing.Callable[..., typing.NoReturn]:
        """A callable that blocks its caller like a thread of crashed
        ``host`` (this crash of it, not a later incarnation)."""
        corpse = self._corpses[host]

        def block(*ignored: object) -> typing.NoReturn:
            self._block(host, corpse)
        return block

    def _block(self, host: str, corpse: _Corpse) -> typing.NoReturn:
        ident = threading.get_ident()
        if not corpse.reaped:
            corpse.idents.add(ident)
            self.not_crashing()
            held = _let_go_of_tracker_lock()
            corpse.released.wait()
            _take_back_tracker_lock(held)
            self._zombies.add(ident)
        raise exception.SimulatedCrash(host)

    def restart(self, host: str) -> typing.Any:
        """Reap ``host``, drop its expired calls, start a new service on the
        same fake hypervisor; returns what the test base's restart returns.
        """
        if host not in self._corpses:
            raise ValueError('host %s has not crashed' % host)
        self.reap(host)
        self._drop_expired_calls(host, self._corpses[host].topics)
        self._corpses.pop(host)
        if hasattr(self.test, 'start_compute'):      # libvirt ServersTestBase
            return self.test.restart_compute_service(host)
        service = self.test.restart_compute_service(self.test.computes[host])
        self.test.computes[host] = service
        return service

    def queued(self, host: str) -> typing.List[Queued]:
        """``[(topic, method, 'call'|'cast', expired)]`` waiting for host."""
        now = time.monotonic()
        found: typing.List[Queued] = []
        for topic, queue in self._queues(host):
            for _ctxt, message, reply_queue, _requeue in queue:
                kind = 'cast' if reply_queue is None else 'call'
                found.append((topic, message.get('method'), kind,
                              message.get(_EXPIRES, now + 1) <= now))
        return found

    def release_all(self) -> None:
        for host in list(self._corpses):
            self.reap(host)
        for timer in self._timers:
            timer.cancel()
            timer.join()
        self._timers = []

    def reap(self, host: str) -> None:
        """Release the host's blocked threads and wait for its RPC servers
        and timers.  Never from the host's own handler threads.
        """
        corpse = self._corpses.get(host)
        if corpse is None or corpse.reaped:
            return
        self.wait_for_crashes(host)
        corpse.reaped = True
        corpse.released.set()
        for server in corpse.servers:
            server.wait()
        for timer in corpse.timers:
            timer.wait()
        self._zombies.difference_update(corpse.idents)

    # -- internals --------------------------------------------------------

    @staticmethod
    def _queues(
            host: str, topics: typing.Optional[typing.Collection[str]] = None
    ) -> typing.Iterator[typing.Tuple[str, typing.List[typing.Any]]]:
        for exchange in list(
                impl_fake.FakeExchangeManager._exchanges.values()):
            with exchange._queues_lock:
                for (topic, server), queue in list(
                        exchange._server_queues.items()):
                    if server == host and (topics is None or topic in topics):
                        yield topic, queue

    def _drop_expired_calls(self, host: str,
                            topics: typing.Collection[str]) -> None:
        now = time.monotonic()
        for _topic, queue in self._queues(host, topics):
            queue[:] = [entry for entry in queue
                        if entry[2] is None
                        or entry[1].get(_EXPIRES, now + 1) > now]
