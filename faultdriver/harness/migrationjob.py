"""Live-migration jobs that fakelibvirt reports as soon as they end.

Real libvirt reports a migration job from the moment the driver starts
it.  fakelibvirt reports none (``VIR_DOMAIN_JOB_NONE``) until the
migration stub (``Domain.migrateToURI3``) completes or fails it, and the
stub runs on the migration's own thread.  Nova's monitor
(``LibvirtDriver._live_migration_monitor``) asks for the job right after
starting that thread, reads "none" with the thread still running, and
sleeps 0.5 s before it looks again: every live migration of the embedded
Nova idled that long (1 s of the seed scenario's 12 s a variant).

:class:`PromptMigrationJobs` lets a domain's ``jobStats`` wait, while it
has no job, until the stub completes or fails one, for at most the
monitor's 0.5 s: the monitor's first look then finds the job ended, as
its look 0.5 s later did.  A migration thread that never gets there
(held, raising) costs the same 0.5 s as before.  Nothing but the
monitor asks for a domain's job in the embedded Nova (fakelibvirt emits
no suspended-for-migration events, the other caller's trigger).
"""

import threading
import typing

import fixtures
from nova.tests.fixtures import libvirt as fakelibvirt

from faultdriver.novacompat import patchfixtures

DOMAIN = 'nova.tests.fixtures.libvirt.Domain.'
#: The monitor's own sleep between two looks (Nova 34).
LONGEST_WAIT = 0.5


class PromptMigrationJobs(fixtures.Fixture):
    """While up, fakelibvirt's ``jobStats`` waits for a job to end."""

    def _setUp(self) -> None:
        ended = threading.Condition()
        job_stats = fakelibvirt.Domain.jobStats

        def has_job(domain: typing.Any) -> bool:
            return bool(job_stats(domain)['type'] !=
                        fakelibvirt.VIR_DOMAIN_JOB_NONE)

        def waiting_job_stats(domain: typing.Any,
                              flags: int = 0) -> typing.Any:
            with ended:
                ended.wait_for(lambda: has_job(domain), LONGEST_WAIT)
            return job_stats(domain, flags)

        def announcing(end: typing.Callable[[typing.Any], None]
                       ) -> typing.Callable[[typing.Any], None]:
            def end_job(domain: typing.Any) -> None:
                end(domain)
                with ended:
                    ended.notify_all()
            return end_job

        self.useFixture(patchfixtures.Patch(DOMAIN + 'jobStats',
                                            waiting_job_stats))
        for name in ('complete_job', 'fail_job'):
            self.useFixture(patchfixtures.Patch(
                DOMAIN + name, announcing(getattr(fakelibvirt.Domain, name))))
