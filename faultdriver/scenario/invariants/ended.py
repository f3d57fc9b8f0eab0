"""Invariants that every move and every server ended: migrations in a
terminal status, servers settled (no task left in progress)."""

import typing

from faultdriver.scenario.invariants import base
from faultdriver.scenario.invariants import failure as failing
from faultdriver.scenario import rollback
from faultdriver.scenario import statuses


def migrations_terminal(steps: base.Steps, state: base.State) -> base.Checked:
    """Every migration ended (none left running, preparing or
    post-migrating after the cloud settled)."""
    actual = ['%s#%s %s' % (m.server, m.id, m.status)
              for m in state.migrations if m.status not in statuses.TERMINAL]
    return not actual, 'every migration in a terminal status', \
        actual or 'all terminal'


def servers_settled(
        steps: base.Steps, state: base.State,
        failure: typing.Optional[typing.Mapping[str, typing.Any]] = None
) -> base.Checked:
    """Every server ACTIVE, SHUTOFF or ERROR with no task in progress (a
    task state left set needs an operator).  ``failure`` (a sweep's
    raise and crash cases: their fault, as ``outcome-after-failure``
    takes it): a server an operation was asked of (``steps.operated``)
    may also end in the one status outside those that Nova's rollback
    for that fault promises (rollback.designed_status: a failed
    unshelve's SHELVED_OFFLOADED), with no task state; nothing else is
    taken."""
    unsettled, designed = [], []
    for alias, server in state.servers.items():
        if server.task_state or server.status not in \
                statuses.SETTLED_SERVER:
            if not server.task_state and failure and \
                    alias in steps.operated and server.status == \
                    rollback.designed_status(failure, alias):
                designed.append(alias)
            else:
                unsettled.append('%s %s/%s' % (alias, server.status,
                                               server.task_state))
    text = 'every server ACTIVE, SHUTOFF or ERROR, no task state'
    if failure:
        text += ' (or as Nova\'s rollback of the fault promises)'
    if unsettled:
        return False, text, unsettled
    return True, text, 'all settled%s' % ''.join(
        '; %s %s as Nova\'s rollback of %s.%s promises' % (
            alias, state.servers[alias].status, failure['point'],
            failure['phase']) for alias in designed if failure)


def _export_terminal(writer: base.Writer) -> base.NovaForm:
    return base.NovaForm(('unfinished_migrations',),
                         'self._unfinished_migrations(%s)'
                         % writer.server_dict(), '[]')


def _export_settled(writer: base.Writer,
                    failure: typing.Optional[typing.Mapping[str, typing.Any]]
                    = None) -> base.NovaForm:
    """The servers not settled; with ``failure``, but the status its
    rollback row promises each operated server (what the check takes),
    as the helper words it (``s1 SHELVED_OFFLOADED/None``)."""
    servers = writer.server_dict()
    designed = sorted('%s %s/None' % (alias, status) for alias, status in (
        (alias, rollback.designed_status(failure, alias))
        for alias in operated(writer.scenario)) if status)
    if designed:
        return base.NovaForm(('unsettled_servers_but',),
                             'self._unsettled_servers_but(%s, %r)' % (
                                 servers, designed), '[]')
    return base.NovaForm(('unsettled_servers',),
                         'self._unsettled_servers(%s)' % servers, '[]')


def operated(scenario: typing.Any) -> typing.List[str]:
    """The servers a step of ``scenario`` (faultdriver.scenario.model.
    Scenario) asks an operation that is no move of (a shelve): those
    ``steps.operated`` holds once the API took it."""
    from faultdriver.scenario import stepkinds
    found = []
    for step in scenario.steps:
        kind = stepkinds.get(step.kind)
        server = step.args.get('server')
        if kind is not None and kind.operates and server not in found:
            found.append(server)
    return found


MIGRATIONS_TERMINAL = base.Invariant(
    'migrations-terminal',
    'every migration should end in a terminal status',
    migrations_terminal, _export_terminal,
    details='Terminal: completed, confirmed, reverted, error, failed, '
            'cancelled (done and finished wait for someone).')
SERVERS_SETTLED = base.Invariant(
    'servers-settled',
    'every server should be ACTIVE, SHUTOFF or ERROR with no task state',
    servers_settled, _export_settled,
    details='`failure` (added by the sweep to `raise`, `raise-generic`, '
            "`crash`, `http-error` and `connfail` cases, the fault as "
            "`outcome-after-failure` takes it): "
            'a server an operation that is no move was asked of (a shelve) '
            'may also end in the one other status, with no task state, '
            "that the rollback table's row for the fault promises (a "
            "failed unshelve's SHELVED_OFFLOADED); a task state left set "
            'still breaks it.',
    args={'failure': {
        'description': "The case's fault, written by the sweep: "
                       "`outcome-after-failure`'s keys but `outcome`.",
        'type': 'object', 'additionalProperties': False,
        'properties': failing.FAULT,
        'required': list(failing.FAULT_REQUIRED)}})
