"""``stop-service`` and ``start-service``: the control plane stopped
and started at a scenario's step.

Why steps: many move bugs start where no compute fails -- the broker
restarted while a move waits on an RPC reply, the conductor or the
scheduler restarted between two of a move's casts, placement gone for
the length of a step (doc/findings.rst; the operator reports of #43).
Held at a named step by a ``hang`` rule (``wait-point``), then these
steps, then ``release``: the fault lands exactly there, and the run
goes on through Nova's own reconnection and retries.

Only where the tier started those services itself
(``Provision.CONTROL_PLANE``: the process tiers); a scenario that uses
them elsewhere is refused when it loads.  ``start-service`` returns once
the service serves again (the broker: every running Nova service
consumes its queue again and reports a new heartbeat; the conductor and
the scheduler: a new heartbeat), so the next step meets a running
control plane, not a reconnecting one -- nor computes the API still
takes for down.
"""

import typing

from faultdriver.scenario import specs
from faultdriver.scenario import tiers

#: The run's steps (faultdriver.scenario.steps.Steps, which this module
#: must not import: the registry, which Steps imports, imports this).
Steps = typing.Any

#: The services a scenario may stop and start, as the process tiers
#: name them (faultdriver.process.stack.CONTROL_SERVICES).
SERVICES = ('rabbitmq', 'nova-conductor', 'nova-scheduler', 'placement')


@typing.runtime_checkable
class ControlPlane(typing.Protocol):
    """What a tier providing ``Provision.CONTROL_PLANE`` has beside the
    backend contract (faultdriver.process.nova.ProcessNova)."""

    def stop_service(self, name: str) -> None:
        """Stop control-plane service ``name`` as its service manager
        would."""

    def start_service(self, name: str) -> None:
        """Start it again; return once it serves."""


def _plane(steps: Steps) -> ControlPlane:
    nova = steps.nova
    if not isinstance(nova, ControlPlane):
        # The scenario's load refuses this first (tiers.needs).
        raise RuntimeError('%s cannot stop or start the control plane'
                           % type(nova).__name__)
    return nova


@tiers.needs(tiers.Provision.CONTROL_PLANE)
def _stop(steps: Steps, service: str) -> str:
    _plane(steps).stop_service(service)
    return '%s stopped' % service


@tiers.needs(tiers.Provision.CONTROL_PLANE)
def _start(steps: Steps, service: str) -> str:
    _plane(steps).start_service(service)
    return '%s serving again' % service


def _schema(description: str) -> typing.Dict[str, typing.Any]:
    """A control step's schema entry: its description, one ``service``."""
    return {'description': description, 'type': 'object',
            'additionalProperties': False, 'required': ['service'],
            'properties': {'service': {
                'description': 'The control-plane service: the broker '
                '(`rabbitmq`), `nova-conductor`, `nova-scheduler` or '
                '`placement`.', 'enum': list(SERVICES)}}}


KINDS = (
    specs.StepKind('stop-service', _stop, _schema(
        'Stop a control-plane service as its service '
        'manager would (SIGTERM, SIGKILL after 10 s): the broker\'s '
        'queues that are not durable, every RPC queue of Nova\'s, go '
        'with it.  The process tiers only (they started it).  Usually '
        'while a `hang` rule holds a step (`wait-point`), `start-service` '
        'and `release` after it.')),
    specs.StepKind('start-service', _start, _schema(
        'Start a control-plane service that '
        '`stop-service` stopped; the step ends once it serves again: the '
        'broker once every running Nova service consumes its queue again '
        'and reports a new heartbeat (they reconnect by themselves; until '
        'then the API takes them for down), the conductor and the '
        'scheduler '
        'once the API shows a new heartbeat, placement once it listens.')),
)
