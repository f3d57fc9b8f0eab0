"""The sweep's text report: the matrix (step x action, each cell ok or
the invariants broken) and the findings."""

import prettytable

from faultdriver import novaundertest


CONFIRMED = {True: 'confirmed', False: 'harness-only', None: '-'}


def confirmation(finding):
    """What the process-tier replay said of a finding, in words."""
    text = CONFIRMED[finding.get('confirmed')]
    if finding.get('confirmed_on'):
        text += ' on %s' % finding['confirmed_on']
    return text


def outcome(result):
    """A case's outcome in words, as its JSON records it: ``ok`` only
    where the verdict is ok."""
    if result['internal_error']:
        return 'INTERNAL ERROR'
    if result.get('verdict', 'ok') == 'ok' and not result['broken']:
        return 'ok'
    return ', '.join(result['broken']) or result['verdict']


def text(doc):
    actions = sorted({case['action'] for case in doc['cases']})
    rows = {}
    for case in doc['cases']:
        key = '%s.%s@%s' % (case['point'], case['phase'], case['host'])
        cell = outcome(case)
        rows.setdefault(key, {})[case['action']] = cell
    matrix = prettytable.PrettyTable(['Step'] + actions)
    matrix.align = 'l'
    for key in sorted(rows):
        matrix.add_row([key] + [rows[key].get(a, '-') for a in actions])
    found = prettytable.PrettyTable(['Invariant', 'Step', 'Action',
                                     'Cases', 'Confirmed', 'Reproducer'])
    found.align = 'l'
    for f in doc['findings']:
        found.add_row([f['invariant'], '%s.%s@%s' % (f['point'], f['phase'],
                                                     f['host']),
                       f['action'], len(f['cases']), confirmation(f),
                       f['scenario']])
    return ('Sweep of %s on %s (%s mode%s; Nova under test: %s), shard %s: '
            '%d cases, %d findings, %.0fs; results in %s\n\n%s%s\n\n'
            'Findings\n%s\n' % (
                doc['workflow'], doc['backend'], doc['mode'],
                ', fixes: ' + ', '.join(doc['patches'])
                if doc['patches'] else '',
                novaundertest.describe(doc.get('nova')), doc['shard'],
                len(doc['cases']),
                len(doc['findings']), doc['wall_seconds'], doc['results'],
                internal_errors(doc), matrix, found))


def internal_errors(doc):
    """The cases that did not run to their checks, first: neither ok nor
    findings, and the reason the sweep exits 3."""
    failed = [case for case in doc['cases'] if case['internal_error']]
    if not failed:
        return ''
    lines = ['%d case(s) ended in an INTERNAL ERROR: not checked, neither '
             'ok nor findings (the sweep exits 3):' % len(failed)]
    for case in failed:
        last = (case.get('error') or '').strip().splitlines()
        lines.append('  %s: %s' % (case['id'], last[-1] if last else '?'))
    return '\n'.join(lines) + '\n\n'
