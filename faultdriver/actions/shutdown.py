"""The shutdown action: the operator stops nova-compute at the step.

Not a crash: ``systemctl stop`` sends SIGTERM, oslo.service runs Nova's
graceful shutdown (``nova.service.Service.stop``), which waits for the
operations in progress, the one that hit the rule included.  So the call
that hit the rule goes on.
"""

import logging
import os
import signal
import threading
import time
import typing

from faultdriver.actions import base
from faultdriver.actions import crash
from faultdriver import journal as journal_module
from faultdriver.scenario import tiers

if typing.TYPE_CHECKING:
    from faultdriver import engine

LOG = logging.getLogger(__name__)


def entry(hit: 'engine.Hit', outcome: str,
          **fields: typing.Any) -> journal_module.JournalEntry:
    """The ``shutdown`` journal entry of the stop ``hit``'s rule began:
    one shape for every tier (``fields``: hold_seconds,
    kill_after_seconds, duration_seconds, error)."""
    return journal_module.JournalEntry(
        kind=journal_module.SHUTDOWN, time=time.time(), host=hit.host,
        point=hit.point, phase=hit.phase, rule_index=hit.rule_index,
        hit=hit.hit, outcome=outcome, **fields)


def _record(hit, outcome, hold, kill_after):
    if hit.engine.journal is None:
        return
    hit.engine.journal.record(entry(hit, outcome, hold_seconds=hold,
                                    kill_after_seconds=kill_after))
    hit.engine.journal.flush(sync=True)


def signal_own_process(hit, hold=None, kill_after=None):
    """SIGTERM this nova-compute, as ``systemctl stop`` does; with
    ``kill_after``, SIGKILL it that many seconds later if it still runs,
    as systemd does after ``TimeoutStopSec``."""
    LOG.warning('faultdriver stopping nova-compute on %s gracefully at %s '
                '(SIGTERM to pid %d%s)', hit.host, hit.describe(),
                os.getpid(), '' if kill_after is None else
                ', SIGKILL after %ss' % kill_after)
    _record(hit, 'signalled', hold, kill_after)
    if kill_after is not None:
        def kill():
            LOG.warning('faultdriver: the graceful stop of %s outlived '
                        'kill_after=%ss: SIGKILL', hit.host, kill_after)
            _record(hit, 'killed', hold, kill_after)
            crash.crash_process(hit, signal.SIGKILL)
        timer = threading.Timer(kill_after, kill)
        timer.daemon = True
        timer.start()
    # To the main thread, where the service manager's handler runs, as a
    # SIGTERM from outside (systemctl) reaches it.  A process-wide
    # kill() from this thread may be delivered to this thread (Linux 6.x
    # does), and Python runs handlers only on the main thread, which then
    # sleeps on in its wait for the service: seen on the libvirt tier,
    # the stop never began.  (The main thread's ident is its pthread id
    # in eventlet mode too: Python imports threading before Nova patches.)
    signal.pthread_kill(threading.main_thread().ident, signal.SIGTERM)


class Shutdown(base.Action):
    """shutdown(hold=0, kill_after=<none>): stop the service gracefully here.

    The host's nova-compute gets what ``systemctl stop`` gives it: SIGTERM,
    so Nova's own graceful shutdown runs (``Service.stop``: shutdown in
    progress, the main RPC server stopped, the alternative topic serving
    the operations in progress, the manager's wait for its tasks, then
    ``cleanup_host``).  The call that hit the rule goes on; with ``hold``
    it is held that many real seconds first (after the stop began), so it
    can outlive the manager's wait.  ``kill_after``: SIGKILL if the stop
    still runs that many seconds after SIGTERM (systemd's
    ``TimeoutStopSec``, 90 s by default, is below Nova's 180 s
    ``graceful_shutdown_timeout``); process tiers only.  Once stopped the
    service is down, as after a crash, until it is restarted.

    The journal gets a ``shutdown`` entry when the stop begins
    (``signalled``, in a real nova-compute: its log has the rest) or ends
    (``finished``, in the embedded Nova, which runs the host's real
    ``Service.stop()`` in a thread of its own: every host shares the
    process).
    """

    name = 'shutdown'
    params = (('hold', base.seconds), ('kill_after', base.seconds))

    @classmethod
    def needs(cls, term, rule):
        """``kill_after`` kills the host's own process."""
        if 'kill_after' in cls.bind(term):
            return frozenset({tiers.Provision.PROCESS_PER_HOST})
        return frozenset()

    def __call__(self, hit):
        hold = self.args.get('hold')
        kill_after = self.args.get('kill_after')
        handler = hit.engine.shutdown_handler
        if handler is not None:
            handler(hit, hold=hold, kill_after=kill_after)
        else:
            signal_own_process(hit, hold, kill_after)
        if hold:
            time.sleep(hold)
            # In a real nova-compute the process is gone by now if the
            # stop finished; the embedded Nova's host is marked dead then,
            # and this thread ends as its other threads do.
            hit.engine.end_if_dead(hit.point, hit.phase)
