"""Seeing, inside the periodic, which migration a context is applied for.

``ResourceTracker._update_available_resource`` fetches the host's
migrations, then, for each incoming one whose instance is on this host,
calls ``instance.apply_migration_context()`` before it counts usage.  To
inject at (and decide) that one step without copying Nova's loop, each
hooked tracker wraps two Nova methods (:func:`install`, undone when its
driver closes); a wrapper acts only in a thread that is inside that
tracker's periodic (a thread-local scope), so other hosts of the process
and every other caller pass straight through:

* ``MigrationList.get_in_progress_and_error`` records the list;
* ``Instance.apply_migration_context`` asks the scope's ``decide``
  callback with the migration the loop is at, and skips the call if told.

The scope closes when Nova moves on to ``_update_usage_from_instances``,
so applications anywhere else are never touched.  The shape this relies
on (those calls, in that order, and the loop's condition, which
:meth:`_Scope.migration_for` tests with
:func:`faultdriver.novacompat.declared.periodic_loop_condition`, compared
with Nova's as syntax trees) is checked at every FaultDriver start, so a
changed Nova is refused instead of silently paired wrong.
"""

import contextlib
import functools
import threading

from faultdriver.novacompat import declared
from faultdriver.novacompat import patching

_local = threading.local()

_GET_LIST = 'nova.objects.MigrationList.get_in_progress_and_error'
_APPLY = 'nova.objects.Instance.apply_migration_context'

#: The assumptions a fix that decides through this scope relies on.
SYMBOLS = (declared.PERIODIC, _GET_LIST, _APPLY,
           declared.TRACKER + '._update_usage_from_instances')


class _Scope:
    def __init__(self, tracker, nodename, decide):
        self.tracker = tracker
        self.nodename = nodename
        self.decide = decide
        self.migrations = None
        self.seen = {}          # instance uuid -> applications so far

    def applies(self, migration, instance):
        """Nova's loop condition for ``migration`` and ``instance``."""
        return declared.periodic_loop_condition(
            migration, {instance.uuid: instance}, self.tracker,
            self.nodename)

    def migration_for(self, instance):
        """The incoming migration the loop is handling for ``instance``."""
        incoming = [m for m in self.migrations or ()
                    if m.instance_uuid == instance.uuid
                    and self.applies(m, instance)]
        index = self.seen.get(instance.uuid, 0)
        self.seen[instance.uuid] = index + 1
        return incoming[index] if index < len(incoming) else None


@contextlib.contextmanager
def scope(tracker, nodename, decide):
    """Within: ``decide(instance, migration) -> bool`` rules the loop of
    ``tracker``'s periodic for ``nodename``."""
    _local.scope = _Scope(tracker, nodename, decide)
    try:
        yield
    finally:
        _local.scope = None


def close():
    """Nova left the loop (called from _update_usage_from_instances)."""
    _local.scope = None


def _current(tracker):
    """The calling thread's scope if it is ``tracker``'s."""
    current = getattr(_local, 'scope', None)
    return current if current is not None and \
        current.tracker is tracker else None


def install(tracker):
    """Wrap the two Nova methods for ``tracker``'s periodic; returns the
    undo (which takes off this tracker's wrappers only)."""
    def get_list(layer):
        # functools.wraps: Nova's signature and source stay visible (the
        # next service's start checks them while these are installed).
        @functools.wraps(getattr(layer.below, '__func__', layer.below))
        def get_in_progress_and_error(cls, context, host, node):
            migrations = layer.call_below(None, cls, context, host, node)
            current = _current(tracker)
            if current is not None and current.migrations is None:
                current.migrations = migrations
            return migrations
        return classmethod(get_in_progress_and_error)

    def apply(layer):
        @functools.wraps(layer.below)
        def apply_migration_context(self):
            current = _current(tracker)
            if current is not None and current.migrations is not None:
                migration = current.migration_for(self)
                if (migration is not None
                        and not current.decide(self, migration)):
                    return None
            return layer.call_below(self, type(self))
        return apply_migration_context

    undo = [patching.wrap(_GET_LIST, get_list),
            patching.wrap(_APPLY, apply)]

    def uninstall():
        for each in reversed(undo):
            each()
    return uninstall
