"""Group broken invariants into findings and write each finding's
reproducing scenario (the case's file, its variant marked ``expect:
bug`` with the broken invariant expected broken, so ``scenario run``
says BUG REPRODUCED while Nova behaves so)."""

import copy
import os
import typing

import yaml

from faultdriver.scenario import specs
from faultdriver.sweep import cases
from faultdriver.sweep import execute
from faultdriver.sweep import recognisers
from faultdriver.sweep import records


#: The version of the sweep document (``-f json``) and of what it keeps
#: of each finding: 2 adds ``format_version``, ``causes``, ``summary``
#: and ``clean_run``, and ``known`` names a finding of doc/findings.rst
#: (``F5``), where 1 named a bundled scenario.
FORMAT_VERSION = 2
#: The versions of a sweep's results this one reads (``sweep merge``):
#: 1 (no ``format_version`` in ``sweep.json``) keeps the same case
#: results, only what is made of them differs.
READS = (1, 2)


def findings_of(results: typing.Sequence[records.CaseResult], folder: str,
                operation: typing.Optional[str] = None,
                clean_broken: typing.Collection[str] = ()
                ) -> typing.List[records.Finding]:
    """The findings of a sweep's results: grouped, known ones named (the
    recognisers of the workflow's ``operation``), each with its
    reproducing scenario written to ``folder``.  ``clean_broken``: what
    the workflow's clean run broke already (its own finding, never a
    case's)."""
    return write_reproducers(recognise(group(results, clean_broken),
                                       operation), folder)


def group(results: typing.Sequence[records.CaseResult],
          clean_broken: typing.Collection[str] = ()
          ) -> typing.List[records.Finding]:
    """``[finding]``: one per (invariant, point, host, phase, action,
    first fault), with every case id that shows it; internal errors are
    not findings, nor a second fault's case breaking what its first
    fault alone broke (``sweep --depth 2``: the second adds nothing), nor
    a case breaking what the clean run broke (the clean run's finding)."""
    found: typing.Dict[typing.Tuple[typing.Optional[str], ...],
                       records.Finding] = {}
    by_id = {result['id']: result for result in results}
    for result in results:
        if result['internal_error']:
            continue
        first = by_id.get(result.get('first') or '')
        first_broke = first['broken'] if first else ()
        for invariant in result['broken']:
            if invariant in first_broke or invariant in clean_broken:
                continue
            key = (invariant, result['point'], result['host'],
                   result['phase'], result['action'], result.get('first'))
            finding = found.setdefault(key, {
                'invariant': invariant, 'point': result['point'],
                'host': result['host'], 'phase': result['phase'],
                'action': result['action'], 'first': result.get('first'),
                'cases': [],
                'case_scenario': result['scenario'],
                'case_broken': list(result['broken']), 'scenario': None,
                'known': None, 'confirmed': None,
                'actual': actual_of(result, invariant)})
            finding['cases'].append(result['id'])
    return sorted(found.values(), key=lambda f: (
        f['first'] or '', f['point'], f['host'], f['phase'], f['action'],
        f['invariant']))


def actual_of(result: records.CaseResult, invariant: str) -> records.JSON:
    """What ``invariant`` saw in a case (the failed step's error for
    ``step-failed``)."""
    if invariant == STEP_FAILED:
        return ': '.join(filter(None, (result.get('step_failed'),
                                       result.get('step_error'))))
    return next((d['actual'] for d in result['details']
                 if d['kind'] == invariant), None)


STEP_FAILED = 'step-failed'


def known_as(operation: typing.Optional[str],
             finding: records.Finding) -> typing.Optional[str]:
    """The finding of doc/findings.rst a broken invariant of a case is
    (``'F5'``; ``'F5, F15'`` where two recognisers take it), or None.  A
    second fault's (``first``) is never recognised: the recognisers
    record first faults."""
    point, host, phase = finding['point'], finding['host'], finding['phase']
    if finding.get('first') or point is None or host is None or \
            phase is None:
        # (No step: the clean run's finding, which no recogniser takes.)
        return None
    seen = recognisers.Seen(operation, point, host, phase,
                            finding['action'], finding['invariant'],
                            finding['actual'])
    return ', '.join(recognisers.recognise(seen)) or None


def recognise(findings: typing.List[records.Finding],
              operation: typing.Optional[str] = None
              ) -> typing.List[records.Finding]:
    """Name each finding a recogniser takes (``known``)."""
    for finding in findings:
        finding['known'] = known_as(operation, finding)
    return findings


def _finding_name(finding: records.Finding) -> str:
    point, host, phase = finding['point'], finding['host'], finding['phase']
    if point is None or host is None or phase is None:
        raise ValueError('finding %s of no step: the clean run\'s, whose '
                         'reproducer is its own' % finding['invariant'])
    own = cases.Case(point, host, phase, finding['action']).id
    first = finding.get('first')
    case_id = first + cases.THEN + own if first else own
    return cases.scenario_name(finding['invariant'], case_id)


def write_reproducers(findings: typing.List[records.Finding],
                      folder: str) -> typing.List[records.Finding]:
    """Give each finding its reproducing scenario file."""
    for finding in findings:
        if finding['invariant'] == 'step-failed':
            finding['scenario'] = finding['case_scenario']
            continue
        with open(finding['case_scenario'], encoding='utf-8') as stream:
            data: records.ScenarioData = yaml.safe_load(stream)
        data = copy.deepcopy(data)
        data['name'] = _finding_name(finding)
        data['description'] = (
            '%s\nFinding: invariant %s broken.' % (
                data['description'], finding['invariant']))
        [variant] = data['variants'].values()
        variant['expect'] = 'bug'
        data['variants'] = {'stock': variant}
        # The case's outcome: the invariants it broke expected broken,
        # the others holding (periodics-clean needs moves-again to run).
        data['expectations'] = [
            specs.ExpectationSpec(e.kind, dict(e.args, broken=True)).to_json()
            if e.kind in finding['case_broken'] else e.to_json()
            for e in map(specs.ExpectationSpec.from_json,
                         data['expectations'])]
        finding['scenario'] = execute.write_scenario(folder, data)
    return findings


def _fired(report: records.Report, finding: records.Finding) -> bool:
    """Whether the replay's journal has a fault fired at the finding's
    point, phase and host (the case's one rule there; the journal names
    the rule's action, ``shutdown`` for the ``shutdown-hold`` class)."""
    return any(entry.get('kind') == 'fault' and
               (entry.get('point'), entry.get('phase'), entry.get('host')) ==
               (finding['point'], finding['phase'], finding['host'])
               for entry in (report.get('state') or {}).get('faults', ()))


def confirm(findings: typing.List[records.Finding], backend: str, mode: str,
            folder: str,
            progress: typing.Optional[typing.Callable[[str], None]] = None
            ) -> typing.List[records.Finding]:
    """Replay each finding's reproducer on ``backend`` (real processes):
    ``confirmed`` is True where it shows the same broken invariant there,
    False where it does not (an artifact of the in-process harness, never
    to be reported as a Nova bug), None where the replay could not run or
    its fault never fired there (the tier's driver never made that call:
    nothing was replayed, so nothing is confirmed or refuted).
    Findings of the same case share one replay (the same steps).  A
    case's scenario turns the timer periodic off (``periodic-timer:
    false``), so a fault at a hit of a host's resource periodic takes the
    same hit on processes as in the embedded Nova."""
    replays: typing.Dict[str, records.Report] = {}
    for finding in findings:
        if not finding['scenario'] or finding['invariant'] == 'step-failed' \
                or finding['point'] is None:
            # A failed step replays nothing to compare; the clean run's
            # finding has no fault to see fire.
            continue
        if finding['case_scenario'] not in replays:
            log = os.path.join(folder, 'confirm-%s.log' % os.path.basename(
                finding['scenario'])[:-5])
            replays[finding['case_scenario']] = execute.run_scenario(
                finding['scenario'], 'stock', mode, backend, log)
        report = replays[finding['case_scenario']]
        verdict = report.get('verdict')
        # This finding's invariant, whatever the others did there.
        seen = [e['met'] for e in report.get('expectations', ())
                if e['kind'] == finding['invariant']]
        fired = _fired(report, finding)
        finding['confirmed'] = seen[0] if seen and fired and not report.get(
            'internal_error') else None
        finding['confirmed_on'] = backend
        if progress:
            progress('confirm on %s: %s at %s.%s@%s (%s): %s' % (
                backend, finding['invariant'], finding['point'],
                finding['phase'], finding['host'], finding['action'],
                confirm_text(finding['confirmed'], fired, verdict)))
    return findings


def confirm_text(confirmed: typing.Optional[bool], fired: bool,
                 verdict: typing.Optional[str]) -> str:
    """What a replay says of one finding: its own invariant's answer
    first -- the replay's verdict covers every invariant of the case,
    and one the embedded run kept may break on processes too, which
    makes the whole replay 'bug not reproduced' while this finding's
    invariant broke as recorded."""
    if not fired:
        return 'not replayed: the fault never fired there'
    if confirmed is None:
        return 'not replayed: %s' % verdict
    return '%s (the replay: %s)' % (
        'confirmed' if confirmed else 'NOT CONFIRMED', verdict)
