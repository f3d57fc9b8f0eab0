"""A sweep as one self-contained HTML page: the matrix (one row per
traced step and host, one column per action; each cell ok or the
invariants it broke, linking to the case's reproducing scenario), the
findings with their reproducers, and the A/B diff when there is one.
Inline CSS only, every text escaped (the scenario report's style)."""

from html import escape
import os

from faultdriver.scenario import htmlreport as scenario_html
from faultdriver.sweep import report


def _link(path, text, base):
    if not path:
        return escape(text)
    target = os.path.relpath(path, base) if base else path
    return '<a href="%s">%s</a>' % (escape(target, quote=True),
                                    escape(text))


def _matrix(doc, base):
    actions = sorted({c['action'] for c in doc['cases']})
    rows = {}
    for case in doc['cases']:
        # A second fault's row is its own after its first fault's.
        key = (case.get('first') or '', case['point'], case['phase'],
               case['host'])
        rows.setdefault(key, {})[case['action']] = case
    out = ['<table><tr><th>Step</th><th>Host</th>%s</tr>' % ''.join(
        '<th>%s</th>' % escape(a) for a in actions)]
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
                    'good' if said == 'ok' else 'bad',
                    _link(case['scenario'], said, base)))
        out.append('<tr><td>%s%s.%s</td><td>%s</td>%s</tr>' % (
            escape(first + ' then ' if first else ''), escape(point),
            escape(phase), escape(host), ''.join(cells)))
    out.append('</table>')
    return '\n'.join(out)


def _findings(doc, base):
    out = ['<table><tr><th>Invariant</th><th>Step</th><th>Action</th>'
           '<th>Cases</th><th>Confirmed</th><th>Actual</th>'
           '<th>Reproducer</th></tr>']
    for f in doc['findings']:
        out.append('<tr><td>%s</td><td>%s</td><td>%s</td><td>%d</td>'
                   '<td>%s</td><td>%s</td><td>%s</td></tr>' % (
                       escape(f['invariant']), escape(report.step_label(f)),
                       escape(f['action']), len(f['cases']),
                       escape(report.confirmation(f)),
                       escape(str(f.get('actual'))[:300]),
                       _link(f['scenario'], os.path.basename(
                           f['scenario'] or ''), base)))
    out.append('</table>')
    return '\n'.join(out)


def _one(doc, base):
    return ('<section><h2>%s on %s (%s mode)%s</h2><p class="meta">shard '
            '%s: %d cases, %d findings, %.0f s; results in %s</p>'
            '<h3>Matrix</h3>%s<h3>Findings</h3>%s</section>' % (
                escape(doc['workflow']), escape(doc['backend']),
                escape(doc['mode']), escape(', fixes: ' + ', '.join(
                    doc['patches']) if doc['patches'] else ''),
                escape(doc['shard']), len(doc['cases']),
                len(doc['findings']), doc['wall_seconds'],
                escape(doc['results']) + escape(
                    '; ' + report.recovery_line(doc).strip()
                    if doc.get('recovery') else ''), _matrix(doc, base),
                _findings(doc, base)))


def render(doc, base=None):
    """The page; links are relative to ``base`` (the page's folder)."""
    parts = []
    if 'ab' in doc:
        diff = doc['ab']
        rows = ''.join('<tr><td>%s</td><td>%s</td><td>%s</td>'
                       '<td>%s</td></tr>' % (
                           kind, escape(f['invariant']),
                           escape(report.step_label(f)),
                           escape(f['action']))
                       for kind in ('removed', 'unchecked', 'kept',
                                    'added')
                       for f in diff.get(kind, ()))
        regressions = ''.join(
            '<li class="bad">REGRESSION %s: ok without the change, broken '
            'with it</li>' % escape(case)
            for case in diff.get('regressions', ()))
        parts.append('<section><h2>A/B with %s</h2>%s<table><tr><th>'
                     'Finding</th><th>Invariant</th><th>Step</th><th>'
                     'Action</th></tr>%s</table></section>' % (
                         escape(', '.join(diff['patches'])),
                         '<ul>%s</ul>' % regressions if regressions else '',
                         rows))
        parts += [_one(doc['a'], base), _one(doc['b'], base)]
        title = doc['a']['workflow']
    else:
        parts.append(_one(doc, base))
        title = doc['workflow']
    return ('<!DOCTYPE html><html><head><meta charset="utf-8"><title>'
            'faultdriver sweep %s</title><style>%s</style></head><body>'
            '<h1>faultdriver sweep: %s</h1>%s</body></html>\n' % (
                escape(title), scenario_html.CSS, escape(title),
                '\n'.join(parts)))
