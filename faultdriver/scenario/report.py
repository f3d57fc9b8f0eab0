"""Render scenario reports as text tables (the JSON is the reports)."""

import prettytable


def table(columns, rows, title=None):
    t = prettytable.PrettyTable(columns)
    t.align = 'l'
    for row in rows:
        t.add_row(row)
    return ('%s\n%s\n' % (title, t)) if title else '%s\n' % t


def variant_text(report):
    out = ['=' * 72, 'Variant %s (%s mode, fixes: %s): %s' % (
        report['variant'], report['mode'],
        ', '.join(report.get('patches') or ()) or 'none',
        report['verdict'].upper()), '=' * 72]
    if report.get('internal_error') and 'expectations' not in report:
        out.append(report['internal_error'])
        return '\n'.join(out)
    out.append(table(
        ['#', 'At (s)', 'Took (s)', 'Step', 'Result'],
        [(e['index'], e['start'], e['seconds'], e['step'],
          e['status'] + (' ' + e['detail'] if e['detail'] else ''))
         for e in report['timeline']],
        'Timeline (embedded Nova up in %ss)' % report.get('setup_seconds')))
    state = report['state']
    t0 = state['faults'][0]['time'] if state['faults'] else 0
    out.append(table(
        ['+s', 'Host', 'Point', 'Phase', 'Hit', 'Action', 'Note'],
        [('%.2f' % (f['time'] - t0), f['host'], f['point'],
          f.get('phase', ''), f.get('hit', ''),
          f.get('action') or f.get('event', ''),
          ('waited for lock' if f.get('waited_for_lock') else '') +
          (' error: %s' % f['error'] if f.get('error') else ''))
         for f in state['faults']], 'Faults fired (journal)'))
    out.append(table(
        ['Server', 'Id', 'UUID', 'Type', 'Source Compute', 'Dest Compute',
         'Status', 'Created At'],
        [(m['server'], m['id'], m['uuid'], m['type'], m['source_compute'],
          m['dest_compute'], m['status'], m['created_at'])
         for m in state['migrations']], 'Migrations'))
    out.append(table(
        ['Host', 'Service', 'Pinned pCPUs', 'Placement PCPU used',
         'Match'],
        [(h, v['service'], v['pinned_cpus'], v['placement_pcpu'],
          'yes' if v['matches'] else 'NO')
         for h, v in state['hosts'].items()],
        'Hosts at the end of the steps'))
    out.append(table(
        ['Verdict', 'Expectation', 'Actual'],
        [('met' if e['met'] else 'NOT MET', e['expectation'], e['actual'])
         for e in report['expectations']], 'Expectations'))
    return '\n'.join(out)


def comparison_text(reports):
    variants = list(reports)
    rows = {}
    for variant, report in reports.items():
        for e in report.get('expectations', ()):
            row = rows.setdefault(e['expectation'], {})
            row[variant] = '%s (%s)' % ('met' if e['met'] else 'NOT MET',
                                        e['actual'])
    body = [[text] + [row.get(v, '-') for v in variants]
            for text, row in rows.items()]

    def facts(report):
        state = report.get('state', {})
        periodic = [f for f in state.get('faults', ())
                    if f.get('event') == 'periodic']
        return {
            'fixes': ', '.join(report.get('patches') or ()) or 'none',
            'faults fired': len([f for f in state.get('faults', ())
                                 if f.get('action')]),
            'periodic reports': len(periodic),
            'hosts pinned/placement': '; '.join(
                '%s %d/%d' % (h, len(v['pinned_cpus']), v['placement_pcpu'])
                for h, v in state.get('hosts', {}).items()),
            'wall time (s)': report.get('wall_seconds'),
            'VERDICT': report['verdict'],
        }
    all_facts = {v: facts(r) for v, r in reports.items()}
    for key in next(iter(all_facts.values())):
        body.append([key] + [all_facts[v][key] for v in variants])
    return table(['Expectation'] + variants, body, 'Side by side')


def text(reports):
    parts = [variant_text(r) for r in reports.values()]
    if len(reports) > 1:
        parts.append(comparison_text(reports))
    return '\n'.join(parts)
