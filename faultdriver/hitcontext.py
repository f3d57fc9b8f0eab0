"""What a hit is about: instance, migration, operation and host role.

Built only at armed points, from the call's arguments bound to the
ComputeDriver signature.  Only attributes already loaded on Nova objects
are read, so building a context never lazy-loads from the database.  One
explicit query is made where the arguments cannot tell the host's role:
a point of any role (``destroy``, ``spawn``, ...) called without a
migration for an instance that has a task (a revert, an evacuation) looks
up the instance's unfinished migration through this host.  Whether the
hit runs in its host's resource periodic is the calling thread's mark,
kept here (:func:`in_periodic`) and set by the hooks
:mod:`faultdriver.tracker.periodic_mark` puts on the compute manager:
the tracker imports this module, not the other way round.
"""

import contextlib
import functools
import inspect
import threading

from nova.compute import task_states

from faultdriver import surface

_local = threading.local()

#: Migration statuses after which a migration no longer involves its hosts.
_FINISHED = frozenset(('confirmed', 'reverted', 'error', 'failed',
                       'completed', 'cancelled', 'done'))

_TASK_OPERATION = {
    task_states.MIGRATING: 'live-migration',
    task_states.REBUILDING: 'evacuation',
}


@functools.lru_cache(maxsize=None)
def _signature(name):
    raw = surface.public_methods().get(name)
    if raw is None:
        return None
    func = raw.__func__ if isinstance(raw, (classmethod, staticmethod)) \
        else raw
    return inspect.signature(func)


def _loaded(obj, field):
    """A field of a Nova object if it is set, without lazy-loading."""
    if obj is None:
        return None
    is_set = getattr(obj, 'obj_attr_is_set', None)
    if is_set is not None:
        try:
            return getattr(obj, field) if is_set(field) else None
        except Exception:  # an unknown field on this object version
            return None
    if isinstance(obj, dict):
        return obj.get(field)
    return getattr(obj, field, None)


def arguments(point_name, args, kwargs):
    """The call's arguments by parameter name (``self`` excluded)."""
    sig = _signature(point_name)
    if sig is None:
        return dict(kwargs)
    try:
        bound = sig.bind_partial(None, *args, **kwargs).arguments
    except TypeError:
        return dict(kwargs)
    bound.pop(next(iter(sig.parameters)), None)
    return bound


def describe(point, host, instance=None, migration=None):
    """The context dict of a hit, from the objects involved."""
    task_state = _loaded(instance, 'task_state')
    operation = _loaded(migration, 'migration_type')
    if operation is None and task_state is not None:
        if task_state in _TASK_OPERATION:
            operation = _TASK_OPERATION[task_state]
        elif task_state.startswith('resize'):
            operation = 'resize'
    role = point.roles[0] if len(point.roles) == 1 else None
    if role is None and migration is not None:
        if _loaded(migration, 'dest_compute') == host:
            role = 'dest'
        elif _loaded(migration, 'source_compute') == host:
            role = 'source'
    return {'instance': _loaded(instance, 'uuid'),
            'migration': _loaded(migration, 'uuid'),
            'operation': operation, 'role': role,
            'in_periodic': in_periodic()}


def _unfinished_migration(ctxt, instance, host):
    """The newest unfinished migration of ``instance`` through ``host``."""
    from nova import objects
    uuid = _loaded(instance, 'uuid')
    if ctxt is None or uuid is None:
        return None
    migrations = objects.MigrationList.get_by_filters(
        ctxt, {'instance_uuid': uuid, 'host': host})
    unfinished = [m for m in migrations if m.status not in _FINISHED]
    return max(unfinished, key=lambda m: m.id, default=None)


def build(point, host, args, kwargs):
    """Context of a driver call at ``point`` on ``host``."""
    bound = arguments(point.name, args, kwargs)
    instance = bound.get('instance')
    migration = bound.get('migration')
    if migration is None:
        migration = _loaded(bound.get('migrate_data'), 'migration')
    if (migration is None and not point.roles and point.operations
            and _loaded(instance, 'task_state') is not None):
        migration = _unfinished_migration(bound.get('context'), instance,
                                          host)
    return describe(point, host, instance, migration)


def in_periodic():
    """Whether the calling thread runs its host's resource periodic."""
    return getattr(_local, 'inside', False)


@contextlib.contextmanager
def periodic_marked():
    """Within: the calling thread runs its host's resource periodic."""
    previous = in_periodic()
    _local.inside = True
    try:
        yield
    finally:
        _local.inside = previous
