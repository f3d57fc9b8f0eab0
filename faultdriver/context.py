"""What a hit is about: instance, migration, operation and host role.

Built only at armed points, from the call's arguments bound to the
ComputeDriver signature.  Only attributes already loaded on Nova objects
are read, so building a context never lazy-loads from the database.
"""

import functools
import inspect

from nova.compute import task_states

from faultdriver import surface

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
            'operation': operation, 'role': role}


def build(point, host, args, kwargs):
    """Context of a driver call at ``point`` on ``host``."""
    bound = arguments(point.name, args, kwargs)
    migration = bound.get('migration')
    if migration is None:
        migration = _loaded(bound.get('migrate_data'), 'migration')
    return describe(point, host, bound.get('instance'), migration)
