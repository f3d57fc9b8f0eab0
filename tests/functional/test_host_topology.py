"""Hosts of different shapes in one embedded Nova (harness.topology).

All services of an embedded Nova share one ``CONF``; Nova's own tests set
``[compute] cpu_dedicated_set`` globally, so whichever host's periodic
runs reads the value set last.  Invariant: each compute uses its own CPUs
and CPU sets, in every periodic: placement's PCPU inventory, the compute
node's NUMA cells and the pins of a new server follow that host's own
settings, whatever order the periodics run in, and placement sees each
host's memory in MiB.
"""

from nova.virt import hardware

from faultdriver.harness import topology
from tests.functional import base


class TestPerHostCPUSets(base.FaultTestBase):

    PINNED = True               # pinned flavors
    TOPOLOGY = {
        'src': topology.PINNED,                     # 1 cell, CPUs 0-3
        'dest': topology.HostShape(                 # 2 cells: 0-2, 3-5
            cpu_nodes=2, cpu_cores=3, cpu_threads=1, memory_mb=8192,
            cpu_dedicated_set='1-2,4'),
    }

    def inventory(self, host):
        found = self.placement.get('/resource_providers/%s/inventories' % (
            self.compute_rp_uuids[host])).body['inventories']
        return {rc: found[rc]['total'] for rc in ('PCPU', 'MEMORY_MB')
                if rc in found}

    def cells(self, host):
        """Each NUMA cell's dedicated pCPUs, as the compute node records
        them."""
        from nova import context
        from nova import objects
        node = objects.ComputeNode.get_by_nodename(
            context.get_admin_context(), host)
        numa = objects.NUMATopology.obj_from_db_obj(node.numa_topology)
        return [sorted(cell.pcpuset) for cell in numa.cells]

    def test_each_host_reads_its_own_cpu_sets(self):
        for host in ('dest', 'src', 'dest', 'src'):
            self.run_periodic(host)
            self.assertEqual({'PCPU': 4, 'MEMORY_MB': 16386},
                             self.inventory('src'))
            self.assertEqual({'PCPU': 3, 'MEMORY_MB': 8192},
                             self.inventory('dest'))
            self.assertEqual([[0, 1, 2, 3]], self.cells('src'))
            self.assertEqual([[1, 2], [4]], self.cells('dest'))

        # Two pinned vCPUs fit in dest's first cell only.
        server = self.boot(host='dest')
        self.assertEqual([1, 2], self.instance_pinning(server))
        self.run_periodic('src')
        self.run_periodic('dest')
        self.assertEqual([1, 2], self.pinned_cpus('dest'))
        self.assertEqual(2, self.placement_pcpus('dest'))
        self.assertEqual([], self.pinned_cpus('src'))

    def test_outside_a_compute_the_global_value_is_read(self):
        # The first host's, as nova.conf of a non-compute service would be.
        self.assertEqual({0, 1, 2, 3}, hardware.get_cpu_dedicated_set())
        self.assertIsNone(topology.calling_host())
