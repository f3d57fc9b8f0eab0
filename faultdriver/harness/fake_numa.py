"""Embedded Nova whose hosts run faultdriver over ``fake_numa``.

The same two hosts, helpers and fault fixture as
:class:`~faultdriver.harness.embedded.EmbeddedNova`, with the inner driver
the process tier runs (:mod:`faultdriver.virt.numa_fake`) instead of
libvirt on fakelibvirt.  A ``fakelibvirt.HostInfo`` given to
``start_compute`` becomes the ``[fake_numa]`` layout, so cases written for
fakelibvirt keep their topology.  Each host gets its own node UUID (one
process runs every host) and a restart starts a new driver that finds its
guests on disk, as a restarted nova-compute process would.
"""

from faultdriver.harness import embedded  # first: it imports Nova's tests

import os  # noqa: E402
import typing  # noqa: E402

import fixtures  # noqa: E402
from nova import conf as nova_conf  # noqa: E402
from oslo_utils.fixture import uuidsentinel as uuids  # noqa: E402

from faultdriver import hostshape  # noqa: E402
from faultdriver.novacompat import patchfixtures  # noqa: E402
from faultdriver.scenario import backend_records as records  # noqa: E402
from faultdriver.virt import conf as virt_conf  # noqa: E402
from faultdriver.virt import numa_fake  # noqa: E402

SHIM = 'faultdriver.FaultDriver'


class FakeNumaNova(embedded.EmbeddedNova):
    """EmbeddedNova on ``fault_injection.inner_driver = fake_numa``."""

    INNER_DRIVER = 'fake_numa'

    def setUp(self) -> None:
        self._host_infos: typing.Dict[str, typing.Any] = {}
        self.state_path = self.useFixture(fixtures.TempDir()).path
        self.flags(state_path=self.state_path)
        virt_conf.register_opts(nova_conf.CONF)
        super().setUp()

    def _setup_compute_service(self) -> None:
        self.flags(compute_driver=SHIM)
        self.flags(inner_driver=self.INNER_DRIVER, group='fault_injection')

    def start_compute(self, hostname: str = 'compute1',
                      host_info: typing.Any = None,
                      **kwargs: typing.Any) -> str:
        """Start ``hostname`` with ``host_info``'s layout (or the current
        ``[fake_numa]`` options); returns the hostname."""
        self.assertNotIn(hostname, self.computes)
        self._host_infos[hostname] = host_info
        self._apply_layout(host_info)
        node_uuid = str(getattr(uuids, 'node_%s' % hostname))
        # The driver reads Nova's process-wide node identity once, while
        # its service starts.
        with patchfixtures.Patch('nova.virt.node.LOCAL_NODE_UUID',
                                 node_uuid):
            self.computes[hostname] = self.start_service(
                'compute', host=hostname,
                cell_name=kwargs.get('cell_name'))
        self.compute_rp_uuids[hostname] = self.placement.get(
            '/resource_providers?name=%s' % hostname).body[
            'resource_providers'][0]['uuid']
        return hostname

    def restart_compute_service(self, hostname: str,
                                keep_hypervisor_state: bool = True,
                                **kwargs: typing.Any) -> str:
        """Stop ``hostname``'s service and start a new one (new manager, new
        driver); without ``keep_hypervisor_state`` its guests are gone."""
        compute = self.computes.pop(hostname)
        self.compute_rp_uuids.pop(hostname)
        compute.stop()
        if not keep_hypervisor_state:
            path = numa_fake.NumaFakeDriver.guests_path(hostname)
            if os.path.exists(path):
                os.remove(path)
        cell_name: str = self.host_mappings[hostname].cell_mapping.name
        return self.start_compute(hostname, self._host_infos[hostname],
                                  cell_name=cell_name)

    def stub_live_migration(self) -> None:
        """Nothing to stub: fake_numa's live migrations complete."""

    def guests(self, host: str) -> typing.Optional[records.Guests]:
        """uuid -> power state of the guests ``host``'s driver keeps."""
        driver = self.computes[host].driver.inner
        return {uuid: guest.state for uuid, guest in driver.instances.items()}

    def _apply_layout(self, host_info: typing.Any) -> None:
        # Without host_info the [fake_numa] options stay as they are.
        if host_info is None:
            return
        shape = hostshape.HostShape(
            cpu_nodes=host_info.cpu_nodes, cpu_sockets=host_info.cpu_sockets,
            cpu_cores=host_info.cpu_cores, cpu_threads=host_info.cpu_threads,
            memory_mb=host_info.kB_mem // 1024)
        self.flags(**shape.fake_numa_options(), group='fake_numa')
