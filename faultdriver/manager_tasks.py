"""The tasks a compute manager tracks for Nova's graceful shutdown
(Nova 34: ``Manager._record_task_start``/``_record_task_end``), read.

A graceful stop waits for every task the manager still tracks, up to
``manager_shutdown_timeout`` less the 20 s kept for ``cleanup_host``.
Some tasks are tracked per operation, not per call: a destination's
live migration from ``pre_live_migration`` until the source calls it
back (``post_live_migration_at_destination`` or a rollback), a
destination's resize likewise.  When the source never calls back (it
crashed in between), the task stays tracked until the destination
restarts, and every graceful stop of the destination waits out the whole
timeout for it (doc/findings.rst F19).  The ``tasks-ended`` invariant
reads this after a scenario's steps: on the embedded Nova from the
manager itself, on the process tiers through the compute's control
socket (``faultdriver ctl tasks``).
"""

import typing


def in_progress(
        manager: typing.Any) -> typing.List[typing.Dict[str, typing.Any]]:
    """``[{name, instance_uuid}]``: the tasks ``manager`` tracks now,
    oldest first (the names are Nova's: the RPC method's, or
    ``live_migration_at_dest`` for a destination's whole move)."""
    with manager._in_progress_task_cond:
        tasks = sorted(manager._in_progress_tasks.values(),
                       key=lambda task: task['start_time'])
        return [{'name': task['name'],
                 'instance_uuid': task['instance_uuid']} for task in tasks]


def calls_in_progress(manager: typing.Any) -> int:
    """How many of the tasks ``manager`` tracks are calls a thread works
    on: all but a destination's per-move tasks (after its
    ``pre_live_migration`` or ``prep_resize`` returned, no thread on the
    destination works for the move until the source calls again, as a
    call of its own).  What Nova's ``shutdown_all_executors(wait=True)``
    waits for; the caller holds ``manager._in_progress_task_cond``."""
    per_move = set(manager._pending_dest_live_migrations.values()) | set(
        manager._pending_dest_resizes.values())
    return len(set(manager._in_progress_tasks) - per_move)


def end_pending_moves(manager: typing.Any) -> None:
    """End the destination's per-move tasks ``manager`` still tracks
    (Nova's own ``_end_pending_dest_live_migration_task`` and
    ``_end_pending_dest_resize_task``): what the embedded Nova's teardown
    does once a case's report is written, so that stopping its services
    does not wait 10 s per stop for a task no thread works on (F19's
    leak; the ``tasks-ended`` invariant has reported it by then).  A call
    still running keeps its own task and is waited for as before."""
    for uuid in list(manager._pending_dest_live_migrations):
        manager._end_pending_dest_live_migration_task(uuid)
    for uuid in list(manager._pending_dest_resizes):
        manager._end_pending_dest_resize_task(uuid)
