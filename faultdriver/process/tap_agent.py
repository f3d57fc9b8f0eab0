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

LOG = logging.getLogger(__name__)
#: How often the hosts' devices are read (a plug is a step of a move that
#: takes seconds; the source waits for the event up to 300 s).
INTERVAL = 0.2


class TapAgent:
    """Watches ``hosts`` (``{name: LibvirtHost}``) for ``network``."""

    def __init__(self, network, hosts):
        self.network = network
        self.hosts = dict(hosts)
        self._seen = {name: set() for name in self.hosts}
        self._stopped = threading.Event()
        self._thread = None

    def start(self):
        self._thread = threading.Thread(target=self._watch, daemon=True,
                                        name='tap-agent')
        self._thread.start()
        return self

    def _watch(self):
        while not self._stopped.wait(INTERVAL):
            for name, host in self.hosts.items():
                self.scan(name, host)

    def scan(self, name, host):
        """Report the taps that appeared on ``host`` since the last
        scan; returns the ports whose event was sent."""
        taps = {device for device in host.interfaces()
                if device.startswith('tap')}
        sent = []
        for device in sorted(taps - self._seen[name]):
            try:
                sent += self.network.tap_appeared(name, device)
            except Exception:
                # The API down (a stack stopping): the event is lost, as
                # Neutron's would be; the waiting source times out.
                LOG.exception('tap agent: %s on %s not reported',
                              device, name)
        self._seen[name] = taps
        return sent

    def stop(self):
        self._stopped.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
