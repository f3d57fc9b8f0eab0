"""The rule half of :class:`~faultdriver.scenario.backend.FaultControl`
over each host's control socket, written once for every tier whose
computes run a FaultDriver in their own process.

The process tier (:class:`faultdriver.process.nova.Faults`, libvirt's
too) reaches a compute's socket on this machine, the cloud tier
(:class:`faultdriver.cloud.backend.CloudFaults`) through SSH's
forwarding; beyond that, adding, removing and replacing rules,
releasing barriers and waiting for hits is the same conversation with
the same control server (:mod:`faultdriver.control`).  Each tier had its
copy of it, and the copies had begun to differ (one converted answers
to ``int``, the other did not); here a tier gives only the two things
that differ: :meth:`SocketFaults.control`, the client of a host's
socket, and :meth:`SocketFaults.rule`, a rule's text as that host's
FaultDriver must read it (the cloud names a host's real name where the
scenario wrote its alias).
"""

import time
import typing

from faultdriver.control import client as control_client
from faultdriver.control import protocol
from faultdriver.scenario import backend
from faultdriver.scenario import backend_records as records


class SocketFaults:
    """Rules, barriers and hit waits through each host's control socket
    (a mixin of a tier's FaultControl, which adds the service half:
    crash, stop, restart, journal)."""

    #: Seconds a caller waits for an RPC reply in this Nova (the tier
    #: sets it: a constant of its stack, or its computes' setting).
    rpc_timeout: float

    def control(self, host: str) -> control_client.Client:
        """The client of ``host``'s control socket."""
        raise NotImplementedError

    def rule(self, text: str) -> str:
        """``text`` as the computes' FaultDrivers must read it: the
        same where the scenario's host names are the computes' own."""
        return text

    def add_rule(self, host: str, rule: str) -> int:
        """Returns the rule's index, as the embedded tier's does."""
        return int(self.control(host).add(self.rule(rule))['index'])

    def remove_rule(self, host: str, index: int) -> bool:
        """False if ``host`` has no rule ``index`` (as the embedded
        tier's engine answers)."""
        try:
            self.control(host).remove(index)
        except protocol.RequestRejected:
            return False
        return True

    def set_rules(self, host: str, rules: typing.Sequence[str]) -> None:
        control = self.control(host)
        control.clear()
        for rule in rules:
            control.add(self.rule(rule))

    def release(self, host: str,
                barrier: typing.Optional[str] = None) -> int:
        return int(self.control(host).release(barrier))

    def held(self, host: str) -> records.Held:
        """``{barrier: threads held}`` on ``host``."""
        held: records.Held = self.control(host).status()['held']
        return held

    def wait_for_hit(self, host: str, point: str, count: int = 1,
                     timeout: float = backend.WAIT_TIMEOUT,
                     phase: str = 'before') -> object:
        hits: object = self.control(host).wait(point, count, timeout, phase)
        return hits

    def wait_callers_gave_up(self, host: str,
                             timeout: float = backend.WAIT_TIMEOUT) -> object:
        """One RPC timeout and a second: by then every call sent to the
        dead ``host`` expired (a caller's next call, sent after the
        first failed, too; a broker cannot be asked which calls wait).
        What an operator who restarts a dead compute minutes later
        gets."""
        time.sleep(min(timeout, self.rpc_timeout + 1))
        return None
