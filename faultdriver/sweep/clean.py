"""The clean run's breaks: a workflow whose run with no fault at all
already breaks an invariant on the Nova under test (the bug a Nova
change most often brings) is reported once, as the workflow's own
finding with a reproducer, and the sweep goes on: its cases are judged
against what the clean run broke, so that no case repeats it
(:func:`faultdriver.sweep.findings.group`)."""

import copy
import typing

from faultdriver.scenario import invariants
from faultdriver.scenario import specs
from faultdriver.sweep import cases
from faultdriver.sweep import execute
from faultdriver.sweep import records

#: Verdicts of a clean run that ran to its checks: the sweep goes on
#: (any other, an internal error, stops it: nothing was checked).
CHECKED = ('ok', 'expectations not met', 'step failed')
#: The case id of the clean run's finding (it has no step, no fault).
CASE_ID = 'clean run'
#: Its action: none.
ACTION = 'none'


def record(report: records.Report, log: str) -> records.CleanRun:
    """What the sweep keeps of a clean run that broke something (JSON):
    the expectations it broke (``step-failed`` where a step failed),
    what each saw, and the run's log."""
    broken = [e['kind'] for e in report['expectations'] if not e['met']]
    if report.get('step_failed'):
        broken.append('step-failed')
    return {'verdict': report['verdict'], 'broken': broken,
            'details': [{'kind': e['kind'], 'actual': e['actual']}
                        for e in report['expectations'] if not e['met']],
            'step_failed': ': '.join(filter(None, (
                report.get('step_failed'), next((
                    e.get('detail') for e in report.get('timeline', ())
                    if e.get('status') == 'failed'), None)))) or None,
            'log': log}


def reproducer(workflow: records.Workflow, broken: typing.Sequence[str],
               patches: typing.Sequence[str] = (),
               nova_changes: typing.Optional[records.ScenarioData] = None
               ) -> records.ScenarioData:
    """The scenario data that replays the clean run on the Nova under
    test, its one variant ``expect: bug``: the invariants it broke
    expected broken, the others holding; a workflow expectation that is
    no invariant and broke is left out (only invariants can be written
    broken), the description names it."""
    data = copy.deepcopy(workflow.data)
    data['name'] = cases.scenario_name('clean-run', workflow.name)
    kept: typing.List[records.ScenarioData] = []
    dropped: typing.List[str] = []
    for spec in map(specs.ExpectationSpec.from_json, data['expectations']):
        if spec.kind not in broken:
            kept.append(spec.to_json())
        elif spec.kind in invariants.swept():
            kept.append(specs.ExpectationSpec(
                spec.kind, dict(spec.args, broken=True)).to_json())
        else:
            dropped.append(spec.kind)
    data['expectations'] = kept
    data['description'] = (
        'The clean run of workflow %s (no fault) on the Nova under test.'
        '\nFinding: it breaks %s.%s' % (
            workflow.name, ', '.join(broken),
            ' (%s broke too and is not asserted here.)' % ', '.join(
                dropped) if dropped else ''))
    variant: records.ScenarioData = {
        'description': 'the Nova under test', 'expect': 'bug'}
    if patches:
        variant['patches'] = list(patches)
    variant.update(nova_changes or {})
    data['variants'] = {'stock': variant}
    return data


def findings(workflow: records.Workflow, run: records.CleanRun, folder: str,
             patches: typing.Sequence[str] = (),
             nova_changes: typing.Optional[records.ScenarioData] = None
             ) -> typing.List[records.Finding]:
    """The clean run's findings (one per expectation it broke, as a
    case's; no step, no fault), sharing one reproducer in ``folder``."""
    path = execute.write_scenario(folder, reproducer(
        workflow, run['broken'], patches, nova_changes))
    actual: typing.Dict[str, records.JSON] = {
        d['kind']: d['actual'] for d in run['details']}
    actual['step-failed'] = run.get('step_failed')
    return [{'invariant': kind, 'point': None, 'host': None, 'phase': None,
             'action': ACTION, 'first': None, 'cases': [CASE_ID],
             'case_scenario': path, 'case_broken': list(run['broken']),
             'scenario': path, 'known': None, 'confirmed': None,
             'actual': actual.get(kind)} for kind in run['broken']]
