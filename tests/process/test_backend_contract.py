"""The process tier keeps the scenario backend contract by behaviour
(tests/backend_contract.py; tests/functional runs the same checks on the
embedded Nova)."""

from faultdriver.process import nova as process_nova
from tests import backend_contract
from tests import stacks


def test_the_contract_holds():
    with stacks.pinned_stack() as stack:
        backend_contract.check(process_nova.ProcessNova(stack, pinned=True),
                               'src', 'dest')
