"""The sweep's text report: the matrix (step x action, each cell ok or
the invariants broken) and the findings."""

import typing

import prettytable

from faultdriver import novaundertest
from faultdriver.sweep import casetext
from faultdriver.sweep import causes
from faultdriver.sweep import records


def outcome(result: records.CaseResult) -> str:
    """A case's outcome in words, as its JSON records it: ``ok`` only
    where the verdict is ok."""
    if result.get('not_reached'):
        return 'NOT REACHED (not counted)'
    if result['internal_error']:
        return 'INTERNAL ERROR'
    if result.get('verdict', 'ok') == 'ok' and not result['broken']:
        return 'ok' + answered(result)
    return (', '.join(result['broken']) or str(result['verdict'])) + \
        answered(result)


def answered(result: records.CaseResult) -> str:
    """What the API answered a ``second-call`` case's call while the
    step was held (`` (400)``, `` (accepted)``), else nothing."""
    calls = result.get('second_call') or ()
    return ''.join(' (%s)' % call['answer'] if call['answer'] is not None
                   else ' (no answer)' for call in calls)


def causes_of(doc: records.Document) -> typing.List[records.CauseJSON]:
    """The document's causes (JSON); a document of format version 1 has
    none: made from its findings, as a sweep of today makes them."""
    if 'causes' in doc:
        found: typing.List[records.CauseJSON] = doc['causes']
        return found
    return [cause.to_json() for cause in causes.group(doc['findings'])]


def labels(doc: records.Document) -> typing.Dict[str, str]:
    """``{case id: 'F5, F15' or 'unrecognised' or 'F5, unrecognised'}``
    of a sweep document's broken cases."""
    found: typing.Dict[str, typing.List[str]] = {}
    for cause in causes_of(doc):
        for case in cause['cases']:
            found.setdefault(case['id'], []).append(
                cause['known'] or 'unrecognised')
    return {case: ', '.join(dict.fromkeys(names))
            for case, names in found.items()}


def cell(case: records.CaseResult, label: typing.Optional[str]) -> str:
    """A matrix cell: the case's outcome, with its causes where broken."""
    said = outcome(case)
    return '%s [%s]' % (said, label) if label and \
        not said.startswith('ok') else said


def invariants_text(case: records.BrokenCaseJSON) -> str:
    """A broken case's invariants, each with the finding it is."""
    return ', '.join('%s (%s)' % (i['invariant'], i['known'] or 'new')
                     for i in case['invariants'])


def heading(doc: records.Document) -> str:
    """What ran: the workflow, where, and on which Nova."""
    return '%s on %s (%s mode%s; Nova under test: %s)' % (
        doc['workflow'], doc['backend'], doc['mode'],
        ', tracker fixes: ' + ', '.join(doc['patches'])
        if doc['patches'] else '', novaundertest.describe(doc.get('nova')))


def text(doc: records.Document) -> str:
    actions = sorted({case['action'] for case in doc['cases']})
    named = labels(doc)
    rows: typing.Dict[str, typing.Dict[str, str]] = {}
    for case in doc['cases']:
        key = casetext.step_label(case)
        rows.setdefault(key, {})[case['action']] = cell(
            case, named.get(case['id']))
    matrix = prettytable.PrettyTable(['Step'] + actions)
    matrix.align = 'l'
    for key in sorted(rows):
        matrix.add_row([key] + [rows[key].get(a, '-') for a in actions])
    found = prettytable.PrettyTable(['Cause', 'Case', 'Broken invariants',
                                     'Confirmed', 'Reproducer'])
    found.align = 'l'
    for cause in causes_of(doc):
        for index, case in enumerate(cause['cases']):
            found.add_row([cause['label'] if not index else '',
                           case['where'],
                           invariants_text(case),
                           ', '.join(sorted({i['confirmed'] for i in
                                             case['invariants']})),
                           case['invariants'][0]['reproducer']])
    return ('Sweep of %s, shard %s: %d cases, %s, %.0fs; results in %s\n'
            '%s%s%s%s\n\nBroken cases by cause (unrecognised first)\n%s\n' % (
                heading(doc), doc['shard'], len(doc['cases']),
                doc.get('summary', '%d findings' % len(doc['findings'])),
                doc['wall_seconds'], doc['results'], clean_line(doc),
                recovery_line(doc), internal_errors(doc), matrix, found))


def clean_line(doc: records.Document) -> str:
    """The clean run's finding, in a line (else nothing); an A/B's B
    first says what its own clean run broke."""
    own = doc.get('change_clean_run')
    line = ('This Nova\'s own clean run (no fault) broke %s: its finding, '
            'under its cause below\n' % ', '.join(own['broken'])
            if own else '')
    run = doc.get('clean_run')
    if not run:
        return line
    if run.get('shared'):
        return line + ('The clean run (of %s, whose cases these are) broke '
                       '%s; these cases are judged against it\n' % (
                           run['shared'], ', '.join(run['broken'])))
    return line + ('The clean run (no fault) broke %s: the workflow\'s own '
                   'finding, under its cause below\n' % ', '.join(
                       run['broken']))


def recovery_line(doc: records.Document) -> str:
    """What a depth-2 sweep's pruning did, in a line (else nothing)."""
    figures: typing.Optional[records.Pruning] = doc.get('recovery')
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


def internal_errors(doc: records.Document) -> str:
    """The cases that did not run to their checks, first: neither ok nor
    findings, and the reason the sweep exits 3."""
    failed: typing.List[records.CaseResult] = [
        case for case in doc['cases'] if case['internal_error']]
    if not failed:
        return ''
    lines = ['%d case(s) ended in an INTERNAL ERROR: not checked, neither '
             'ok nor findings (the sweep exits 3):' % len(failed)]
    for case in failed:
        last = (case.get('error') or '').strip().splitlines()
        lines.append('  %s: %s' % (case['id'], last[-1] if last else '?'))
    return '\n'.join(lines) + '\n\n'
