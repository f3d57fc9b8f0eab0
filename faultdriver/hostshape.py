"""The one description of a compute host's hardware and CPU sets, for
every tier: the scenario model's topology, the embedded Nova's
fakelibvirt hosts, ``fake_numa`` on processes, and what real libvirt on
this machine can be given.  No Nova import."""

import dataclasses

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
    def cpus(self):
        return (self.cpu_nodes * self.cpu_sockets * self.cpu_cores *
                self.cpu_threads)

    @property
    def memory(self):
        """MiB of memory, the default filled in."""
        return self.memory_mb or DEFAULT_MEMORY_MB

    def cpu_sets(self):
        """``{option: value}`` of the [compute] CPU sets it names."""
        return {key: getattr(self, key)
                for key in ('cpu_dedicated_set', 'cpu_shared_set')
                if getattr(self, key)}

    def replace(self, **changes):
        return dataclasses.replace(self, **changes)

    def as_dict(self):
        return dataclasses.asdict(self)


#: Nova's libvirt test base's host (a topology that says nothing).
NOVA_HOST = HostShape()
#: ``pinned: true``: 4 dedicated pCPUs in one NUMA cell.
PINNED_HOST = HostShape(cpu_nodes=1, cpu_sockets=1, cpu_cores=4,
                        cpu_threads=1, cpu_dedicated_set='0-3')
