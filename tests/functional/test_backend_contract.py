"""The embedded Nova keeps the scenario backend contract by behaviour
(tests/backend_contract.py; tests/process runs the same checks on real
processes)."""

from tests import backend_contract
from tests.functional import base


class TestEmbeddedBackendContract(base.FaultTestBase):
    PINNED = True

    def setUp(self):
        super().setUp()
        self.stub_disk_copy()       # as the scenario runner does

    def test_the_contract_holds(self):
        backend_contract.check(self, 'src', 'dest')
