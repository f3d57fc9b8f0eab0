"""Expectations: check the state a variant ended in, each kind saying
what it found, met or not.  The kinds are the facts
(:mod:`faultdriver.scenario.facts`) and the registered invariants
(:mod:`faultdriver.scenario.invariants`)."""

import collections.abc
import time
import typing

from faultdriver.scenario import facts
from faultdriver.scenario import invariants
from faultdriver.scenario.invariants import attachments
from faultdriver.scenario.invariants import outcome
from faultdriver.scenario.invariants import placement
from faultdriver.scenario.invariants import tasks
from faultdriver.scenario import runstate
from faultdriver.scenario import statuses

Checked = invariants.base.Checked
State = runstate.RunState
Steps = facts.Steps

# Names other modules and tests read here.
TERMINAL = statuses.TERMINAL
WAITING = statuses.WAITING
SETTLED_SERVER = statuses.SETTLED_SERVER
ROLLED_BACK = statuses.ROLLED_BACK
TASK_GRACE = tasks.TASK_GRACE
MoveEnd = outcome.MoveEnd
moves_ended = outcome.moves_ended
move_end_matches = outcome.move_end_matches
misplaced_allocations = placement.misplaced_allocations
misattached_volumes = attachments.misattached_volumes
misbound_ports = attachments.misbound_ports


Check = typing.Callable[..., Checked]


class _Kinds(collections.abc.Mapping[str, Check]):
    """Every expectation kind's check, the registry's invariants as they
    are now (a test may register one)."""

    def __getitem__(self, kind: str) -> Check:
        found = invariants.get(kind)
        return found.check if found else facts.KINDS[kind]

    def __iter__(self) -> typing.Iterator[str]:
        return iter(tuple(facts.KINDS) + invariants.names())

    def __len__(self) -> int:
        return len(facts.KINDS) + len(invariants.names())


KINDS = _Kinds()


def evaluate(steps: Steps, expectations: typing.Iterable[typing.Any],
             state: State) -> typing.List[runstate.ExpectationResult]:
    """Check each ExpectationSpec on the run's ``state``: verdicts, the
    state-changing invariants (``after``) last."""
    ordered = sorted(expectations, key=lambda e: invariants.rank(e.kind))
    verdicts = []
    for expectation in ordered:
        kind, args = expectation.kind, dict(expectation.args)
        # An invariant written ``broken: true``: the scenario shows it
        # broken (a sweep finding's reproducer).
        broken = invariants.get(kind) is not None and \
            args.pop('broken', False)
        began = time.monotonic()
        try:
            met, text, actual = KINDS[kind](steps, state, **args)
            if broken:
                met, text = not met, 'BROKEN: ' + text
        except Exception as exc:
            met, text, actual = False, '%s %s' % (kind, args), \
                'could not check: %s: %s' % (type(exc).__name__, exc)
        verdicts.append(runstate.ExpectationResult(
            kind=kind, expectation=text, met=met, actual=actual,
            seconds=round(time.monotonic() - began, 2)))
    return verdicts
