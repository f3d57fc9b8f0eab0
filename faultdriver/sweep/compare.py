"""A/B of two sweeps of the same cases: which findings a candidate fix
removes, which it keeps, and which it adds (a fix must not add any)."""


def signature(finding):
    return (finding['invariant'], finding['point'], finding['host'],
            finding['phase'], finding['action'])


def compare(stock, fixed):
    """``{'removed', 'kept', 'added'}``: finding signatures as dicts."""
    before = {signature(f): f for f in stock['findings']}
    after = {signature(f): f for f in fixed['findings']}
    keys = ('invariant', 'point', 'host', 'phase', 'action')

    def listed(signatures):
        return [dict(zip(keys, s), known=(before.get(s) or after[s])['known'])
                for s in sorted(signatures)]
    return {'patches': fixed['patches'],
            'removed': listed(set(before) - set(after)),
            'kept': listed(set(before) & set(after)),
            'added': listed(set(after) - set(before))}


def text(diff):
    lines = ['A/B with %s: %d findings removed, %d kept, %d added' % (
        ', '.join(diff['patches']), len(diff['removed']),
        len(diff['kept']), len(diff['added']))]
    for kind in ('removed', 'kept', 'added'):
        for f in diff[kind]:
            lines.append('  %-8s %s at %s.%s@%s (%s)%s' % (
                kind, f['invariant'], f['point'], f['phase'], f['host'],
                f['action'], ' known: %s' % f['known'] if f['known']
                else ''))
    return '\n'.join(lines) + '\n'
