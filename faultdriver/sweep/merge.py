"""Join shards: the results of one sweep split with ``--shard K/N`` and
run in several places, as one document (the same as a whole sweep's)."""

import json
import os

from faultdriver import exception
from faultdriver.sweep import execute
from faultdriver.sweep import findings as findings_module

#: What every shard of one sweep must agree on.
SWEEP_KEYS = ('workflow', 'backend', 'mode', 'patches')
META = 'sweep.json'


def write_meta(folder, doc):
    """Record what a results directory is a sweep of (merge checks it)."""
    with open(os.path.join(folder, META), 'w', encoding='utf-8') as out:
        json.dump({key: doc[key] for key in SWEEP_KEYS + ('trace', 'shard')},
                  out, indent=2)


def merge(folders):
    metas, results = [], {}
    for folder in folders:
        path = os.path.join(folder, META)
        try:
            with open(path, encoding='utf-8') as stream:
                metas.append(json.load(stream))
        except (OSError, ValueError) as exc:
            raise exception.ScenarioError(
                '%s: not the results of a finished sweep (%s)' % (folder,
                                                                  exc))
        results.update(execute.load_results(folder))
    first = metas[0]
    for folder, meta in zip(folders, metas):
        differs = [k for k in SWEEP_KEYS if meta.get(k) != first.get(k)]
        if differs:
            raise exception.ScenarioError(
                '%s: a shard of another sweep (%s differ from %s)' % (
                    folder, ', '.join(differs), folders[0]))
    cases = sorted(results.values(), key=lambda r: r['id'])
    findings = findings_module.findings_of(
        cases, os.path.join(folders[0], 'findings'))
    return dict({k: first[k] for k in SWEEP_KEYS}, trace=first['trace'],
                shard='merged %s' % ', '.join(m['shard'] for m in metas),
                results=', '.join(folders), cases=cases,
                findings=findings, wall_seconds=round(sum(
                    r['seconds'] for r in cases), 1))
