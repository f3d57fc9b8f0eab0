"""Group broken invariants into findings and write each finding's
reproducing scenario (the case's file, its variant marked ``expect:
bug`` with the broken invariant expected broken, so ``scenario run``
says BUG REPRODUCED while Nova behaves so)."""

import copy
import os

import yaml

from faultdriver.sweep import cases
from faultdriver.sweep import execute


def group(results):
    """``[finding]``: one per (invariant, point, host, phase, action),
    with every case id that shows it; internal errors are not findings."""
    found = {}
    for result in results:
        if result['internal_error']:
            continue
        for invariant in result['broken']:
            key = (invariant, result['point'], result['host'],
                   result['phase'], result['action'])
            finding = found.setdefault(key, {
                'invariant': invariant, 'point': result['point'],
                'host': result['host'], 'phase': result['phase'],
                'action': result['action'], 'cases': [],
                'case_scenario': result['scenario'], 'scenario': None,
                'known': None, 'confirmed': None,
                'actual': next((d['actual'] for d in result['details']
                                if d['kind'] == invariant), None)})
            finding['cases'].append(result['id'])
    return sorted(found.values(), key=lambda f: (f['point'], f['host'],
                                                 f['phase'], f['action'],
                                                 f['invariant']))


def _finding_name(finding):
    case = cases.Case(finding['point'], finding['host'], finding['phase'],
                      finding['action'])
    return case.name(finding['invariant'])


def write_reproducers(findings, folder):
    """Give each finding its reproducing scenario file."""
    for finding in findings:
        if finding['invariant'] == 'step-failed':
            finding['scenario'] = finding['case_scenario']
            continue
        with open(finding['case_scenario'], encoding='utf-8') as stream:
            data = yaml.safe_load(stream)
        data = copy.deepcopy(data)
        data['name'] = _finding_name(finding)
        data['description'] = (
            '%s\nFinding: invariant %s broken.' % (
                data['description'], finding['invariant']))
        [variant] = data['variants'].values()
        variant['expect'] = 'bug'
        data['variants'] = {'stock': variant}
        data['expectations'] = [{finding['invariant']: {'broken': True}}]
        finding['scenario'] = execute.write_scenario(folder, data)
    return findings


def confirm(findings, backend, mode, folder, progress=None):
    """Replay each finding's reproducer on ``backend`` (real processes):
    ``confirmed`` is True where it shows the same broken invariant there,
    False where it does not (an artifact of the in-process harness, never
    to be reported as a Nova bug), None where the replay could not run."""
    for finding in findings:
        if not finding['scenario'] or finding['invariant'] == 'step-failed':
            continue
        log = os.path.join(folder, 'confirm-%s.log' % os.path.basename(
            finding['scenario'])[:-5])
        report = execute.run_scenario(finding['scenario'], 'stock', mode,
                                      backend, log)
        verdict = report.get('verdict')
        finding['confirmed'] = {'bug reproduced': True,
                                'bug not reproduced': False}.get(verdict)
        finding['confirmed_on'] = backend
        if progress:
            progress('confirm on %s: %s at %s.%s@%s (%s): %s' % (
                backend, finding['invariant'], finding['point'],
                finding['phase'], finding['host'], finding['action'],
                verdict))
    return findings
