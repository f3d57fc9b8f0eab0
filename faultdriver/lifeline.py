"""A child process that cannot outlive its parent.

The kernel's ``PR_SET_PDEATHSIG``: a child that asks for it is SIGKILLed
when its parent exits, even one killed without a chance to clean up.
Both the scenario workers (forked variants) and the process tier's
children ask for it; it lives here, at the ground floor, so neither layer
imports the other for it.
"""

import ctypes
import signal

PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Have the kernel SIGKILL this process when its parent exits."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
