"""A scenario run's JSON document reduced to what must not change when
the code that writes it is reshaped: its keys, their order and the values
a run decides (verdicts, statuses, steps, expectations), with what
differs from run to run masked (uuids, times, durations, paths, the
concurrency mode).

Why: a refactoring of the records behind ``scenario run -f json`` must
leave the document byte for byte the same shape; comparing a fresh run
with a saved golden one, modulo these, shows it (issue 39, item 7).
tests/functional/test_scenario_cli.py compares the seed scenario's run
with tests/functional/data/seed-report.golden.json (taken before the
run state became records; it holds in both concurrency modes), and
tests/functional/test_sweep.py a 4-case sweep's document (the seed's
step, dest's crash before and after pre_live_migration, stock and with
its fix: ``--ab``) with tests/functional/data/sweep-ab.golden.json.

To take it again after a change of the document that is meant (say why
in the commit)::

    python -m faultdriver.cmd.main scenario run \
        stale-error-migration-context -f json > run.json
    python -c "import json, sys; from tests import golden; \
        sys.stdout.write(golden.dumps(json.load(open('run.json'))))" \
        > tests/functional/data/seed-report.golden.json

and the sweep's (its results directory named)::

    python -m faultdriver.cmd.main sweep live-migration --points \
        pre_live_migration --hosts dest --actions crash --ab \
        stale_migration_context --results /tmp/ab -f json > ab.json
    python -c "import json, sys; from tests import golden; \
        sys.stdout.write(golden.sweep_dumps(json.load(open('ab.json')), \
        '/tmp/ab'))" > tests/functional/data/sweep-ab.golden.json
"""

import json
import re

UUID = re.compile(r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-'
                  r'[0-9a-f]{12}')
#: A uuid's first eight digits, as step details name a migration.
SHORT = re.compile(r'\b[0-9a-f]{8}\b')
#: Keys whose value is a point in time.
TIMES = frozenset(('time', 'created_at', 'updated_at', 'steps_started_at'))
#: Keys whose value is a duration (also any key ending ``_seconds``).
DURATIONS = frozenset(('seconds', 'start'))
#: Keys whose value depends on the machine or the mode of the run.
MACHINE = frozenset(('file', 'logs', 'mode', 'compute_log', 'shutdown_log'))
#: Mappings keyed by uuids in an order the cloud chooses.
UNORDERED = frozenset(('allocations',))


def _names(doc):
    """``{uuid: stable name}`` for the servers and migrations of every
    variant (a server's uuid differs per run, its alias does not)."""
    names = {}
    for variant, report in (doc.get('variants') or {}).items():
        state = report.get('state') or {}
        for alias, server in (state.get('servers') or {}).items():
            names[server.get('id')] = '<server %s/%s>' % (variant, alias)
        for m in state.get('migrations') or ():
            names[m.get('uuid')] = '<migration %s/%s#%s>' % (
                variant, m.get('server'), m.get('id'))
    names.update([(uuid[:8], name) for uuid, name in names.items()
                  if isinstance(uuid, str)])
    return names


def _text(value, names):
    value = UUID.sub(lambda found: names.get(found.group(0), '<uuid>'),
                     value)
    return SHORT.sub(lambda found: names.get(found.group(0),
                                             found.group(0)), value)


def _masked(key, value, names):
    if key in TIMES and value is not None:
        return '<time>'
    if (key in DURATIONS or key.endswith('_seconds')) and \
            value is not None:
        if isinstance(value, dict):
            return {k: '<seconds>' for k in value}
        return '<seconds>'
    if key in MACHINE and value is not None:
        return '<%s>' % key
    return _walk(value, names, key)


def _walk(value, names, key=None):
    if isinstance(value, dict):
        items = [(_text(k, names), _masked(k, v, names))
                 for k, v in value.items()]
        if key in UNORDERED:
            items.sort()
        return dict(items)
    if isinstance(value, list):
        return [_walk(v, names) for v in value]
    if isinstance(value, str):
        return _text(value, names)
    return value


def normalise(doc):
    """``doc`` (a ``scenario run -f json`` document) with what differs
    from run to run masked; key order kept."""
    return _walk(doc, _names(doc))


def dumps(doc):
    """The text a golden file holds: compared as text, so key order and
    every value's JSON type count."""
    return json.dumps(normalise(doc), indent=1) + '\n'


def differences(golden_text, doc, results=None):
    """The lines of a unified diff between a golden file's text and a
    fresh ``doc``'s (empty: the same); ``results``: as for
    :func:`sweep_dumps`."""
    import difflib
    fresh = dumps(doc) if results is None else sweep_dumps(doc, results)
    return list(difflib.unified_diff(
        golden_text.splitlines(), fresh.splitlines(), 'golden',
        'fresh', lineterm='', n=2))


def _under(value, results):
    """``value`` with every path under ``results`` made relative to
    ``<results>``."""
    if isinstance(value, dict):
        return {k: _under(v, results) for k, v in value.items()}
    if isinstance(value, list):
        return [_under(v, results) for v in value]
    if isinstance(value, str):
        return value.replace(results, '<results>')
    return value


def sweep_dumps(doc, results):
    """A sweep's document (``faultdriver sweep -f json``, an A/B's
    ``a``, ``b`` and ``ab`` too) as its golden file holds it: as
    :func:`dumps`, and ``results``, the directory the sweep wrote to,
    named ``<results>`` (the files under it keep their names: a case's
    and a finding's file name is its identity)."""
    return dumps(_under(doc, str(results).rstrip('/')))
