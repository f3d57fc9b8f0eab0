"""A compute node's pinned pCPUs as its ComputeNode record holds them.

No API shows them (the hypervisor details stopped carrying usage), and
the pinned-CPU invariants compare them with placement and the servers'
pinning, so ``ctl pinning`` reads them here: through Nova's objects, as
nova-compute reads every object -- over RPC to the conductor in a real
nova-compute (``nova.cmd.compute`` sets the objects' indirection API),
from the database in an embedded Nova.  A running compute so answers for
another host too, even one that is down.  What this assumes of Nova is
declared in :mod:`faultdriver.novacompat.declared`.
"""


class NodeNotFound(LookupError):
    """The host (or its node) has no compute node record."""


def _pinned(node):
    from nova import objects
    if not node.numa_topology:
        return []
    numa = objects.NUMATopology.obj_from_db_obj(node.numa_topology)
    return sorted(cpu for cell in numa.cells for cpu in cell.pinned_cpus)


def read(host, nodename=None):
    """``{nodename: [pinned pCPU, ...]}`` of ``host``'s compute node
    records (only ``nodename``'s when given); NodeNotFound if none."""
    from nova import context as nova_context
    from nova import exception as nova_exception
    from nova import objects

    ctxt = nova_context.get_admin_context()
    try:
        if nodename is not None:
            nodes = [objects.ComputeNode.get_by_host_and_nodename(
                ctxt, host, nodename)]
        else:
            nodes = list(objects.ComputeNodeList.get_all_by_host(ctxt, host))
    except nova_exception.ComputeHostNotFound as exc:
        raise NodeNotFound(str(exc)) from None
    if not nodes:
        raise NodeNotFound('Compute host %s could not be found.' % host)
    return {node.hypervisor_hostname: _pinned(node) for node in nodes}
