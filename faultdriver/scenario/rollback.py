"""How a move that failed must end: Nova's own rollback table, and the
``outcome-after-failure`` invariant that holds a case to it.

Why: ``servers-settled`` accepts ERROR and ``moves-again`` skips a
server that is not ACTIVE, so a move that Nova rolled back cleanly and
one that left a healthy guest's server in ERROR read alike.  What Nova
promises differs per step, and Nova's code says it: a pre-check or
``pre_live_migration`` failure is rolled back (ACTIVE on the source,
task state None, migration error), a failure under
``_error_out_instance_on_exception`` errors the server by design unless
it is ``InstanceFaultRollback``, which sets the vm_state back.  The
table (``data/rollback.yaml``, one row per (operations, point, host,
phases, action[, exception]), each naming the Nova function that
decides it) is that reading of Nova 34.0.0; a case without a row is one
where Nova promises nothing the table can check, and the invariant says
so rather than guess.

A failed unshelve is rolled back to no host at all: Nova's
``_unshelve_instance`` gives the claim's allocation back and leaves the
server ``SHELVED_OFFLOADED`` (end ``shelved-offloaded``), a status
``servers-settled`` does not take by itself.  It takes it where the
case's fault has that row (:func:`designed_status`), and only there: a
task state left set (F23's ``shelving``) still breaks it.
"""

import dataclasses
import functools
import importlib.resources
import typing

import yaml

from faultdriver import rules as rules_module
from faultdriver.scenario import runstate

TABLE = 'data/rollback.yaml'
#: What a row promises (see the table's header).
ENDS = ('rollback', 'error', 'shelved-offloaded')
#: The fault's host, relative to the move (``any``: either; an
#: unshelve's host is the scheduler's pick, unrelated to the source).
HOSTS = ('source', 'dest', 'any')
#: The operations of the bundled workflows (``operation:``) the table
#: has rows for: the moves, and shelve (shelve, offload, unshelve).
OPERATIONS = ('live-migration', 'migration', 'resize', 'evacuation',
              'shelve')
#: The sweep's action classes the invariant runs for, and the table's
#: action each is (``raise-generic`` raises too, another exception; a
#: service's failure at a service-call point reaches the step as the
#: exception Nova's client raises -- where Nova swallows it, or its own
#: retry absorbs it, the point has no ``raise`` row).
ACTIONS = {'raise': 'raise', 'raise-generic': 'raise', 'crash': 'crash',
           'http-error': 'raise', 'connfail': 'raise'}
#: The statuses a rolled-back server is in: the workflows boot ACTIVE
#: servers, and the table's rollbacks set the vm_state back to it.
ROLLED_BACK_STATUS = 'ACTIVE'
#: The statuses an errored-by-design server may be in (ERROR, or ACTIVE
#: where a retry or a later repair got it back).
ERRORED_STATUS = ('ERROR', 'ACTIVE')
#: The status a failed unshelve's rollback leaves, with no host.
OFFLOADED_STATUS = 'SHELVED_OFFLOADED'
#: Per end, the status it leaves that ``servers-settled`` does not take
#: by itself (statuses.SETTLED_SERVER): taken where the case's row says.
UNSETTLED_BY_DESIGN = {'shelved-offloaded': OFFLOADED_STATUS}

Checked = typing.Tuple[bool, str, typing.Any]


@dataclasses.dataclass(frozen=True)
class Promise:
    """One row of the rollback table: how Nova leaves a server whose
    move failed at ``point`` on the move's ``host`` (source or dest) in
    one of ``phases``, by ``action`` (and, for a raise row with
    ``exception``, that exception class only)."""

    operations: typing.Tuple[str, ...]
    point: str
    host: str
    action: str
    ends: str
    migration: typing.Tuple[str, ...]
    nova: str
    why: str
    phases: typing.Tuple[str, ...] = ('before', 'after')
    exception: typing.Optional[str] = None

    def covers(self, operation: str, point: str, host: str, phase: str,
               action: str, exception: typing.Optional[str]) -> bool:
        return (operation in self.operations and point == self.point and
                self.host in (host, 'any') and phase in self.phases and
                action == self.action and
                self.exception in (None, exception))


REQUIRED = ('operations', 'point', 'host', 'action', 'ends', 'migration',
            'nova', 'why')
OPTIONAL = ('phases', 'exception')


def _row(data: typing.Any, where: str,
         catalogue: typing.Mapping[str, typing.Any]) -> Promise:
    """A row read and checked; ValueError naming the row and key."""
    if not isinstance(data, dict):
        raise ValueError('%s is not a mapping' % where)
    unknown = sorted(set(data) - set(REQUIRED) - set(OPTIONAL))
    missing = [key for key in REQUIRED if key not in data]
    if unknown or missing:
        raise ValueError('%s: unknown keys %s, missing keys %s' % (
            where, unknown, missing))
    checks = (('operations', OPERATIONS), ('host', HOSTS),
              ('action', tuple(set(ACTIONS.values()))), ('ends', ENDS),
              ('phases', rules_module.PHASES))
    for key, allowed in checks:
        values = data.get(key, [])
        for value in values if isinstance(values, list) else [values]:
            if value not in allowed:
                raise ValueError('%s.%s: %r is not one of %s' % (
                    where, key, value, ', '.join(sorted(allowed))))
    if data['point'] not in catalogue:
        raise ValueError('%s.point: %r is not a point of the catalogue' % (
            where, data['point']))
    if ':' not in data['nova']:
        raise ValueError('%s.nova: %r is not file:function' % (
            where, data['nova']))
    fields = dict(data, operations=tuple(data['operations']),
                  migration=tuple(data['migration']),
                  why=' '.join(data['why'].split()))
    if 'phases' in data:
        fields['phases'] = tuple(data['phases'])
    return Promise(**fields)


@functools.lru_cache(maxsize=None)
def table() -> typing.Tuple[Promise, ...]:
    """The rows of ``data/rollback.yaml``, checked: a row naming an
    unknown point, host, action or outcome stops the first use (the
    table is the package's own data: a bad row is a defect)."""
    text = importlib.resources.files('faultdriver').joinpath(
        TABLE).read_text(encoding='utf-8')
    rows = yaml.safe_load(text)['rows']
    # Imported here: the catalogue is derived from Nova's ComputeDriver,
    # and Nova must first be imported by the harness, in its concurrency
    # mode (expect.py, which registers the check, is imported before).
    from faultdriver import points as points_module
    catalogue = points_module.catalogue()
    return tuple(_row(data, '%s rows[%d]' % (TABLE, i), catalogue)
                 for i, data in enumerate(rows))


def promise(operation: str, point: str, host: str, phase: str,
            action: str, exception: typing.Optional[str] = None
            ) -> typing.Optional[Promise]:
    """The row for a failure (``action``: a sweep action class; None: no
    row, Nova promises nothing the table checks)."""
    kind = ACTIONS.get(action)
    if kind is None:
        return None
    for row in table():
        if row.covers(operation, point, host, phase, kind, exception):
            return row
    return None


def _ended(state: runstate.RunState, alias: str
           ) -> typing.Dict[str, typing.Any]:
    """How ``alias``'s moves ended, in the shape the sweep saves the
    clean run's (expect.moves_ended), with its task state."""
    server = state.servers.get(alias)
    return {'status': server.status if server else None,
            'host': server.host if server else None,
            'migrations': [m.status for m in state.migrations
                           if m.server == alias],
            'task_state': server.task_state if server else None}


def judge(row: Promise, got: typing.Mapping[str, typing.Any],
          origin: typing.Optional[str]) -> typing.Optional[str]:
    """What in ``got`` (:func:`_ended`) breaks ``row``'s promise (None:
    kept); it names the Nova code path.  A row with no migration
    statuses promises the server has none (a shelve makes none)."""
    newest = got['migrations'][-1] if got['migrations'] else None
    wrong = []
    if row.ends == 'rollback':
        if got['status'] != ROLLED_BACK_STATUS:
            wrong.append('status %s' % got['status'])
        if got['host'] != origin:
            wrong.append('on %s, not its source %s' % (got['host'], origin))
    elif row.ends == 'shelved-offloaded':
        if got['status'] != OFFLOADED_STATUS:
            wrong.append('status %s' % got['status'])
        if got['host'] is not None:
            wrong.append('on %s, not on no host' % got['host'])
    elif got['status'] not in ERRORED_STATUS:
        wrong.append('status %s' % got['status'])
    if got['task_state']:
        wrong.append('task state %s' % got['task_state'])
    if newest not in (row.migration or (None,)):
        wrong.append('migration %s' % (newest or 'none'))
    if not wrong:
        return None
    wanted = {
        'rollback': 'rolled back: %s on %s, no task state' % (
            ROLLED_BACK_STATUS, origin),
        'shelved-offloaded': 'rolled back: %s on no host, no task '
                             'state' % OFFLOADED_STATUS,
        'error': 'errored by design: %s, no task state' % '/'.join(
            ERRORED_STATUS)}[row.ends]
    return '%s where Nova promises %s, migration %s (%s)' % (
        ', '.join(wrong), wanted, '/'.join(row.migration) or 'none',
        row.nova)


def _role(host: str, origin: typing.Optional[str]) -> str:
    """The fault's host as the table keys it: the server's source (the
    host it was booted on) or its destination (any other)."""
    return 'source' if host == origin else 'dest'


def designed_status(failure: typing.Optional[typing.Mapping[str, typing.Any]],
                    alias: str) -> typing.Optional[str]:
    """The status outside ``statuses.SETTLED_SERVER`` Nova's rollback
    leaves ``alias`` in after the case's fault (``failure``: the
    ``outcome-after-failure`` arguments but the clean outcome), or None:
    no fault, no row, or a row whose end is a settled status.  What
    ``servers-settled`` takes for the server an operation was asked of,
    and nothing else."""
    if not failure:
        return None
    row = promise(failure['operation'], failure['point'],
                  _role(failure['host'], failure['origin'].get(alias)),
                  failure['phase'], failure['action'],
                  failure.get('exception'))
    return UNSETTLED_BY_DESIGN.get(row.ends) if row else None


def after_failure(steps: typing.Any, state: runstate.RunState,
                  operation: str, point: str, host: str, phase: str,
                  action: str, origin: typing.Mapping[str, str],
                  outcome: typing.Optional[typing.Mapping[
                      str, typing.Mapping[str, typing.Any]]] = None,
                  exception: typing.Optional[str] = None) -> Checked:
    """Invariant of the sweep's raise and crash cases: each server the
    clean run moved (``outcome``: how its moves ended there) ends as in
    the clean run (the fault did not make the move fail) or as the
    rollback table's row for the fault (``operation``, ``point``, the
    fault's scenario ``host``, ``phase``, ``action``, ``exception``)
    says Nova leaves it; ``origin``: the host each server was booted on
    (its move's source).  A task state ``recover`` reset (the
    operator's ``reset-state``, ``steps.task_states_reset``) counts as
    left: it is what Nova left.  The actual says, per server, which, or
    what broke the row, naming the Nova function that defines it.  A
    server an operation that is no move was asked of (a shelve:
    ``steps.operated``) is judged too, moved or not."""
    reset = steps.task_states_reset
    found, wrong = {}, {}
    for alias, clean in sorted((outcome or {}).items()):
        if not clean.get('migrations') and alias not in steps.operated:
            continue                    # neither moved nor operated
        got = _ended(state, alias)
        if alias in reset:
            # What Nova left, not recover's reset-state of it.
            got['task_state'] = '%s (recover reset it)' % reset[alias]
        if {k: got[k] for k in clean} == dict(clean) and \
                not got['task_state']:
            found[alias] = 'as in the clean run'
            continue
        source = origin.get(alias)
        role = _role(host, source)
        row = promise(operation, point, role, phase, action, exception)
        if row is None:
            found[alias] = 'no row in the rollback table for %s %s.%s at ' \
                'the %s (%s): Nova promises nothing checked here' % (
                    operation, point, phase, role, action)
            continue
        broken = judge(row, got, source)
        if broken:
            wrong[alias] = broken
        else:
            found[alias] = '%s as Nova promises (%s)' % (
                'errored by design' if row.ends == 'error' else
                'rolled back', row.nova)
    return (not wrong, 'a move that failed ends as in the clean run or as '
            'Nova\'s rollback table promises', wrong or found)
