"""The periodic action: run the resource tracker's periodic right here."""

import logging
import threading
import time

from oslo_concurrency import lockutils

from faultdriver.actions import base
from faultdriver import journal
from faultdriver import rules

LOG = logging.getLogger(__name__)


def manager_of(target):
    """The ComputeManager behind a FaultDriver or a ResourceTracker."""
    driver = getattr(target, 'driver', target)
    return driver.virtapi._compute


def run_now(target):
    """Run the resource-tracker periodic of ``target``'s compute manager
    in this thread, as its timer does (the action and ``ctl periodic``)."""
    from nova import context as nova_context
    manager_of(target).update_available_resource(
        nova_context.get_admin_context())


class Periodic(base.Action):
    """periodic(timeout=60): run update_available_resource on this host now.

    Runs the compute manager's resource-tracker periodic inside the window
    the point opens, in another thread so that it cannot deadlock on the
    tracker lock (``COMPUTE_RESOURCE_SEMAPHORE``).  The thread first takes
    that lock, noting whether another thread held it when it asked
    (``waited_for_lock``: a fact, not a duration) and timing the wait, and
    lets it go again before it runs the periodic (none once the host's
    graceful shutdown began, as Nova's timer runs none: the journal
    entry says it was skipped): Nova 34 runs the
    per-node update on its UPDATE_RESOURCES executor, another thread,
    which would wait forever for a lock this thread held.  The journal
    gets an entry with ``event: periodic``, ``waited_for_lock`` and
    ``lock_wait_seconds``.  At points that run
    under the tracker lock (their ``before``/``after``) the hit thread does
    not wait for the periodic (it could not finish before the lock is
    released); elsewhere, and in the ``unlocked`` phase of those points
    (before the lock), it waits up to ``timeout`` seconds.
    """

    name = 'periodic'
    params = (('timeout', base.seconds),)

    def __call__(self, hit):
        from nova.compute import resource_tracker

        from faultdriver import points

        if hit.in_periodic:
            self._skip(hit, "the hit is in %s's own resource periodic"
                       % hit.host)
            return
        if manager_of(hit.target)._shutdown_in_progress.is_set():
            # Nova's timer runs no periodic task once a graceful stop
            # began (Manager.periodic_tasks): neither does this.
            self._skip(hit, 'nova-compute on %s is shutting down: Nova '
                       'runs no periodic task then' % hit.host)
            return
        point = points.catalogue()[hit.point]
        started = threading.Event()
        outcome = {}

        def run():
            name = resource_tracker.COMPUTE_RESOURCE_SEMAPHORE
            # Before the hit thread may go on (and release the lock if it
            # holds it): whether someone holds the lock as we ask for it.
            outcome['held'] = (
                lockutils.internal_fair_lock(name).owner is not None)
            begin = time.monotonic()
            started.set()
            try:
                with lockutils.lock(name, 'nova-', fair=True):
                    outcome['lock_wait'] = time.monotonic() - begin
                run_now(hit.target)
            except Exception as exc:
                outcome['error'] = '%s: %s' % (type(exc).__name__, exc)
                LOG.exception('faultdriver periodic at %s on %s failed',
                              hit.describe(), hit.host)
            finally:
                self._report(hit, outcome, time.monotonic() - begin)

        thread = threading.Thread(target=run, daemon=True,
                                  name='faultdriver-periodic-%s' % hit.host)
        thread.start()
        started.wait()
        if not point.tracker_lock or hit.phase == rules.UNLOCKED:
            # The hit thread holds no tracker lock: the periodic runs
            # within the window, before the thread goes on.
            thread.join(self.args.get('timeout', 60.0))

    @staticmethod
    def _skip(hit, reason):
        LOG.warning('faultdriver periodic at %s on %s not run: %s',
                    hit.describe(), hit.host, reason)
        if hit.engine.journal is not None:
            hit.engine.journal.record(journal.JournalEntry(
                kind=journal.PERIODIC, time=time.time(), host=hit.host,
                point=hit.point, phase=hit.phase,
                rule_index=hit.rule_index, hit=hit.hit, skipped=reason))

    @staticmethod
    def _report(hit, outcome, duration):
        wait = outcome.get('lock_wait')
        entry = journal.JournalEntry(
            kind=journal.PERIODIC, time=time.time(), host=hit.host,
            point=hit.point, phase=hit.phase, rule_index=hit.rule_index,
            hit=hit.hit,
            lock_wait_seconds=None if wait is None else round(wait, 3),
            waited_for_lock=bool(outcome.get('held')),
            duration_seconds=round(duration, 3), error=outcome.get('error'))
        LOG.warning('faultdriver periodic at %s on %s done: waited %ss for '
                    'the tracker lock, error=%s', hit.describe(), hit.host,
                    entry.lock_wait_seconds, entry.error)
        if hit.engine.journal is not None:
            hit.engine.journal.record(entry)
