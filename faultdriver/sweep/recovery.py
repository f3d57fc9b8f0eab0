"""A depth-2 sweep's second faults: faults during the recovery from a
first one (``faultdriver sweep WF --depth 2``).

Every first fault that leaves its host down (a crash) is run with the
recovery traced: the steps the service ``recover`` starts on that host
hits (``init_host``, ``_init_instance``'s driver calls, the start-up and
later resource updates).  Each of those steps x ``ACTIONS`` is a second
fault, in the services ``recover`` starts.  Pruned as FATE prunes by
failure equivalence: two first faults whose recoveries traced the same
steps (same points, hosts, phases, hit counts) recover the same way, so
the second faults run after the first of them only; the figures say how
many cases that saved.
"""

import dataclasses
import typing

from faultdriver.sweep import cases as cases_module
from faultdriver.sweep import records
from faultdriver.sweep import trace

#: What a second fault does: the host dies again, or a step of its
#: recovery fails.
ACTIONS = ('crash', 'raise')


def second_faults(first_cases: typing.Iterable[cases_module.Case],
                  results: typing.Mapping[str, records.CaseResult],
                  points: typing.Optional[typing.Collection[str]] = None,
                  backend: str = 'embedded'
                  ) -> typing.Tuple[typing.List[cases_module.Case],
                                    records.Pruning]:
    """``(cases, figures)``: the second-fault cases of the first cases'
    traced recoveries (``results``: ``{case id: result}``), narrowed to
    ``points`` if given, and what pruning did."""
    representative: typing.Dict[typing.Tuple[trace.TracedStep, ...],
                                str] = {}
    chosen: typing.List[cases_module.Case] = []
    every, traced = 0, 0
    for first in first_cases:
        result = results.get(first.id)
        if not result or result['internal_error'] or \
                not result.get('recovery_trace'):
            continue
        traced += 1
        steps = [trace.TracedStep.from_json(step)
                 for step in result['recovery_trace']]
        if points:
            steps = [step for step in steps if step.point in points]
        seconds = cases_module.generate(steps, ACTIONS, backend)
        every += len(seconds)
        path = tuple(steps)
        if path in representative:
            continue
        representative[path] = first.id
        chosen += [dataclasses.replace(case, first=first)
                   for case in seconds]
    return chosen, {
        'first_faults_recovered': traced,
        'recovery_paths': len(representative),
        'cases': len(chosen),
        'cases_without_pruning': every,
        'pruned': every - len(chosen),
    }


def cost_without_pruning(figures: records.Pruning,
                         second_results: typing.Iterable[records.CaseResult]
                         ) -> typing.Optional[float]:
    """Seconds the pruned cases would have cost: their number times the
    mean of the second faults run (None before any ran)."""
    ran = [r['seconds'] for r in second_results if not r['internal_error']]
    if not ran:
        return None
    return round(figures['pruned'] * sum(ran) / len(ran), 1)
