"""fake_numa's host: its shape read from nova.conf, and the NUMA topology
and inventory of that shape.

Read through real oslo.config from a nova.conf-style file, with Nova's
own ``[compute]`` options, as nova-compute reads them.
"""

import nova.tests.unit  # noqa: F401  (Nova's patching and objects first)

import textwrap

from nova import conf as nova_conf
from nova import exception
from nova import objects
from oslo_config import cfg
import pytest

from faultdriver import hostshape
from faultdriver.virt import conf
from faultdriver.virt import topology


def layout(tmp_path, text):
    path = tmp_path / 'nova.conf'
    path.write_text(textwrap.dedent(text))
    config = cfg.ConfigOpts()
    nova_conf.compute.register_opts(config)
    conf.register_opts(config)
    config([], default_config_files=[str(path)])
    shape = hostshape.HostShape.from_nova_conf(config)
    topology.cpu_ids(shape)             # as the driver checks at start
    return Host(shape, config.fake_numa.disk_gb)


class Host:
    """A shape and its disk, asked what fake_numa reports of them."""

    def __init__(self, shape, disk_gb):
        self.shape, self.disk_gb = shape, disk_gb

    def numa_topology(self):
        return topology.numa_topology(self.shape)

    def inventory(self, ratios, reserved):
        return topology.inventory(self.shape, self.disk_gb, ratios, reserved)

    def cpu_info(self):
        return topology.cpu_info(self.shape)


def cells(host):
    """(cpuset, pcpuset, siblings, memory, 4K pages) per cell, via the
    JSON the compute node stores."""
    stored = objects.NUMATopology.obj_from_db_obj(
        host.numa_topology()._to_json())
    return [(c.cpuset, c.pcpuset, c.siblings, c.memory,
             [(p.size_kb, p.total) for p in c.mempages])
            for c in stored.cells]


RATIOS = {'VCPU': 4.0, 'MEMORY_MB': 1.5, 'DISK_GB': 1.0}
RESERVED = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 2}


def test_defaults_every_cpu_shared(tmp_path):
    host = layout(tmp_path, '')
    assert cells(host) == [({0, 1, 2, 3}, set(), [{0}, {1}, {2}, {3}],
                            8192, [(4, 8192 * 256)])]
    assert host.inventory(RATIOS, RESERVED) == {
        'VCPU': {'total': 4, 'min_unit': 1, 'max_unit': 4, 'step_size': 1,
                 'allocation_ratio': 4.0, 'reserved': 1},
        'MEMORY_MB': {'total': 8192, 'min_unit': 1, 'max_unit': 8192,
                      'step_size': 1, 'allocation_ratio': 1.5,
                      'reserved': 512},
        'DISK_GB': {'total': 500, 'min_unit': 1, 'max_unit': 500,
                    'step_size': 1, 'allocation_ratio': 1.0, 'reserved': 2},
    }


def test_dedicated_only_no_vcpus(tmp_path):
    host = layout(tmp_path, """
        [compute]
        cpu_dedicated_set = 0-3
        """)
    assert cells(host)[0][:2] == (set(), {0, 1, 2, 3})
    inventory = host.inventory(RATIOS, RESERVED)
    assert 'VCPU' not in inventory
    assert inventory['PCPU'] == {
        'total': 4, 'min_unit': 1, 'max_unit': 4, 'step_size': 1,
        'allocation_ratio': 1.0, 'reserved': 0}


def test_two_cells_threads_and_both_sets(tmp_path):
    host = layout(tmp_path, """
        [compute]
        cpu_dedicated_set = 2-7
        cpu_shared_set = 0,1
        [fake_numa]
        cells = 2
        cores_per_cell = 2
        threads_per_core = 2
        memory_mb_per_cell = 1024
        disk_gb = 40
        """)
    assert cells(host) == [
        ({0, 1}, {2, 3}, [{0, 1}, {2, 3}], 1024, [(4, 262144)]),
        (set(), {4, 5, 6, 7}, [{4, 5}, {6, 7}], 1024, [(4, 262144)]),
    ]
    totals = {rc: inv['total']
              for rc, inv in host.inventory(RATIOS, RESERVED).items()}
    assert totals == {'VCPU': 2, 'PCPU': 6, 'MEMORY_MB': 2048,
                      'DISK_GB': 40}
    assert host.cpu_info()['topology'] == {
        'sockets': 2, 'cores': 2, 'threads': 2}


def test_siblings_keep_only_reported_cpus(tmp_path):
    host = layout(tmp_path, """
        [compute]
        cpu_dedicated_set = 0,2
        [fake_numa]
        cores_per_cell = 2
        threads_per_core = 2
        """)
    assert cells(host)[0][:3] == (set(), {0, 2}, [{0}, {2}])


@pytest.mark.parametrize('text, message', [
    ("""
     [compute]
     cpu_dedicated_set = 2-9
     """, "[compute] cpu_dedicated_set = '2-9' names CPU(s) 4-9 the fake "
          "host does not have; it has 0-3"),
    ("""
     [compute]
     cpu_shared_set = 5
     """, "[compute] cpu_shared_set = '5' names CPU(s) 5 the fake host"),
    ("""
     [compute]
     cpu_dedicated_set = 0-2
     cpu_shared_set = 2-3
     """, "cpu_dedicated_set and cpu_shared_set overlap on CPU(s) 2"),
    ("""
     [compute]
     cpu_dedicated_set = 0-3,^0-3
     """, "names no CPU"),
])
def test_sets_that_do_not_fit(tmp_path, text, message):
    with pytest.raises(exception.Invalid) as raised:
        layout(tmp_path, text)
    assert message in str(raised.value)


def test_out_of_range_option_rejected_by_oslo_config(tmp_path):
    with pytest.raises(ValueError, match='cells'):
        layout(tmp_path, """
            [fake_numa]
            cells = 0
            """)


@pytest.mark.parametrize('shape', [
    hostshape.NOVA_HOST, hostshape.PINNED_HOST,
    hostshape.HostShape(cpu_nodes=2, cpu_sockets=2, cpu_cores=2,
                        cpu_threads=2, memory_mb=4096,
                        cpu_dedicated_set='4-15', cpu_shared_set='0-3')])
def test_a_shape_given_through_nova_conf_comes_back(tmp_path, shape):
    """What the process tier writes (fake_numa_options, cpu_sets) is the
    host fake_numa reads: the same CPUs, nodes, memory and sets, and the
    same NUMA topology (sockets of a node read back as its cores)."""
    sections = {'fake_numa': shape.fake_numa_options(),
                'compute': shape.cpu_sets()}
    text = ''.join('[%s]\n' % name + ''.join(
        '%s = %s\n' % item for item in options.items())
        for name, options in sections.items())
    read = layout(tmp_path, text).shape
    assert read.fake_numa_options() == shape.fake_numa_options()
    assert read.cpu_sets() == shape.cpu_sets()
    assert (read.cpus, read.memory) == (shape.cpus, shape.memory)
    assert topology.numa_topology(read).obj_to_primitive() == \
        topology.numa_topology(shape).obj_to_primitive()
