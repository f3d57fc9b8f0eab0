"""The catalogues faultdriver's commands print: actions, points, fixes,
as reStructuredText lines."""

import importlib
from importlib import metadata
import inspect

from faultdriver_docs import rst


def _entry_points(group):
    return sorted(metadata.entry_points(group=group), key=lambda e: e.name)


def actions():
    """Every action: its usage line, then the rest of its docstring (the
    plugin's user documentation, written in reStructuredText)."""
    from faultdriver import actions as actions_module

    lines = []
    for entry in _entry_points(actions_module.NAMESPACE):
        plugin = entry.load()
        usage, _, body = inspect.getdoc(plugin).partition('\n')
        signature, _, summary = usage.partition(': ')
        lines += rst.title(entry.name)
        lines += ['%s: %s' % (rst.literal(signature), rst.escape(summary)),
                  '', body.strip(), '',
                  'Plugin: %s' % rst.literal(entry.value), '']
    return lines


def points(kind):
    """The points of one kind (``driver``, ``tracker`` or ``service``) as
    a table."""
    from faultdriver import points as points_module

    if kind == 'service':
        return _service_points(points_module.catalogue().values())
    if kind == 'rpc':
        return _rpc_points(points_module.catalogue().values())
    rows = []
    for point in points_module.catalogue().values():
        if point.kind != kind:
            continue
        rows.append([
            rst.literal(point.name),
            rst.escape(', '.join(point.roles) or 'any'),
            rst.escape(', '.join(point.operations)),
            'yes' if point.tracker_lock else '',
            ', '.join(rst.literal(name) for name in point.raises),
            rst.escape(point.doc)])
    if not rows:
        raise ValueError('no %r points in the catalogue' % kind)
    return rst.list_table(['Point', 'Roles', 'Operations', 'Tracker lock',
                           '``raise`` accepts', 'What it is'], rows,
                          widths=[22, 8, 14, 6, 22, 28])


def _service_points(catalogue):
    """Service-call points: the Nova method that is the step and what
    Nova's client gives its caller per failure kind."""
    rows = [[rst.literal(point.name),
             rst.escape(', '.join(point.roles) or 'any'),
             rst.escape(', '.join(point.operations)),
             rst.literal(point.method),
             '; '.join(rst.escape(text) for text in point.produces),
             rst.escape(point.doc)]
            for point in catalogue if point.kind == 'service']
    if not rows:
        raise ValueError("no 'service' points in the catalogue")
    return rst.list_table(['Point', 'Roles', 'Operations', 'Nova method',
                           "What Nova's client gives its caller",
                           'What it is'], rows,
                          widths=[18, 7, 12, 20, 28, 15])


def _rpc_points(catalogue):
    """RPC points: how the message comes (call or cast, heartbeats) and
    who sends it in a move."""
    from faultdriver import points as points_module

    facts = points_module.facts().get('rpc', {})
    rows = [[rst.literal(point.name),
             rst.escape(', '.join(point.roles) or 'any'),
             rst.escape(', '.join(point.operations)),
             rst.escape(point.rpc + (', call_monitor_timeout'
                                     if point.monitored else '')),
             rst.escape(facts[point.name.partition('.')[2]].get(
                 'caller', '')),
             rst.escape(point.doc)]
            for point in catalogue if point.kind == 'rpc']
    if not rows:
        raise ValueError("no 'rpc' points in the catalogue")
    return rst.list_table(['Point', 'Roles', 'Operations', 'Sent as',
                           'Caller', 'What it is'], rows,
                          widths=[22, 7, 12, 15, 18, 26])


def rollback():
    """The rollback table (faultdriver/data/rollback.yaml) that the
    ``outcome-after-failure`` invariant holds a failed move to."""
    from faultdriver.scenario import rollback as rollback_module

    rows = [[rst.escape(', '.join(row.operations)), rst.literal(row.point),
             rst.escape(row.host), rst.escape(', '.join(row.phases)),
             rst.escape(row.action) + (
                 ' ' + rst.literal(row.exception) if row.exception else ''),
             rst.escape(row.ends),
             rst.escape(', '.join(row.migration) or 'none'),
             '%s: %s' % (rst.literal(row.nova), rst.escape(row.why))]
            for row in rollback_module.table()]
    return rst.list_table(['Operations', 'Point', 'Host', 'Phases',
                           'Fault', 'Ends', 'Migration',
                           'Nova code path: what it does'], rows,
                          widths=[10, 16, 6, 8, 10, 7, 8, 35])


def fixes():
    """Every candidate tracker fix: its module's docstring (bug, cause,
    change) and the Nova symbols it relies on."""
    from faultdriver.tracker import patches

    lines = []
    for entry in _entry_points(patches.NAMESPACE):
        fix = entry.load()
        module = importlib.import_module(fix.__module__)
        lines += rst.title(entry.name)
        lines += [inspect.getdoc(module), '',
                  'Relies on: %s.' % ', '.join(
                      rst.literal(symbol) for symbol in fix.requires),
                  '', 'Plugin: %s' % rst.literal(entry.value), '']
    return lines
