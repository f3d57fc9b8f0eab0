"""The embedded Nova keeps the scenario backend contract by behaviour
(tests/backend_contract.py; tests/process runs the same checks on real
processes)."""

from faultdriver.harness import scenario_case
from faultdriver.novacompat import patchfixtures
from tests import backend_contract
from tests.functional import base


class TestEmbeddedBackendContract(base.FaultTestBase):
    PINNED = True

    def setUp(self):
        super().setUp()
        # As the scenario runner does: fakelibvirt cannot copy disks.
        self.useFixture(patchfixtures.Patch(
            'nova.virt.libvirt.driver.LibvirtDriver.'
            'migrate_disk_and_power_off', scenario_case.no_disk_copy))

    def test_the_contract_holds(self):
        backend_contract.check(self, 'src', 'dest')
