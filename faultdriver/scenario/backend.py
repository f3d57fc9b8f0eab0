"""The one contract between scenarios and the Nova they run on.

Scenario steps (:class:`faultdriver.scenario.steps.Steps`) and
expectations use a running Nova only through the members declared here;
the embedded Nova (:class:`faultdriver.harness.embedded.EmbeddedNova`) and
the process tier (:class:`faultdriver.process.nova.ProcessNova`, on
``fake_numa`` or real libvirt) implement it.

A tier implements the *primitive reads and actions* of
:class:`NovaBackend` (each reads its Nova the cheapest faithful way: the
embedded one its database, the process tier the API); everything built
on them -- the waits, ``boot``, ``move_state``, ``force_down`` -- is
written once, in :class:`faultdriver.scenario.backend_base.BackendBase`,
which both inherit, so the tiers cannot drift.  ``check`` runs before a
scenario's first step and a unit test holds both implementations to it:
a member one lacks, or a shared member a tier overrides, fails there,
naming it, instead of in the middle of a run.

Servers are the compute API's dicts; hosts are the scenario's host names.
"""

import inspect
import typing

#: Seconds a step waits for a state by default (a migration status, a
#: server field, a service state, an instance action's event).
WAIT_TIMEOUT = 30
#: Seconds a boot or a delete is given: the process tier's services are
#: slower than the embedded ones; a faster tier just returns sooner.
SERVER_TIMEOUT = 90
#: Seconds one resource-tracker periodic run by a step is given.
PERIODIC_TIMEOUT = 60


@typing.runtime_checkable
class ComputeAPI(typing.Protocol):
    """The compute API calls steps make (Nova's functional API client
    has them; the process tier's client offers the same)."""

    def get_server(self, server_id):
        """The server's API dict."""

    def post_server_action(self, server_id, data):
        """``POST /servers/{id}/action``."""

    def delete_server(self, server_id):
        """``DELETE /servers/{id}`` (returns at once)."""

    def delete_migration(self, server_id, migration_id):
        """Abort a live migration."""

    def get_services(self, binary=None, host=None):
        """``GET /os-services`` filtered."""

    def put_service_force_down(self, service_id, forced_down):
        """Set a service forced down or not."""

    def get_instance_actions(self, server_id):
        """The server's instance actions, newest first."""

    def get_instance_action_details(self, server_id, request_id):
        """One instance action with its events."""


@typing.runtime_checkable
class FaultControl(typing.Protocol):
    """The faults of every host of a running Nova: the embedded
    :class:`faultdriver.harness.injection.FaultInjection`, or the process
    tier's control-socket clients."""

    #: Seconds a caller waits for an RPC reply in this Nova.
    rpc_timeout: float

    def add_rule(self, host, rule):
        """Add a rule to running ``host``; returns its index."""

    def remove_rule(self, host, index):
        """Remove rule ``index``; False if ``host`` has no such rule."""

    def set_rules(self, host, rules):
        """Replace ``host``'s rules."""

    def release(self, host, barrier=None):
        """Release threads held on ``host`` (one barrier or all);
        returns how many."""

    def held(self, host):
        """``{barrier: threads held}`` on ``host``."""

    def wait_for_hit(self, host, point, count=1, timeout=WAIT_TIMEOUT,
                     phase='before'):
        """Until ``point`` was hit ``count`` times on ``host``."""

    def wait_for_queued(self, host, method, expired=True,
                        timeout=WAIT_TIMEOUT):
        """Until an RPC message waits for down ``host`` (and, with
        ``expired``, its caller gave up).  ``method`` is checked where the
        tier can tell (the embedded Nova can; a broker cannot)."""

    def wait_callers_gave_up(self, host, timeout=WAIT_TIMEOUT):
        """Wait (bounded, never failing) until no caller still waits for
        dead ``host``."""

    def crash_host(self, host):
        """Crash ``host``'s nova-compute now."""

    def is_crashed(self, host):
        """Whether ``host``'s nova-compute is dead (crashed, or its start
        failed)."""

    def stop_host(self, host):
        """Stop ``host``'s nova-compute gracefully, as ``systemctl stop``
        does; returns once it stopped."""

    def is_stopped(self, host):
        """Whether ``host``'s nova-compute was stopped gracefully (the
        ``shutdown`` action or a stop step) and not started again."""

    def restart(self, host, rules=()):
        """Start ``host``'s nova-compute again with ``rules``; raises
        StartFailed when a fault of them ends the start."""

    def history(self):
        """Every host's journal entries, oldest first."""


@typing.runtime_checkable
class NovaBackend(typing.Protocol):
    """What a tier provides: the primitives, each its own."""

    #: The compute API as the scenario's user and as admin.
    api: ComputeAPI
    admin_api: ComputeAPI
    faults: FaultControl
    #: Whether the scenario's servers are pinned (dedicated CPUs).
    PINNED: bool
    #: vCPUs of a server booted without a flavor.
    default_vcpus: int

    def create_flavor(self, vcpus, extra_specs=None):
        """A flavor id (the same arguments may return the same one)."""

    def create_server(self, host, flavor_id=None, timeout=SERVER_TIMEOUT,
                      status='ACTIVE', volume=False, port=False):
        """Boot with ``flavor_id`` on ``host``, wait for ``status``; fail
        at once, with the fault, on an ERROR not asked for.  ``volume``:
        from a volume; ``port``: on the network with one port (a tier
        without those stand-ins refuses them)."""

    def server_volumes(self, server):
        """``{volume id: {'attachments': [{'id', 'host'}], 'bdm':
        attachment id or None}}`` of the server's volumes: the block
        storage's attachments of the server (``host``: the connector's,
        None while not connected) and the one its block device mapping
        names; where a real hypervisor can be asked, also
        ``'guest_disk': {host: bool}``, whether that host's guest of the
        server has the volume's device as a disk.  ``{}`` for a server
        without volumes, or deleted."""

    def attach_volume(self, server, timeout=WAIT_TIMEOUT):
        """Attach a new data volume to ``server``; returns its id once
        the server's block device mapping has it (a tier without a
        block-storage stand-in refuses)."""

    def detach_volume(self, server, volume_id, timeout=WAIT_TIMEOUT):
        """Detach ``volume_id`` from ``server``; returns once the block
        device mapping no longer has it."""

    def server_ports(self, server):
        """``{port id: {host: 'ACTIVE' or 'INACTIVE'}}``: the bindings
        the network holds for each of the server's ports.  ``{}`` for a
        server without ports, or deleted."""

    def refusal_status(self, error):
        """The HTTP status of ``error`` when it is the API refusing a
        request (4xx) as this tier's API client raises it; None for
        anything else."""

    def server_fields(self, server):
        """``{'status', 'host', 'task_state'}`` as the API shows them,
        read cheaply enough to poll."""

    def server_exists(self, server):
        """False once the server is deleted."""

    def migration_statuses(self, server):
        """``[(id, status)]`` of the server's migrations, oldest first,
        read cheaply enough to poll."""

    def migrations(self, server):
        """The server's migrations (API dicts)."""

    def service_state(self, host):
        """'up' or 'down', as the API says."""

    def stop_compute(self, host):
        """Stop the host's nova-compute as ``systemctl stop`` would."""

    def run_periodic(self, host):
        """One whole resource-tracker periodic on ``host``; False if the
        host's nova-compute died during it (a crash rule of ``recover``'s
        restart fired in a call the host took meanwhile), True when it
        ended."""

    def pinned_cpus(self, host):
        """pCPUs the host's compute node records as pinned."""

    def instance_pinning(self, server):
        """pCPUs the server's vCPUs are pinned to (Nova's record)."""

    def placement_pcpus(self, host):
        """PCPU placement has allocated on the host."""

    def provider_allocations(self, host):
        """``{consumer uuid: {resource class: amount}}`` placement holds
        on the host's resource provider."""

    def guests(self, host):
        """``{instance uuid: state}`` the host's hypervisor itself has,
        or None when the backend cannot ask a real one."""

    def tracked_tasks(self, host):
        """``[{name, instance_uuid}]`` the compute manager of running
        ``host`` tracks for a graceful stop (faultdriver.manager_tasks)."""

    def log_text(self):
        """What the computes logged (the records scenarios count)."""


def _members(protocol):
    return [name for name, value in vars(protocol).items()
            if not name.startswith('_') and callable(value)]


MEMBERS = _members(NovaBackend)
ATTRIBUTES = list(NovaBackend.__annotations__)
FAULT_MEMBERS = _members(FaultControl)
API_MEMBERS = _members(ComputeAPI)


def _signature_problems(protocol, name, member, where=''):
    found = []
    wanted = inspect.signature(vars(protocol)[name]).parameters
    have = inspect.signature(member).parameters
    takes_any = any(p.kind is p.VAR_KEYWORD for p in have.values())
    for param in wanted.values():
        if param.name == 'self' or param.kind is param.VAR_KEYWORD:
            continue
        if param.name not in have and not takes_any:
            found.append('%s%s: takes no %r' % (where, name, param.name))
    return found


def _protocol_problems(protocol, names, obj, where=''):
    found = []
    for name in names:
        member = getattr(obj, name, None)
        if not callable(member):
            found.append('%s%s: missing method' % (where, name))
            continue
        found += _signature_problems(protocol, name, member, where)
    return found


def fault_control_problems(faults, where=''):
    """What ``faults`` (a class or an instance) lacks of FaultControl."""
    found = _protocol_problems(FaultControl, FAULT_MEMBERS, faults, where)
    if not isinstance(faults, type) and not isinstance(
            getattr(faults, 'rpc_timeout', None), (int, float)):
        found.append('%srpc_timeout: not a number' % where)
    return found


def api_problems(api, where=''):
    """What ``api`` (a class or an instance) lacks of ComputeAPI."""
    return _protocol_problems(ComputeAPI, API_MEMBERS, api, where)


def problems(backend):
    """What ``backend`` (a class or an instance) lacks of the contract:
    missing members, parameters of the contract it does not take, shared
    members it overrides; for an instance also its ``faults`` and APIs."""
    from faultdriver.scenario import backend_base
    found = []
    cls = backend if isinstance(backend, type) else type(backend)
    if not issubclass(cls, backend_base.BackendBase):
        found.append('not a backend_base.BackendBase')
    else:
        for name in backend_base.SHARED:
            if getattr(cls, name) is not getattr(backend_base.BackendBase,
                                                 name):
                found.append('%s: overrides the shared member' % name)
    found += _protocol_problems(NovaBackend, MEMBERS, backend)
    if not isinstance(backend, type):
        for name in ATTRIBUTES:
            if not hasattr(backend, name):
                found.append('%s: missing attribute' % name)
        if getattr(backend, 'faults', None) is not None:
            found += fault_control_problems(backend.faults, 'faults.')
        for api in ('api', 'admin_api'):
            if getattr(backend, api, None) is not None:
                found += api_problems(getattr(backend, api), api + '.')
    return found


def check(backend):
    """Refuse a backend that does not keep the contract, naming why."""
    found = problems(backend)
    if found:
        raise TypeError('%s is not a scenario backend: %s' % (
            type(backend).__name__, '; '.join(found)))
