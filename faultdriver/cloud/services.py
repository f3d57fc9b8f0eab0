"""Service-manager drivers: nova-compute stopped, crashed and started
through whatever manages it on the host, every change audited.

The work happens on the host, in the helper
(:mod:`faultdriver.cloud.hosthelper`), as it must while nova-compute is
down; a driver says which manager and unit, and writes each change to
the run's :class:`~faultdriver.cloud.audit.AuditLog` before making it.

Deployments (``doc/source/cloud.rst``):

* devstack: systemd unit ``devstack@n-cpu`` (``devstack@n-cpu-N`` for
  the fake computes of ``NUMBER_FAKE_NOVA_COMPUTE``), no ``Restart=``;
* OpenStack-Ansible: ``nova-compute.service``, ``Restart=on-failure``
  after 2 s: overridden by a runtime drop-in for the run;
* kolla-ansible: container ``nova_compute`` (docker or podman), restart
  policy ``unless-stopped``: ``docker update --restart=no`` for the run;
* ``faultdriver stack up`` (this project's CI cloud): the compute's name,
  stopped, crashed and started by the stack's supervisor (no restart
  policy: it never restarts a compute on its own).
"""

import typing

from faultdriver.cloud import audit as audit_module
from faultdriver.cloud import helper as helper_module

#: Default units per deployment.
DEVSTACK_UNIT = 'devstack@n-cpu'
OSA_UNIT = 'nova-compute.service'
KOLLA_CONTAINER = 'nova_compute'
#: Seconds a graceful stop may take before SIGKILL (the process tier's
#: bound for nova-compute's stop).
STOP_BOUND = 60.0


class ServiceState(typing.TypedDict):
    """The helper's ``state`` answer: running, stopping, stopped or
    crashed; the details beside it (exit status, pid...) are each
    manager's own and read by no one here."""

    state: str


def devstack_unit(number: typing.Optional[int] = None) -> str:
    """devstack's unit of its compute, or of fake compute ``number``."""
    return DEVSTACK_UNIT if number is None else '%s-%d' % (DEVSTACK_UNIT,
                                                           number)


class ServiceDriver:
    """nova-compute as ``unit`` of the host's ``manager``."""

    manager: typing.Optional[str] = None

    def __init__(self, helper: helper_module.HostHelper, unit: str,
                 audit: audit_module.AuditLog,
                 runtime_dir: typing.Optional[str] = None) -> None:
        self.helper = helper
        self.unit = unit
        self.audit = audit
        #: Where systemd's runtime drop-ins go (the helper's default,
        #: /run/systemd/system, unless a test says otherwise).
        self.runtime_dir = runtime_dir

    def _args(self, *more: object) -> typing.Tuple[object, ...]:
        where: typing.Tuple[object, ...] = (
            '--runtime-dir', self.runtime_dir) if self.runtime_dir else ()
        return ('--manager', self.manager, '--unit', self.unit) + \
            where + more

    def _down(self, verb: str, *more: object) -> helper_module.Answer:
        # A stopped or crashed compute is brought back by a restore.
        self.audit.record(self.helper.host, 'down:%s' % self.unit,
                          '%s %s' % (verb, self.unit),
                          [str(a) for a in ('start',) + self._args()])
        return self.helper.call(verb, *self._args(*more))

    def state(self) -> ServiceState:
        """running, stopping, stopped or crashed, with the details."""
        # The helper's answer as hosthelper's *_state and stack_service
        # write it: a state, and details.
        return typing.cast(ServiceState,
                           self.helper.call('state', *self._args()))

    def stop(self, bound: float = STOP_BOUND) -> helper_module.Answer:
        """A graceful stop, SIGKILL past ``bound`` seconds."""
        return self._down('stop', '--timeout', bound)

    def crash(self) -> helper_module.Answer:
        """SIGKILL of the unit alone."""
        return self._down('crash')

    def start(self) -> helper_module.Answer:
        result = self.helper.call('start', *self._args())
        self.audit.settle(self.helper.host, 'down:%s' % self.unit)
        return result

    def prepare(self) -> bool:
        """No automatic restart for the run; True if that changed it."""
        key = 'restart:%s' % self.unit
        policy = str(self.helper.call('restart-policy',
                                      *self._args())['policy'])
        if policy == 'no':
            return False
        self.audit.record(self.helper.host, key,
                          'restart policy %s -> no of %s' % (policy,
                                                             self.unit),
                          [str(a) for a in ('restore-restart',) + self._args(
                              '--previous', policy)])
        return bool(self.helper.call('disable-restart',
                                     *self._args())['changed'])

    def unprepare(self) -> None:
        """Put back the restart policy :meth:`prepare` changed."""
        for change in self.audit.open():
            if change['host'] == self.helper.host and \
                    change['key'] == 'restart:%s' % self.unit:
                self.helper.call(*change['undo'])
        self.audit.settle(self.helper.host, 'restart:%s' % self.unit)


class Systemd(ServiceDriver):
    """devstack and OpenStack-Ansible computes."""

    manager = 'systemd'


class Docker(ServiceDriver):
    """kolla's ``nova_compute`` container."""

    manager = 'docker'


class Podman(ServiceDriver):
    manager = 'podman'


class Stack(ServiceDriver):
    """A compute of ``faultdriver stack up``, through its supervisor's
    unix socket on the host (the helper finds it for the user logged in;
    ``supervisor`` names another)."""

    manager = 'stack'

    def __init__(self, helper: helper_module.HostHelper, unit: str,
                 audit: audit_module.AuditLog,
                 runtime_dir: typing.Optional[str] = None,
                 supervisor: typing.Optional[str] = None) -> None:
        super().__init__(helper, unit, audit, runtime_dir)
        self.supervisor = supervisor

    def _args(self, *more: object) -> typing.Tuple[object, ...]:
        where: typing.Tuple[object, ...] = (
            '--supervisor', self.supervisor) if self.supervisor else ()
        return ('--manager', self.manager, '--unit', self.unit) + \
            where + more


DRIVERS = {each.manager: each for each in (Systemd, Docker, Podman, Stack)}
