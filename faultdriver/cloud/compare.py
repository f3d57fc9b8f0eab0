"""Two runs of one scenario on two tiers, field by field, after masking
what may differ between two correct runs: ``python -m
faultdriver.cloud.compare A.json B.json`` (``scenario run -f json``
documents), exit 0 when equal, 1 listing each differing field's path
and both values, 2 when a file is not such a document.

The cloud tier is the process tier's Nova reached as a cloud is (issue
42): the same scenario on both must make the same steps, states,
journal entries and expectations.  What is masked is listed here, each
with why it may differ; everything else must be equal, so a field a
later change adds is compared until someone names why it may not be.

Two ``sweep -f json`` documents are compared by their cases instead:
the same case ids, each with the same verdict, broken invariants and
outcome (internal error, not reached), and the same invariants broken
by the clean run.  A case's details, timings and recovery words are its tier's
(a sweep on a cloud restores it between cases); the verdicts are what
the issue's done-when asks to be equal.
"""

import json
import re
import sys
import typing

JSON = typing.Any

#: Keys masked wherever they appear in a run document, and why.
MASKED_KEYS: typing.Dict[str, str] = {
    'backend': 'the tier itself: what the comparison is between',
    'topology': 'the cloud tier records the hosts as it found them (real '
                'host names, CPU sets, Nova versions, clock offsets); the '
                'process tier imposes its topology and leaves it out',
    'compute_log': 'log records: times, pids, request ids, paths',
    'shutdown_log': 'log records, as compute_log',
    'logs': 'where the process tier kept its stack\'s logs (a path)',
    'stack_seconds': 'start-up timings of the process tier\'s stack (a '
                     'cloud starts nothing: left out)',
    'setup_seconds': 'a time', 'steps_seconds': 'a time',
    'wall_seconds': 'a time', 'steps_started_at': 'a time',
    'cpu_seconds': 'CPU time (the embedded tier only)',
    'start': 'a timeline step\'s time since the steps began',
    'seconds': 'how long a step or expectation took',
    'time': 'when a journal entry was written',
    'created_at': 'a migration record\'s time',
    'updated_at': 'a migration record\'s time',
    'lock_wait_seconds': 'a periodic\'s measured wait',
    'duration_seconds': 'a periodic\'s or a stop\'s measured length',
    'hold_seconds': 'a measured hold',
    'id': 'database ids and uuids: the standing cloud\'s database goes on '
          'counting across runs, the process tier starts each run empty',
}

#: Texts masked inside every string (and mapping key), and why.
MASKED_TEXTS: typing.Tuple[typing.Tuple[str, str, str], ...] = (
    (r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}',
     '<uuid>', 'server, migration, request and provider uuids: new each '
               'run'),
    (r'\((?:[0-9a-f]{8})\)', '(<uuid>)',
     'a timeline detail names a migration by its uuid\'s first 8 digits'),
    (r'req-<uuid>', '<request>', 'request ids (a uuid, masked above)'),
)

_TEXTS = tuple((re.compile(pattern), replacement)
               for pattern, replacement, _why in MASKED_TEXTS)


def _text(value: str) -> str:
    for pattern, replacement in _TEXTS:
        value = pattern.sub(replacement, value)
    return value


def _dumped(value: JSON) -> str:
    return json.dumps(value, sort_keys=True)


def masked(doc: JSON) -> JSON:
    """``doc`` without MASKED_KEYS (a key one tier leaves out, as the
    process tier does ``topology``, is no difference), MASKED_TEXTS
    replaced in every string and key.  The values of the keys a mask
    changed (placement's allocations by consumer uuid) are gathered in
    a sorted list under the masked key: two allocations stay two."""
    if isinstance(doc, dict):
        found: typing.Dict[str, JSON] = {}
        gathered: typing.Dict[str, typing.List[JSON]] = {}
        for key, value in doc.items():
            if key in MASKED_KEYS:
                continue
            text = _text(str(key))
            if text != str(key):
                gathered.setdefault(text, []).append(masked(value))
            else:
                found[text] = masked(value)
        for text, values in gathered.items():
            found[text] = sorted(values, key=_dumped)
        return found
    if isinstance(doc, list):
        return [masked(value) for value in doc]
    if isinstance(doc, str):
        return _text(doc)
    return doc


def differences(a: JSON, b: JSON, where: str = '') -> typing.List[str]:
    """Each path where ``a`` and ``b`` differ, with both values."""
    if isinstance(a, dict) and isinstance(b, dict):
        found = []
        for key in sorted(set(a) | set(b)):
            path = '%s.%s' % (where, key) if where else key
            if key not in a or key not in b:
                found.append('%s: only in %s' % (
                    path, 'the first' if key in a else 'the second'))
            else:
                found += differences(a[key], b[key], path)
        return found
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b))
                for d in differences(x, y, '%s[%d]' % (where, i))]
    if a != b:
        return ['%s: %s != %s' % (where or '(document)', _dumped(a),
                                  _dumped(b))]
    return []


def verdicts(doc: JSON) -> JSON:
    """What two sweeps of one workflow on two tiers must share: per case
    id, its verdict, broken invariants, internal error and not-reached;
    what the clean run broke (nothing, mostly)."""
    clean = doc.get('clean_run') or {}
    return {'clean_run': sorted(clean.get('broken') or ()),
            'cases': {case['id']: {
                'verdict': case.get('verdict'),
                'broken': sorted(case.get('broken') or ()),
                'internal_error': bool(case.get('internal_error')),
                'not_reached': bool(case.get('not_reached'))}
                for case in doc['cases']}}


class BadDocument(Exception):
    pass


def load(path: str) -> JSON:
    """A ``scenario run -f json`` or ``sweep -f json`` document;
    BadDocument naming the file and what was expected."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as exc:
        raise BadDocument('%s: expected a scenario run or sweep -f json '
                          'document: %s' % (path, exc)) from None
    if isinstance(doc, dict) and _is_sweep(doc) and \
            isinstance(doc['cases'], list):
        return doc
    if not isinstance(doc, dict) or not isinstance(doc.get('variants'),
                                                   dict):
        raise BadDocument('%s: key variants: expected a mapping of '
                          'variant reports (a scenario run), or key cases: '
                          'a list of cases (a sweep)' % path)
    return doc


def _is_sweep(doc: JSON) -> bool:
    """A ``sweep -f json`` document (a scenario run's has ``variants``)."""
    return 'cases' in doc and 'workflow' in doc


def main(argv: typing.Optional[typing.Sequence[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2:
        sys.stderr.write('usage: python -m faultdriver.cloud.compare '
                         'A.json B.json\n')
        return 2
    try:
        first, second = (load(path) for path in args)
    except BadDocument as exc:
        sys.stderr.write('%s\n' % exc)
        return 2
    if _is_sweep(first) != _is_sweep(second):
        sys.stderr.write('%s and %s: one is a sweep, the other a scenario '
                         'run: expected two of a kind\n' % tuple(args))
        return 2
    if _is_sweep(first):
        # Equal verdicts of cases that never ran are no equality.
        found = ['%s: case %s did not run (%s)' % (path, case['id'],
                                                 'internal error' if
                                                 case.get('internal_error')
                                                 else 'not reached')
                 for path, doc in zip(args, (first, second))
                 for case in doc['cases']
                 if case.get('internal_error') or case.get('not_reached')]
        found += differences(verdicts(first), verdicts(second))
        how = 'compared: case ids, verdicts, broken invariants, internal ' \
              'errors, not reached; what the clean run broke'
    else:
        found = differences(masked(first), masked(second))
        how = 'masked: %s; texts: %s' % (
            ', '.join(sorted(MASKED_KEYS)),
            ', '.join(r for _p, r, _w in MASKED_TEXTS))
    for line in found:
        sys.stdout.write(line + '\n')
    sys.stdout.write('%s and %s: %s (%s)\n' % (
        args[0], args[1], '%d fields differ' % len(found) if found
        else 'equal', how))
    return 1 if found else 0


if __name__ == '__main__':
    sys.exit(main())
