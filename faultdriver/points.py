"""The closed catalogue of injection points.

Driver points are generated from ComputeDriver's public surface; the facts
about each (host role, move operations, exceptions it can raise, whether
it runs under the resource tracker lock) come from ``data/points.yaml``.
Tracker points (``tracker.<name>``) come from the ``tracker`` section of
the same file (:mod:`faultdriver.tracker` hooks them); service-call points
(``network.*``, ``volume.*``, ``placement.*``) from its ``service``
section (:mod:`faultdriver.servicecall` fires them at the HTTP request
beneath the Nova client method each is named after); RPC points
(``rpc.*``) from its ``rpc`` section (:mod:`faultdriver.rpcmessage` fires
them where this compute's RPC server hands an incoming message to the
manager method each is named after).
"""

import dataclasses
import functools
import importlib.resources

import yaml

from faultdriver import rules
from faultdriver import surface


@dataclasses.dataclass(frozen=True)
class Point:
    """A named place where rules can fire, before and after."""

    name: str
    kind: str                     # 'driver', 'tracker', 'service', 'rpc'
    roles: tuple = ()             # empty: not fixed
    operations: tuple = ()        # empty: not on a move path
    raises: tuple = ()
    tracker_lock: bool = False    # runs with COMPUTE_RESOURCE_SEMAPHORE held
    doc: str = ''
    #: Service points: what Nova's client gives its caller per failure.
    produces: tuple = ()
    #: Service points: the Nova method that is the step (dotted).
    method: str = ''
    #: Service points: the HTTP statuses Nova's own code retries at the
    #: step (a transient one of them must change nothing).
    retries: tuple = ()
    #: RPC points: how the manager's method is reached: 'call' or
    #: 'cast' ('' for other points).
    rpc: str = ''
    #: RPC points: the caller gives ``call_monitor_timeout`` (heartbeats
    #: while the server works; ``long_rpc_timeout`` as its timeout).
    monitored: bool = False

    def holds_lock(self, phase: str) -> bool:
        """Whether a thread hit at ``phase`` of this point holds the
        resource tracker's lock: a tracker-lock point's ``before`` and
        ``after`` (its ``unlocked`` phase runs before the lock)."""
        return self.tracker_lock and phase != rules.UNLOCKED


@functools.lru_cache(maxsize=None)
def facts():
    """``data/points.yaml``: defaults, driver and tracker facts."""
    text = importlib.resources.files('faultdriver').joinpath(
        'data/points.yaml').read_text(encoding='utf-8')
    return yaml.safe_load(text)


def _point(name, kind, facts, defaults, doc):
    return Point(name=name, kind=kind,
                 roles=tuple(facts.get('roles', ())),
                 operations=tuple(facts.get('operations', ())),
                 raises=tuple(facts.get('raises', defaults['raises'])),
                 tracker_lock=bool(facts.get('tracker_lock', False)),
                 doc=doc)


def _first_line(obj):
    return (obj.__doc__ or '').strip().split('\n')[0]


@functools.lru_cache(maxsize=None)
def catalogue():
    """Every point by name: the driver's, the tracker's, the services'."""
    data = facts()
    defaults = data['defaults']
    known = data['driver']
    methods = surface.public_methods()
    unknown = sorted(set(known) - set(methods))
    if unknown:
        raise RuntimeError('data/points.yaml describes driver methods that '
                           'ComputeDriver does not have: %s' % unknown)
    points = {name: _point(name, 'driver', known.get(name, {}), defaults,
                           _first_line(getattr(surface.BASE, name)))
              for name in methods}
    for name, tracker_facts in data['tracker'].items():
        points['tracker.' + name] = _point(
            'tracker.' + name, 'tracker', tracker_facts, defaults,
            tracker_facts.get('doc', ''))
    for name, service_facts in data.get('service', {}).items():
        points[name] = Point(
            name=name, kind='service',
            roles=tuple(service_facts.get('roles', ())),
            operations=tuple(service_facts.get('operations', ())),
            raises=(), produces=tuple(service_facts.get('produces', ())),
            method=service_facts['method'],
            retries=tuple(service_facts.get('retries', ())),
            doc=service_facts.get('doc', ''))
    for name, rpc_facts in data.get('rpc', {}).items():
        points['rpc.' + name] = Point(
            name='rpc.' + name, kind='rpc',
            roles=tuple(rpc_facts.get('roles', ())),
            operations=tuple(rpc_facts.get('operations', ())),
            raises=(), rpc=rpc_facts['rpc'],
            monitored=bool(rpc_facts.get('monitored', False)),
            method='nova.compute.manager.ComputeManager.' + name,
            doc=rpc_facts.get('doc', ''))
    return points
