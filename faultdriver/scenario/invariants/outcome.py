"""Invariants of some sweep cases only, against the workflow's clean
run: a case whose event changes timing only ends as the clean run did;
a case that stops a compute gracefully ends so or rolls back cleanly.
The sweep adds them with the clean run's outcome (not ``swept``)."""

import typing

from faultdriver.scenario.invariants import base
from faultdriver.scenario import statuses

#: How one server's moves ended (:func:`moves_ended`): JSON, as the
#: sweep saves the clean run's and a case's scenario names it.
MoveEnd = typing.Dict[str, typing.Any]


def moves_ended(state: base.State) -> typing.Dict[str, MoveEnd]:
    """How the moves ended: per server, its status, host and migration
    statuses (oldest first)."""
    return {alias: {'status': server.status, 'host': server.host,
                    'migrations': [m.status for m in state.migrations
                                   if m.server == alias]}
            for alias, server in state.servers.items()}


def move_end_matches(state: base.State) -> typing.Dict[str, bool]:
    """``{host: bool}``: whether each host's pinned pCPUs matched
    placement when the moves ended, before recover's periodics (the
    state's ``move_end``; {} where it was not taken)."""
    return {host: counted.matches
            for host, counted in (state.move_end or {}).items()}


def outcome_as_clean(
        steps: base.Steps, state: base.State,
        outcome: typing.Optional[typing.Dict[str, MoveEnd]] = None,
        accounting: typing.Optional[typing.Dict[str, bool]] = None
) -> base.Checked:
    """The cases whose event changes timing only (a periodic at a step,
    this host's or another's): the moves end as in the workflow's clean
    run (``outcome``, what :func:`moves_ended` said of it), and every
    host whose pinned pCPUs matched placement when the clean run's moves
    ended (``accounting``, :func:`move_end_matches`) matches when this
    run's ended, before any periodic of recover's repairs it (a periodic
    in bug 1879878's window frees a usage that nothing claims back until
    the next one).  When the periodic runs is no fault: an outcome it
    changes is a race in Nova."""
    actual = moves_ended(state)
    differ: typing.Dict[str, typing.Any] = {
        alias: actual.get(alias) for alias, wanted in
        (outcome or {}).items() if actual.get(alias) != wanted}
    move_end = state.move_end or {}
    for host, matched in sorted((accounting or {}).items()):
        counted = move_end.get(host)
        if matched and counted and not counted.matches:
            differ['%s when the moves ended' % host] = (
                '%d pinned / %d PCPU in placement' % (
                    len(counted.pinned_cpus), counted.placement_pcpu))
    return (not differ, 'moves end as in the clean run',
            differ or 'as in the clean run')


def outcome_after_shutdown(
        steps: base.Steps, state: base.State,
        outcome: typing.Optional[typing.Dict[str, MoveEnd]] = None,
        origin: typing.Optional[typing.Dict[str, str]] = None,
        rollback: bool = True) -> base.Checked:
    """The cases that stop a compute gracefully (no hold) and start it
    again: what Nova's graceful shutdown promises.  Each server ends as
    in the workflow's clean run (``outcome``, :func:`moves_ended`), or,
    where the move may be given up (``rollback``: not an evacuation,
    whose source is down already), rolled back cleanly: ACTIVE on the
    host it was booted on (``origin``), its newest migration failed,
    cancelled or reverted (``statuses.ROLLED_BACK``), never ``error``.
    The actual says which, per server."""
    actual = moves_ended(state)
    ended, wrong = {}, {}
    for alias, wanted in (outcome or {}).items():
        got = actual.get(alias)
        if got == wanted:
            ended[alias] = 'as in the clean run'
        elif (rollback and got and got['migrations'] and
              got['migrations'][-1] in statuses.ROLLED_BACK and
              got['status'] == 'ACTIVE' and
              got['host'] == (origin or {}).get(alias)):
            ended[alias] = 'rolled back (%s)' % got['migrations'][-1]
        else:
            wrong[alias] = got
    return (not wrong, 'after a graceful stop and a start, moves end as '
            'in the clean run%s' % (' or roll back cleanly' if rollback
                                   else ''),
            wrong or ended)


OUTCOME_AS_CLEAN = base.Invariant(
    'outcome-as-clean',
    'the moves should end as in the clean run when only the timing '
    'changed or Nova retried the failure',
    outcome_as_clean, swept=False,
    details='Added by the sweep to timing-only cases (a periodic at a '
            "step, the host's own or another host's) and to a transient "
            "service error Nova's own code retries at the step (a point's "
            '`retries`: one 500 or 504 at Cinder\'s attachment_update or '
            "attachment_delete): each server ends "
            'with the status, host and migration statuses of the '
            "workflow's clean run (`outcome`, written by the sweep), and "
            'each host whose pinned pCPUs matched placement when the clean '
            "run's moves ended (`accounting`, taken as `recover` begins, "
            "before its periodics) matches when this run's moves end.  "
            'When the periodic runs is no fault, so an outcome it changes '
            'is a race in Nova; an error Nova retried is no failure.',
    args={'outcome': {'$ref': '#/$defs/moves-ended'},
          'accounting': {
              'description': "`{host: true|false}`: whether the host's "
                             'pinned pCPUs matched placement when the '
                             "clean run's moves ended (written by the "
                             'sweep).',
              'type': 'object', 'maxProperties': 16,
              'additionalProperties': {'type': 'boolean'}}})
OUTCOME_AFTER_SHUTDOWN = base.Invariant(
    'outcome-after-shutdown',
    'after a graceful stop and a start, the moves should end as in the '
    'clean run or roll back cleanly',
    outcome_after_shutdown, swept=False,
    details='Added by the sweep to cases that stop a compute gracefully '
            '(the `shutdown` action, no hold) and start it again: each '
            "server ends as in the workflow's clean run (`outcome`, "
            'written by the sweep) or, with `rollback` (not an '
            'evacuation), rolled back cleanly: ACTIVE on the host it was '
            'booted on (`origin`), its newest migration failed, cancelled '
            'or reverted, never error.  The actual says which, per server.',
    args={'outcome': {'$ref': '#/$defs/moves-ended'},
          'origin': {'type': 'object', 'maxProperties': 64,
                     'additionalProperties': {'type': 'string',
                                              'maxLength': 255}},
          'rollback': {'type': 'boolean', 'description': 'Default true.'}})
