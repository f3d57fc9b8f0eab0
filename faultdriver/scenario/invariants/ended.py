"""Invariants that every move and every server ended: migrations in a
terminal status, servers settled (no task left in progress)."""

from faultdriver.scenario.invariants import base
from faultdriver.scenario import statuses


def migrations_terminal(steps: base.Steps, state: base.State) -> base.Checked:
    """Every migration ended (none left running, preparing or
    post-migrating after the cloud settled)."""
    actual = ['%s#%s %s' % (m.server, m.id, m.status)
              for m in state.migrations if m.status not in statuses.TERMINAL]
    return not actual, 'every migration in a terminal status', \
        actual or 'all terminal'


def servers_settled(steps: base.Steps, state: base.State) -> base.Checked:
    """Every server ACTIVE, SHUTOFF or ERROR with no task in progress (a
    task state left set needs an operator)."""
    actual = ['%s %s/%s' % (alias, s.status, s.task_state)
              for alias, s in state.servers.items()
              if s.status not in statuses.SETTLED_SERVER or s.task_state]
    return not actual, 'every server ACTIVE, SHUTOFF or ERROR, no task ' \
        'state', actual or 'all settled'


def _export_terminal(writer: base.Writer) -> base.NovaForm:
    return base.NovaForm(('unfinished_migrations',),
                         'self._unfinished_migrations(%s)'
                         % writer.server_dict(), '[]')


def _export_settled(writer: base.Writer) -> base.NovaForm:
    return base.NovaForm(('unsettled_servers',),
                         'self._unsettled_servers(%s)'
                         % writer.server_dict(), '[]')


MIGRATIONS_TERMINAL = base.Invariant(
    'migrations-terminal',
    'every migration should end in a terminal status',
    migrations_terminal, _export_terminal,
    details='Terminal: completed, confirmed, reverted, error, failed, '
            'cancelled (done and finished wait for someone).')
SERVERS_SETTLED = base.Invariant(
    'servers-settled',
    'every server should be ACTIVE, SHUTOFF or ERROR with no task state',
    servers_settled, _export_settled)
