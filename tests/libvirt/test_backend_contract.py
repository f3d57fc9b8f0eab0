"""The libvirt tier keeps the scenario backend contract by behaviour
(tests/backend_contract.py; the embedded Nova runs the same checks in
tests/functional, the process tier in tests/process), on real libvirtd +
QEMU per host.

The hosts get at most four dedicated pCPUs of this machine (the checks
need fewer than 8 per host: an 8-vCPU pinned boot must find no host).
A data volume's hot unplug and a resize are not checked here
(tests/backend_contract.py says why).  Needs root and the Debian
packages of ``tools/install-process-deps.sh libvirt``.
"""

import os

from faultdriver.process import nova as process_nova
from faultdriver.process import stack as stack_module
from tests import backend_contract
from tests import stacks

HOSTS = ('src', 'dest')


def dedicated():
    """Up to four of the CPUs this process may run on, as a cpuset."""
    return ','.join(str(cpu) for cpu in sorted(os.sched_getaffinity(0))[:4])


def test_the_contract_holds():
    faults = {host: {'inner_driver': 'libvirt',
                     'extra': {'compute': {'cpu_dedicated_set': dedicated()}}}
              for host in HOSTS}
    with stack_module.Stack(hosts=HOSTS, faults=faults, mode=stacks.MODE,
                            hypervisor='libvirt', progress=print) as stack:
        backend_contract.check(process_nova.ProcessNova(stack, pinned=True),
                               'src', 'dest', data_volumes=False,
                               resize=False)
