"""The fake host's NUMA layout and the inventory it implies.

One source for both views Nova compares: the host NUMA topology the
resource tracker pins CPUs in, and the VCPU/PCPU/MEMORY_MB/DISK_GB
inventory placement allocates from.  Built from nova.conf the way the
libvirt driver reads it: ``[compute] cpu_dedicated_set`` gives PCPUs,
``cpu_shared_set`` VCPUs; with only a dedicated set there are no VCPUs,
with neither every CPU is a VCPU.
"""

import dataclasses

from nova import exception
from nova import objects
from nova.virt import hardware

#: The only page size of the fake host.
PAGE_KB = 4


@dataclasses.dataclass(frozen=True)
class HostLayout:
    """Cells, CPUs, memory and disk of the fake host."""

    cells: int
    cores_per_cell: int
    threads_per_core: int
    memory_mb_per_cell: int
    disk_gb: int
    dedicated: frozenset     # host CPU ids reported as PCPU
    shared: frozenset        # host CPU ids reported as VCPU

    @classmethod
    def from_conf(cls, conf):
        """The layout ``conf`` describes; ``nova.exception.Invalid`` names
        the option and the CPUs when the sets do not fit the host."""
        group = conf.fake_numa
        layout = dict(cells=group.cells, cores_per_cell=group.cores_per_cell,
                      threads_per_core=group.threads_per_core,
                      memory_mb_per_cell=group.memory_mb_per_cell,
                      disk_gb=group.disk_gb)
        cpus = set(range(group.cells * group.cores_per_cell *
                         group.threads_per_core))
        dedicated = _cpu_set(conf.compute.cpu_dedicated_set,
                             '[compute] cpu_dedicated_set', cpus)
        shared = _cpu_set(conf.compute.cpu_shared_set,
                          '[compute] cpu_shared_set', cpus)
        if not conf.compute.cpu_shared_set:
            shared = set() if dedicated else cpus
        if dedicated & shared:
            raise exception.Invalid(
                '[compute] cpu_dedicated_set and cpu_shared_set overlap on '
                'CPU(s) %s; a CPU is either dedicated or shared'
                % hardware.format_cpu_spec(dedicated & shared))
        return cls(dedicated=frozenset(dedicated), shared=frozenset(shared),
                   **layout)

    @property
    def cpus_per_cell(self):
        return self.cores_per_cell * self.threads_per_core

    def cell_cpus(self, cell):
        first = cell * self.cpus_per_cell
        return set(range(first, first + self.cpus_per_cell))

    def numa_topology(self):
        """An ``objects.NUMATopology`` without usage: the resource tracker
        adds the instances' pinning and memory itself, as with libvirt."""
        cells = []
        for cell in range(self.cells):
            cpus = self.cell_cpus(cell)
            used = cpus & (self.dedicated | self.shared)
            first = min(cpus)
            siblings = [
                set(range(core, core + self.threads_per_core)) & used
                for core in range(first, first + self.cpus_per_cell,
                                  self.threads_per_core)]
            cells.append(objects.NUMACell(
                id=cell, socket=cell,
                cpuset=cpus & self.shared, pcpuset=cpus & self.dedicated,
                memory=self.memory_mb_per_cell,
                cpu_usage=0, memory_usage=0, pinned_cpus=set(),
                siblings=[s for s in siblings if s],
                mempages=[objects.NUMAPagesTopology(
                    size_kb=PAGE_KB, used=0, reserved=0,
                    total=self.memory_mb_per_cell * 1024 // PAGE_KB)],
                network_metadata=objects.NetworkMetadata(
                    physnets=set(), tunneled=False)))
        return objects.NUMATopology(cells=cells)

    @property
    def memory_mb(self):
        return self.cells * self.memory_mb_per_cell

    def inventory(self, ratios, reserved):
        """Placement inventory; ``ratios`` and ``reserved`` map resource
        class to allocation ratio and reserved amount.  A class with no
        capacity is left out (placement rejects a total of 0)."""
        totals = {'VCPU': len(self.shared), 'PCPU': len(self.dedicated),
                  'MEMORY_MB': self.memory_mb, 'DISK_GB': self.disk_gb}
        return {rc: {'total': total, 'min_unit': 1, 'max_unit': total,
                     'step_size': 1,
                     'allocation_ratio': 1.0 if rc == 'PCPU' else ratios[rc],
                     'reserved': 0 if rc == 'PCPU' else reserved.get(rc, 0)}
                for rc, total in totals.items() if total}

    def cpu_info(self):
        """``cpu_info`` as the libvirt driver shapes it."""
        return {'arch': 'x86_64', 'model': 'Nehalem', 'vendor': 'Intel',
                'features': ['pge', 'clflush'],
                'topology': {'sockets': self.cells,
                             'cores': self.cores_per_cell,
                             'threads': self.threads_per_core}}


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
