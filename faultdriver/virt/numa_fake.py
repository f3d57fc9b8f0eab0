"""``fake_numa``: a fake driver with NUMA, PCPUs, NUMA-aware live migration
and guests that survive a restart, for real nova-compute processes.

Why: Nova's fake drivers report no NUMA topology and no PCPU inventory,
so a pinned server cannot exist, the destination of a live migration makes
no ``live_migration_claim``, and a crashed destination leaves a ``failed``
migration where the stale-context seed needs an ``error`` one with a
migration context.  This driver does at the compute-manager level what
libvirt does: it reports a host NUMA topology and VCPU/PCPU inventory
built from ``[fake_numa]`` and Nova's ``[compute] cpu_dedicated_set`` /
``cpu_shared_set`` (a :class:`~faultdriver.hostshape.HostShape`,
:mod:`faultdriver.virt.topology`), sets
``dst_supports_numa_live_migration`` / ``src_supports_numa_live_migration``
and answers the claim with ``dst_numa_info``.  The migration itself is
instant: the guest leaves the source in ``post_live_migration`` and
appears on the destination in ``post_live_migration_at_destination``.
Guests (uuid, name, power state) live in
``<state_path>/fake_numa/<host>.json`` (:mod:`faultdriver.virt.guests`);
the node UUID is Nova's ``<state_path>/compute_id``, as for any
single-node driver.

Chosen over libvirt on fakelibvirt in each process by measurement
(``benchmarks/inner_driver.py``; numbers in doc/inner-driver.rst): a
compute service starts in 0.3-0.9 s against 0.6-1.1 s, a pinned boot
takes about half as long and a NUMA live migration ~30% less, and a
nova-compute process loads +0.3 MiB against +21 MiB.  fakelibvirt would
also need ~10 host stubs outside Nova's test base, a channel to hand a
migrated domain to the destination process, and persistence of its
in-memory domains.
"""

import os

from nova import conf as nova_conf
from nova import objects
from nova.virt import fake
import nova.virt.node
from oslo_log import log as logging
from oslo_serialization import jsonutils
import requests

from faultdriver import hostshape
from faultdriver import novacompat
from faultdriver.virt import conf
from faultdriver.virt import guests
from faultdriver.virt import topology

LOG = logging.getLogger(__name__)
CONF = nova_conf.CONF


class NumaFakeDriver(fake.FakeDriverWithoutFakeNodes):
    """One node with a NUMA topology, PCPUs and persistent guests."""

    capabilities = dict(fake.FakeDriver.capabilities, supports_pcpus=True)

    def __init__(self, virtapi, read_only=False):
        novacompat.verify(('fake_numa',))
        conf.register_opts(CONF)
        self.shape = hostshape.HostShape.from_nova_conf(CONF)
        # Checked here: CPU sets that do not fit stop the service.
        dedicated, shared = topology.cpu_ids(self.shape)
        # FakeDriver sizes its usage counters from these.
        self.vcpus = len(shared)
        self.memory_mb = topology.memory_mb(self.shape)
        self.local_gb = CONF.fake_numa.disk_gb
        super().__init__(virtapi, read_only)
        self.instances = guests.GuestTable(self.guests_path(CONF.host))
        self._node_uuid = None
        LOG.info('fake_numa host %s: %d cell(s), PCPUs %s, VCPUs %s, '
                 '%d guest(s) in %s', CONF.host, self.shape.cpu_nodes,
                 sorted(dedicated), sorted(shared),
                 len(self.instances), self.instances.path)

    @staticmethod
    def guests_path(host: str) -> str:
        """Where the guests of ``host`` are kept."""
        return os.path.join(CONF.state_path, 'fake_numa', host + '.json')

    def _local_node_uuid(self):
        # Read once, lazily (after the manager checked that an existing
        # service still has its identity file), then kept: one process may
        # run several computes in tests.
        if self._node_uuid is None:
            self._node_uuid = nova.virt.node.get_local_node_uuid()
        return self._node_uuid

    def get_nodenames_by_uuid(self, refresh=False):
        return {self._local_node_uuid(): self.get_available_nodes()[0]}

    def get_available_resource(self, nodename):
        resources = super().get_available_resource(nodename)
        if resources:
            resources.update(
                uuid=self._local_node_uuid(),
                vcpus=self.vcpus,
                memory_mb=self.memory_mb,
                local_gb=self.local_gb,
                cpu_info=jsonutils.dumps(topology.cpu_info(self.shape)),
                numa_topology=topology.numa_topology(self.shape)._to_json())
        return resources

    def update_provider_tree(self, provider_tree, nodename, allocations=None):
        ratios = self._get_allocation_ratios(
            provider_tree.data(nodename).inventory)
        reserved = {'VCPU': CONF.reserved_host_cpus,
                    'MEMORY_MB': CONF.reserved_host_memory_mb,
                    'DISK_GB': self._get_reserved_host_disk_gb_from_config()}
        provider_tree.update_inventory(
            nodename, topology.inventory(self.shape, self.local_gb, ratios,
                                         reserved))

    # -- NUMA-aware live migration, as the libvirt driver signals it --------

    def check_can_live_migrate_destination(self, context, instance,
                                           src_compute_info, dst_compute_info,
                                           block_migration=False,
                                           disk_over_commit=False):
        data = super().check_can_live_migrate_destination(
            context, instance, src_compute_info, dst_compute_info,
            block_migration, disk_over_commit)
        if instance.numa_topology:
            data.dst_supports_numa_live_migration = True
        return data

    def check_can_live_migrate_source(self, context, instance,
                                      dest_check_data, block_device_info=None):
        data = super().check_can_live_migrate_source(
            context, instance, dest_check_data, block_device_info)
        if instance.numa_topology:
            data.src_supports_numa_live_migration = True
        return data

    def post_claim_migrate_data(self, context, instance, migrate_data, claim):
        topology_ = claim.claimed_numa_topology
        if topology_:
            migrate_data.dst_numa_info = _numa_info(topology_)
        return migrate_data

    def pre_live_migration(self, context, instance, block_device_info,
                           network_info, disk_info, migrate_data):
        data = super().pre_live_migration(
            context, instance, block_device_info, network_info, disk_info,
            migrate_data)
        self._report_plugged(instance, network_info)
        return data

    def _report_plugged(self, instance, network_info):
        """Tell the network the server's ports are plugged here, as the
        L2 agent that sees a new tap does (``[fake_numa]
        network_agent_url``); the network then sends Nova the
        ``network-vif-plugged`` events a live migration's source waits
        for.  A failed report raises: the source would wait out
        ``vif_plugging_timeout`` for nothing."""
        url = CONF.fake_numa.network_agent_url
        ports = [vif['id'] for vif in network_info or ()]
        if not url or not ports:
            return
        response = requests.post(url, json={
            'host': CONF.host, 'server': instance.uuid, 'ports': ports},
            timeout=30)
        response.raise_for_status()
        LOG.info('fake_numa: reported ports %s plugged on %s',
                 ', '.join(ports), CONF.host, instance=instance)

    def live_migration(self, context, instance, dest, post_method,
                       recover_method, block_migration=False,
                       migrate_data=None):
        if instance.uuid not in self.instances:
            # Nothing to migrate: the job fails, as a hypervisor's would.
            LOG.error('fake_numa: no guest %s to live-migrate',
                      instance.uuid, instance=instance)
            recover_method(context, instance, dest, migrate_data)
            return
        post_method(context, instance, dest, block_migration, migrate_data)

    def post_live_migration(self, context, instance, block_device_info,
                            migrate_data=None):
        # The guest runs on the destination now.
        if instance.uuid in self.instances:
            self.destroy(context, instance, network_info=None,
                         block_device_info=block_device_info)

    def rollback_live_migration_at_destination(self, context, instance,
                                               network_info,
                                               block_device_info,
                                               destroy_disks=True,
                                               migrate_data=None):
        if instance.uuid in self.instances:
            self.destroy(context, instance, network_info, block_device_info)


def _numa_info(instance_topology):
    """``LibvirtLiveMigrateNUMAInfo`` for the claimed destination pinning:
    guest CPU -> host CPU and guest cell -> host cell."""
    cpu_pins, cell_pins = {}, {}
    for index, cell in enumerate(instance_topology.cells):
        cell_pins[str(index)] = {cell.id}
        for vcpu, pcpu in (cell.cpu_pinning or {}).items():
            cpu_pins[str(vcpu)] = {pcpu}
    emulator = set().union(*cpu_pins.values()) if cpu_pins else set()
    return objects.LibvirtLiveMigrateNUMAInfo(
        cpu_pins=cpu_pins, cell_pins=cell_pins, emulator_pins=emulator)
