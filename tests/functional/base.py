"""Common ground of faultdriver's functional tests: two real compute
services on fakelibvirt, faultdriver wrapping libvirt, faithful crashes.

The embedded Nova itself lives in ``faultdriver.harness.embedded`` (the
scenario runner uses the same one).
"""

import time
import typing

from nova.tests.functional.libvirt import base

from faultdriver.harness import embedded

API_PASTE = embedded.API_PASTE


class FaultTestBase(embedded.EmbeddedNova):
    """Two hosts, ``src`` and ``dest``; subclasses set RULES and PINNED."""


class Outcome(typing.NamedTuple):
    """Where a (live) migration left things; see assertOutcome."""

    migration: str                # migration status
    server: tuple                 # (status, task_state, host)
    server_alloc: tuple           # hosts placement charges the instance
    migration_alloc: tuple        # hosts it charges the migration consumer
    pinned: dict | None = None    # host -> pinned pCPUs (PINNED only)
    context: bool = False         # the instance has a migration_context


class LiveMigrationTestBase(base.LibvirtMigrationMixin, FaultTestBase):
    """FaultTestBase whose live migrations really run in fakelibvirt.

    Nova's own ``LibvirtMigrationMixin`` stubs ``migrateToURI3``: the guest
    appears on ``dest``'s fake hypervisor and the source's job completes.
    With ``LIBVIRT_JOB = 'fail'`` the job fails instead, so the libvirt
    driver takes its recover_method (``_rollback_live_migration``) path.
    """

    #: What the libvirt migration job does: 'complete' or 'fail'.
    LIBVIRT_JOB = 'complete'

    # The services the mixin migrates between, whatever restarts did.
    src = property(lambda self: self.computes['src'])
    dest = property(lambda self: self.computes['dest'])

    def live_migrate(self, server, host='dest'):
        self.server = server        # what the mixin's stub migrates
        super().live_migrate(server, host)

    def _migrate_stub(self, domain, destination, params, flags):
        if self.LIBVIRT_JOB == 'complete':
            return super()._migrate_stub(domain, destination, params, flags)
        self.src.driver._host.get_connection().lookupByUUIDString(
            self.server['id']).fail_job()

    def assertOutcome(self, expected, server, periodic_on=()):
        """Wait for ``expected``'s migration status and server fields, run
        the periodic on ``periodic_on``, then compare everything else."""
        migration = self.wait_for_migration(server, [expected.migration])
        status, task_state, host = expected.server
        self.wait_for_server(server, status=status, task_state=task_state,
                             host=host)
        # The source deletes the migration's allocation after 'completed'.
        allocations = {'server': sorted(expected.server_alloc),
                       'migration': sorted(expected.migration_alloc)}
        deadline = time.monotonic() + 10
        while True:
            actual = {
                'server': sorted(self.allocations(server['id'])),
                'migration': sorted(self.allocations(migration['uuid']))}
            if actual == allocations or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        self.assertEqual(allocations, actual)
        for each in periodic_on:
            self.run_periodic(each)
        if self.PINNED:
            self.assertEqual(expected.pinned,
                             {h: self.pinned_cpus(h) for h in self.HOSTS})
        self.assertEqual(expected.context,
                         self.migration_context(server) is not None)
