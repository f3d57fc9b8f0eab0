"""Fix: the periodic applies a migration context that is not the
migration's own (stale ``error`` migrations).

Bug.  After an incomplete live migration (for instance the destination
nova-compute died in ``pre_live_migration``) the migration stays in status
``error`` with the destination as ``dest_compute``.  Once the instance
lands on that host later, every ``update_available_resource`` there logs
"Applying migration context ... Migration status is error" and applies the
instance's *current* migration context for that stale record.  When the
instance then moves away, that context is the new move's, so the host
accounts the instance with the other host's pinning: ``CPUPinningInvalid``
breaks the periodic if another pinned instance holds those pCPUs, or a new
pinned instance is given the pCPUs the migrating one still uses (silent
overcommit; placement does not see it).

Cause.  ``ResourceTracker._update_available_resource`` applies the
context for every incoming migration in ``get_in_progress_and_error``
(which includes ``error``) without checking that the instance's
``migration_context`` belongs to that migration.

Change.  Apply it only when ``instance.migration_context.migration_id``
equals the migration's id, the rule Nova already applies in
``_update_usage_from_migrations``.  Upstream this is one extra condition
in that loop; here the same decision is taken through the
``tracker.apply_migration_context`` hook.
"""

import logging

from faultdriver.tracker import patches
from faultdriver.tracker import periodic_scope

LOG = logging.getLogger(__name__)


class StaleMigrationContext(patches.TrackerPatch):
    """Apply a migration context only for the migration it belongs to."""

    name = 'stale_migration_context'
    requires = periodic_scope.SYMBOLS + ('nova.objects.MigrationContext',)

    def should_apply_migration_context(self, tracker, instance, migration):
        context = instance.migration_context
        if context is not None and context.migration_id == migration.id:
            return True
        LOG.info('faultdriver fix %s on %s: not applying the migration '
                 'context of instance %s for migration %s (status %s): it '
                 'belongs to migration id %s', self.name, tracker.host,
                 instance.uuid, migration.uuid, migration.status,
                 getattr(context, 'migration_id', None))
        return False
