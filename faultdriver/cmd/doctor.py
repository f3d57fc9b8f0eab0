"""``faultdriver doctor``: does this Nova still have what faultdriver
relies on?"""

from cliff import lister

from faultdriver.cmd import main as main_module


def _status(result):
    if result.skipped:
        return 'SKIPPED: %s (pip install faultdriver[scenarios])' % (
            result.problem)
    return 'OK' if result.ok else 'BROKEN: ' + result.problem


def prerequisite_rows():
    """One row per need of the process and libvirt tiers."""
    from faultdriver.scenario import prereqs
    rows = []
    for result in prereqs.check('libvirt'):
        need = result.need
        status = ('OK: %s' % result.found if result.found else
                  'MISSING: %s' % prereqs.install([result]))
        what = '%s %s' % (need.kind, need.name) if need.kind != 'root' \
            else 'root'
        rows.append(('%s tier: %s' % (need.tier, what), status,
                     'scenario run --backend %s' % need.tier,
                     'prerequisite'))
    return rows


class Doctor(lister.Lister):
    """Check every assumption faultdriver makes about the installed Nova.

    One row per assumption (faultdriver.novacompat.declared: the Nova
    symbol and its expected shape, OK or what was found, the faultdriver
    feature that needs it, when it is checked), then one row per log text
    a bundled scenario counts (Nova's, checked in Nova's source, or
    faultdriver's own), then one row per prerequisite of the process and
    libvirt tiers on this machine (OK where found, else MISSING and how
    to install it; faultdriver.scenario.prereqs).  Exit code 0 when all
    Nova assumptions hold, 1 naming the broken Nova symbols otherwise; a
    missing prerequisite only refuses its tier (``scenario run
    --backend``), it is not broken.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--broken', action='store_true',
                            help='only the rows that are not OK (broken, '
                                 'missing, skipped or untested)')
        return parser

    def take_action(self, parsed_args):
        from faultdriver import novacompat
        from faultdriver.novacompat import logtexts
        results = novacompat.check()
        self.broken = [r.assumption.symbol for r in results if not r.ok]
        rows = [(r.assumption.what, _status(r), r.assumption.feature,
                 r.assumption.group) for r in results]
        by_symbol = {r.assumption: r for r in results}
        for text, scenarios in logtexts.counted_texts(
                logtexts.bundled_paths()).items():
            assumption, who = logtexts.origin(text)
            feature = 'log expectation in %s' % ', '.join(sorted(scenarios))
            if who == 'nova':
                result = by_symbol[assumption]
                status = ('OK: %s logs it' % assumption.symbol
                          if result.problem is None else
                          _status(result) if result.skipped else
                          'BROKEN: %s %s' % (assumption.symbol,
                                             result.problem))
                if not result.ok:
                    self.broken.append(assumption.symbol)
            elif who == 'faultdriver':
                status = "OK: faultdriver's own line"
            else:
                status = ('BROKEN: logged by neither Nova (declared) nor '
                          'faultdriver')
                self.broken.append('log text %r' % text)
            rows.append(('log text %r' % text, status, feature, 'scenario'))
        rows.extend(prerequisite_rows())
        version = novacompat.nova_version()
        rows.insert(0, (
            'nova version %s (supported %s)' % (version, novacompat.SUPPORTED),
            'OK' if version in novacompat.CHECKED_AGAINST else
            'UNTESTED: checked against %s'
            % ', '.join(novacompat.CHECKED_AGAINST),
            'everything', '-'))
        if parsed_args.broken:
            # Every row that needs the user's attention: a MISSING
            # prerequisite is not broken, but it refuses its tier.
            rows = [row for row in rows if not row[1].startswith('OK')]
            if not rows:
                self.app.stderr.write('faultdriver doctor: every row is '
                                      'OK\n')
        return ('Assumption', 'Status', 'Feature', 'Checked by'), rows

    def run(self, parsed_args):
        code = super().run(parsed_args)
        if self.broken:
            self.app.stderr.write(
                'faultdriver doctor: %d assumption(s) broken on this Nova: '
                '%s\n' % (len(self.broken), ', '.join(
                    dict.fromkeys(self.broken))))
            return main_module.EXIT_EXPECTATION
        return code
