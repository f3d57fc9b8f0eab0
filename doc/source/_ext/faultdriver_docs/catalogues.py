"""The catalogues faultdriver's commands print: actions, points, fixes."""

import importlib
from importlib import metadata
import importlib.resources
import inspect

from faultdriver_docs import rst


def _entry_points(group):
    return sorted(metadata.entry_points(group=group), key=lambda e: e.name)


def _source(obj):
    return inspect.getsourcefile(obj)


class Actions(rst.Directive):
    """Every action: its usage line, then the rest of its docstring (the
    plugin's user documentation, written in reStructuredText)."""

    def run(self):
        from faultdriver import actions

        lines, sources = [], []
        for entry in _entry_points(actions.NAMESPACE):
            plugin = entry.load()
            usage, _, body = inspect.getdoc(plugin).partition('\n')
            signature, _, summary = usage.partition(': ')
            lines += rst.title(entry.name)
            lines += ['%s: %s' % (rst.literal(signature), rst.escape(summary)),
                      '', body.strip(), '',
                      'Plugin: %s' % rst.literal(entry.value), '']
            sources.append(_source(plugin))
        return self.parse(lines, sources)


class Points(rst.Directive):
    """The points of one kind (``driver`` or ``tracker``) as a table."""

    required_arguments = 1

    def run(self):
        from faultdriver import points

        kind = self.arguments[0]
        rows = []
        for point in points.catalogue().values():
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
            raise self.error('no %r points in the catalogue' % kind)
        data = importlib.resources.files('faultdriver') / 'data/points.yaml'
        return self.parse(
            rst.list_table(['Point', 'Roles', 'Operations', 'Tracker lock',
                            '``raise`` accepts', 'What it is'], rows,
                           widths=[22, 8, 14, 6, 22, 28]),
            [data, _source(points)])


class Fixes(rst.Directive):
    """Every candidate tracker fix: its module's docstring (bug, cause,
    change) and the Nova symbols it relies on."""

    def run(self):
        from faultdriver.tracker import patches

        lines, sources = [], []
        for entry in _entry_points(patches.NAMESPACE):
            fix = entry.load()
            module = importlib.import_module(fix.__module__)
            lines += rst.title(entry.name)
            lines += [inspect.getdoc(module), '',
                      'Relies on: %s.' % ', '.join(
                          rst.literal(symbol) for symbol in fix.requires),
                      '', 'Plugin: %s' % rst.literal(entry.value), '']
            sources.append(_source(module))
        return self.parse(lines, sources)
