"""Options of the ``fake_numa`` inner driver, in nova.conf's [fake_numa].

Which host CPUs are dedicated (PCPU) and which shared (VCPU) is Nova's own
``[compute] cpu_dedicated_set`` / ``cpu_shared_set``; this group only
describes the fake host those sets are taken from.
"""

from oslo_config import cfg

GROUP = cfg.OptGroup(
    'fake_numa',
    title='Fake NUMA host options',
    help="""
The host the ``fake_numa`` inner driver pretends to be.

Used when ``[fault_injection] inner_driver = fake_numa``.  Host CPUs are
numbered from 0, cell by cell, core by core, with the threads of one core
numbered consecutively (they are siblings).
""")

fake_numa_opts = [
    cfg.IntOpt('cells',
        default=1, min=1, max=64,
        help="""
Number of host NUMA cells.

Related options:

* ``cores_per_cell``, ``threads_per_core``, ``memory_mb_per_cell``
"""),
    cfg.IntOpt('cores_per_cell',
        default=4, min=1, max=1024,
        help="""
CPU cores in each NUMA cell.

The host has ``cells * cores_per_cell * threads_per_core`` CPUs.

Related options:

* ``[compute] cpu_dedicated_set`` and ``[compute] cpu_shared_set`` choose
  among them, as with libvirt; with neither set every CPU is shared.
"""),
    cfg.IntOpt('threads_per_core',
        default=1, min=1, max=8,
        help="""
Hardware threads of each core; threads of one core are siblings.
"""),
    cfg.IntOpt('memory_mb_per_cell',
        default=8192, min=1,
        help="""
Memory of each NUMA cell in MiB, all in 4 KiB pages.

Related options:

* ``[DEFAULT] reserved_host_memory_mb`` is subtracted in placement.
"""),
    cfg.IntOpt('disk_gb',
        default=500, min=1,
        help="""
Local disk of the host in GiB (``DISK_GB`` inventory).
"""),
    cfg.StrOpt('network_agent_url',
        help="""
Where ``fake_numa`` reports the ports it plugged, as a Neutron L2 agent
reports a new tap (the process tier's network stand-in, which then sends
Nova the ``network-vif-plugged`` events a live migration's source waits
for).

Unset (the default), nothing is reported.
"""),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_group(GROUP)
    conf.register_opts(fake_numa_opts, group=GROUP)


def list_opts():
    """For the oslo.config.opts entry point (sample generator)."""
    return [(GROUP, fake_numa_opts)]
