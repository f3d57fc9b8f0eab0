"""What the fake host's shape means to Nova: its NUMA topology and the
inventory it implies.

One source for both views Nova compares: the host NUMA topology the
resource tracker pins CPUs in, and the VCPU/PCPU/MEMORY_MB/DISK_GB
inventory placement allocates from, both of one
:class:`~faultdriver.hostshape.HostShape` (the type every tier uses;
``fake_numa`` reads it from nova.conf with
:meth:`~faultdriver.hostshape.HostShape.from_nova_conf`).  CPUs are
numbered node by node, core by core, the threads of a core consecutive
(siblings).  The CPU sets are read the way the libvirt driver reads
them: ``[compute] cpu_dedicated_set`` gives PCPUs, ``cpu_shared_set``
VCPUs; with only a dedicated set there are no VCPUs, with neither every
CPU is a VCPU.
"""

from nova import exception
from nova import objects
from nova.virt import hardware

#: The only page size of the fake host.
PAGE_KB = 4


def cpu_ids(shape):
    """``(dedicated, shared)``: the host CPU ids reported as PCPU and as
    VCPU.  ``nova.exception.Invalid`` names the option and the CPUs when
    the sets do not fit the host."""
    cpus = set(range(shape.cpus))
    dedicated = _cpu_set(shape.cpu_dedicated_set,
                         '[compute] cpu_dedicated_set', cpus)
    shared = _cpu_set(shape.cpu_shared_set, '[compute] cpu_shared_set', cpus)
    if not shape.cpu_shared_set:
        shared = set() if dedicated else cpus
    if dedicated & shared:
        raise exception.Invalid(
            '[compute] cpu_dedicated_set and cpu_shared_set overlap on '
            'CPU(s) %s; a CPU is either dedicated or shared'
            % hardware.format_cpu_spec(dedicated & shared))
    return frozenset(dedicated), frozenset(shared)


def cpus_per_node(shape):
    return shape.cores_per_node * shape.cpu_threads


def node_memory_mb(shape):
    """MiB of each NUMA node (the shape's memory split evenly)."""
    return shape.memory // shape.cpu_nodes


def memory_mb(shape):
    """MiB of memory the NUMA nodes have together."""
    return shape.cpu_nodes * node_memory_mb(shape)


def numa_topology(shape):
    """An ``objects.NUMATopology`` without usage: the resource tracker
    adds the instances' pinning and memory itself, as with libvirt."""
    dedicated, shared = cpu_ids(shape)
    per_node, threads = cpus_per_node(shape), shape.cpu_threads
    memory = node_memory_mb(shape)
    cells = []
    for cell in range(shape.cpu_nodes):
        first = cell * per_node
        cpus = set(range(first, first + per_node))
        used = cpus & (dedicated | shared)
        siblings = [set(range(core, core + threads)) & used
                    for core in range(first, first + per_node, threads)]
        cells.append(objects.NUMACell(
            id=cell, socket=cell,
            cpuset=cpus & shared, pcpuset=cpus & dedicated,
            memory=memory,
            cpu_usage=0, memory_usage=0, pinned_cpus=set(),
            siblings=[s for s in siblings if s],
            mempages=[objects.NUMAPagesTopology(
                size_kb=PAGE_KB, used=0, reserved=0,
                total=memory * 1024 // PAGE_KB)],
            network_metadata=objects.NetworkMetadata(
                physnets=set(), tunneled=False)))
    return objects.NUMATopology(cells=cells)


def inventory(shape, disk_gb, ratios, reserved):
    """Placement inventory; ``ratios`` and ``reserved`` map resource
    class to allocation ratio and reserved amount.  A class with no
    capacity is left out (placement rejects a total of 0)."""
    dedicated, shared = cpu_ids(shape)
    totals = {'VCPU': len(shared), 'PCPU': len(dedicated),
              'MEMORY_MB': memory_mb(shape), 'DISK_GB': disk_gb}
    return {rc: {'total': total, 'min_unit': 1, 'max_unit': total,
                 'step_size': 1,
                 'allocation_ratio': 1.0 if rc == 'PCPU' else ratios[rc],
                 'reserved': 0 if rc == 'PCPU' else reserved.get(rc, 0)}
            for rc, total in totals.items() if total}


def cpu_info(shape):
    """``cpu_info`` as the libvirt driver shapes it (a socket per NUMA
    node)."""
    return {'arch': 'x86_64', 'model': 'Nehalem', 'vendor': 'Intel',
            'features': ['pge', 'clflush'],
            'topology': {'sockets': shape.cpu_nodes,
                         'cores': shape.cores_per_node,
                         'threads': shape.cpu_threads}}


def _cpu_set(spec, option, host_cpus):
    if not spec:
        return set()
    cpus = hardware.parse_cpu_spec(spec)
    if not cpus:
        raise exception.Invalid('%s = %r names no CPU' % (option, spec))
    missing = cpus - host_cpus
    if missing:
        raise exception.Invalid(
            '%s = %r names CPU(s) %s the fake host does not have; it has '
            '%s ([fake_numa] cells x cores_per_cell x threads_per_core)'
            % (option, spec, hardware.format_cpu_spec(missing),
               hardware.format_cpu_spec(host_cpus)))
    return cpus
