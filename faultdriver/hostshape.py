"""The one description of a compute host's hardware and CPU sets, for
every tier: the scenario model's topology, the embedded Nova's
fakelibvirt hosts, ``fake_numa`` on processes (which reads it back from
nova.conf, :meth:`HostShape.from_nova_conf`, and reports it to Nova,
:mod:`faultdriver.virt.topology`), and what real libvirt on this machine
can be given.  No Nova import."""

import dataclasses
import typing

#: fakelibvirt's host memory when none is given (its HostInfo default,
#: 16780000 kB), used by every tier so they agree.
DEFAULT_MEMORY_MB = 16780000 // 1024


@dataclasses.dataclass(frozen=True)
class HostShape:
    """One compute host; defaults are those of Nova's libvirt test base."""

    cpu_nodes: int = 2
    cpu_sockets: int = 1
    cpu_cores: int = 2
    cpu_threads: int = 2
    memory_mb: int | None = None          # None: DEFAULT_MEMORY_MB
    cpu_dedicated_set: str | None = None
    cpu_shared_set: str | None = None

    @property
    def cpus(self) -> int:
        return (self.cpu_nodes * self.cpu_sockets * self.cpu_cores *
                self.cpu_threads)

    @property
    def memory(self):
        """MiB of memory, the default filled in."""
        return self.memory_mb or DEFAULT_MEMORY_MB

    def cpu_sets(self) -> typing.Dict[str, str]:
        """``{option: value}`` of the [compute] CPU sets it names."""
        return {key: getattr(self, key)
                for key in ('cpu_dedicated_set', 'cpu_shared_set')
                if getattr(self, key)}

    @property
    def cores_per_node(self):
        """Cores of one NUMA node (its sockets' cores)."""
        return self.cpu_sockets * self.cpu_cores

    def fake_numa_options(self) -> typing.Dict[str, int]:
        """nova.conf ``[fake_numa]`` options (faultdriver.virt.conf) that
        give the ``fake_numa`` driver this host; its CPU sets are the
        ``[compute]`` options of :meth:`cpu_sets`."""
        return {'cells': self.cpu_nodes,
                'cores_per_cell': self.cores_per_node,
                'threads_per_core': self.cpu_threads,
                'memory_mb_per_cell': self.memory // self.cpu_nodes}

    @classmethod
    def from_nova_conf(cls, conf):
        """The host ``fake_numa`` is, read from a nova.conf with the
        ``[fake_numa]`` options registered: the inverse of
        :meth:`fake_numa_options` and :meth:`cpu_sets` (one socket per
        node; the sockets of a shape become its node's cores)."""
        group = conf.fake_numa
        return cls(cpu_nodes=group.cells, cpu_sockets=1,
                   cpu_cores=group.cores_per_cell,
                   cpu_threads=group.threads_per_core,
                   memory_mb=group.cells * group.memory_mb_per_cell,
                   cpu_dedicated_set=conf.compute.cpu_dedicated_set,
                   cpu_shared_set=conf.compute.cpu_shared_set)

    def replace(self, **changes: typing.Any) -> 'HostShape':
        return dataclasses.replace(self, **changes)

    def as_dict(self) -> typing.Dict[str, typing.Any]:
        return dataclasses.asdict(self)


#: Nova's libvirt test base's host (a topology that says nothing).
NOVA_HOST = HostShape()
#: ``pinned: true``: 4 dedicated pCPUs in one NUMA cell.
PINNED_HOST = HostShape(cpu_nodes=1, cpu_sockets=1, cpu_cores=4,
                        cpu_threads=1, cpu_dedicated_set='0-3')
