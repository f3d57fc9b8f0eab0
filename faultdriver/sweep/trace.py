"""The steps a workflow really runs: a clean run with a ``log`` rule on
every point, read back from the journal.

The points come from the run, never from a hand list, so a step a newer
Nova adds is swept too; the catalogue's facts only narrow them to the
workflow's move (its ``operations``) and drop what happens after the
workflow hands over to ``recover``.
"""

import copy

from faultdriver import points as points_module

TRACE_MESSAGE = 'trace'


def trace_rules():
    """A ``log`` rule per point and phase, for every host ('*')."""
    return ['%s.%s: log(%s)' % (name, phase, TRACE_MESSAGE)
            for name in sorted(points_module.catalogue())
            for phase in ('before', 'after')]


def trace_scenario(workflow):
    """The workflow's data with the trace rules and no expectations of
    its own but the invariants (the clean run must keep them)."""
    data = copy.deepcopy(workflow.data)
    rules = dict(data.get('rules', {}))
    rules['*'] = list(rules.get('*', ())) + trace_rules()
    data['rules'] = rules
    data['name'] = 'trace-' + workflow.name
    data['variants'] = {'trace': {'description': 'clean run, traced'}}
    return data


def steps_hit(report, operation=None):
    """``[(point, host, phase)]`` in the order first hit, before the
    ``recover`` step; with ``operation``, only points whose catalogue
    facts say that move reaches them (or that do not say: tracker points
    and points on every path)."""
    catalogue = points_module.catalogue()
    cutoff = _recover_started(report)
    seen = []
    for entry in report['state']['faults']:
        if entry.get('action') != 'log' or entry.get('point') is None:
            continue
        if cutoff is not None and entry['time'] >= cutoff:
            continue
        point = catalogue.get(entry['point'])
        if point is None:
            continue
        if operation and point.operations and \
                operation not in point.operations:
            continue
        key = (entry['point'], entry['host'], entry.get('phase', 'before'))
        if key not in seen:
            seen.append(key)
    return seen


def _recover_started(report):
    origin = report.get('steps_started_at')
    for entry in report.get('timeline', ()):
        if entry['kind'] == 'recover' and origin is not None:
            return origin + entry['start']
    return None
