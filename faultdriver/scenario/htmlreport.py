"""A scenario run as one self-contained HTML page.

The page is the ``-f json`` document rendered: for A/B runs the
side-by-side table first, then per variant a verdict banner, the sequence
diagram (:mod:`faultdriver.scenario.svg`) and the report's tables
(:func:`faultdriver.scenario.report.variant_tables`).  Inline CSS and
SVG only: no scripts, nothing fetched, so it can be attached to a bug
report or CI run as it is.  Every text from the run is escaped.
"""

import datetime
from html import escape
import typing

from faultdriver.scenario import report as report_module
from faultdriver.scenario import svg
from faultdriver.scenario import variant_report
from faultdriver.scenario import wording

Report = variant_report.VariantReport

CSS = """
body{font-family:Helvetica,Arial,sans-serif;color:#263238;margin:24px;
 max-width:1500px}
h1{font-size:22px;margin:0 0 4px}
h2{font-size:18px;margin:0}
h3{font-size:14px;margin:22px 0 6px;color:#37474f}
.meta{color:#607d8b;font-size:13px}
.desc{background:#f5f7f8;padding:10px 14px;
 border-left:4px solid #90a4ae;font-size:13px;max-width:1000px}
table{border-collapse:collapse;font-size:12.5px;margin:4px 0}
th,td{border:1px solid #cfd8dc;padding:3px 8px;text-align:left;
 vertical-align:top}
th{background:#eceff1}
td.good{background:#e8f5e9;color:#1b5e20}
td.bad{background:#ffebee;color:#b71c1c;font-weight:bold}
td.shown{background:#fff3e0;color:#e65100}
section{margin:36px 0;border-top:2px solid #cfd8dc;padding-top:12px}
.banner{padding:12px 16px;border-radius:6px;color:#fff;margin:8px 0}
.banner small{display:block;font-size:13px;opacity:.9;margin-top:2px}
.ok{background:#2e7d32}.bug{background:#e65100}.fail{background:#b71c1c}
.chip{display:inline-block;padding:3px 10px;border-radius:12px;color:#fff;
 margin-right:8px;text-decoration:none;font-size:13px}
.legend{display:flex;flex-wrap:wrap;gap:4px 18px;font-size:12px;
 color:#455a64;margin-bottom:6px}
.legend span{display:flex;align-items:center;gap:4px}
.diagram{overflow-x:auto;border:1px solid #cfd8dc;padding:6px;
 background:#fff}
pre{background:#263238;color:#eceff1;padding:10px;overflow-x:auto;
 font-size:12px}
"""

#: What each verdict means, and its colour.
VERDICTS = {
    'ok': ('ok', 'every expectation met'),
    'bug reproduced': ('bug', 'the bug shows, as this variant expects: '
                              'reported, not a failure'),
    'bug not reproduced': ('fail', 'this variant expects the bug; '
                                   'it did not show'),
    'expectations not met': ('fail', 'some expectations were not met'),
    'step failed': ('fail', 'a step failed; later steps did not run'),
    'internal error': ('fail', 'faultdriver failed; see the error below'),
}
EXIT_CODES: typing.Dict[typing.Optional[int], str] = {
    0: 'every variant as expected', 1: 'expectations not met',
    2: 'bad input', 3: 'internal error'}


def _cell(value: typing.Any) -> str:
    text = str(value)
    if text.startswith(wording.VERDICT[True, True]):
        return '<td class="shown">%s</td>' % escape(text)
    if text.startswith(('NOT MET', 'failed', 'FAILED',
                        wording.VERDICT[True, False])) or text in (
            'NO', 'down', 'bug not reproduced', 'expectations not met',
            'step failed', 'internal error'):
        return '<td class="bad">%s</td>' % escape(text)
    if text.startswith(('met', 'ok')) or text in ('yes', 'bug reproduced'):
        return '<td class="good">%s</td>' % escape(text)
    return '<td>%s</td>' % escape(text)


def table(columns: typing.Sequence[str],
          rows: typing.Sequence[typing.Sequence[typing.Any]],
          title: typing.Optional[str] = None) -> str:
    head = ''.join('<th>%s</th>' % escape(str(c)) for c in columns)
    body = ''.join('<tr>%s</tr>' % ''.join(_cell(v) for v in row)
                   for row in rows)
    if not rows:
        body = '<tr><td colspan="%d">none</td></tr>' % len(columns)
    caption = '<h3>%s</h3>' % escape(title) if title else ''
    return '%s<table><tr>%s</tr>%s</table>' % (caption, head, body)


def _anchor(variant: str) -> str:
    return 'variant-%s' % ''.join(c if c.isalnum() else '-' for c in variant)


def banner(report: Report) -> str:
    css, meaning = VERDICTS.get(report.verdict, ('fail', ''))
    facts = '%s; %s s' % (wording.variant_facts(
        report.mode, report.patches, report.nova),
        '?' if report.wall_seconds is None else report.wall_seconds)
    return ('<div class="banner %s"><h2>Variant %s: %s</h2>'
            '<small>%s. %s</small></div>' % (
                css, escape(report.variant),
                escape(report.verdict.upper()), escape(meaning),
                escape(facts)))


def legend() -> str:
    return ''.join('<span>%s%s</span>' % (icon, escape(text))
                   for icon, text in svg.legend())


def variant(report: Report,
            setup: typing.AbstractSet[str] = frozenset()) -> str:
    parts = ['<section id="%s">' % _anchor(report.variant),
             banner(report)]
    if report_module.ran(report):
        parts.append('<h3>Sequence diagram</h3><div class="legend">%s</div>'
                     '<div class="diagram">%s</div>' % (legend(),
                                                       svg.diagram(report)))
        parts.extend(table(columns, rows, title) for title, columns, rows
                     in report_module.variant_tables(report, setup))
    if report.internal_error:
        parts.append('<h3>Internal error</h3><pre>%s</pre>'
                     % escape(report.internal_error))
    parts.append('</section>')
    return ''.join(parts)


def render(doc: typing.Mapping[str, typing.Any]) -> str:
    """The page of a run document (its ``variants`` VariantReports), as
    text."""
    reports = doc['variants']
    chips = ''.join(
        '<a class="chip %s" href="#%s">%s: %s</a>' % (
            VERDICTS.get(r.verdict, ('fail',))[0], _anchor(name),
            escape(name), escape(r.verdict))
        for name, r in reports.items())
    code = doc.get('exit_code')
    parts = [
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
        '<title>faultdriver: %s</title>' % escape(str(doc.get('scenario'))),
        '<style>%s</style></head><body>' % CSS,
        '<h1>Scenario %s</h1>' % escape(str(doc.get('scenario'))),
        '<div class="meta">%s &middot; %s mode &middot; exit code %s '
        '(%s) &middot; rendered %s</div>' % (
            escape(str(doc.get('file', ''))), escape(str(doc.get('mode'))),
            escape(str(code)), escape(EXIT_CODES.get(code, '?')),
            datetime.datetime.now().strftime('%Y-%m-%d %H:%M')),
    ]
    if doc.get('description'):
        parts.extend('<p class="desc">%s</p>' % escape(' '.join(
            paragraph.split())) for paragraph in
            doc['description'].split('\n\n'))
    parts.append('<p>%s</p>' % chips)
    if len(reports) > 1:
        columns, rows = report_module.comparison(reports)
        parts.append(table(columns, rows, 'Side by side'))
    setup = report_module.shared(reports)
    parts.extend(variant(r, setup) for r in reports.values())
    parts.append('</body></html>\n')
    return '\n'.join(parts)
