"""The invariant that no nova-compute still tracks a task for its
graceful shutdown once the steps ended (findings F19)."""

import typing

from faultdriver.scenario.invariants import base
from faultdriver import waiting

#: Seconds a task the state shows tracked may take to end before
#: tasks-ended counts it: a call that was still answering when the state
#: was read (settle waits for quiet, not for every cast's last line).
TASK_GRACE = 5


def tasks_ended(steps: base.Steps, state: base.State) -> base.Checked:
    """Once the steps ended, no running nova-compute tracks a task for
    Nova's graceful shutdown (faultdriver.manager_tasks).  A task tracked
    for good makes every later graceful stop of that host wait out the
    manager's whole wait for it (F19).  A task the state shows is given
    ``TASK_GRACE`` seconds to end; the actual names those left, per host,
    with the server each is for."""
    alias_of = {server.id: alias
                for alias, server in state.servers.items()}
    hosts = [host for host, info in sorted(state.hosts.items())
             if info.tasks]

    def left() -> typing.Dict[str, typing.List[str]]:
        found = {}
        for host in hosts:
            tasks = steps.nova.tasks_in_progress(host)
            if tasks:
                found[host] = ['%s (%s)' % (
                    task['name'], alias_of.get(task['instance_uuid'],
                                               task['instance_uuid']))
                    for task in tasks]
        return found
    found: typing.Dict[str, typing.List[str]] = {}

    def ended() -> bool:
        found.clear()
        found.update(left())
        return not found
    if hosts:
        waiting.until(ended, TASK_GRACE, 'tasks ending', fail=False)
    return (not found, 'no nova-compute tracks a task once the steps '
            'ended', found or 'none tracked')


def _export(writer: base.Writer) -> base.NovaForm:
    return base.NovaForm(('tracked_tasks',),
                         'self._tracked_tasks(%d)' % TASK_GRACE, '{}')


TASKS_ENDED = base.Invariant(
    'tasks-ended',
    'no running nova-compute should track a task for its graceful '
    'shutdown once the steps ended',
    tasks_ended, _export,
    details='A task still tracked makes every later graceful stop of '
            "that host wait out the manager's whole wait (findings F19).  "
            'A task the end state shows gets %d s to end; the actual '
            'names those left, per host.' % TASK_GRACE)
