"""A fault that ends a nova-compute's start (a crash, or an exception Nova
does not catch, in init_host or the start's first resource update): the
host stays down, as nova-compute exits when its start fails, and the next
restart starts it on the same hypervisor.  Found by the evacuation sweep:
every case at the returning source's start-up was an internal error (the
crash harness looked for a running service to crash)."""

from nova.tests.fixtures import libvirt as fakelibvirt

from faultdriver import exception
from tests.functional import base


class StartFaultBase(base.FaultTestBase):

    PINNED = True
    #: The rule of the failing start.
    RULE = None

    def guests(self, host):
        """Instance uuids on ``host``'s fake hypervisor."""
        connection = self.computes[host].driver._host.get_connection()
        return sorted(d.UUIDString() for d in connection.listAllDomains(
            fakelibvirt.VIR_CONNECT_LIST_DOMAINS_ACTIVE |
            fakelibvirt.VIR_CONNECT_LIST_DOMAINS_INACTIVE))

    def test_the_host_is_down_until_started_again_on_its_hypervisor(self):
        if self.RULE is None:
            self.skipTest('base class')
        server = self.boot()
        guests = self.guests('src')
        self.assertEqual([server['id']], guests)
        self.stop_compute('src')
        error = self.assertRaises(exception.StartFailed, self.faults.restart,
                                  'src', rules=[self.RULE])
        self.assertIn('src failed to start', str(error))
        self.assertTrue(self.faults.is_crashed('src'))
        self.assertNotIn('src', self.computes)
        self.wait_service_state('src', 'down')
        self.faults.restart('src')
        self.wait_service_state('src', 'up')
        self.assertFalse(self.faults.is_crashed('src'))
        self.assertEqual(guests, self.guests('src'))
        self.run_periodic('src')
        self.assertEqual(self.instance_pinning(server),
                         self.pinned_cpus('src'))
        self.assertEqual(2, self.placement_pcpus('src'))


class TestCrashInInitHost(StartFaultBase):
    RULE = 'init_host.before: 1*crash'


class TestRaiseInInitHost(StartFaultBase):
    RULE = 'init_host.after: 1*raise(InternalError)'


class TestCrashInTheStartsResourceUpdate(StartFaultBase):
    # Runs in Nova's resource-update executor thread, not the starting one.
    RULE = 'update_provider_tree.before: 1*crash'


class TestShutdownInInitHost(StartFaultBase):
    # systemctl stop while the service starts: the start ends (the
    # embedded Nova unwinds it as a crashed one; StartFailed names the
    # shutdown).
    RULE = 'init_host.before: 1*shutdown'
