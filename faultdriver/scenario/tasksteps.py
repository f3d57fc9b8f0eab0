"""``wait-tasks``: wait until the computes' threads of the operations
are done, as Nova's own task tracking tells it.

Why a step of its own: a move's migration record ends before the
move's threads do (a live migration's source saves it ``completed`` in
``_post_live_migration``, which its driver's ``live_migration`` calls
before it returns), so ``settle`` may hand over to ``recover`` while
the source still runs the end of the move.  A sweep's clean, traced run
(:mod:`faultdriver.sweep.trace`) waits with this step before
``recover``, so the steps it traces are the same each run: the trace
stops at ``recover``, and a hit after it was left out in some runs.

Done means what Nova 34's graceful shutdown waits for: no running
nova-compute's manager tracks a task (``Manager._record_task_start``:
every RPC call in progress, and the tasks the manager spawns, a
source's live migration until its thread ended among them; a
destination's move until the source called it back:
:mod:`faultdriver.manager_tasks`).  Read through the backend contract's
``tasks_in_progress``, so the same on every tier.  Bounded, and it
never fails: a task left tracked for good (F19) is the ``tasks-ended``
invariant's to report; the step says which tasks it gave up on.
"""

import typing

from faultdriver.scenario import backend
from faultdriver.scenario import specs
from faultdriver import waiting

#: The run's steps (faultdriver.scenario.steps.Steps, which this module
#: must not import: the registry, which Steps imports, imports this).
Steps = typing.Any

NAME = 'wait-tasks'


def _tracked(steps: Steps) -> typing.Dict[str, typing.List[str]]:
    """``{host: [task name, ...]}`` of the running computes that track
    a task now."""
    found = {}
    for host in steps.scenario.hosts:
        tasks = steps.nova.tasks_in_progress(host)
        if tasks:
            found[host] = sorted(task['name'] for task in tasks)
    return found


def _run(steps: Steps,
         timeout: float = backend.WAIT_TIMEOUT) -> typing.Optional[str]:
    left: typing.Dict[str, typing.List[str]] = {}

    def done() -> bool:
        left.clear()
        left.update(_tracked(steps))
        return not left
    waiting.until(done, timeout, 'the computes\' tasks ended', interval=0.2,
                  fail=False)
    if not left:
        return None
    return 'still tracked after %ss: %s' % (timeout, '; '.join(
        '%s: %s' % (host, ', '.join(names))
        for host, names in sorted(left.items())))


KINDS = (
    specs.StepKind(NAME, _run, {
        'description': 'Wait, at most `timeout` seconds and without '
        'failing, until no running nova-compute\'s manager tracks a task '
        '(Nova\'s graceful-shutdown tracking: the RPC calls in progress '
        'and the tasks they spawned, a source\'s live migration until '
        'its thread ended): the operations\' threads are done.  A '
        'migration is saved completed before its source\'s thread ends; '
        'a sweep\'s clean, traced run waits so before `recover`.  Its '
        'result names the tasks still tracked at the timeout.',
        'type': 'object', 'additionalProperties': False,
        'properties': {'timeout': {
            'type': 'number', 'exclusiveMinimum': 0, 'maximum': 86400,
            'description': 'Seconds to wait at most (default 30); then '
            'the step goes on.'}}}),
)
