"""``faultdriver scenario list|show|run``."""

import json
import os
import tempfile
import textwrap
import typing

from cliff import command
from cliff import lister
from cliff import show

from faultdriver.cmd import cloud as cloud_cmd
from faultdriver.cmd import main as main_module
from faultdriver.cmd import outputs
from faultdriver import exception
from faultdriver.scenario import tiers
from faultdriver.scenario import wording


#: Formatters whose output is read by programs: give them data, not text.
MACHINE_FORMATS = ('json', 'yaml')
#: ``scenario run|report -f``: table is the text report, json and yaml the
#: whole run document, value one ``VARIANT VERDICT`` line per variant.
RUN_FORMATS = ('table', 'json', 'yaml', 'value')


def summary(description):
    """A description's first sentence, on one line."""
    text = ' '.join(description.split())
    end = text.find('. ')
    return text if end < 0 else text[:end + 1]


def document(scenario, mode, code, reports):
    """The run as a document: what ``-f json`` prints (through
    :func:`as_json`) and ``scenario report`` reads; its ``variants`` are
    the VariantReports."""
    return {'scenario': scenario.name, 'file': scenario.path,
            'description': scenario.description, 'mode': mode,
            'exit_code': code,
            'verdicts': {v: r.verdict for v, r in reports.items()},
            'variants': reports}


def as_json(doc: typing.Mapping[str, typing.Any]
            ) -> typing.Dict[str, typing.Any]:
    """``doc`` with its reports as JSON data (the file boundary)."""
    return dict(doc, variants={v: r.to_json()
                               for v, r in doc['variants'].items()})


def add_output_arguments(parser):
    parser.add_argument('-f', '--format', choices=RUN_FORMATS,
                        default='table', dest='output_format',
                        help='table: the report as text (default); json, '
                             'yaml: the whole run document; value: one '
                             '"VARIANT VERDICT" line per variant')
    parser.add_argument('--html', metavar='FILE',
                        help='also write the report as one self-contained '
                             'HTML page (sequence diagram and tables)')


def add_nova_arguments(parser):
    """The Nova under test: the installed Nova, changed."""
    parser.add_argument('--nova-patch', action='append', default=[],
                        metavar='FILE',
                        help='run on Nova with this change applied (a '
                             'unified diff: git diff or git format-patch '
                             'output, as a Gerrit change downloads; '
                             'repeatable, applied in order; hunks outside '
                             'the nova package are skipped and listed). '
                             'The installed Nova is not modified: every '
                             'process of the run imports a private copy')
    parser.add_argument('--nova-tree', metavar='DIR',
                        help='run on the nova package of this Nova source '
                             'tree (a clone of openstack/nova) instead of '
                             'the installed one (--nova-patch applies on '
                             'top)')


def default_html(name, folder=None):
    """Where ``scenario run`` writes its HTML page unless told: NAME.html
    in the current directory, or in the temporary directory when the
    current one cannot take it (a default must never refuse a run)."""
    folder = folder or os.getcwd()
    path = os.path.join(folder, '%s.html' % name)
    try:
        outputs.check_file('--html', path)
    except exception.ScenarioError:
        path = os.path.join(tempfile.gettempdir(), '%s.html' % name)
    return path


def description_text(doc):
    """The head of the text report: the scenario and what it shows (its
    description), so that a run says what its bug is."""
    text = '\n'.join(textwrap.fill(' '.join(paragraph.split()), 72)
                     for paragraph in (doc.get('description') or '').split(
                         '\n\n') if paragraph.strip())
    return 'Scenario %s\n\n%s\n\n' % (doc.get('scenario'), text)


def write_outputs(app, doc, parsed_args):
    """Print ``doc`` in the chosen format; write the HTML page if asked
    (its path printed last, on stderr: machine formats keep stdout)."""
    from faultdriver.scenario import report
    fmt = parsed_args.output_format
    if fmt == 'json':
        app.stdout.write(json.dumps(as_json(doc), indent=2, default=str) +
                         '\n')
    elif fmt == 'yaml':
        import yaml
        app.stdout.write(yaml.safe_dump(json.loads(json.dumps(
            as_json(doc), default=str)), sort_keys=False,
            allow_unicode=True))
    elif fmt == 'value':
        app.stdout.write(''.join('%s %s\n' % item
                                 for item in doc['verdicts'].items()))
    else:
        app.stdout.write(description_text(doc) + report.text(doc['variants']))
    if parsed_args.html:
        from faultdriver.scenario import htmlreport
        with open(parsed_args.html, 'w', encoding='utf-8') as stream:
            stream.write(htmlreport.render(doc))
        app.stdout.flush()
        app.stderr.write('HTML report: %s\n' % os.path.abspath(
            parsed_args.html))


class ScenarioList(lister.Lister):
    """List the bundled scenarios."""

    def take_action(self, parsed_args):
        from faultdriver.scenario import model
        rows = []
        for name, path in model.bundled().items():
            scenario = model.load(path)
            rows.append((name, ', '.join(scenario.variants),
                         len(scenario.steps), summary(scenario.description)))
        return ('Name', 'Variants', 'Steps', 'Description'), rows


class ScenarioShow(show.ShowOne):
    """Show a scenario (bundled name or file): what it does and checks."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('scenario', metavar='NAME|FILE')
        return parser

    def take_action(self, parsed_args):
        from faultdriver.scenario import model
        s = model.load(parsed_args.scenario)

        structured = parsed_args.formatter in MACHINE_FORMATS

        def listing(items):
            if structured:
                return [item.to_json() for item in items]
            return '\n'.join(item.describe() for item in items)
        rules = s.data.get('rules', {})
        data = {'name': s.name, 'file': s.path,
                'description': s.description,
                'hosts': s.hosts if structured else ', '.join(s.hosts),
                'pinned': s.pinned,
                'rules': rules if structured else json.dumps(rules),
                'steps': listing(s.steps),
                'expectations (all variants)': listing(
                    s.common_expectations())}
        for name, spec in s.variants.items():
            if structured:
                data['variant %s' % name] = spec
                continue
            data['variant %s' % name] = (
                '%s\ntracker fixes: %s; expect: %s\n%s') % (
                spec.get('description', ''),
                wording.tracker_fixes(spec.get('patches')),
                spec.get('expect', 'ok'),
                listing(s.own_expectations(name)))
        return tuple(zip(*data.items()))


class ScenarioRun(command.Command):
    """Run a scenario's variants on an embedded Nova (or real processes)
    and report.

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
        parser.add_argument('--backend', default=tiers.DEFAULT,
                            choices=tiers.backend_choices(),
                            help=tiers.backend_help())
        cloud_cmd.add_cloud_arguments(parser)
        add_nova_arguments(parser)
        add_output_arguments(parser)
        parser.add_argument('--no-html', action='store_true',
                            help='write no HTML page (by default the text '
                                 'report comes with one, NAME.html in the '
                                 'current directory, or --html FILE; the '
                                 'machine formats only with --html)')
        parser.add_argument('--serial', action='store_true',
                            help='run variants one after the other '
                                 '(default: at the same time; always '
                                 'one after the other on processes)')
        return parser

    def take_action(self, parsed_args):
        from faultdriver import rules
        from faultdriver.scenario import launch
        from faultdriver.scenario import model
        from faultdriver.scenario import variant_report
        # Checked in full (model.check imports Nova) by each variant's
        # process, which imports Nova anyway: launch.run raises what it
        # finds.
        if parsed_args.no_html and parsed_args.html:
            raise exception.ScenarioError('--no-html and --html %s: '
                                          'expected one of them'
                                          % parsed_args.html)
        outputs.check_file('--html', parsed_args.html)
        scenario = model.read(parsed_args.scenario)
        if not (parsed_args.html or parsed_args.no_html) and \
                parsed_args.output_format == 'table':
            parsed_args.html = default_html(scenario.name)
        variants = parsed_args.variant or list(scenario.variants)
        for v in variants:
            if v not in scenario.variants:
                raise exception.ScenarioError(
                    '%s: unknown variant %r%s; expected one of %s'
                    % (scenario.path, v, rules.suggest(v, scenario.variants),
                       ', '.join(scenario.variants)))
        if parsed_args.cloud or parsed_args.profile:
            # What the cloud tier lacks, named before a host is reached
            # (a cloud whose computes are libvirt provides their guests).
            cloud_cmd.use_provisions(parsed_args, scenario.hosts)
            model.check_tier(scenario, tiers.CLOUD)
        parsed_args.backend = cloud_cmd.cloud_backend(parsed_args,
                                                      scenario.hosts)
        wanted = tiers.compared(parsed_args.backend)
        refused = [b for b in wanted if not scenario.runs_on(b)]
        if refused:
            use = 'it runs on backends %s (its "backends" key); use ' \
                '--backend %s' % (', '.join(scenario.backends),
                                  scenario.backends[0])
            # What that tier lacks, naming the step that needs it (a full
            # check: it imports Nova, on this way out only).
            for name in refused:
                model.check_tier(scenario, name, use)
            raise exception.ScenarioError(
                '%s: runs on backends %s (its "backends" key), not %s; use '
                '--backend %s' % (scenario.path, ', '.join(scenario.backends),
                                  ', '.join(refused), scenario.backends[0]))
        reports = launch.run(scenario, variants, parsed_args.mode,
                             parallel=not parsed_args.serial,
                             backend=parsed_args.backend,
                             nova_patches=parsed_args.nova_patch,
                             nova_tree=parsed_args.nova_tree)
        verdicts = [r.verdict for r in reports.values()]
        if variant_report.INTERNAL_ERROR in verdicts:
            code = main_module.EXIT_INTERNAL
        elif all(v in variant_report.PASSING for v in verdicts):
            code = main_module.EXIT_OK
        else:
            code = main_module.EXIT_EXPECTATION
        write_outputs(self.app, document(scenario, parsed_args.mode, code,
                                         reports), parsed_args)
        return code


class ScenarioReport(command.Command):
    """Show a saved run (``scenario run -f json`` output) again: as text,
    YAML, values, or an HTML page with ``--html``.  Exit code 0 once
    rendered, 2 if the file is not such a run."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('run', metavar='RUN.json')
        add_output_arguments(parser)
        return parser

    def take_action(self, parsed_args):
        from faultdriver.scenario import rundoc
        outputs.check_file('--html', parsed_args.html)
        doc = rundoc.load(parsed_args.run)
        doc.setdefault('verdicts', {v: r.verdict for v, r in
                                    doc['variants'].items()})
        # Rendered once in memory first: a malformed report is exit 2
        # before anything is written.
        rundoc.rendered(parsed_args.run, doc, html=bool(parsed_args.html))
        write_outputs(self.app, doc, parsed_args)
        return main_module.EXIT_OK
