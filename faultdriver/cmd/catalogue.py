"""Commands that list what exists: points, actions, inner drivers."""

import inspect

from cliff import lister


class Points(lister.Lister):
    """List the injection points (driver methods, tracker steps, the
    Nova client methods of service calls and the compute manager's RPC
    methods)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--kind',
                            choices=('driver', 'tracker', 'service', 'rpc'),
                            help='only points of this kind')
        parser.add_argument('--operation',
                            help='only points a move operation uses, e.g. '
                                 'live-migration')
        parser.add_argument('--raises', action='store_true',
                            help='show the exceptions raise() accepts; at '
                                 'a service-call point, what Nova\'s client '
                                 'gives its caller per failure kind; at an '
                                 'RPC point, how the message is sent')
        return parser

    def take_action(self, parsed_args):
        from faultdriver import points
        columns = ['Point', 'Kind', 'Roles', 'Operations', 'Tracker lock']
        if parsed_args.raises:
            columns.append('Raises')
        # json and yaml get lists and booleans; text formats get words.
        data = parsed_args.formatter in ('json', 'yaml')

        def items(values, empty, joined=','):
            return list(values) if data else joined.join(values) or empty
        rows = []
        for point in points.catalogue().values():
            if parsed_args.kind and point.kind != parsed_args.kind:
                continue
            if (parsed_args.operation
                    and parsed_args.operation not in point.operations):
                continue
            row = [point.name, point.kind, items(point.roles, 'any'),
                   items(point.operations, '-'),
                   point.tracker_lock if data else
                   ('yes' if point.tracker_lock else 'no')]
            if parsed_args.raises:
                row.append(_raises(point, items))
            rows.append(row)
        return columns, rows


def _raises(point, items):
    """The Raises column: what a fault there gives Nova."""
    if point.kind == 'service':
        return items(point.produces, '', '; ')
    if point.kind == 'rpc':
        # No raise() here: a caller sees its reply, or none.
        return items([point.rpc + (' with call_monitor_timeout'
                                   if point.monitored else '')], '')
    return items(point.raises, '')


class Actions(lister.Lister):
    """List the actions rules can use, with their documentation."""

    def take_action(self, parsed_args):
        from faultdriver import actions
        rows = [(name, inspect.getdoc(plugin).split('\n')[0],
                 inspect.getdoc(plugin).partition('\n')[2].strip())
                for name, plugin in sorted(actions.load_all().items())]
        return ('Action', 'Usage', 'Description'), rows


class Drivers(lister.Lister):
    """List the registered inner drivers faultdriver can wrap."""

    def take_action(self, parsed_args):
        from importlib import metadata

        from faultdriver import inner
        rows = sorted((ep.name, ep.value) for ep in
                      metadata.entry_points(group=inner.NAMESPACE))
        return ('Name', 'Driver'), rows
