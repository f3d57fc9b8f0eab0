"""A sweep as one self-contained HTML page: the matrix (one row per
traced step and host, one column per action; each cell ok or the
invariants it broke and its causes, linking to the case's reproducing
scenario), the broken cases by cause with their reproducers, and the A/B
diff when there is one (its A and B headed by the Nova each ran).
Inline CSS only, every text escaped (the scenario report's style)."""

from html import escape
import os
import typing

from faultdriver.scenario import htmlreport as scenario_html
from faultdriver.sweep import casetext
from faultdriver.sweep import records
from faultdriver.sweep import report


def _link(path: typing.Optional[str], text: str,
          base: typing.Optional[str]) -> str:
    if not path:
        return escape(text)
    target = os.path.relpath(path, base) if base else path
    return '<a href="%s">%s</a>' % (escape(target, quote=True),
                                    escape(text))


def _matrix(doc: records.Document, base: typing.Optional[str]) -> str:
    actions = sorted({c['action'] for c in doc['cases']})
    rows: typing.Dict[typing.Tuple[str, str, str, str],
                      typing.Dict[str, records.CaseResult]] = {}
    for case in doc['cases']:
        # A second fault's row is its own after its first fault's.
        key = (case.get('first') or '', case['point'], case['phase'],
               case['host'])
        rows.setdefault(key, {})[case['action']] = case
    out = ['<table><tr><th>Step</th><th>Host</th>%s</tr>' % ''.join(
        '<th>%s</th>' % escape(a) for a in actions)]
    named = report.labels(doc)
    for key in sorted(rows):
        first, point, phase, host = key
        cells = []
        for action in actions:
            case = rows[key].get(action)
            if case is None:
                cells.append('<td>-</td>')
            else:
                said = report.outcome(case)
                cells.append('<td class="%s">%s</td>' % (
                    'good' if said.startswith('ok') else 'bad',
                    _link(case['scenario'], report.cell(
                        case, named.get(case['id'])), base)))
        out.append('<tr><td>%s%s.%s</td><td>%s</td>%s</tr>' % (
            escape(first + ' then ' if first else ''), escape(point),
            escape(phase), escape(host), ''.join(cells)))
    out.append('</table>')
    return '\n'.join(out)


def _causes(doc: records.Document, base: typing.Optional[str]) -> str:
    """The broken cases by cause, the unrecognised first; under each
    case the invariants it broke, each with its finding and what it saw.
    """
    actual = {(case, f['invariant']): f.get('actual')
              for f in doc['findings'] for case in f['cases']}
    out = ['<table><tr><th>Cause</th><th>Case</th><th>Broken invariants'
           '</th><th>Confirmed</th><th>Reproducer</th></tr>']
    for cause in report.causes_of(doc):
        for index, case in enumerate(cause['cases']):
            items = ''.join(
                '<li>%s (%s): %s</li>' % (
                    escape(i['invariant']), escape(i['known'] or 'new'),
                    escape(str(actual.get((case['id'], i['invariant'])))[
                        :300])) for i in case['invariants'])
            reproducer = case['invariants'][0]['reproducer']
            out.append(
                '<tr><td class="%s">%s</td><td>%s</td><td><ul>%s</ul>'
                '</td><td>%s</td><td>%s</td></tr>' % (
                    'known' if cause['known'] else 'bad',
                    escape(cause['label']) if not index else '',
                    escape(case['where']), items,
                    escape(', '.join(sorted({i['confirmed'] for i in
                                             case['invariants']}))),
                    _link(reproducer, os.path.basename(reproducer or ''),
                          base)))
    out.append('</table>')
    return '\n'.join(out)


def _one(doc: records.Document, base: typing.Optional[str],
         side: str = '') -> str:
    """One sweep's section; ``side`` (``A``, ``B``) heads it in an A/B."""
    return ('<section><h2>%s%s</h2><p class="meta">shard %s: %d cases, '
            '%s, %.0f s; results in %s</p>%s'
            '<h3>Matrix</h3>%s<h3>Broken cases by cause</h3>%s</section>' % (
                escape(side + ': ' if side else ''),
                escape(report.heading(doc)),
                escape(doc['shard']), len(doc['cases']),
                escape(doc.get('summary', '')), doc['wall_seconds'],
                escape(doc['results']) + escape(
                    '; ' + report.recovery_line(doc).strip()
                    if doc.get('recovery') else ''),
                '<p>%s</p>' % escape(report.clean_line(doc))
                if report.clean_line(doc) else '', _matrix(doc, base),
                _causes(doc, base)))


def render(doc: records.Document, base: typing.Optional[str] = None) -> str:
    """The page; links are relative to ``base`` (the page's folder)."""
    parts = []
    if 'ab' in doc:
        diff = doc['ab']
        rows = ''.join('<tr><td>%s</td><td>%s</td><td>%s</td>'
                       '<td>%s</td></tr>' % (
                           kind, escape(f['invariant'] + (
                               ' (%s)' % f['known'] if f.get('known')
                               else '')),
                           escape(casetext.step_label(f)),
                           escape(f['action']))
                       for kind in ('removed', 'unchecked', 'kept',
                                    'added')
                       for f in diff.get(kind, ()))
        regressions = ''.join(
            '<li class="bad">REGRESSION %s: ok without the change, broken '
            'with it</li>' % escape(case)
            for case in diff.get('regressions', ())) + ''.join(
            '<li class="bad">NEW STEP %s: broken with the change, at a '
            'step stock Nova does not take</li>' % escape(case)
            for case in diff.get('new_steps', ()))
        found = diff.get('causes')
        causes = '<h3>Causes</h3><ul>%s</ul>' % ''.join(
            '<li>%s: %s</li>' % (kind, escape(', '.join(found[kind]) or
                                              'none'))
            for kind in ('removed', 'unchecked', 'kept', 'added')
            if found[kind] or kind != 'unchecked') if found else ''
        parts.append('<section><h2>A/B with %s</h2>%s%s<h3>Findings</h3>'
                     '<table><tr><th>'
                     'Finding</th><th>Invariant</th><th>Step</th><th>'
                     'Action</th></tr>%s</table></section>' % (
                         escape(', '.join(diff['patches'])),
                         '<ul>%s</ul>' % regressions if regressions else '',
                         causes, rows))
        parts += [_one(doc['a'], base, 'A'), _one(doc['b'], base, 'B')]
        title = doc['a']['workflow']
    else:
        parts.append(_one(doc, base))
        title = doc['workflow']
    return ('<!DOCTYPE html><html><head><meta charset="utf-8"><title>'
            'faultdriver sweep %s</title><style>%s</style></head><body>'
            '<h1>faultdriver sweep: %s</h1>%s</body></html>\n' % (
                escape(title), scenario_html.CSS, escape(title),
                '\n'.join(parts)))
