"""The one contract between scenarios and the Nova they run on.

Scenario steps (:class:`faultdriver.scenario.steps.Steps`) and
expectations use a running Nova only through the members declared here;
the embedded Nova (:class:`faultdriver.harness.embedded.EmbeddedNova`) and
the process tier (:class:`faultdriver.process.nova.ProcessNova`, on
``fake_numa`` or real libvirt) implement it.

A tier implements the *primitive reads and actions* of
:class:`NovaBackend` (each reads its Nova the cheapest faithful way: the
embedded one its database, the process tier the API); everything built
on them -- the waits, ``boot``, ``move_state``, ``force_down``, the
volume attach and detach -- is written once, in
:class:`faultdriver.scenario.backend_base.BackendBase`, which every tier
inherits, so the tiers cannot drift.  :func:`faultdriver.scenario.
conformance.check` runs before a scenario's first step and a unit test
holds every implementation to it: a member one lacks, a parameter or an
annotation that differs, or a shared member a tier overrides, fails
there, naming it, instead of in the middle of a run.

Servers are the compute API's dicts; hosts are the scenario's host names;
the shapes crossing here are :mod:`faultdriver.scenario.backend_records`.
The wait timeouts below are the contract's: a step, an exported test's
helper and a tier's own wait use these names, not their values.
"""

import typing

from faultdriver.scenario import backend_records as records

#: Seconds a step waits for a state by default (a migration status, a
#: server field, a service state, an instance action's event).
WAIT_TIMEOUT = 30
#: Seconds a boot or a delete is given: the process tier's services are
#: slower than the embedded ones; a faster tier just returns sooner.
SERVER_TIMEOUT = 90
#: A boot's ``status`` that waits for either outcome, ACTIVE or ERROR:
#: where a variant's fix decides which (the expectations judge it).
ACTIVE_OR_ERROR = 'ACTIVE-OR-ERROR'
#: Seconds one resource-tracker periodic run by a step is given.
PERIODIC_TIMEOUT = 60


@typing.runtime_checkable
class ComputeAPI(typing.Protocol):
    """The compute API calls steps make (Nova's functional API client
    has them; the process tier's client offers the same)."""

    def get_server(self, server_id: str) -> records.Server:
        """The server's API dict."""

    def post_server_action(self, server_id: str,
                           data: records.RequestBody) -> object:
        """``POST /servers/{id}/action``."""

    def delete_server(self, server_id: str) -> object:
        """``DELETE /servers/{id}`` (returns at once)."""

    def delete_migration(self, server_id: str,
                         migration_id: int) -> object:
        """Abort a live migration."""

    def get_services(
            self, binary: typing.Optional[str] = None,
            host: typing.Optional[str] = None) -> list[records.Service]:
        """``GET /os-services`` filtered."""

    def put_service_force_down(self, service_id: typing.Union[int, str],
                               forced_down: bool) -> object:
        """Set a service forced down or not."""

    def get_instance_actions(
            self, server_id: str) -> list[records.InstanceAction]:
        """The server's instance actions, newest first."""

    def get_instance_action_details(
            self, server_id: str, request_id: str) -> records.InstanceAction:
        """One instance action with its events."""


@typing.runtime_checkable
class FaultControl(typing.Protocol):
    """The faults of every host of a running Nova: the embedded
    :class:`faultdriver.harness.injection.FaultInjection`, or the process
    tier's control-socket clients."""

    #: Seconds a caller waits for an RPC reply in this Nova.
    rpc_timeout: float

    def add_rule(self, host: str, rule: str) -> int:
        """Add a rule to running ``host``; returns its index."""

    def remove_rule(self, host: str, index: int) -> bool:
        """Remove rule ``index``; False if ``host`` has no such rule."""

    def set_rules(self, host: str, rules: typing.Sequence[str]) -> None:
        """Replace ``host``'s rules."""

    def release(self, host: str,
                barrier: typing.Optional[str] = None) -> int:
        """Release threads held on ``host`` (one barrier or all);
        returns how many."""

    def held(self, host: str) -> records.Held:
        """``{barrier: threads held}`` on ``host``."""

    def wait_for_hit(self, host: str, point: str, count: int = 1,
                     timeout: float = WAIT_TIMEOUT,
                     phase: str = 'before') -> object:
        """Until ``point`` was hit ``count`` times on ``host``."""

    def wait_for_queued(self, host: str, method: str, expired: bool = True,
                        timeout: float = WAIT_TIMEOUT) -> object:
        """Until an RPC message waits for down ``host`` (and, with
        ``expired``, its caller gave up).  ``method`` is checked where the
        tier can tell (the embedded Nova can; a broker cannot)."""

    def wait_callers_gave_up(self, host: str,
                             timeout: float = WAIT_TIMEOUT) -> object:
        """Wait (bounded, never failing) until no caller still waits for
        dead ``host``."""

    def crash_host(self, host: str) -> None:
        """Crash ``host``'s nova-compute now."""

    def is_crashed(self, host: str) -> bool:
        """Whether ``host``'s nova-compute is dead (crashed, or its start
        failed)."""

    def stop_host(self, host: str) -> None:
        """Stop ``host``'s nova-compute gracefully, as ``systemctl stop``
        does; returns once it stopped."""

    def is_stopped(self, host: str) -> bool:
        """Whether ``host``'s nova-compute was stopped gracefully (the
        ``shutdown`` action or a stop step) and not started again."""

    def restart(self, host: str, rules: typing.Sequence[str] = ()) -> None:
        """Start ``host``'s nova-compute again with ``rules``; raises
        StartFailed when a fault of them ends the start."""

    def history(self) -> list[records.JournalEntry]:
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

    def create_flavor(
            self, vcpus: int,
            extra_specs: typing.Optional[dict[str, str]] = None) -> str:
        """A flavor id (the same arguments may return the same one)."""

    def create_server(self, host: str, flavor_id: typing.Optional[str] = None,
                      timeout: float = SERVER_TIMEOUT, status: str = 'ACTIVE',
                      volume: bool = False,
                      port: bool = False) -> records.Server:
        """Boot with ``flavor_id`` on ``host``, wait for ``status``; fail
        at once, with the fault, on an ERROR not asked for.  ``volume``:
        from a volume; ``port``: on the network with one port (a tier
        without those stand-ins refuses them)."""

    def server_volumes(self, server: records.Server) -> records.VolumeViews:
        """``{volume id: {'attachments': [{'id', 'host'}], 'bdm':
        attachment id or None}}`` of the server's volumes: the block
        storage's attachments of the server (``host``: the connector's,
        None while not connected) and the one its block device mapping
        names; where a real hypervisor can be asked, also
        ``'guest_disk': {host: bool}``, whether that host's guest of the
        server has the volume's device as a disk.  ``{}`` for a server
        without volumes, or deleted."""

    def request_volume_attach(self, server: records.Server) -> str:
        """Ask the API to attach a new data volume of the tier's block
        storage to ``server``; returns its id at once (a tier without a
        block-storage stand-in refuses).  ``attach_volume`` waits."""

    def request_volume_detach(self, server: records.Server,
                              volume_id: str) -> None:
        """Ask the API to detach ``volume_id`` from ``server``; returns
        at once (``detach_volume`` waits)."""

    def mapped_volumes(self, server: records.Server) -> set[str]:
        """Ids of the volumes the server's block device mappings name, as
        the API says; an empty set once the server is deleted."""

    def server_ports(self, server: records.Server) -> records.PortBindings:
        """``{port id: {host: 'ACTIVE' or 'INACTIVE'}}``: the bindings
        the network holds for each of the server's ports.  ``{}`` for a
        server without ports, or deleted."""

    def refusal_status(self, error: BaseException) -> typing.Optional[int]:
        """The HTTP status of ``error`` when it is the API refusing a
        request (4xx) as this tier's API client raises it; None for
        anything else."""

    def server_fields(self, server: records.Server) -> records.ServerFields:
        """``{'status', 'host', 'task_state'}`` as the API shows them,
        read cheaply enough to poll."""

    def server_exists(self, server: records.Server) -> bool:
        """False once the server is deleted."""

    def migration_statuses(
            self, server: records.Server) -> list[records.MigrationStatus]:
        """``[(id, status)]`` of the server's migrations, oldest first,
        read cheaply enough to poll."""

    def migrations(self, server: records.Server) -> list[records.Migration]:
        """The server's migrations (API dicts)."""

    def service_state(self, host: str) -> str:
        """'up' or 'down', as the API says."""

    def stop_compute(self, host: str) -> None:
        """Stop the host's nova-compute as ``systemctl stop`` would."""

    def run_periodic(self, host: str) -> bool:
        """One whole resource-tracker periodic on ``host``; False if the
        host's nova-compute died during it (a crash rule of ``recover``'s
        restart fired in a call the host took meanwhile), True when it
        ended."""

    def pinned_cpus(self, host: str) -> list[int]:
        """pCPUs the host's compute node records as pinned."""

    def instance_pinning(self, server: records.Server) -> list[int]:
        """pCPUs the server's vCPUs are pinned to (Nova's record)."""

    def placement_pcpus(self, host: str) -> int:
        """PCPU placement has allocated on the host."""

    def provider_allocations(self, host: str) -> records.Allocations:
        """``{consumer uuid: {resource class: amount}}`` placement holds
        on the host's resource provider."""

    def guests(self, host: str) -> typing.Optional[records.Guests]:
        """``{instance uuid: state}`` the host's hypervisor itself has,
        or None when the backend cannot ask a real one."""

    def tracked_tasks(self, host: str) -> list[records.TrackedTask]:
        """``[{name, instance_uuid}]`` the compute manager of running
        ``host`` tracks for a graceful stop (faultdriver.manager_tasks)."""

    def log_text(self) -> str:
        """What the computes logged (the records scenarios count)."""
