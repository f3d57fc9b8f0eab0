"""The tables of a scenario report, as data, and as text.

:func:`variant_tables` and :func:`comparison` are the one source of the
report's tables: the text report here and the HTML report
(:mod:`faultdriver.scenario.htmlreport`) both render them.
"""

import typing

import prettytable

from faultdriver import novaundertest
from faultdriver.scenario import runstate
from faultdriver.scenario import tiers
from faultdriver.scenario import variant_report
from faultdriver.scenario import wording

Report = variant_report.VariantReport
#: A table's rows (cells of any printable value).
Rows = typing.List[typing.Sequence[typing.Any]]
#: ``(title, columns, rows)`` of one table.
Table = typing.Tuple[str, typing.List[str],
                     typing.Sequence[typing.Sequence[typing.Any]]]


def table(columns: typing.Sequence[str],
          rows: typing.Iterable[typing.Sequence[typing.Any]],
          title: typing.Optional[str] = None) -> str:
    t = prettytable.PrettyTable(columns)
    t.align = 'l'
    for row in rows:
        t.add_row(list(row))
    return ('%s\n%s\n' % (title, t)) if title else '%s\n' % t


def headline(report: Report) -> str:
    return 'Variant %s (%s): %s' % (
        report.variant, wording.variant_facts(
            report.mode, report.patches, report.nova),
        report.verdict.upper())


def fault_origin(report: Report) -> float:
    """The time fault offsets count from: step 0 if recorded, else the
    first fault."""
    faults = report.state.faults if report.state else []
    if report.steps_started_at:
        return report.steps_started_at
    return faults[0].time if faults else 0


def tier_description(report: Report) -> str:
    """How the report's tier names its Nova (a report of another
    backend than the known ones is told as the embedded Nova's)."""
    return tiers.TIERS.get(report.backend,
                           tiers.TIERS[tiers.DEFAULT]).description


def guests_text(server: runstate.RunServer) -> str:
    """Where the hypervisors have the server's guest ('-' when the
    backend's hypervisor is not asked, 'none' when no host has it)."""
    if server.guests is None:
        return '-'
    return ', '.join('%s on %s' % (state, host) for host, state in
                     sorted(server.guests.items())) or 'none'


def _note(f: typing.Any) -> str:
    """The journal table's note of a fault (a JournalEntry)."""
    return (('waited for lock' if f.waited_for_lock else '') +
            (f.outcome if f.outcome else '') +
            (' error: %s' % f.error if f.error else ''))


def shared(reports: typing.Mapping[str, Report]) -> typing.FrozenSet[str]:
    """The expectations a variant that does not expect the bug meets
    too: facts of the setup (the fault fired, the moves ended so), not
    what shows the bug."""
    return frozenset(e.expectation for r in reports.values()
                     if r.expect != 'bug'
                     for e in r.expectations or () if e.met)


def _shows_bug(report: Report, e: runstate.ExpectationResult,
               setup: typing.AbstractSet[str]) -> bool:
    """Whether ``e`` is worded as what shows the bug: its variant
    expects the bug and no variant without it meets ``e`` too."""
    return report.expect == 'bug' and e.expectation not in setup


def variant_tables(report: Report,
                   setup: typing.AbstractSet[str] = frozenset()
                   ) -> typing.List[Table]:
    """``[(title, columns, rows)]`` of one variant that ran its steps
    (``setup``: :func:`shared` of the run)."""
    state, expectations = report.state, report.expectations
    assert state is not None and expectations is not None, 'not ran()'
    t0 = fault_origin(report)
    shutdown: typing.List[Table] = [
        ('Graceful stop (what it logged)', ['Line'],
         [(line,) for line in report.shutdown_log])] \
        if report.shutdown_log else []
    tables: typing.List[Table] = [
        ('Timeline (%s up in %ss)' % (
            tier_description(report),
            report.setup_seconds),
         ['#', 'At (s)', 'Took (s)', 'Step', 'Result'],
         [(e.index, e.start, e.seconds, e.step,
           e.status + (' ' + e.detail if e.detail else ''))
          for e in report.timeline]),
        ('Faults fired (journal)',
         ['At (s)', 'Host', 'Point', 'Phase', 'Hit', 'Action', 'Note'],
         [('%.2f' % (f.time - t0), f.host, f.point,
           f.phase, f.hit,
           f.action or f.kind, _note(f))
          for f in state.faults]),
        ('Migrations',
         ['Server', 'Id', 'UUID', 'Type', 'Source Compute', 'Dest Compute',
          'Status', 'Created At'],
         [(m.server, m.id, m.uuid, m.type, m.source_compute,
           m.dest_compute, m.status, m.created_at)
          for m in state.migrations]),
        ('Hosts at the end of the steps',
         ['Host', 'Service', 'Pinned pCPUs', 'Placement PCPU used', 'Match'],
         [(h, v.service, v.pinned_cpus, v.placement_pcpu,
           'yes' if v.matches else 'NO')
          for h, v in state.hosts.items()]),
        ('Servers at the end of the steps',
         ['Server', 'Status', 'Host', 'Task state', 'Pinned pCPUs',
          'Guest (hypervisor)', 'UUID'],
         [(alias, s.status, s.host, s.task_state or '-',
           s.pinned_cpus, guests_text(s), s.id)
          for alias, s in state.servers.items()]),
        ('Expectations',
         ['Verdict', 'Expectation', 'Actual'],
         [(wording.shown(_shows_bug(report, e, setup), e.kind,
                         e.expectation, e.met, e.actual),
           e.expectation, e.actual)
          for e in expectations]),
    ]
    return tables + shutdown


def ran(report: Report) -> bool:
    """Whether the variant got as far as a state to report."""
    return report.ran


def _facts(report: Report) -> typing.Dict[str, typing.Any]:
    state = report.state
    faults = state.faults if state else []
    periodic_steps = [e for e in report.timeline
                      if e.step.startswith('periodic')]
    return {
        'tracker fixes': wording.tracker_fixes(report.patches),
        'Nova under test': novaundertest.describe(report.nova),
        'faults fired': len([f for f in faults if f.action]),
        'periodics run (errors)': '%d (%d)' % (
            len(periodic_steps) + len([f for f in faults
                                       if f.kind == 'periodic']),
            len([e for e in periodic_steps if 'ERROR' in e.detail]) +
            len([f for f in faults
                 if f.kind == 'periodic' and f.error])),
        'hosts pinned/placement': '; '.join(
            '%s %d/%d' % (h, len(v.pinned_cpus), v.placement_pcpu)
            for h, v in (state.hosts if state else {}).items()),
        'wall time (s)': report.wall_seconds,
        'VERDICT': report.verdict,
    }


def comparison(reports: typing.Mapping[str, Report]
               ) -> typing.Tuple[typing.List[str], Rows]:
    """``(columns, rows)``: each expectation and key fact, one column per
    variant."""
    variants = list(reports)
    rows: typing.Dict[str, typing.Dict[str, str]] = {}
    setup = shared(reports)
    for variant, report in reports.items():
        for e in report.expectations or ():
            row = rows.setdefault(e.expectation, {})
            row[variant] = wording.result(
                _shows_bug(report, e, setup), e.kind,
                e.expectation, e.met, e.actual)
    facts = {v: _facts(r) for v, r in reports.items()}
    first = ('VERDICT', 'tracker fixes', 'Nova under test')

    def fact_rows(keys: typing.Iterable[str]) -> Rows:
        return [[key] + [facts[v][key] for v in variants] for key in keys]
    return ['Expectation'] + variants, (
        fact_rows(first) +
        [[text] + [row.get(v, '-') for v in variants]
         for text, row in rows.items()] +
        fact_rows(k for k in facts[variants[0]] if k not in first))


def variant_text(report: Report,
                 setup: typing.AbstractSet[str] = frozenset()) -> str:
    out = ['=' * 72, headline(report), '=' * 72]
    out.extend('UNAVAILABLE on this Nova under test: %s: %s' % item
               for item in sorted((report.unavailable or {}).items()))
    if report.internal_error and not ran(report):
        out.append(report.internal_error)
        return '\n'.join(out)
    out.extend(table(columns, rows, title)
               for title, columns, rows in variant_tables(report, setup))
    if report.internal_error:
        out.append('Internal error (after the expectations above were '
                   'checked):\n' + report.internal_error)
    return '\n'.join(out)


def text(reports: typing.Mapping[str, Report]) -> str:
    setup = shared(reports)
    parts = [variant_text(r, setup) for r in reports.values()]
    if len(reports) > 1:
        columns, rows = comparison(reports)
        parts.append(table(columns, rows, 'Side by side'))
    return '\n'.join(parts)
