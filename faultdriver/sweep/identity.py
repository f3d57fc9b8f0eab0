"""What a results directory is a sweep of (``sweep.json``), written when
the sweep starts: a resume, and ``sweep merge``, must never mix the
results of different sweeps (another workflow, other faults, other
fixes, another Nova), which would read as one sweep's outcome."""

import hashlib
import json
import os
import typing

from faultdriver import exception
from faultdriver.sweep import records

META = 'sweep.json'
#: What two runs into one results directory (a resume, or the shards a
#: merge joins) must agree on.  ``points`` and ``hosts`` may differ: a
#: reduced sweep resumed whole runs only the cases it lacks.
COMPARED = ('workflow', 'workflow_sha256', 'backend', 'mode', 'actions',
            'patches', 'nova', 'depth')
#: A compared key's value in a record written before it was kept.
BEFORE = {'depth': 1}


def of(workflow: records.Workflow, actions: typing.Iterable[str],
       points: typing.Optional[typing.Iterable[str]],
       hosts: typing.Optional[typing.Iterable[str]],
       patches: typing.Iterable[str], backend: str, mode: str,
       nova: records.JSON = None, depth: int = 1,
       recovery_points: typing.Optional[typing.Iterable[str]] = None
       ) -> records.Identity:
    """The identity of a sweep (a dict, JSON as written)."""
    with open(workflow.path, 'rb') as stream:
        digest = hashlib.sha256(stream.read()).hexdigest()
    from faultdriver.sweep import findings
    return {'format_version': findings.FORMAT_VERSION,
            'workflow': workflow.name, 'workflow_sha256': digest,
            'backend': backend, 'mode': mode, 'actions': sorted(actions),
            'patches': list(patches), 'nova': nova or 'stock',
            'points': sorted(points or ()) or None,
            'hosts': sorted(hosts or ()) or None, 'depth': depth,
            'recovery_points': sorted(recovery_points or ()) or None}


def differences(meta: typing.Mapping[str, object],
                identity: typing.Mapping[str, object]) -> typing.List[str]:
    """``["key: theirs != ours"]`` for the compared keys that differ."""
    def value(record: typing.Mapping[str, object], key: str) -> object:
        return record.get(key, BEFORE.get(key))
    return ['%s: %s, not %s' % (key, json.dumps(value(meta, key)),
                                json.dumps(value(identity, key)))
            for key in COMPARED if value(meta, key) != value(identity, key)]


def read(folder: str) -> typing.Optional[records.Document]:
    """The sweep.json of ``folder``, or None where there is none."""
    path = os.path.join(folder, META)
    if not os.path.exists(path):
        return None
    try:
        with open(path, encoding='utf-8') as stream:
            meta: records.JSON = json.load(stream)
        if not isinstance(meta, dict):
            raise ValueError('not a JSON object')
    except (OSError, ValueError) as exc:
        raise exception.ScenarioError('%s: not a sweep\'s record (%s)' % (
            path, exc))
    return meta


def claim(folder: str, identity: records.Identity,
          results_file: str) -> None:
    """Make ``folder`` this sweep's: record its identity, or check that
    the sweep already there is this one (ScenarioError naming each
    difference).  Results without a record are refused too: nothing
    says what they are results of."""
    meta = read(folder)
    if meta is None:
        if os.path.exists(os.path.join(folder, results_file)):
            raise exception.ScenarioError(
                '%s: holds sweep results but no %s saying of what sweep; '
                'use another --results directory' % (folder, META))
        write(folder, dict(identity, finished=False))
        return
    wrong = differences(meta, identity)
    if wrong:
        raise exception.ScenarioError(
            '--results %s: the results of another sweep (%s); use another '
            'directory, or the same arguments to resume it' % (
                folder, '; '.join(wrong)))


def finish(folder: str, identity: records.Identity,
           doc: records.Document) -> None:
    """Record the finished sweep's trace and shard (``sweep merge`` joins
    finished sweeps only)."""
    write(folder, dict(identity, finished=True, trace=doc['trace'],
                       shard=doc['shard']))


def write(folder: str, meta: typing.Mapping[str, object]) -> None:
    with open(os.path.join(folder, META), 'w', encoding='utf-8') as out:
        json.dump(meta, out, indent=2)
