"""The invariant that the cloud is usable, not only consistent: every
server the scenario moved live-migrates away and back."""

import typing

from faultdriver.scenario.invariants import base

#: Where a live migration's source runs its periodic during a follow-up
#: move: the source's driver call, after the destination's claim gave
#: the server its new migration context (the window of the stale
#: migration-context class, findings F1).
WINDOW_RULE = 'live_migration.before: 1*periodic'


def moves_again(steps: base.Steps, state: base.State,
                timeout: float = 60) -> base.Checked:
    """Every ACTIVE server on a host that the scenario moved (every
    ACTIVE server if it moved none) live-migrates away (the scheduler
    picks the host) and back, and each move's source runs its periodic
    while the move is under way (what periodics-clean then checks)."""
    failed = []
    moved = [alias for alias in steps.servers if steps.moves.get(alias)]
    for alias, server in steps.servers.items():
        home = state.servers.get(alias)
        if home is None or home.status != 'ACTIVE' or (
                moved and alias not in moved):
            continue
        if home.host is None:
            # ACTIVE on no host (an admin's reset-state of a server a
            # crash left host-less): nothing to move it from; what it
            # left is allocations-consistent's to report.
            continue
        for leg, target in (('away', None), ('back', home.host)):
            try:
                _live_migrate(steps, server, target, timeout)
            except Exception as exc:
                failed.append('%s (%s): %s%s' % (
                    alias, leg, str(exc)[:200], _why(steps, server)))
                break
    return not failed, 'every ACTIVE server live-migrates away and back', \
        failed or 'all moved'


def _live_migrate(steps: base.Steps, server: typing.Mapping[str, typing.Any],
                  host: typing.Optional[str], timeout: float) -> None:
    nova = steps.nova
    source = nova.api.get_server(server['id'])['OS-EXT-SRV-ATTR:host']
    count = len(nova.migrations(server)) + 1
    index = nova.faults.add_rule(source, WINDOW_RULE)
    try:
        nova.api.post_server_action(server['id'], {
            'os-migrateLive': {'host': host, 'block_migration': 'auto'}})
        nova.wait_newest_migration(server, 'completed', count,
                                   timeout=timeout)
        nova.wait_for_server(server, timeout=timeout, status='ACTIVE',
                             task_state=None)
    finally:
        # Not hit when the move failed early: it must not fire later.
        nova.faults.remove_rule(source, index)


def _why(steps: base.Steps, server: typing.Mapping[str, typing.Any]) -> str:
    """Why Nova says the newest live migration failed: its action's
    failed event (details, else the traceback's last line), so a move
    that fails once in many runs can be told from the report alone
    (NoValidHost, a refused pre-check, a timeout)."""
    try:
        events = steps.nova.action_events(server, 'live-migration')
    except Exception as exc:
        return '; its events not read: %s' % str(exc)[:100]
    for event in events:
        if event.get('result') == 'Error':
            lines = (event.get('traceback') or '').strip().splitlines()
            return '; %s failed: %s' % (event['event'], str(
                event.get('details') or (lines[-1] if lines else '?'))[:300])
    return '; no failed event recorded'


def _export(writer: base.Writer, timeout: float = 60) -> base.NovaForm:
    moved = writer.moved or list(writer.servers)
    servers = '{%s}' % ', '.join('%r: %s' % (alias, writer.servers[alias])
                                 for alias in moved)
    return base.NovaForm(('moves_again',), 'self._moves_again(%s%s)' % (
        servers, '' if timeout == 60 else ', timeout=%s' % timeout), '[]')


MOVES_AGAIN = base.Invariant(
    'moves-again',
    'every ACTIVE server should live-migrate away and back',
    moves_again, _export, after=2,
    details='Checked after the others but periodics-clean: it moves '
            'servers.  The cloud is usable, not only consistent: every '
            'ACTIVE server the scenario moved (every ACTIVE one if it '
            'moved none) live-migrates away (the scheduler picking the '
            'host) and back, each move within `timeout`, and each move\'s '
            'source runs its resource-tracker periodic while the move is '
            'under way (rule `live_migration.before: 1*periodic`; the '
            'window of the stale migration-context class).  A server '
            'ACTIVE on no host (an admin\'s reset-state of one a crash '
            'left host-less) has nothing to move from and is skipped.',
    args={'timeout': {'$ref': '#/$defs/timeout'}})
