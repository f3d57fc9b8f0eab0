"""The L2 agent's part on the libvirt tier: a port is plugged on a host
when its tap appears there.

In a cloud, Neutron's agent on each compute sees the tap Nova's libvirt
driver created for a port and wires it; Neutron then sends Nova
``network-vif-plugged``, which a live migration's source waits for
(``live_migration_wait_for_vif_plug``: no event, the migration waits out
``vif_plugging_timeout`` and fails).  Here each libvirt host has its own
network namespace, so a tap that appears there belongs to that host:
the agent watches every host's devices and reports each new tap to the
network stand-in (:meth:`network_standin.Network.tap_appeared`), which
sends the event if the port has a binding on that host.  A tap deleted
and created again (a rollback, then another try) is reported again.
"""

import logging
import threading
import typing

LOG = logging.getLogger(__name__)
#: How often the hosts' devices are read (a plug is a step of a move that
#: takes seconds; the source waits for the event up to 300 s).
INTERVAL = 0.2
#: How many scans try to report a tap whose report failed (5 s).
REPORT_TRIES = 25


class Host(typing.Protocol):
    """What the agent reads of a host (``libvirt_host.LibvirtHost``)."""

    def interfaces(self) -> set[str]:
        ...


class Network(typing.Protocol):
    """What the agent tells the network (``network_standin.Network``)."""

    def tap_appeared(self, host: str, device: str) -> list[str]:
        ...


class TapAgent:
    """Watches ``hosts`` (``{name: LibvirtHost}``) for ``network``."""

    def __init__(self, network: Network,
                 hosts: typing.Mapping[str, Host]) -> None:
        self.network = network
        self.hosts = dict(hosts)
        self._seen: dict[str, set[str]] = {name: set() for name in self.hosts}
        # (host, tap): reports that failed
        self._failed: dict[tuple[str, str], int] = {}
        self._stopped = threading.Event()
        self._thread: typing.Optional[threading.Thread] = None

    def start(self) -> 'TapAgent':
        self._thread = threading.Thread(target=self._watch, daemon=True,
                                        name='tap-agent')
        self._thread.start()
        return self

    def _watch(self) -> None:
        while not self._stopped.wait(INTERVAL):
            for name, host in self.hosts.items():
                self.scan(name, host)

    def scan(self, name: str, host: Host) -> list[str]:
        """Report the taps that appeared on ``host`` since the last
        scan; returns the ports whose event was sent.  A report that
        fails is tried again at the next scans, up to ``REPORT_TRIES``
        in all; then the event is lost, as Neutron's would be, and the
        waiting source times out (logged either way)."""
        taps = {device for device in host.interfaces()
                if device.startswith('tap')}
        seen = self._seen[name] & taps
        for key in [key for key in self._failed
                    if key[0] == name and key[1] not in taps]:
            del self._failed[key]       # gone: a new one starts afresh
        sent: list[str] = []
        for device in sorted(taps - seen):
            try:
                sent += self.network.tap_appeared(name, device)
            except Exception:
                tries = self._failed.get((name, device), 0) + 1
                if tries < REPORT_TRIES:
                    if tries == 1:
                        LOG.exception('tap agent: %s on %s not reported; '
                                      'trying again', device, name)
                    self._failed[(name, device)] = tries
                    continue
                LOG.error('tap agent: %s on %s not reported after %d '
                          'tries: its network-vif-plugged is lost',
                          device, name, tries)
            self._failed.pop((name, device), None)
            seen.add(device)
        self._seen[name] = seen
        return sent

    def stop(self) -> None:
        self._stopped.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
