"""Join shards: the results of one sweep split with ``--shard K/N`` and
run in several places, as one document (the same as a whole sweep's)."""

import os
import typing

import yaml

from faultdriver import exception
from faultdriver.scenario import model
from faultdriver.sweep import causes
from faultdriver.sweep import clean
from faultdriver.sweep import execute
from faultdriver.sweep import findings as findings_module
from faultdriver.sweep import identity
from faultdriver.sweep import records
from faultdriver.sweep import sweep


def merge(folders: typing.Sequence[str]) -> records.Document:
    metas: typing.List[records.Document] = []
    results: typing.Dict[str, records.CaseResult] = {}
    for folder in folders:
        meta = identity.read(folder)
        if not meta or 'trace' not in meta:
            raise exception.ScenarioError(
                '%s: not the results of a finished sweep (no finished %s)'
                % (folder, identity.META))
        version = meta.get('format_version', 1)
        if version not in findings_module.READS:
            raise exception.ScenarioError(
                '%s: written by another faultdriver (sweep format version '
                '%s; this one reads %s)' % (
                    os.path.join(folder, identity.META), version,
                    ', '.join(map(str, findings_module.READS))))
        metas.append(meta)
        results.update(execute.load_results(folder))
    first = metas[0]
    for folder, meta in zip(folders, metas):
        wrong = identity.differences(meta, first)
        if wrong:
            raise exception.ScenarioError(
                '%s: a shard of another sweep than %s (%s)' % (
                    folder, folders[0], '; '.join(wrong)))
    cases = sorted(results.values(), key=lambda r: r['id'])
    workflow = _workflow(first, cases)
    clean_run: typing.Optional[records.CleanRun] = sweep.clean_outcome(
        folders[0], sweep.CLEAN)
    findings = findings_module.findings_of(
        cases, os.path.join(folders[0], 'findings'),
        workflow.data.get('operation'),
        clean_run['broken'] if clean_run else ())
    if clean_run and not clean_run.get('shared'):
        findings = clean.findings(
            workflow, clean_run, os.path.join(folders[0], 'findings'),
            first.get('patches') or (), _nova_changes(cases)) + findings
    found = causes.group(findings)
    return dict({k: first.get(k) for k in identity.COMPARED},
                format_version=findings_module.FORMAT_VERSION,
                operation=workflow.data.get('operation'),
                trace=first['trace'],
                shard='merged %s' % ', '.join(m['shard'] for m in metas),
                results=', '.join(folders), cases=cases,
                findings=findings,
                causes=[cause.to_json() for cause in found],
                summary=causes.summary(found), clean_run=clean_run,
                wall_seconds=round(sum(r['seconds'] for r in cases), 1))


def _nova_changes(cases: typing.Sequence[records.CaseResult]
                  ) -> records.ScenarioData:
    """The Nova under test's variant keys, as the cases' files name it."""
    with open(cases[0]['scenario'], encoding='utf-8') as stream:
        variant: records.ScenarioData = yaml.safe_load(
            stream)['variants']['case']
    return {key: variant[key] for key in ('nova-patches', 'nova-tree')
            if key in variant}


def _workflow(meta: records.Document,
              cases: typing.Sequence[records.CaseResult]
              ) -> records.Workflow:
    """The swept workflow: the bundled one of that name, else the one a
    case's scenario was written from (a user's workflow file)."""
    workflow: records.Workflow
    try:
        workflow = model.load(meta['workflow'])
    except exception.ScenarioError:
        if not cases or not cases[0].get('scenario'):
            raise
        workflow = model.load(cases[0]['scenario'])
    return workflow
