"""``faultdriver scenario list|show|run``."""

import json

from cliff import command
from cliff import lister
from cliff import show

from faultdriver.cmd import main as main_module


class ScenarioList(lister.Lister):
    """List the bundled scenarios."""

    def take_action(self, parsed_args):
        from faultdriver.scenario import model
        rows = []
        for name, path in model.bundled().items():
            scenario = model.load(path)
            rows.append((name, ', '.join(scenario.variants),
                         len(scenario.steps),
                         scenario.description.split('\n')[0]))
        return ('Name', 'Variants', 'Steps', 'Description'), rows


class ScenarioShow(show.ShowOne):
    """Show a scenario (bundled name or file): what it does and checks."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('scenario', metavar='NAME|FILE')
        return parser

    def take_action(self, parsed_args):
        from faultdriver.scenario import model
        from faultdriver.scenario import runner
        s = model.load(parsed_args.scenario)

        def listing(items):
            return '\n'.join(runner.describe_step(*next(iter(i.items())))
                             for i in items)
        data = {'name': s.name, 'file': s.path,
                'description': s.description,
                'hosts': ', '.join(s.hosts), 'pinned': s.pinned,
                'rules': json.dumps(s.data.get('rules', {})),
                'steps': listing(s.steps),
                'expectations (all variants)': listing(
                    s.data.get('expectations', ()))}
        for name, spec in s.variants.items():
            data['variant %s' % name] = '%s\nfixes: %s; expect: %s\n%s' % (
                spec.get('description', ''),
                ', '.join(spec.get('patches', ())) or 'none',
                spec.get('expect', 'ok'),
                listing(spec.get('expectations', ())))
        return tuple(zip(*data.items()))


class ScenarioRun(command.Command):
    """Run a scenario's variants on an embedded Nova and report.

    Exit code 0 when every variant met its expectations (a variant with
    ``expect: bug`` meets them by reproducing the bug); 1 when not; 2 for
    a bad scenario; 3 for an internal error.  Progress goes to stderr.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('scenario', metavar='NAME|FILE')
        parser.add_argument('--variant', action='append', metavar='V',
                            help='variant to run (repeatable; default all)')
        parser.add_argument('--mode', choices=('eventlet', 'threading'),
                            default='threading',
                            help='Nova concurrency mode (default threading)')
        parser.add_argument('-f', '--format', choices=('table', 'json'),
                            default='table', dest='output_format')
        parser.add_argument('--serial', action='store_true',
                            help='run variants one after the other '
                                 '(default: at the same time)')
        return parser

    def take_action(self, parsed_args):
        from faultdriver import exception
        from faultdriver import rules
        from faultdriver.scenario import launch
        from faultdriver.scenario import model
        from faultdriver.scenario import report
        scenario = model.load(parsed_args.scenario)
        variants = parsed_args.variant or list(scenario.variants)
        for v in variants:
            if v not in scenario.variants:
                raise exception.ScenarioError(
                    '%s: unknown variant %r%s; expected one of %s'
                    % (scenario.path, v, rules.suggest(v, scenario.variants),
                       ', '.join(scenario.variants)))
        reports = launch.run(scenario, variants, parsed_args.mode,
                             parallel=not parsed_args.serial)
        verdicts = [r['verdict'] for r in reports.values()]
        if 'internal error' in verdicts:
            code = main_module.EXIT_INTERNAL
        elif all(v in launch.VERDICT_EXIT for v in verdicts):
            code = main_module.EXIT_OK
        else:
            code = main_module.EXIT_EXPECTATION
        if parsed_args.output_format == 'json':
            self.app.stdout.write(json.dumps(
                {'scenario': scenario.name, 'file': scenario.path,
                 'mode': parsed_args.mode, 'exit_code': code,
                 'verdicts': dict(zip(reports, verdicts)),
                 'variants': reports}, indent=2, default=str) + '\n')
        else:
            self.app.stdout.write(report.text(reports))
        return code
