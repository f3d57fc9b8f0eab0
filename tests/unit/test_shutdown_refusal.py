"""Which threads the embedded Nova's graceful stop refuses new executors
(faultdriver.harness.shutdown.GracefulStops.refusal): every thread
working for the stopping host once its drain began, as a stopping
nova-compute's own executors refuse everything; none working for another
host, though the pool threads are shared.  Real threads; the drain runs
over managers with no tracked task (it returns at once)."""

import concurrent.futures
import threading

from nova import thread_pool_factory

from faultdriver.harness import shutdown

LIVE = thread_pool_factory.ExecutorType.LIVE_MIGRATION


class Manager:
    """What the drain reads of a Nova compute manager."""

    def __init__(self):
        self._in_progress_task_cond = threading.Condition()
        self._in_progress_tasks = {}
        self._pending_dest_live_migrations = {}
        self._pending_dest_resizes = {}


def drained(*hosts):
    """GracefulStops whose ``hosts`` began their drain."""
    stops = shutdown.GracefulStops(test=None)
    for host in hosts:
        stops._drain_while_stopping(host, Manager(), 0.0)
    stops._drain()
    for host in hosts:
        stops._stopped_draining(host)
    return stops


def in_thread(func):
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(func).result()


def refused(stops, host=None):
    """Whether a fresh thread working for ``host`` is refused."""
    def ask():
        if host is not None:
            stops.working_for(host)
        return stops.refusal(LIVE)
    return in_thread(ask)


def test_a_thread_working_for_the_stopping_host_is_refused():
    stops = drained('src')
    error = refused(stops, 'src')
    assert str(error) == ('Cannot create the live_migration thread pool '
                          'executor because shutdown has been started.')
    assert refused(stops, 'dest') is None
    assert refused(stops) is None           # works for no host


def test_nothing_is_refused_before_the_drain():
    stops = shutdown.GracefulStops(test=None)
    assert refused(stops, 'src') is None


def test_a_spawned_call_works_for_its_spawners_host_for_its_duration():
    stops = drained('src')

    def spawner():
        stops.working_for('src')
        return stops.carried(lambda: stops.refusal(LIVE))
    call = in_thread(spawner)
    with concurrent.futures.ThreadPoolExecutor(1) as shared_pool:
        # The shared pool thread is refused while it runs src's call,
        # and works for no host again afterwards.
        assert shared_pool.submit(call).result() is not None
        assert shared_pool.submit(stops.refusal, LIVE).result() is None


def test_a_call_from_a_thread_working_for_no_host_is_not_wrapped():
    stops = shutdown.GracefulStops(test=None)

    def call():
        return 'ran'
    assert in_thread(lambda: stops.carried(call)) is call


def _drain_warnings(caplog, tasks, pending):
    """The drain's warnings for one stopping host whose manager tracks
    ``tasks`` (``{key: name}``), ``pending`` of them a destination's
    per-move ones; its stop began long ago, so any task the drain waits
    for is reported at once."""
    manager = Manager()
    manager._in_progress_tasks.update(
        (key, {'name': name}) for key, name in tasks.items())
    manager._pending_dest_live_migrations.update(
        ('uuid-%d' % key, key) for key in pending)
    stops = shutdown.GracefulStops(test=None)
    stops._drain_while_stopping('dest', manager, 0.0)
    with caplog.at_level('WARNING'):
        stops._drain()
    stops._stopped_draining('dest')
    return [r.getMessage() for r in caplog.records
            if 'graceful_shutdown_timeout' in r.getMessage()]


def test_the_drain_does_not_wait_for_a_per_move_task(caplog):
    """A destination's live-migration task that no thread works on (F19)
    is not executor work: Nova's shutdown_all_executors does not wait."""
    assert _drain_warnings(caplog, {1: 'live_migration_at_dest'}, [1]) == []


def test_the_drain_waits_for_a_call(caplog):
    assert _drain_warnings(caplog, {1: 'live_migration_at_dest',
                                    2: 'post_live_migration_at_destination'},
                           [1]) == [
        'faultdriver: dest still has tasks at graceful_shutdown_timeout '
        '(%ss)' % shutdown.nova_conf.CONF.graceful_shutdown_timeout]
