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
so applications anywhere else are never touched.  :func:`verify` checks
that Nova's code still has that shape, so a changed Nova is refused at
start-up instead of silently patched wrong.
"""

import contextlib
import inspect
import threading

from nova.compute import resource_tracker
from nova import objects

_local = threading.local()
_lock = threading.Lock()
_installed = {'count': 0, 'originals': None}

#: What _update_available_resource must call, in this order.
_EXPECTED_SHAPE = ('objects.MigrationList.get_in_progress_and_error(',
                   'instance.apply_migration_context()',
                   'self._update_usage_from_instances(')


def verify():
    """Raise RuntimeError unless Nova's periodic has the expected shape."""
    source = inspect.getsource(
        resource_tracker.ResourceTracker._update_available_resource)
    positions = [source.find(text) for text in _EXPECTED_SHAPE]
    if -1 in positions or positions != sorted(positions):
        raise RuntimeError(
            'nova.compute.resource_tracker.ResourceTracker.'
            '_update_available_resource no longer calls %s in this order; '
            'this faultdriver release cannot hook the migration-context '
            'step of this Nova' % ', then '.join(_EXPECTED_SHAPE))


class _Scope:
    def __init__(self, host, nodename, decide):
        self.host = host
        self.nodename = nodename
        self.decide = decide
        self.migrations = None
        self.seen = {}          # instance uuid -> applications so far

    def migration_for(self, instance):
        """The incoming migration the loop is handling for ``instance``."""
        incoming = [m for m in self.migrations or ()
                    if m.instance_uuid == instance.uuid
                    and m.dest_compute == self.host
                    and m.dest_node == self.nodename]
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

        def get_in_progress_and_error(cls, context, host, node):
            migrations = get_list(cls, context, host, node)
            current = _current()
            if current is not None and current.migrations is None:
                current.migrations = migrations
            return migrations

        def apply_migration_context(instance):
            current = _current()
            if current is not None and current.migrations is not None:
                migration = current.migration_for(instance)
                if (migration is not None
                        and not current.decide(instance, migration)):
                    return None
            return apply_context(instance)

        objects.MigrationList.get_in_progress_and_error = classmethod(
            get_in_progress_and_error)
        objects.Instance.apply_migration_context = apply_migration_context
        _installed['originals'] = (get_list, apply_context)


def uninstall():
    with _lock:
        _installed['count'] -= 1
        if _installed['count'] > 0 or _installed['originals'] is None:
            return
        get_list, apply_context = _installed['originals']
        objects.MigrationList.get_in_progress_and_error = classmethod(
            get_list)
        objects.Instance.apply_migration_context = apply_context
        _installed['originals'] = None
