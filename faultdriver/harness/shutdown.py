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

Known limits, stated rather than hidden: Nova's ``ServiceFixture`` makes
``thread_pool_factory.shutdown_all_executors`` a no-op for every service
(the executors are the process's, shared by every host), so
``cleanup_host`` shuts no executor down here; and nothing here kills a
stop that outlives a service manager's patience (``kill_after`` is the
process tiers'; :class:`GracefulStops` refuses it).

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

from faultdriver import exception
from faultdriver import journal as journal_module
from faultdriver.novacompat import patching

LOG = logging.getLogger(__name__)


class GracefulStops:
    """Graceful stops of the compute hosts of a Nova functional test
    (``test.computes`` maps host names to services)."""

    def __init__(self, test, on_stopped=None):
        self.test = test
        #: Called with the host once its stop returned (the process
        #: would end there); None: the service's stop()/kill() do nothing
        #: more, and threads the stop did not wait for run on.
        self.on_stopped = on_stopped
        self._threads = {}          # host -> the thread running its stop

    def start(self, host, journal=None, hit=None, hold=None,
              kill_after=None):
        """Begin ``host``'s graceful stop in a thread of its own; returns
        the thread.  ``journal`` (with the ``hit`` of the rule that asked
        for it) gets a ``shutdown`` entry when the stop ends."""
        if kill_after is not None:
            raise ValueError(
                'shutdown(kill_after=...) on %s: the embedded Nova cannot '
                'kill one host of its process; run it on a process tier '
                '(--backend process or libvirt)' % host)
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
                journal.record(journal_module.JournalEntry(
                    kind=journal_module.SHUTDOWN, time=time.time(),
                    host=host, point=hit.point, phase=hit.phase,
                    rule_index=hit.rule_index, hit=hit.hit,
                    outcome='start ended', hold_seconds=hold))
            raise exception.SimulatedCrash(host)
        service = self.test.computes[host]
        LOG.warning('faultdriver stopping nova-compute on %s gracefully '
                    '(Service.stop(), as SIGTERM does)', host)

        def stop():
            began, error = time.monotonic(), None
            try:
                service.stop()
            except Exception as exc:
                error = '%s: %s' % (type(exc).__name__, exc)
                LOG.exception('graceful stop of %s failed', host)
            finally:
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
                journal.record(journal_module.JournalEntry(
                    kind=journal_module.SHUTDOWN, time=time.time(),
                    host=host, point=hit.point, phase=hit.phase,
                    rule_index=hit.rule_index, hit=hit.hit,
                    outcome='finished', hold_seconds=hold,
                    duration_seconds=round(time.monotonic() - began, 3),
                    error=error))

        thread = threading.Thread(target=stop, daemon=True,
                                  name='faultdriver-shutdown-%s' % host)
        thread.start()
        self._threads[host] = thread    # started: wait() may join it
        return thread

    def is_stopped(self, host):
        """Whether ``host`` was stopped (or is stopping) and not started
        again."""
        return host in self._threads

    def wait(self, host, timeout):
        """Until ``host``'s stop ended; False if it still runs."""
        thread = self._threads.get(host)
        if thread is None:
            return True
        thread.join(timeout)
        return not thread.is_alive()

    def forget(self, host, timeout):
        """``host`` starts again: its stop must have ended first (a
        service manager starts a unit once its stop is over)."""
        if not self.wait(host, timeout):
            raise RuntimeError('the graceful stop of %s still runs after '
                               '%ss; cannot start it again' % (host, timeout))
        self._threads.pop(host, None)


def _stopped():
    """A stopped service's stop() and kill(): nothing left to do."""
