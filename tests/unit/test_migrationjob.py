"""fakelibvirt's migration jobs as PromptMigrationJobs reports them: a
look at a domain without a job waits for the job to end."""

import nova.tests.unit  # noqa: F401  (Nova's patching and objects first)

import threading

import fixtures
from nova import test
from nova.tests.fixtures import libvirt as fakelibvirt

from faultdriver.harness import migrationjob

XML = ('<domain type="kvm"><name>g1</name>'
       '<uuid>11111111-2222-3333-4444-555555555555</uuid>'
       '<memory>1024</memory><vcpu>1</vcpu></domain>')


class TestPromptMigrationJobs(test.NoDBTestCase):

    def setUp(self):
        super().setUp()
        # Long: a test passes only through the job's end, never a timeout.
        self.useFixture(fixtures.MonkeyPatch(
            'faultdriver.harness.migrationjob.LONGEST_WAIT', 30))
        connection = fakelibvirt.Connection('qemu:///system')
        self.domain = fakelibvirt.Domain(connection, XML, running=True)
        # fakelibvirt's own jobStats, telling when it was first asked
        # (the fixture asks it before waiting): the job ends only after
        # the look found none, whichever thread runs first.
        self.asked = threading.Event()
        job_stats = fakelibvirt.Domain.jobStats

        def telling(domain, flags=0):
            self.asked.set()
            return job_stats(domain, flags)
        self.useFixture(fixtures.MonkeyPatch(
            'nova.tests.fixtures.libvirt.Domain.jobStats', telling))

    def look_while(self, end):
        """The job types a look on another thread sees when ``end`` ends
        the job once the look found none."""
        seen = []
        look = threading.Thread(target=lambda: seen.append(
            self.domain.jobStats()['type']))
        look.start()
        self.assertTrue(self.asked.wait(60))
        end()
        look.join(60)
        return seen

    def test_a_look_sees_the_job_completed(self):
        self.useFixture(migrationjob.PromptMigrationJobs())
        self.assertEqual([fakelibvirt.VIR_DOMAIN_JOB_COMPLETED],
                         self.look_while(self.domain.complete_job))

    def test_a_look_sees_the_job_failed(self):
        self.useFixture(migrationjob.PromptMigrationJobs())
        self.assertEqual([fakelibvirt.VIR_DOMAIN_JOB_FAILED],
                         self.look_while(self.domain.fail_job))

    def test_an_ended_job_is_seen_at_once(self):
        self.useFixture(migrationjob.PromptMigrationJobs())
        self.domain.complete_job()
        self.assertEqual(fakelibvirt.VIR_DOMAIN_JOB_COMPLETED,
                         self.domain.jobStats()['type'])

    def test_without_it_the_look_sees_no_job(self):
        # What Nova's monitor saw: "none", the migration's thread running.
        self.assertEqual([fakelibvirt.VIR_DOMAIN_JOB_NONE],
                         self.look_while(self.domain.complete_job))
