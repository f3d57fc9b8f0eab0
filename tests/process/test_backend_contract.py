"""The process tier keeps the scenario backend contract by behaviour
(tests/backend_contract.py; tests/functional runs the same checks on the
embedded Nova)."""

import os

from faultdriver import hostshape
from faultdriver.process import nova as process_nova
from faultdriver.process import runner
from faultdriver.process import stack as stack_module
from tests import backend_contract

MODE = ('threading' if os.environ.get('OS_NOVA_DISABLE_EVENTLET_PATCHING',
                                      'True').lower() == 'true'
        else 'eventlet')


def test_the_contract_holds():
    # The hosts of a ``pinned: true`` scenario: dedicated pCPUs, so
    # pinned servers fit (without a dedicated set a host has no PCPU
    # inventory and every boot is NoValidHost).
    faults = {host: {'inner_driver': 'fake_numa', 'enabled': True,
                     'extra': runner.host_settings(hostshape.PINNED_HOST)}
              for host in ('src', 'dest')}
    with stack_module.Stack(faults=faults, mode=MODE,
                            progress=print) as stack:
        backend_contract.check(process_nova.ProcessNova(stack, pinned=True),
                               'src', 'dest')
