"""Seeing, inside the periodic, which migration a context is applied for.

``ResourceTracker._update_available_resource`` fetches the host's
migrations, then, for each incoming one whose instance is on this host,
calls ``instance.apply_migration_context()`` before it counts usage.  To
inject at (and decide) that one step without copying Nova's loop, two
Nova methods are wrapped process-wide, but act only in a thread that is
inside a FaultTracker's periodic (a thread-local scope):

* ``MigrationList.get_in_progress_and_error`` records the list;
* ``Instance.apply_migration_context`` asks the scope's ``decide``
  callback with the migration the loop is at, and skips the call if told.

The scope closes when Nova moves on to ``_update_usage_from_instances``,
so applications anywhere else are never touched.  The shape this relies
on (those calls, in that order, and the loop's condition, which
:meth:`_Scope.migration_for` evaluates as Nova's own text declared in
:mod:`faultdriver.novacompat.declared`) is checked at every FaultDriver
start, so a changed Nova is refused instead of silently paired wrong.
"""

import contextlib
import functools
import threading
import types

from nova import objects

from faultdriver.novacompat import declared
from faultdriver.novacompat import patching

_local = threading.local()
_lock = threading.Lock()
_installed = {'count': 0, 'undo': None}

_GET_LIST = 'nova.objects.MigrationList.get_in_progress_and_error'
_APPLY = 'nova.objects.Instance.apply_migration_context'

#: The assumptions a fix that decides through this scope relies on.
SYMBOLS = (declared.PERIODIC, _GET_LIST, _APPLY,
           declared.TRACKER + '._update_usage_from_instances')


@functools.lru_cache(maxsize=None)
def _loop_condition():
    """Nova's loop condition (as declared, and checked against Nova's
    source at start), compiled once."""
    return compile('(%s)' % declared.PERIODIC_LOOP_CONDITION.strip(),
                   declared.PERIODIC, 'eval')


class _Scope:
    def __init__(self, host, nodename, decide):
        self.host = host
        self.nodename = nodename
        self.decide = decide
        self.migrations = None
        self.seen = {}          # instance uuid -> applications so far

    def applies(self, migration, instance):
        """Nova's loop condition for ``migration`` and ``instance``."""
        return eval(_loop_condition(), {}, {      # noqa: S307 (own text)
            'migration': migration,
            'instance_by_uuid': {instance.uuid: instance},
            'self': types.SimpleNamespace(host=self.host),
            'nodename': self.nodename})

    def migration_for(self, instance):
        """The incoming migration the loop is handling for ``instance``."""
        incoming = [m for m in self.migrations or ()
                    if m.instance_uuid == instance.uuid
                    and self.applies(m, instance)]
        index = self.seen.get(instance.uuid, 0)
        self.seen[instance.uuid] = index + 1
        return incoming[index] if index < len(incoming) else None


@contextlib.contextmanager
def scope(host, nodename, decide):
    """Within: ``decide(instance, migration) -> bool`` rules the loop."""
    _local.scope = _Scope(host, nodename, decide)
    try:
        yield
    finally:
        _local.scope = None


def close():
    """Nova left the loop (called from _update_usage_from_instances)."""
    _local.scope = None


def _current():
    return getattr(_local, 'scope', None)


def install():
    """Wrap the two Nova methods (reference counted; see uninstall)."""
    with _lock:
        _installed['count'] += 1
        if _installed['count'] > 1:
            return
        get_list = objects.MigrationList.get_in_progress_and_error.__func__
        apply_context = objects.Instance.apply_migration_context

        # functools.wraps: Nova's signature and source stay visible (the
        # next service's start checks them while these are installed).
        @functools.wraps(get_list)
        def get_in_progress_and_error(cls, context, host, node):
            migrations = get_list(cls, context, host, node)
            current = _current()
            if current is not None and current.migrations is None:
                current.migrations = migrations
            return migrations

        @functools.wraps(apply_context)
        def apply_migration_context(self):
            current = _current()
            if current is not None and current.migrations is not None:
                migration = current.migration_for(self)
                if (migration is not None
                        and not current.decide(self, migration)):
                    return None
            return apply_context(self)

        undo = [patching.replace(_GET_LIST,
                                 classmethod(get_in_progress_and_error)),
                patching.replace(_APPLY, apply_migration_context)]
        _installed['undo'] = undo


def uninstall():
    with _lock:
        _installed['count'] -= 1
        if _installed['count'] > 0 or _installed['undo'] is None:
            return
        for undo in reversed(_installed['undo']):
            undo()
        _installed['undo'] = None
