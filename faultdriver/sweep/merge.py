"""Join shards: the results of one sweep split with ``--shard K/N`` and
run in several places, as one document (the same as a whole sweep's)."""

import os

from faultdriver import exception
from faultdriver.sweep import execute
from faultdriver.sweep import findings as findings_module
from faultdriver.sweep import identity


def merge(folders):
    metas, results = [], {}
    for folder in folders:
        meta = identity.read(folder)
        if not meta or 'trace' not in meta:
            raise exception.ScenarioError(
                '%s: not the results of a finished sweep (no finished %s)'
                % (folder, identity.META))
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
    findings = findings_module.findings_of(
        cases, os.path.join(folders[0], 'findings'))
    return dict({k: first.get(k) for k in identity.COMPARED},
                trace=first['trace'],
                shard='merged %s' % ', '.join(m['shard'] for m in metas),
                results=', '.join(folders), cases=cases,
                findings=findings, wall_seconds=round(sum(
                    r['seconds'] for r in cases), 1))
