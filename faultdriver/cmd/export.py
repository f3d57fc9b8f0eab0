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

    --report: write instead the bug report a Nova developer files
    upstream (faultdriver.export.bugreport), with the values of a run of
    the scenario's bug variant: a saved run (--from-run), else a run on
    the embedded tier now.  Exit 1 when that run did not show the bug.
    """

    #: Options of one form only: given to the other, exit 2 (never
    #: ignored).
    REPORT_ONLY = ('repository', 'mode', 'devstack_run')
    MODULE_ONLY = ('fixed', 'bug', 'commit_message', 'fixture')

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('scenario', metavar='NAME|FILE',
                            help='a bundled scenario or a scenario file '
                                 '(e.g. a sweep finding\'s reproducer)')
        parser.add_argument('--variant', metavar='V',
                            help='the variant whose expectations to '
                                 'assert (default: stock, else the first '
                                 'that expects a bug, else the first); '
                                 'with --report, the variant whose run to '
                                 'quote, one that expects the bug '
                                 '(default: stock if it does, else the '
                                 'first that does)')
        parser.add_argument('--fixed', action='store_true',
                            help='assert the correct state instead of the '
                                 'bug\'s')
        parser.add_argument('--bug', metavar='N', type=_bug_number,
                            help='the Launchpad bug it reproduces: the '
                                 'module is test_bug_N.py, its class '
                                 'TestBugN, as Nova names them (default: '
                                 'a name read from the scenario)')
        parser.add_argument('--commit-message', metavar='FILE',
                            help='also write the commit message Nova '
                                 'expects here ("Add functional reproducer '
                                 'for bug N", Related-Bug: #N)')
        parser.add_argument('--fixture', metavar='FILE',
                            help='also write the Nova test fixture the '
                                 'module imports, which the same Nova '
                                 'change adds as nova/tests/fixtures/'
                                 'compute_fault.py (not written, and a '
                                 'note on stderr, when the module does '
                                 'not import it)')
        parser.add_argument('-o', '--output', metavar='FILE',
                            help='write the module (or the report) here '
                                 '(default: stdout)')
        report = parser.add_argument_group(
            'bug report', 'a finding as the report filed upstream')
        report.add_argument('--report', action='store_true',
                            help='write the bug report (Markdown) instead '
                                 'of the test module: title, what happens, '
                                 'steps (the scenario and its devstack '
                                 'form), expected vs actual with a run\'s '
                                 'values, Nova version, exported test, '
                                 'candidate fix')
        report.add_argument('--from-run', metavar='RUN.json', default=None,
                            help='the run to quote (scenario run -f json); '
                                 'default: run the bug variant on the '
                                 'embedded tier now.  Without --report: '
                                 'the run whose values the bug\'s '
                                 'assertions state exactly')
        report.add_argument('--mode', choices=('eventlet', 'threading'),
                            default=None,
                            help='concurrency mode of that run (default '
                                 'threading)')
        report.add_argument('--repository', metavar='DIR', default=None,
                            help='the faultdriver checkout whose '
                                 'doc/findings.rst, nova-fixes/ and '
                                 'nova-regressions/ the report cites '
                                 '(default: the current directory)')
        report.add_argument('--devstack-run', metavar='FILE', default=None,
                            help='the record of a run of the devstack form '
                                 'on devstack (its transcript); without '
                                 'it the form is labelled "not yet run on '
                                 'devstack"')
        return parser

    def take_action(self, parsed_args):
        from faultdriver import exception
        wrong = self.MODULE_ONLY if parsed_args.report else \
            self.REPORT_ONLY
        given = [name for name in wrong if getattr(parsed_args, name)]
        if given:
            raise exception.ScenarioError('--%s: only %s --report' % (
                given[0].replace('_', '-'),
                'without' if parsed_args.report else 'with'))
        if parsed_args.report:
            return self._report(parsed_args)
        from faultdriver import export
        from faultdriver.export import module
        from faultdriver.export import novafixture
        from faultdriver.scenario import model
        text = export.export(parsed_args.scenario, parsed_args.variant,
                             parsed_args.fixed, parsed_args.bug,
                             parsed_args.from_run)
        self._write(parsed_args, text)
        uses = novafixture.used_by(text)
        if parsed_args.fixture and uses:
            with open(parsed_args.fixture, 'w', encoding='utf-8') as stream:
                stream.write(novafixture.text())
        elif parsed_args.fixture:
            self.app.stderr.write('--fixture %s: not written: the module '
                                  'does not import %s\n'
                                  % (parsed_args.fixture,
                                     novafixture.NOVA_PATH))
        elif uses:
            self.app.stderr.write('The module imports %s, which the same '
                                  'Nova change adds: write it with '
                                  '--fixture FILE\n' % novafixture.NOVA_PATH)
        if parsed_args.commit_message:
            with open(parsed_args.commit_message, 'w',
                      encoding='utf-8') as stream:
                stream.write(module.commit_message(
                    model.load(parsed_args.scenario), parsed_args.bug,
                    fixture=uses))
        return 0

    def _report(self, parsed_args):
        from faultdriver.cmd import main as main_module
        from faultdriver.cmd import outputs
        from faultdriver.export import bugreport
        from faultdriver.scenario import model
        outputs.check_file('--output', parsed_args.output)
        scenario = model.load(parsed_args.scenario)
        variant = bugreport.bug_variant(scenario, parsed_args.variant)
        repository = parsed_args.repository or '.'
        try:
            text = bugreport.compose(
                scenario, variant, parsed_args.from_run,
                parsed_args.mode or 'threading', repository,
                parsed_args.devstack_run)
        except bugreport.NotShown as exc:
            self.app.stderr.write('%s\n' % exc)
            return main_module.EXIT_EXPECTATION
        self._write(parsed_args, text)
        return main_module.EXIT_OK

    def _write(self, parsed_args, text):
        if parsed_args.output:
            with open(parsed_args.output, 'w', encoding='utf-8') as stream:
                stream.write(text)
        else:
            self.app.stdout.write(text)


def _bug_number(text):
    """A Launchpad bug number (argparse: exit 2 naming it otherwise)."""
    import argparse
    if not text.isdigit() or int(text) <= 0:
        raise argparse.ArgumentTypeError(
            'expected a Launchpad bug number (digits), got %r' % text)
    return int(text)
