"""``faultdriver export``: a scenario as a Nova functional test module."""

from cliff import command


class Export(command.Command):
    """Write a scenario as a functional test in the shape of Nova's
    regression tests (nova/tests/functional/regressions/test_bug_NNNN.py).

    The module imports nothing of faultdriver and runs with Nova's test
    requirements.  Stock form: it asserts what Nova does today, the
    bug's assertions marked FIXME; --fixed: it asserts the correct state
    (fails while the bug is there).  A step or expectation with no Nova
    test means is exit 2, naming it.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('scenario', metavar='NAME|FILE',
                            help='a bundled scenario or a scenario file '
                                 '(e.g. a sweep finding\'s reproducer)')
        parser.add_argument('--variant', metavar='V',
                            help='the variant whose expectations to '
                                 'assert (default: stock, else the first '
                                 'that expects a bug, else the first)')
        parser.add_argument('--fixed', action='store_true',
                            help='assert the correct state instead of the '
                                 'bug\'s')
        parser.add_argument('-o', '--output', metavar='FILE',
                            help='write the module here (default: stdout)')
        return parser

    def take_action(self, parsed_args):
        from faultdriver import export
        text = export.export(parsed_args.scenario, parsed_args.variant,
                             parsed_args.fixed)
        if parsed_args.output:
            with open(parsed_args.output, 'w', encoding='utf-8') as stream:
                stream.write(text)
        else:
            self.app.stdout.write(text)
        return 0
