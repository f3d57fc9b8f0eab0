"""A/B of two sweeps of the same cases: which findings (and causes: a
known finding of doc/findings.rst, or an unrecognised one) a candidate
fix removes, which it keeps, and which it adds (a fix must not add any);
which cases it breaks that held before (regressions, listed first); and
which cases could not be compared because one side did not run to its
checks (never counted as removed); and which of B's cases, at steps only
B's Nova takes (no stock case to compare), broke something there."""

import typing

from faultdriver.sweep import casetext
from faultdriver.sweep import clean
from faultdriver.sweep import records

KEYS = ('invariant', 'point', 'host', 'phase', 'action', 'first')
#: A finding's signature: its values of KEYS.
Signature = typing.Tuple[typing.Optional[str], ...]
#: An A/B's differences (:func:`compare`), as the document keeps them.
Diff = typing.Dict[str, records.JSON]


def signature(finding: records.Finding) -> Signature:
    # ``first`` (a depth-2 finding's first fault) is absent from the
    # findings of a sweep written before it was kept.
    return (finding.get('invariant'), finding.get('point'),
            finding.get('host'), finding.get('phase'),
            finding.get('action'), finding.get('first'))


def compare(stock: records.Document, fixed: records.Document) -> Diff:
    """``{'removed', 'kept', 'added', 'unchecked', 'regressions',
    'new_steps'}``: finding signatures as dicts, and case ids
    (``new_steps``: B's cases at a step A's trace lacks that broke an
    invariant; their findings are among the ``added``)."""
    before: typing.Dict[Signature, records.Finding] = {
        signature(f): f for f in stock['findings']}
    after: typing.Dict[Signature, records.Finding] = {
        signature(f): f for f in fixed['findings']}
    cases_a: typing.Dict[str, records.CaseResult] = {
        c['id']: c for c in stock.get('cases', ())}
    cases_b: typing.Dict[str, records.CaseResult] = {
        c['id']: c for c in fixed.get('cases', ())}
    failed = sorted(i for i in set(cases_a) | set(cases_b)
                    if _errored(cases_a.get(i)) or _errored(cases_b.get(i)))
    ran = ran_on(fixed)

    def checked(finding: records.Finding) -> bool:
        """Every case of a stock finding ran to its checks with the fix
        too (a case that errored there removed nothing; the clean run's
        where B traced its own Nova)."""
        return all(case in ran and case not in failed
                   for case in finding['cases'])

    def listed(signatures: typing.Iterable[Signature]
               ) -> typing.List[typing.Dict[str, typing.Optional[str]]]:
        return [dict(zip(KEYS, s), known=(before.get(s) or after[s])['known'])
                for s in sorted(signatures, key=lambda s: tuple(
                    part or '' for part in s))]
    gone = set(before) - set(after)
    return {'patches': changes(stock, fixed),
            'regressions': sorted(
                i for i in set(cases_a) & set(cases_b)
                if i not in failed and not cases_a[i]['broken'] and
                cases_b[i]['broken']),
            'removed': listed(s for s in gone if checked(before[s])),
            'unchecked': listed(s for s in gone if not checked(before[s])),
            'kept': listed(set(before) & set(after)),
            'added': listed(set(after) - set(before)),
            'new_steps': sorted(
                i for i in set(cases_b) - set(cases_a)
                if i not in failed and cases_b[i]['broken']),
            'causes': compare_causes(stock, fixed, failed),
            'internal_errors': failed}


def ran_on(fixed: records.Document) -> typing.Set[str]:
    """The case ids B ran, and the clean run's where B ran a clean run
    of its own Nova (an A/B's B traces itself: ``change_steps`` is set),
    so that A's clean-run finding was checked on B: kept where B's own
    clean run broke it too, removed where not.  B documents written
    before that have no such run."""
    ran = {c['id'] for c in fixed.get('cases', ())}
    if fixed.get('change_steps') is not None:
        ran.add(clean.CASE_ID)
    return ran


def _errored(case: typing.Optional[records.CaseResult]) -> bool:
    """Whether a side's case did not run to its checks (no such case:
    no)."""
    return bool(case and case.get('internal_error'))


def compare_causes(stock: records.Document, fixed: records.Document,
                   failed: typing.Iterable[str] = ()
                   ) -> typing.Optional[typing.Dict[str, typing.List[str]]]:
    """``{'removed', 'unchecked', 'kept', 'added'}``: the causes (their
    labels) A shows and B does not (those of which a case did not run to
    its checks on B, or is no case of B's, are ``unchecked``: the clean
    run's where B did not trace its own Nova), both show, B adds."""
    if 'causes' not in stock and 'causes' not in fixed:
        return None         # documents of format version 1
    before: typing.Dict[str, records.CauseJSON] = {
        c['key']: c for c in stock.get('causes', ())}
    after: typing.Dict[str, records.CauseJSON] = {
        c['key']: c for c in fixed.get('causes', ())}
    ran = ran_on(fixed) - set(failed)

    def checked(cause: records.CauseJSON) -> bool:
        return all(case['id'] in ran for case in cause['cases'])

    def labels(keys: typing.Iterable[str],
               side: typing.Mapping[str, records.CauseJSON]
               ) -> typing.List[str]:
        return [side[key]['label'] for key in sorted(keys)]
    gone = set(before) - set(after)
    return {'removed': labels({k for k in gone if checked(before[k])},
                              before),
            'unchecked': labels({k for k in gone
                                 if not checked(before[k])}, before),
            'kept': labels(set(before) & set(after), before),
            'added': labels(set(after) - set(before), after)}


def changes(stock: records.Document,
            fixed: records.Document) -> typing.List[str]:
    """What B adds to A, in words: tracker fixes by name, Nova changes by
    file name, a Nova source tree by its path."""
    def nova(doc: records.Document) -> typing.List[str]:
        record = doc.get('nova') or {}
        tree = ['Nova tree %s' % record['tree']['path']] \
            if record.get('tree') else []
        return tree + ['%s (Nova)' % patch['file'] for patch in
                       record.get('patches', ())]
    before = set(stock['patches']) | set(nova(stock))
    added: typing.List[str] = fixed['patches'] + nova(fixed)
    return [name for name in added
            if name not in before]


def text(diff: Diff) -> str:
    lines = ['A/B with %s: %d findings removed, %d kept, %d added%s%s' % (
        ', '.join(diff['patches']), len(diff['removed']),
        len(diff['kept']), len(diff['added']),
        ', %d not checked (a side did not run)' % len(diff['unchecked'])
        if diff['unchecked'] else '',
        ', %d REGRESSIONS' % len(diff['regressions'])
        if diff['regressions'] else '')]
    if diff.get('new_steps'):
        lines[0] += ', %d broken at steps only the change takes' % len(
            diff['new_steps'])
    found = diff.get('causes')
    if found:
        lines.append('Causes: %s' % '; '.join(
            '%d %s%s' % (len(found[kind]), kind, ' (%s)' % ', '.join(
                found[kind]) if found[kind] else '')
            for kind in ('removed', 'unchecked', 'kept', 'added')
            if found[kind] or kind != 'unchecked'))
    for case in diff['regressions']:
        lines.append('  REGRESSION %s: ok without the change, broken with '
                     'it' % case)
    for case in diff.get('new_steps', ()):
        lines.append('  NEW STEP   %s: broken with the change, at a step '
                     'stock Nova does not take' % case)
    for case in diff.get('flaky', ()):
        lines.append('  flaky      %s: ok once without the change, broken '
                     'when replayed without it too' % case)
    for kind in ('removed', 'unchecked', 'kept', 'added'):
        for f in diff[kind]:
            lines.append('  %-9s %s at %s (%s)%s' % (
                kind, f['invariant'], casetext.step_label(f), f['action'],
                ' known: %s' % f['known'] if f['known'] else ''))
    return '\n'.join(lines) + '\n'
