"""The one contract between scenarios and the Nova they run on.

Scenario steps (:class:`faultdriver.scenario.runner.Steps`) and
expectations use a running Nova only through these members; the embedded
Nova (:class:`faultdriver.harness.embedded.EmbeddedNova`) and the
process tier (:class:`faultdriver.process.nova.ProcessNova`, on
``fake_numa`` or real libvirt) implement it.  ``check`` runs before a
scenario's first step, and a unit test holds both implementations to it,
so a member one of them lacks fails there, naming it, instead of as an
AttributeError in the middle of a run.

Servers are the compute API's dicts; hosts are the scenario's host names.
"""

import inspect
import typing


@typing.runtime_checkable
class NovaBackend(typing.Protocol):
    #: The compute API as the scenario's user and as admin (Nova's
    #: functional API client, or the process tier's equivalent).
    api: typing.Any
    admin_api: typing.Any
    #: Fault control: add_rule, set_rules, release, held, wait_for_hit,
    #: wait_for_queued, crash_host, is_crashed, restart, history, and
    #: rpc_timeout (seconds a caller waits for a reply).
    faults: typing.Any

    def create_flavor(self, vcpus, extra_specs=None):
        """A flavor id (the same arguments may return the same one)."""

    def boot(self, host, vcpus=None, status='ACTIVE'):
        """Boot a server on ``host`` with the backend's default flavor
        (pinned when the scenario is), wait for ``status``."""

    def create_server(self, host, flavor_id=None, timeout=30,
                      status='ACTIVE'):
        """Boot with ``flavor_id`` on ``host``, wait for ``status``."""

    def delete_server(self, server, timeout=30):
        """Delete and wait until the server is gone."""

    def migrations(self, server):
        """The server's migrations (API dicts)."""

    def move_state(self, server):
        """``(migration statuses oldest first, status, task_state,
        host)``: what shows a move's progress, cheap enough to poll."""

    def wait_newest_migration(self, server, status, count, timeout=30,
                              fail_on=('error', 'failed')):
        """Wait until migration number ``count`` has ``status``."""

    def wait_for_server(self, server, timeout=30, **fields):
        """Wait until the server's status/host/task_state match."""

    def wait_action_event(self, server, action, event, timeout=20):
        """The newest ``action``'s finished ``event``."""

    def service_state(self, host):
        """'up' or 'down', as the API says."""

    def wait_service_state(self, host, state, timeout=30):
        """Wait until the API says ``state``."""

    def stop_compute(self, host):
        """Stop the host's nova-compute as ``systemctl stop`` would."""

    def force_down(self, host, down=True):
        """Set the service forced down (or not)."""

    def run_periodic(self, host):
        """One whole resource-tracker periodic on ``host``."""

    def pinned_cpus(self, host):
        """pCPUs the host's compute node records as pinned."""

    def instance_pinning(self, server):
        """pCPUs the server's vCPUs are pinned to (Nova's record)."""

    def placement_pcpus(self, host):
        """PCPU placement has allocated on the host."""

    def guests(self, host):
        """``{instance uuid: state}`` the host's hypervisor itself has,
        or None when the backend cannot ask a real one."""


MEMBERS = [name for name in vars(NovaBackend)
           if not name.startswith('_') and callable(vars(NovaBackend)[name])]
ATTRIBUTES = list(NovaBackend.__annotations__)


def problems(backend):
    """What ``backend`` (a class or an instance) lacks of the contract:
    missing members, or parameters of the contract it does not take."""
    found = []
    for name in ATTRIBUTES:
        if not isinstance(backend, type) and not hasattr(backend, name):
            found.append('%s: missing attribute' % name)
    for name in MEMBERS:
        member = getattr(backend, name, None)
        if not callable(member):
            found.append('%s: missing method' % name)
            continue
        wanted = inspect.signature(vars(NovaBackend)[name]).parameters
        have = inspect.signature(member).parameters
        takes_any = any(p.kind is p.VAR_KEYWORD for p in have.values())
        for param in wanted.values():
            if param.name == 'self' or param.kind is param.VAR_KEYWORD:
                continue
            if param.name not in have and not takes_any:
                found.append('%s: takes no %r' % (name, param.name))
    return found


def check(backend):
    """Refuse a backend that does not keep the contract, naming why."""
    found = problems(backend)
    if found:
        raise TypeError('%s is not a scenario backend: %s' % (
            type(backend).__name__, '; '.join(found)))
