"""A graceful stop of one nova-compute service inside one process.

What ``systemctl stop`` (SIGTERM) does to a real nova-compute, oslo.service
turns into ``nova.service.Service.stop()``: Nova 34's graceful shutdown
(``set_shutdown_in_progress``, the main RPC server stopped while the
alternative topic keeps serving the operations in progress, the manager's
``graceful_shutdown`` waiting for its tracked tasks, then
``cleanup_host``).  Here every host shares the process, so there is no
signal to send: the host's own ``Service.stop()`` runs, unmocked, in a
thread of its own (a stop from the thread that hit a rule would wait for
that very thread's RPC handler), and the call that hit the rule goes on.

``cleanup_host`` ends with ``thread_pool_factory.shutdown_all_executors``,
which in a real nova-compute waits for every executor's work to drain:
a call that outlived the manager's wait still runs to its end there,
before the process exits.  Nova's ``ServiceFixture`` makes it a no-op
(the executors are the process's, shared by every host), so while a host
stops it is replaced by a drain of that host's manager: the tasks it
tracks, up to ``graceful_shutdown_timeout`` after the stop began (when
oslo.service would end the process).  Once the drain began, a real
nova-compute's executors refuse new work ("Cannot create the ... thread
pool executor because shutdown has been started"); here every thread
working for the stopping host gets that refusal from
``ThreadPoolFactory.get_executor`` (:meth:`refusal`).  The embedded
Nova's pool threads serve every host, so what a thread works for is
told, not assumed: the host whose manager recorded a task in it
(``Manager._record_task_start``: every RPC the stop tracks, and the
tasks a manager spawns), carried into the pool thread of every
``spawn_on`` it makes for the spawned call's duration
(:meth:`working_for`, :meth:`carried`); the thread that hit the shutdown
rule is refused too.  Known limits, stated rather than hidden: the
executors themselves are not shut down, a thread that recorded no task
(a periodic's) is not refused, and nothing here kills a stop that
outlives a service manager's patience (``kill_after`` is the process
tiers'; :class:`GracefulStops` refuses it).

When the stop returns, oslo.service ends a real nova-compute's process,
and with it every thread the stop did not wait for (a call that outlived
the manager's wait).  Here those threads would run on beside the next
service of the host, so the host then ends as a crashed one does
(``on_stopped``: the harness's crash, which blocks the host's threads at
their next fault point, database statement, placement request or RPC
message until the host restarts); its service's later ``stop()``/
``kill()`` (Nova's restart helper, fixture cleanup) only reap.  The host
counts as stopped, not crashed: an operator starts it again at once.
"""

import logging
import threading
import time
import typing

from nova import conf as nova_conf
from nova import thread_pool_factory

from faultdriver.actions import shutdown as shutdown_action
from faultdriver import exception
from faultdriver import manager_tasks
from faultdriver.novacompat import patching

if typing.TYPE_CHECKING:
    from faultdriver import engine
    from faultdriver import journal as journal_module

LOG = logging.getLogger(__name__)

T = typing.TypeVar('T')


class GracefulStops:
    """Graceful stops of the compute hosts of a Nova functional test
    (``test.computes`` maps host names to services)."""

    def __init__(self, test: typing.Any,
                 on_stopped: typing.Optional[
                     typing.Callable[[str], None]] = None) -> None:
        self.test = test
        #: Called with the host once its stop returned (the process
        #: would end there); None: the service's stop()/kill() do nothing
        #: more, and threads the stop did not wait for run on.
        self.on_stopped = on_stopped
        #: host -> the thread running its stop.
        self._threads: typing.Dict[str, threading.Thread] = {}
        self._lock = threading.Lock()
        #: host -> (its manager, when its stop began) while it stops.
        self._stopping: typing.Dict[str, typing.Tuple[typing.Any, float]] = {}
        #: Puts back shutdown_all_executors once no host stops.
        self._undo_drain: typing.Optional[typing.Callable[[], None]] = None
        #: host -> idents of the threads that hit its shutdown rule.
        self._hit_threads: typing.Dict[str, typing.Set[int]] = {}
        #: host -> its manager, once its executors shut down (its drain
        #: began).
        self._shut: typing.Dict[str, typing.Any] = {}
        #: ``.host``: the host the current thread works for, if told.
        self._local = threading.local()

    def start(self, host: str,
              journal: typing.Optional['journal_module.Journal'] = None,
              hit: typing.Optional['engine.Hit'] = None,
              hold: typing.Optional[float] = None,
              kill_after: typing.Optional[float] = None) -> threading.Thread:
        """Begin ``host``'s graceful stop in a thread of its own; returns
        the thread.  ``journal`` (with the ``hit`` of the rule that asked
        for it) gets a ``shutdown`` entry when the stop ends."""
        if kill_after is not None:
            raise ValueError(
                'shutdown(kill_after=...) on %s: the embedded Nova cannot '
                'kill one host of its process; run it on a process tier '
                '(--backend process or libvirt)' % host)
        if hit is not None:
            self._hit_threads.setdefault(host, set()).add(
                threading.get_ident())
        if host in self._threads:
            return self._threads[host]
        if host not in self.test.computes:
            # Its start is under way (Nova's restart helpers register the
            # service once Service.start returned): the hit is in
            # init_host or pre_start_hook.  SIGTERM there ends the start
            # before the service serves anything; here the start unwinds
            # as a crashed one does, running none of Nova's handlers, and
            # the restart reports StartFailed naming the shutdown.
            LOG.warning('faultdriver stopping nova-compute on %s during its '
                        'start: the start ends', host)
            if journal is not None and hit is not None:
                journal.record(shutdown_action.entry(
                    hit, 'start ended', hold_seconds=hold))
            raise exception.SimulatedCrash(host)
        service = self.test.computes[host]
        LOG.warning('faultdriver stopping nova-compute on %s gracefully '
                    '(Service.stop(), as SIGTERM does)', host)

        def stop() -> None:
            began = time.monotonic()
            error: typing.Optional[str] = None
            self._drain_while_stopping(host, service.manager, began)
            try:
                service.stop()
            except Exception as exc:
                error = '%s: %s' % (type(exc).__name__, exc)
                LOG.exception('graceful stop of %s failed', host)
            finally:
                self._stopped_draining(host)
                if self.on_stopped is not None:
                    self.on_stopped(host)
                else:
                    for name in ('stop', 'kill'):
                        patching.replace_on(service, name, _stopped,
                                            'nova.service.Service.' + name)
            LOG.warning('faultdriver: nova-compute on %s stopped '
                        'gracefully in %.1fs', host,
                        time.monotonic() - began)
            if journal is not None and hit is not None:
                journal.record(shutdown_action.entry(
                    hit, 'finished', hold_seconds=hold,
                    duration_seconds=round(time.monotonic() - began, 3),
                    error=error))

        thread = threading.Thread(target=stop, daemon=True,
                                  name='faultdriver-shutdown-%s' % host)
        thread.start()
        self._threads[host] = thread    # started: wait() may join it
        return thread

    # -- shutdown_all_executors ---------------------------------------------

    def _drain_while_stopping(self, host: str, manager: typing.Any,
                              began: float) -> None:
        with self._lock:
            if not self._stopping:
                self._undo_drain = patching.replace_on(
                    thread_pool_factory, 'shutdown_all_executors',
                    self._drain,
                    'nova.thread_pool_factory.shutdown_all_executors')
            self._stopping[host] = (manager, began)

    def _stopped_draining(self, host: str) -> None:
        with self._lock:
            self._stopping.pop(host, None)
            if not self._stopping and self._undo_drain is not None:
                self._undo_drain()
                self._undo_drain = None

    def _drain(self) -> None:
        """shutdown_all_executors(wait=True) of the stopping hosts: their
        managers' tracked calls end (not a destination's per-move task,
        which no thread works on: manager_tasks.calls_in_progress), or
        oslo.service's graceful_shutdown_timeout since the stop began runs
        out."""
        with self._lock:
            stopping = list(self._stopping.items())
            self._shut.update((host, manager)
                              for host, (manager, _) in stopping)
        limit = nova_conf.CONF.graceful_shutdown_timeout
        for host, (manager, began) in stopping:
            condition = manager._in_progress_task_cond
            with condition:
                while manager_tasks.calls_in_progress(manager):
                    left = began + limit - time.monotonic()
                    if left <= 0:
                        LOG.warning('faultdriver: %s still has tasks at '
                                    'graceful_shutdown_timeout (%ss)',
                                    host, limit)
                        break
                    condition.wait(min(left, 1.0))

    # -- what a thread works for ------------------------------------------

    def working_for(self, host: str) -> None:
        """The current thread works for ``host`` from now on (its manager
        recorded a task here)."""
        self._local.host = host

    def carried(self, func: typing.Callable[..., T]
                ) -> typing.Callable[..., T]:
        """``func`` to run in a pool thread for the host the calling
        thread works for (the pool thread may serve any host before and
        after it); ``func`` itself when the caller works for none."""
        host = getattr(self._local, 'host', None)
        if host is None:
            return func
        local = self._local

        def for_host(*args: typing.Any, **kwargs: typing.Any) -> T:
            before = getattr(local, 'host', None)
            local.host = host
            try:
                return func(*args, **kwargs)
            finally:
                local.host = before
        return for_host

    def refusal(self, executor_type: typing.Any
                ) -> typing.Optional[RuntimeError]:
        """The RuntimeError Nova's ThreadPoolFactory.get_executor raises
        once shutdown began, if this thread works for a host whose
        executors shut down (:meth:`working_for`), or hit the shutdown
        rule of one whose manager still tracks a task (the call the stop
        gave up on: it may not have recorded a task itself); else None."""
        ident = threading.get_ident()
        if getattr(self._local, 'host', None) in self._shut or any(
                ident in self._hit_threads.get(host, ()) and
                manager._in_progress_tasks
                for host, manager in list(self._shut.items())):
            return RuntimeError(
                'Cannot create the %s thread pool executor because shutdown '
                'has been started.' % executor_type.value)
        return None

    def is_stopped(self, host: str) -> bool:
        """Whether ``host`` was stopped (or is stopping) and not started
        again."""
        return host in self._threads

    def wait(self, host: str, timeout: float) -> bool:
        """Until ``host``'s stop ended; False if it still runs."""
        thread = self._threads.get(host)
        if thread is None:
            return True
        thread.join(timeout)
        return not thread.is_alive()

    def forget(self, host: str, timeout: float) -> None:
        """``host`` starts again: its stop must have ended first (a
        service manager starts a unit once its stop is over)."""
        if not self.wait(host, timeout):
            raise RuntimeError('the graceful stop of %s still runs after '
                               '%ss; cannot start it again' % (host, timeout))
        self._threads.pop(host, None)
        self._shut.pop(host, None)
        self._hit_threads.pop(host, None)


def _stopped() -> None:
    """A stopped service's stop() and kill(): nothing left to do."""
