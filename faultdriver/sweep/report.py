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
        key = step_label(case)
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
        found.add_row([f['invariant'], step_label(f), f['action'],
                       len(f['cases']), confirmation(f), f['scenario']])
    return ('Sweep of %s on %s (%s mode%s; Nova under test: %s), shard %s: '
            '%d cases, %d findings, %.0fs; results in %s\n%s\n%s%s\n\n'
            'Findings\n%s\n' % (
                doc['workflow'], doc['backend'], doc['mode'],
                ', fixes: ' + ', '.join(doc['patches'])
                if doc['patches'] else '',
                novaundertest.describe(doc.get('nova')), doc['shard'],
                len(doc['cases']),
                len(doc['findings']), doc['wall_seconds'], doc['results'],
                recovery_line(doc), internal_errors(doc), matrix, found))


def step_label(case):
    """A case's or a finding's step, after its first fault's case id
    where it is a second fault."""
    step = '%s.%s@%s' % (case['point'], case['phase'], case['host'])
    return '%s then %s' % (case['first'], step) if case.get('first') \
        else step


def recovery_line(doc):
    """What a depth-2 sweep's pruning did, in a line (else nothing)."""
    figures = doc.get('recovery')
    if not figures:
        return ''
    estimate = figures.get('pruned_seconds_estimate')
    return ('Depth 2: %d first faults recovered along %d recovery paths; '
            '%d second faults run, %d pruned of %d%s\n' % (
                figures['first_faults_recovered'],
                figures['recovery_paths'], figures['cases'],
                figures['pruned'], figures['cases_without_pruning'],
                ' (about %.0fs more without pruning)' % estimate
                if estimate else ''))


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
