"""Service-call points: faults at the HTTP request beneath a Nova client.

A service-call point (``volume.attachment_update``, ``placement.
move_allocations``, ...; ``data/points.yaml`` under ``service``) is named
by the Nova client method that is the step, but fires at the HTTP request
that method makes: the call of ``requests.Session.request`` from
keystoneauth's ``Session._send_request``, the lowest place Nova's service
clients (neutronclient, cinderclient, the placement adapter) all go
through.  Everything above it is Nova's and runs as in production:
keystoneauth's ``connect_retries`` and its translation of a refused
connection into ``ConnectFailure``, the client's translation of a 5xx
into its exception, Nova's retries (``attachment_update`` and
``attachment_delete`` try five times on 500/504, placement's
``@retries``), its translation (``translate_cinder_exception``) and its
tolerate-and-continue branches (``@safe_connect`` returns None).

Which step a request belongs to is read from the calling thread's stack:
the innermost frame running one of the declared Nova methods (matched by
its code's file and qualified name, so decorators around it do not
matter).  Which service and host made it, from the nearest frame running
a ``ComputeManager`` or ``ResourceTracker`` method: its ``driver`` is the
FaultDriver whose engine decides, its ``host`` the hit's host.  A request
no compute manager makes (the conductor's, the scheduler's, the API's in
the embedded Nova, where every service shares the process) has no such
frame and never fires: only a nova-compute runs FaultDriver.  The hit's
instance and migration are the nearest frames' arguments of those names.

Where the embedded Nova's fixtures replace the HTTP layer, nothing beneath
the step exists to fail: Nova's ``CinderFixture`` replaces the
``nova.volume.cinder.API`` methods themselves and ``NeutronFixture``
replaces ``nova.network.neutron.get_client`` with an in-memory client, so
``volume.*`` and ``network.*`` rules are refused there, naming the
fixture (:func:`unreachable`); placement goes through keystoneauth there
too (Nova's ``PlacementFixture`` sends its requests through a keystoneauth
session to the real placement WSGI application), so ``placement.*``
points fire on the embedded tier as on processes.

The hook is process-wide, put on while any FaultDriver of the process is
open and taken off with the last; what it assumes of Nova, keystoneauth
and requests is declared in :mod:`faultdriver.novacompat.declared`.
"""

import functools
import importlib
import inspect
import json
import logging
import re
import sys
import threading
import types
import typing

from faultdriver.actions import service as service_actions
from faultdriver import hitcontext
from faultdriver import novacompat
from faultdriver.novacompat import patching
from faultdriver import points as points_module

if typing.TYPE_CHECKING:
    from faultdriver import engine as engine_module
    from faultdriver import rules as rules_module

LOG = logging.getLogger(__name__)

#: The request every service client makes, and the keystoneauth method
#: that makes it (the hook acts only for calls from there).
REQUEST = 'requests.Session.request'
SEND = 'keystoneauth1.session.Session._send_request'
#: Classes whose methods' frames tell which compute service a request is
#: for (their ``host`` and ``driver``).
SERVICE_OWNERS = ('nova.compute.manager.ComputeManager',
                  'nova.compute.resource_tracker.ResourceTracker')

#: What the embedded Nova's fixtures replace, per service: the HTTP
#: request beneath those steps never happens there.
FIXTURE_REPLACES = {
    'volume': ('nova.tests.fixtures.cinder.CinderFixture', 'replaces the '
               'nova.volume.cinder.API methods themselves'),
    'network': ('nova.tests.fixtures.neutron.NeutronFixture', 'replaces '
                'nova.network.neutron.get_client with an in-memory client'),
}

#: The error document each service sends with a 5xx, so Nova's client
#: parses the injected answer as it parses a real one.
_BODIES: typing.Dict[str, typing.Callable[[int, str], typing.Any]] = {
    'volume': lambda status, text: {'computeFault': {
        'code': status, 'message': text}},
    'network': lambda status, text: {'NeutronError': {
        'type': 'HTTPInternalServerError', 'message': text, 'detail': ''}},
    'placement': lambda status, text: {'errors': [{
        'status': status, 'title': 'Injected', 'detail': text,
        'code': 'placement.undefined_code', 'request_id': None}]},
}


def service_of(point: str) -> str:
    """``volume`` of ``volume.attachment_update``."""
    return point.partition('.')[0]


@functools.lru_cache(maxsize=None)
def steps() -> typing.Dict[typing.Tuple[str, str], str]:
    """(source file, qualified name) of each step's Nova function ->
    its point.  Checked at start (novacompat) before it is used."""
    found = {}
    for name, point in points_module.catalogue().items():
        if point.kind != 'service':
            continue
        module_name, class_name, method = _split(point.method)
        module = importlib.import_module(module_name)
        source = inspect.getsourcefile(module)
        found[(source or '', '%s.%s' % (class_name, method))] = name
    return found


def _split(symbol: str) -> typing.Tuple[str, str, str]:
    owner, _, method = symbol.rpartition('.')
    module_name, _, class_name = owner.rpartition('.')
    return module_name, class_name, method


@functools.lru_cache(maxsize=None)
def _owner_classes() -> typing.Tuple[type, ...]:
    classes = []
    for symbol in SERVICE_OWNERS:
        module_name, _, class_name = symbol.rpartition('.')
        classes.append(getattr(importlib.import_module(module_name),
                               class_name))
    return tuple(classes)


# -- which step, which host ------------------------------------------------

def find(frame: typing.Optional[types.FrameType]) -> typing.Optional[
        typing.Tuple['engine_module.Engine', str, typing.Dict[str,
                                                              typing.Any]]]:
    """(engine, point, hit context) of a request made from ``frame``, or
    None: no declared step on the stack, or no compute service of a
    FaultDriver under it."""
    known = steps()
    owners = _owner_classes()
    point = None
    instance = migration = None
    while frame is not None:
        code = frame.f_code
        if point is None:
            point = known.get((code.co_filename, code.co_qualname))
        if point is not None:
            names = code.co_varnames[:code.co_argcount]
            if instance is None and 'instance' in names:
                instance = frame.f_locals.get('instance')
            if migration is None and 'migration' in names:
                migration = frame.f_locals.get('migration')
            if names[:1] == ('self',):
                owner = frame.f_locals.get('self')
                if isinstance(owner, owners):
                    engine = getattr(getattr(owner, 'driver', None),
                                     '_fault_engine', None)
                    if engine is None:
                        return None
                    return engine, point, _describe(
                        point, engine.host, instance, migration)
        frame = frame.f_back
    return None


def _describe(point: str, host: str, instance: typing.Any,
              migration: typing.Any) -> typing.Dict[str, typing.Any]:
    described: typing.Dict[str, typing.Any] = hitcontext.describe(  # type: ignore[no-untyped-call]  # noqa: E501
        points_module.catalogue()[point], host, instance, migration)
    return described


# -- the answers -----------------------------------------------------------

def error_body(point: str, status: int, text: str) -> typing.Any:
    """The error document ``point``'s service sends with ``status``."""
    return _BODIES[service_of(point)](status, text)


def answer(status: int, text: str, point: str, method: str,
           url: str) -> typing.Any:
    """The ``requests.Response`` a service sends with ``status``."""
    import requests
    response = requests.Response()
    response.status_code = status
    response.reason = {500: 'Internal Server Error', 502: 'Bad Gateway',
                       503: 'Service Unavailable',
                       504: 'Gateway Timeout'}.get(status, 'Server Error')
    response.headers['Content-Type'] = 'application/json'
    response._content = json.dumps(
        error_body(point, status, text)).encode('utf-8')
    response.encoding = 'utf-8'
    response.url = url
    response.request = requests.Request(method, url).prepare()
    return response


def read_timeout(timeout: typing.Any) -> typing.Optional[float]:
    """The seconds requests waits for an answer, of its ``timeout``
    argument: a number, a ``(connect, read)`` pair, or None."""
    if isinstance(timeout, (tuple, list)):
        timeout = timeout[-1]
    return None if timeout is None else float(timeout)


def _hit(engine: 'engine_module.Engine', point: str, phase: str,
         context: typing.Dict[str, typing.Any], method: str,
         url: str, timeout: typing.Optional[float] = None) -> typing.Any:
    """Fire ``point.phase``; the response to give instead, or None.
    The actions see the request as the hit's target."""
    try:
        engine.hit(point, phase, context,  # type: ignore[no-untyped-call]
                   target=service_actions.Request(method, url, timeout))
    except service_actions.ServiceAnswer as given:
        LOG.warning('faultdriver answering %s %s with %d at %s.%s on %s',
                    method, url, given.status, point, phase, engine.host)
        return answer(given.status, given.message, point, method, url)
    return None


# -- the hook --------------------------------------------------------------

class _Hook:
    """The wrapper on ``requests.Session.request``, on while FaultDrivers
    are open (counted)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.users = 0
        self.undo: typing.Optional[typing.Callable[[], None]] = None
        self.engines: typing.List['engine_module.Engine'] = []
        self.send_code: typing.Optional[types.CodeType] = None

    def armed(self) -> bool:
        names = steps().values()
        return any(name in engine.armed for engine in list(self.engines)
                   for name in names)

    def make(self, layer: patching.Layer) -> typing.Callable[..., typing.Any]:
        hook = self

        @functools.wraps(layer.below)
        def request(session: typing.Any, method: str, url: str,
                    *args: typing.Any, **kwargs: typing.Any) -> typing.Any:
            def below() -> typing.Any:
                return layer.call_below(  # type: ignore[no-untyped-call]
                    session, type(session), method, url, *args, **kwargs)
            caller = sys._getframe(1)
            if caller.f_code is not hook.send_code or not hook.armed():
                return below()
            found = find(caller)
            if found is None or found[1] not in found[0].armed:
                return below()
            engine, point, context = found
            timeout = read_timeout(kwargs.get('timeout'))
            given = _hit(engine, point, 'before', context, method, url,
                         timeout)
            if given is not None:
                return given
            response = below()
            given = _hit(engine, point, 'after', context, method, url,
                         timeout)
            return response if given is None else given
        return request

    def add(self, engine: 'engine_module.Engine') -> None:
        with self.lock:
            if self.undo is None:
                # Declared and checked at start (novacompat), like REQUEST.
                self.send_code = getattr(
                    novacompat.resolve(SEND), '__code__', None)
                self.undo = patching.wrap(  # type: ignore[no-untyped-call]
                    REQUEST, self.make)
            self.engines.append(engine)

    def remove(self, engine: 'engine_module.Engine') -> None:
        with self.lock:
            if engine not in self.engines:
                return
            self.engines.remove(engine)
            if not self.engines and self.undo is not None:
                self.undo()
                self.undo = None


_HOOK = _Hook()


def install(engine: 'engine_module.Engine') -> None:
    """Let ``engine``'s service-call rules fire (a FaultDriver's start)."""
    _HOOK.add(engine)


def uninstall(engine: 'engine_module.Engine') -> None:
    """``engine`` closed; the hook goes with the last one."""
    _HOOK.remove(engine)


# -- at a stand-in (the process tiers' service side) ------------------------

@functools.lru_cache(maxsize=None)
def standin_requests(service: str) -> typing.Tuple[
        typing.Tuple[str, str, typing.Pattern[str]], ...]:
    """``(point, method, path pattern)`` of each point of ``service``
    (``network``) whose ``request`` fact names the request at the
    service that is the step's (``data/points.yaml``)."""
    found = []
    for name, facts in points_module.facts().get('service', {}).items():
        if service_of(name) != service or not facts.get('request'):
            continue
        method, _, path = facts['request'].partition(' ')
        found.append((name, method, re.compile(path)))
    return tuple(found)


def standin_rule(host: str, rule: 'rules_module.Rule') -> None:
    """ValueError unless the stand-in ``host`` (``neutron``: a
    ``tiers.STAND_INS`` pseudo-host) can fire ``rule``, a parsed and
    validated rule: a point of its service with a request there, no
    role or filter (a service does not know who calls it)."""
    from faultdriver.scenario import tiers
    requests = [name for name, _, _ in standin_requests(tiers.STAND_INS[host])]
    if rule.point not in requests:
        raise ValueError('the %s stand-in fails only the requests of %s'
                         % (host, ', '.join(requests) or 'no point'))
    if rule.role or rule.filters:
        raise ValueError('a service does not know who calls it: no role '
                         'or filter')


def unreachable(point: str) -> typing.Optional[str]:
    """Why ``point`` cannot fire in this process (a fixture of the
    embedded Nova replaced the layer beneath its step), or None."""
    replaced = FIXTURE_REPLACES.get(service_of(point))
    if replaced is None:
        return None
    if service_of(point) == 'volume':
        module_name, class_name, method = _split(
            points_module.catalogue()[point].method)
        cls = getattr(importlib.import_module(module_name), class_name)
        # Nova's method (decorated: still a function), or a mock.
        real = isinstance(inspect.getattr_static(cls, method),
                          types.FunctionType)
    else:
        from nova.network import neutron
        real = (isinstance(neutron.get_client, types.FunctionType) and
                neutron.get_client.__module__ == 'nova.network.neutron')
    if not real:
        return ('%s %s here, so no HTTP request is made beneath %s: run it '
                'on a process tier' % (replaced[0], replaced[1], point))
    return None
