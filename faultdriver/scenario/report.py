"""The tables of a scenario report, as data, and as text.

:func:`variant_tables` and :func:`comparison` are the one source of the
report's tables: the text report here and the HTML report
(:mod:`faultdriver.scenario.htmlreport`) both render them.
"""

import prettytable

from faultdriver import novaundertest
from faultdriver.scenario import tiers
from faultdriver.scenario import wording


def table(columns, rows, title=None):
    t = prettytable.PrettyTable(columns)
    t.align = 'l'
    for row in rows:
        t.add_row(row)
    return ('%s\n%s\n' % (title, t)) if title else '%s\n' % t


def headline(report):
    return 'Variant %s (%s): %s' % (
        report['variant'], wording.variant_facts(
            report.get('mode'), report.get('patches'), report.get('nova')),
        report['verdict'].upper())


def fault_origin(report):
    """The time fault offsets count from: step 0 if recorded, else the
    first fault."""
    faults = report['state']['faults']
    if report.get('steps_started_at'):
        return report['steps_started_at']
    return faults[0]['time'] if faults else 0


def tier_description(report):
    """How the report's tier names its Nova (a report without a
    ``backend`` is the embedded Nova's)."""
    name = report.get('backend')
    return tiers.TIERS.get(name, tiers.TIERS[tiers.DEFAULT]).description


def guests_text(server):
    """Where the hypervisors have the server's guest ('-' when the
    backend's hypervisor is not asked, 'none' when no host has it)."""
    if 'guests' not in server:
        return '-'
    return ', '.join('%s on %s' % (state, host) for host, state in
                     sorted(server['guests'].items())) or 'none'


def shared(reports):
    """The expectations a variant that does not expect the bug meets
    too: facts of the setup (the fault fired, the moves ended so), not
    what shows the bug."""
    return frozenset(e['expectation'] for r in reports.values()
                     if r.get('expect') != 'bug'
                     for e in r.get('expectations') or () if e['met'])


def _shows_bug(report, e, setup):
    """Whether ``e`` is worded as what shows the bug: its variant
    expects the bug and no variant without it meets ``e`` too."""
    return report.get('expect') == 'bug' and e['expectation'] not in setup


def variant_tables(report, setup=frozenset()):
    """``[(title, columns, rows)]`` of one variant that ran its steps
    (``setup``: :func:`shared` of the run)."""
    state = report['state']
    t0 = fault_origin(report)
    shutdown = [('Graceful stop (what it logged)', ['Line'],
                 [(line,) for line in report['shutdown_log']])] \
        if report.get('shutdown_log') else []
    return [
        ('Timeline (%s up in %ss)' % (
            tier_description(report),
            report.get('setup_seconds')),
         ['#', 'At (s)', 'Took (s)', 'Step', 'Result'],
         [(e['index'], e['start'], e['seconds'], e['step'],
           e['status'] + (' ' + e['detail'] if e['detail'] else ''))
          for e in report['timeline']]),
        ('Faults fired (journal)',
         ['At (s)', 'Host', 'Point', 'Phase', 'Hit', 'Action', 'Note'],
         [('%.2f' % (f['time'] - t0), f['host'], f['point'],
           f.get('phase', ''), f.get('hit', ''),
           f.get('action') or f['kind'],
           ('waited for lock' if f.get('waited_for_lock') else '') +
           (f['outcome'] if f.get('outcome') else '') +
           (' error: %s' % f['error'] if f.get('error') else ''))
          for f in state['faults']]),
        ('Migrations',
         ['Server', 'Id', 'UUID', 'Type', 'Source Compute', 'Dest Compute',
          'Status', 'Created At'],
         [(m['server'], m['id'], m['uuid'], m['type'], m['source_compute'],
           m['dest_compute'], m['status'], m['created_at'])
          for m in state['migrations']]),
        ('Hosts at the end of the steps',
         ['Host', 'Service', 'Pinned pCPUs', 'Placement PCPU used', 'Match'],
         [(h, v['service'], v['pinned_cpus'], v['placement_pcpu'],
           'yes' if v['matches'] else 'NO')
          for h, v in state['hosts'].items()]),
        ('Servers at the end of the steps',
         ['Server', 'Status', 'Host', 'Task state', 'Pinned pCPUs',
          'Guest (hypervisor)', 'UUID'],
         [(alias, s['status'], s['host'], s['task_state'] or '-',
           s['pinned_cpus'], guests_text(s), s['id'])
          for alias, s in state.get('servers', {}).items()]),
        ('Expectations',
         ['Verdict', 'Expectation', 'Actual'],
         [(wording.shown(_shows_bug(report, e, setup), e.get('kind'),
                         e['expectation'], e['met'], e['actual']),
           e['expectation'], e['actual'])
          for e in report['expectations']]),
    ] + shutdown


def ran(report):
    """Whether the variant got as far as a state to report."""
    return 'state' in report and 'expectations' in report


def _facts(report):
    state = report.get('state', {})
    periodic_steps = [e for e in report.get('timeline', ())
                      if e['step'].startswith('periodic')]
    return {
        'tracker fixes': wording.tracker_fixes(report.get('patches')),
        'Nova under test': novaundertest.describe(report.get('nova')),
        'faults fired': len([f for f in state.get('faults', ())
                             if f.get('action')]),
        'periodics run (errors)': '%d (%d)' % (
            len(periodic_steps) + len([f for f in state.get('faults', ())
                                       if f['kind'] == 'periodic']),
            len([e for e in periodic_steps if 'ERROR' in e['detail']]) +
            len([f for f in state.get('faults', ())
                 if f['kind'] == 'periodic' and f.get('error')])),
        'hosts pinned/placement': '; '.join(
            '%s %d/%d' % (h, len(v['pinned_cpus']), v['placement_pcpu'])
            for h, v in state.get('hosts', {}).items()),
        'wall time (s)': report.get('wall_seconds'),
        'VERDICT': report['verdict'],
    }


def comparison(reports):
    """``(columns, rows)``: each expectation and key fact, one column per
    variant."""
    variants = list(reports)
    rows = {}
    setup = shared(reports)
    for variant, report in reports.items():
        for e in report.get('expectations', ()):
            row = rows.setdefault(e['expectation'], {})
            row[variant] = wording.result(
                _shows_bug(report, e, setup), e.get('kind'),
                e['expectation'], e['met'], e['actual'])
    facts = {v: _facts(r) for v, r in reports.items()}
    first = ('VERDICT', 'tracker fixes', 'Nova under test')

    def fact_rows(keys):
        return [[key] + [facts[v][key] for v in variants] for key in keys]
    return ['Expectation'] + variants, (
        fact_rows(first) +
        [[text] + [row.get(v, '-') for v in variants]
         for text, row in rows.items()] +
        fact_rows(k for k in facts[variants[0]] if k not in first))


def variant_text(report, setup=frozenset()):
    out = ['=' * 72, headline(report), '=' * 72]
    out.extend('UNAVAILABLE on this Nova under test: %s: %s' % item
               for item in sorted((report.get('unavailable') or {}).items()))
    if report.get('internal_error') and not ran(report):
        out.append(report['internal_error'])
        return '\n'.join(out)
    out.extend(table(columns, rows, title)
               for title, columns, rows in variant_tables(report, setup))
    if report.get('internal_error'):
        out.append('Internal error (after the expectations above were '
                   'checked):\n' + report['internal_error'])
    return '\n'.join(out)


def text(reports):
    setup = shared(reports)
    parts = [variant_text(r, setup) for r in reports.values()]
    if len(reports) > 1:
        columns, rows = comparison(reports)
        parts.append(table(columns, rows, 'Side by side'))
    return '\n'.join(parts)
