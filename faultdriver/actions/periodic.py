"""The periodic action: run the resource tracker's periodic right here."""

import logging
import re
import threading
import time

from oslo_concurrency import lockutils

from faultdriver.actions import base
from faultdriver import journal
from faultdriver.scenario import tiers

LOG = logging.getLogger(__name__)


def manager_of(target):
    """The ComputeManager behind a FaultDriver or a ResourceTracker."""
    driver = getattr(target, 'driver', target)
    return driver.virtapi._compute


def run_now(target: object) -> None:
    """Run the resource-tracker periodic of ``target``'s compute manager
    in this thread, as its timer does (the action and ``ctl periodic``)."""
    from nova import context as nova_context
    manager_of(target).update_available_resource(
        nova_context.get_admin_context())


def host_name(value):
    """A compute host's name as ``CONF.host`` has it (the ``host``
    argument of ``periodic``)."""
    if not re.fullmatch(r'[A-Za-z0-9][A-Za-z0-9._-]{0,254}', value):
        raise ValueError('expected a compute host name (letters, digits, '
                         '".", "_", "-")')
    return value


def by_control_socket(sockets, host, timeout):
    """Run ``host``'s periodic through its control socket (``sockets``:
    ``[fault_injection] peer_control_sockets``): a real nova-compute's
    ``peer_periodic``.  Raises the periodic's error."""
    from faultdriver.control import client

    if host not in sockets:
        raise LookupError('host %s is not in [fault_injection] '
                          'peer_control_sockets (%s)' % (
                              host, ', '.join(sorted(sockets)) or 'empty'))
    answer = client.Client(sockets[host]).periodic(timeout=timeout)
    if answer.get('error'):
        raise RuntimeError('periodic of %s: %s' % (host, answer['error']))


class Periodic(base.Action):
    """periodic(timeout=60, host=NAME): run update_available_resource now.

    Runs a compute manager's resource-tracker periodic inside the window
    the point opens: this host's, or with ``host`` another host's (the
    window of a move's step on one host that the *other* host's periodic
    can fall into, as bug 1879878's revert half: the source's periodic
    while the destination reverts; Nova's own reproducer runs every
    host's periodic).

    This host's runs in another thread so that it cannot deadlock on the
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

    Another host's periodic runs in its own process with its own lock,
    so the hit thread waits for it at every phase; the engine's
    ``peer_periodic`` runs it (``[fault_injection]
    peer_control_sockets`` in a real nova-compute).  Its journal entry
    names it (``periodic_host``); whether it waited for its own lock is
    not known here (``waited_for_lock`` None).
    """

    name = 'periodic'
    params = (('timeout', base.seconds), ('host', host_name))

    @classmethod
    def needs(cls, term, rule):
        """Another host's periodic under the tracker lock (a tracker
        point's ``before``/``after``) runs only where that host has a
        lock of its own: where every host shares one, it could only run
        after the step."""
        from faultdriver import points

        point = points.catalogue().get(rule.point)
        if 'host' in cls.bind(term) and point is not None and \
                point.holds_lock(rule.phase):
            return frozenset({tiers.Provision.PROCESS_PER_HOST})
        return frozenset()

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
        peer = self.args.get('host')
        if peer is not None and peer != hit.host:
            self._run_peer(hit, peer)
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
        if not point.holds_lock(hit.phase):
            # The hit thread holds no tracker lock: the periodic runs
            # within the window, before the thread goes on.
            thread.join(self.args.get('timeout', 60.0))

    def _run_peer(self, hit, peer):
        """``peer``'s periodic, waited for (up to ``timeout``) in
        another thread: a peer that does not answer leaves the hit
        thread's step to go on, as a late periodic would."""
        outcome = {}

        def run():
            begin = time.monotonic()
            try:
                if hit.engine.peer_periodic is None:
                    raise LookupError(
                        'no other host is reachable from %s: set '
                        '[fault_injection] peer_control_sockets' % hit.host)
                hit.engine.peer_periodic(
                    peer, self.args.get('timeout', 60.0))
            except Exception as exc:
                outcome['error'] = '%s: %s' % (type(exc).__name__, exc)
                LOG.error('faultdriver periodic of %s at %s on %s failed: '
                          '%s', peer, hit.describe(), hit.host,
                          outcome['error'])
            finally:
                self._report(hit, outcome, time.monotonic() - begin, peer)

        thread = threading.Thread(target=run, daemon=True,
                                  name='faultdriver-periodic-%s' % peer)
        thread.start()
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
    def _report(hit, outcome, duration, peer=None):
        wait = outcome.get('lock_wait')
        entry = journal.JournalEntry(
            kind=journal.PERIODIC, time=time.time(), host=hit.host,
            point=hit.point, phase=hit.phase, rule_index=hit.rule_index,
            hit=hit.hit,
            lock_wait_seconds=None if wait is None else round(wait, 3),
            waited_for_lock=None if peer else bool(outcome.get('held')),
            duration_seconds=round(duration, 3), error=outcome.get('error'),
            periodic_host=peer)
        LOG.warning('faultdriver periodic%s at %s on %s done: waited %ss '
                    'for the tracker lock, error=%s',
                    ' of %s' % peer if peer else '', hit.describe(),
                    hit.host, entry.lock_wait_seconds, entry.error)
        if hit.engine.journal is not None:
            hit.engine.journal.record(entry)
