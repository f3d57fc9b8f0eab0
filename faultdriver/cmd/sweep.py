"""``faultdriver sweep WORKFLOW|SCENARIO.yaml``: every traced step of the
workflow x every fault x each host, checked against the invariants."""

import json

from cliff import command

from faultdriver.cmd import cloud as cloud_cmd
from faultdriver.cmd import main as main_module
from faultdriver.cmd import outputs
from faultdriver.scenario import tiers


def parse_shard(text):
    from faultdriver import exception
    try:
        index, count = (int(part) for part in text.split('/'))
    except ValueError:
        index = count = 0
    if not 1 <= index <= count <= 10000:
        raise exception.ScenarioError(
            '--shard %r: expected K/N with 1 <= K <= N' % text)
    return index, count


class Sweep(command.Command):
    """Sweep a workflow: trace a clean run, then for every step hit
    (point, host, phase) and every action (crash, raise, periodic, ...)
    run the workflow with that one fault, let an operator's recovery run,
    and check the invariants (migrations ended, servers settled, no pCPU
    pinned twice, accounting matches placement).  Exit 0 when the sweep
    ran (findings are results), 2 for bad input, 3 for an internal error.
    """

    def get_parser(self, prog_name):
        from faultdriver.sweep import cases
        parser = super().get_parser(prog_name)
        parser.add_argument('workflow', metavar='WORKFLOW|SCENARIO.yaml',
                            help='a bundled workflow (live-migration) or a '
                                 'scenario file whose steps end in recover')
        parser.add_argument('--actions', default=','.join(
            cases.DEFAULT_ACTIONS), help='comma-separated, of: %s' % (
            ', '.join(cases.ACTIONS)))
        parser.add_argument('--points', help='only these points '
                            '(comma-separated; a reduced sweep), each a '
                            'point or POINT.PHASE (before, after, '
                            'unlocked): that phase only')
        parser.add_argument('--hosts', help='only these hosts')
        parser.add_argument('--depth', type=int, default=1, choices=(1, 2),
                            help='2: then, after each first fault that '
                            'leaves its host down (a crash), a second '
                            'fault (crash, raise) at each step of that '
                            "host's recovery; recoveries that trace the "
                            'same steps share their second faults '
                            '(pruned; the report says how many)')
        parser.add_argument('--recovery-points', help='with --depth 2: '
                            'second faults at these points only '
                            '(comma-separated)')
        parser.add_argument('--patches', action='append', default=[],
                            metavar='FIX', help='candidate fix on every '
                            'host (repeatable)')
        parser.add_argument('--ab', metavar='FIX', action='append',
                            default=[], help='A/B: sweep stock (or with '
                            '--patches), then again with FIX too (repeatable)'
                            ', and report the findings FIX removes and adds')
        parser.add_argument('--nova-patch', action='append', default=[],
                            metavar='FILE', help='sweep Nova with this '
                            'change applied (a unified diff, as git diff '
                            'or git format-patch writes it; repeatable)')
        parser.add_argument('--ab-nova-patch', action='append', default=[],
                            metavar='FILE', help='A/B: sweep stock Nova (or '
                            'with --nova-patch), then the same cases on Nova '
                            'with FILE applied too (repeatable), and report '
                            'the findings the change removes and adds, and '
                            'the cases it breaks (regressions)')
        parser.add_argument('--nova-tree', metavar='DIR', help='sweep the '
                            'nova package of this Nova source tree (a clone '
                            'of openstack/nova, a Gerrit change checked '
                            'out) instead of the installed one (--nova-patch '
                            'applies on top)')
        parser.add_argument('--ab-nova-tree', metavar='DIR', help='A/B: '
                            'sweep the installed Nova (or --nova-tree), then '
                            'the same cases on the nova package of this '
                            'source tree (with --nova-patch and '
                            '--ab-nova-patch on top), and report as '
                            '--ab-nova-patch does')
        parser.add_argument('--confirm', choices=tiers.confirming(),
                            help='replay each finding on real processes '
                            '(fake_numa, real libvirt, or the --cloud '
                            'NAME) and mark it confirmed or harness-only')
        parser.add_argument('--shard', default='1/1', metavar='K/N')
        parser.add_argument('--results', metavar='DIR', help='results '
                            'directory (default: a new temporary one); an '
                            'existing one resumes')
        parser.add_argument(
            '--workers', type=int, default=None,
            help='cases run at once (default: %s; the embedded Nova\'s '
            'cases wait on RPC timeouts and polls part of the time, each '
            'case on processes has a whole stack)' % ', '.join(
                '%d on %s' % (tier.workers, tier.name)
                for tier in tiers.TIERS.values()))
        parser.add_argument('--mode', choices=('eventlet', 'threading'),
                            default='threading')
        parser.add_argument('--backend', default=tiers.DEFAULT,
                            choices=tiers.LOCAL,
                            help=tiers.backend_help(comparisons=False))
        cloud_cmd.add_cloud_arguments(parser)
        add_output_arguments(parser)
        return parser

    def take_action(self, parsed_args):
        from faultdriver import exception
        from faultdriver import novaundertest
        from faultdriver.sweep import cases
        from faultdriver.sweep import report
        from faultdriver.sweep import sweep
        actions = [a for a in parsed_args.actions.split(',') if a]
        wrong = sorted(set(actions) - set(cases.ACTIONS))
        if wrong or not actions:
            raise exception.ScenarioError(
                '--actions %s: expected some of %s' % (
                    ', '.join(wrong) or '(none)', ', '.join(cases.ACTIONS)))
        if parsed_args.confirm == tiers.CLOUD:
            # Findings of the embedded sweep replayed on the cloud.
            cloud_cmd.use_cloud(parsed_args, wanted_by='--confirm cloud')
        else:
            parsed_args.backend = cloud_cmd.cloud_backend(parsed_args)
        if parsed_args.workers is None:
            parsed_args.workers = tiers.get(parsed_args.backend).workers
        if not 1 <= parsed_args.workers <= 64:
            raise exception.ScenarioError('--workers: expected 1 to 64')
        if parsed_args.recovery_points and parsed_args.depth != 2:
            raise exception.ScenarioError(
                '--recovery-points: second faults need --depth 2')
        shard = parse_shard(parsed_args.shard)
        outputs.check_folder('--results', parsed_args.results)
        outputs.check_file('--html', parsed_args.html)
        # Every name in the arguments, also the A/B's second fix, is
        # checked before the first case runs.
        sweep.check_arguments(parsed_args.workflow,
                              _split(parsed_args.points),
                              _split(parsed_args.hosts),
                              parsed_args.patches + parsed_args.ab,
                              _split(parsed_args.recovery_points))
        # Applied by the same check the runs use (exit 2 naming the file
        # and the hunk that does not apply).
        # B's tree: --ab-nova-tree, else A's.
        tree_b = parsed_args.ab_nova_tree or parsed_args.nova_tree
        novaundertest.prepare(parsed_args.nova_patch +
                              parsed_args.ab_nova_patch, tree_b)
        if parsed_args.ab_nova_tree:
            novaundertest.prepare(parsed_args.nova_patch,
                                  parsed_args.nova_tree)
        from faultdriver.scenario import launch
        # Before the embedded cases: a --confirm tier is needed at the end.
        launch.refuse_missing(parsed_args.backend,
                              parsed_args.confirm or tiers.DEFAULT)

        def one(patches, nova_patches, folder, nova_tree,
                trace_change=False):
            return sweep.run(
                parsed_args.workflow, actions=actions,
                points=_split(parsed_args.points),
                hosts=_split(parsed_args.hosts), patches=patches,
                shard=shard, folder=folder,
                mode=parsed_args.mode, backend=parsed_args.backend,
                workers=parsed_args.workers, confirm=parsed_args.confirm,
                nova_patches=nova_patches, nova_tree=nova_tree,
                depth=parsed_args.depth,
                recovery_points=_split(parsed_args.recovery_points),
                trace_change=trace_change)
        results = parsed_args.results
        ab = parsed_args.ab or parsed_args.ab_nova_patch or \
            parsed_args.ab_nova_tree
        if not ab:
            doc = one(parsed_args.patches, parsed_args.nova_patch, results,
                      parsed_args.nova_tree)
        else:
            import os
            import tempfile

            from faultdriver.sweep import compare
            stock = one(parsed_args.patches, parsed_args.nova_patch,
                        results and os.path.join(results, 'a'),
                        parsed_args.nova_tree)
            # The same cases with the fix: B sweeps A's trace, and the
            # steps its own trace adds (a call only the change makes).
            later = os.path.join(results, 'b') if results else \
                tempfile.mkdtemp(prefix='faultdriver-sweep-')
            sweep.share_trace(stock['results'], later)
            fixed = one(parsed_args.patches + parsed_args.ab,
                        parsed_args.nova_patch + parsed_args.ab_nova_patch,
                        later, tree_b, trace_change=True)
            doc = {'format_version': stock['format_version'],
                   'a': stock, 'b': fixed, 'ab': sweep.recheck_regressions(
                compare.compare(stock, fixed), stock, parsed_args.mode,
                parsed_args.backend)}
        write_html(self.app, doc, parsed_args.html)
        if parsed_args.output_format == 'json':
            self.app.stdout.write(json.dumps(doc, indent=2) + '\n')
        elif 'ab' in doc:
            from faultdriver.sweep import compare
            self.app.stdout.write(report.text(doc['a']) + '\n' +
                                  report.text(doc['b']) + '\n' +
                                  compare.text(doc['ab']))
        else:
            self.app.stdout.write(report.text(doc))
        return exit_code(self.app, doc)


def exit_code(app, doc):
    """3 where a case did not run to its checks (named first in the
    report), else 0: findings are results, not failures."""
    failed = [case['id'] for one in (doc.get('a', doc), doc.get('b', {}))
              for case in one.get('cases', ()) if case['internal_error']]
    if not failed:
        return main_module.EXIT_OK
    app.stderr.write('%d case(s) ended in an internal error: %s\n' % (
        len(failed), ', '.join(failed)))
    return main_module.EXIT_INTERNAL


def add_output_arguments(parser):
    parser.add_argument('-f', '--format', choices=('table', 'json'),
                        default='table', dest='output_format')
    parser.add_argument('--html', metavar='FILE', help='also write the '
                        'matrix and findings as one HTML page (links to '
                        'the reproducers are relative to its folder)')


def write_html(app, doc, path):
    if not path:
        return
    import os

    from faultdriver.sweep import htmlreport
    with open(path, 'w', encoding='utf-8') as out:
        out.write(htmlreport.render(doc, os.path.dirname(
            os.path.abspath(path))))
    app.stderr.write('HTML report: %s\n' % path)


def _split(text):
    return [part for part in (text or '').split(',') if part] or None


class SweepMerge(command.Command):
    """Join the results directories of a sweep's shards (``--shard K/N``
    run on several machines) into one report; the findings' reproducers
    are written to the first directory.  Exit 0, or 2 when a directory
    holds no sweep results."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('results', nargs='+', metavar='DIR')
        add_output_arguments(parser)
        return parser

    def take_action(self, parsed_args):
        from faultdriver.sweep import merge
        from faultdriver.sweep import report
        outputs.check_file('--html', parsed_args.html)
        doc = merge.merge(parsed_args.results)
        write_html(self.app, doc, parsed_args.html)
        if parsed_args.output_format == 'json':
            self.app.stdout.write(json.dumps(doc, indent=2) + '\n')
        else:
            self.app.stdout.write(report.text(doc))
        return exit_code(self.app, doc)
