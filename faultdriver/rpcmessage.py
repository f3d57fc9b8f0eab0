"""RPC message points: faults at the compute's own RPC server.

An RPC point (``rpc.pre_live_migration``, ``rpc.check_can_live_migrate_
source``, ...; ``data/points.yaml`` under ``rpc``) is named by the
ComputeManager method an incoming cast or call runs.  It fires where
oslo.messaging's RPC server hands the message to Nova: inside
``RPCDispatcher._do_dispatch``, after the arguments were deserialized,
before Nova's endpoint (its task-tracking wrapper, then the manager's
method) runs.  Everything around it is oslo.messaging's and runs as in
production: ``RPCServer._process_incoming`` acknowledged the message
and sends the reply when the dispatch returns, and
``RPCDispatcher.dispatch`` sends call-monitor heartbeats from a
watchdog thread while the dispatch runs, for a caller that gave
``call_monitor_timeout``.  So:

* ``drop``: the method never runs and nothing is sent back: the
  caller times out (after ``call_monitor_timeout`` when it gave one:
  no heartbeat comes; else after its ``timeout``).  Not a raise, which
  sends an error reply at once.
* ``lostreply``: the method runs (heartbeats go on meanwhile), its
  reply (result or error) is never sent: the caller times out
  ``call_monitor_timeout`` after the heartbeats stopped, or at its
  ``timeout``.
* ``twice``: the message is handled twice, as a redelivered one: the
  reply of the first handling is sent, then the message is dispatched
  again from its serialized form (fresh objects, Nova's task tracking),
  whatever it returns or raises is dropped (logged).
* ``delay`` and ``hang`` (the general actions) wait inside the dispatch,
  so heartbeats go on: a monitored caller waits up to its ``timeout``
  (``long_rpc_timeout``).

Only this compute's servers are hooked (the conductor, scheduler and
other computes of an embedded Nova share the process): Nova's
``Service.start`` builds the ``compute`` and ``compute-alt`` servers
with ``rpc.get_server`` after ``init_host``; while a FaultDriver waits
for its servers, ``oslo_messaging.get_rpc_server`` is wrapped
process-wide, and a server whose first endpoint is Nova's tracking
wrapper of this driver's manager gets the hooks on its instance (its
``_process_incoming`` and its dispatcher's ``_do_dispatch``) before
it starts; every other server is returned untouched.  What this
assumes of oslo.messaging and Nova is declared in
:mod:`faultdriver.novacompat.declared` and checked at start.
"""

import functools
import logging
import threading
import types
import typing

from faultdriver.actions import rpc as rpc_actions
from faultdriver import engine as engine_module
from faultdriver import hitcontext
from faultdriver.novacompat import patching
from faultdriver import points as points_module

LOG = logging.getLogger(__name__)

#: The function both Nova's ``rpc.get_server`` and the functional tests'
#: replacement of it call to build a server.
GET_SERVER = 'oslo_messaging.get_rpc_server'
PROCESS = 'oslo_messaging.rpc.server.RPCServer._process_incoming'
DISPATCH = 'oslo_messaging.rpc.dispatcher.RPCDispatcher._do_dispatch'
#: Nova's wrapper of the manager as the server's first endpoint.
ENDPOINT = 'nova.service._TrackingEndpointWrapper'
PREFIX = 'rpc.'

_local = threading.local()


class _Message:
    """An incoming message as ``_process_incoming`` sees it, whose reply
    can be lost: everything else is the transport's message."""

    def __init__(self, message: typing.Any, point: str, host: str) -> None:
        self._message = message
        self.point = point
        self.host = host
        #: Set by a drop or a lost reply: nothing is sent back.
        self.lost = False
        #: Set by ``twice``: what dispatches it again once it replied.
        self.again: typing.Optional[typing.Callable[[], typing.Any]] = None

    def __getattr__(self, name: str) -> typing.Any:
        return getattr(self._message, name)

    def reply(self, reply: typing.Any = None,
              failure: typing.Any = None) -> None:
        if self.lost:
            LOG.warning('faultdriver: reply of %s on %s not sent (%s)',
                        self.point, self.host,
                        'error' if failure else 'result')
            return
        self._message.reply(reply=reply, failure=failure)


def _migration_of(kwargs: typing.Mapping[str, typing.Any]) -> typing.Any:
    migration = kwargs.get('migration')
    for key in ('migrate_data', 'dest_check_data'):
        if migration is None and kwargs.get(key) is not None:
            migration = hitcontext._loaded(  # type: ignore[no-untyped-call]
                kwargs[key], 'migration')
    return migration


def context(point: points_module.Point, host: str,
            kwargs: typing.Mapping[str, typing.Any]
            ) -> typing.Dict[str, typing.Any]:
    """The hit context of a message's deserialized arguments."""
    described: typing.Dict[str, typing.Any] = hitcontext.describe(  # type: ignore[no-untyped-call]  # noqa: E501
        point, host, kwargs.get('instance'), _migration_of(kwargs))
    return described


class RpcMessages:
    """The RPC-point hooks of one FaultDriver's compute service."""

    def __init__(self, manager: typing.Any,
                 engine: engine_module.Engine) -> None:
        self.manager = manager
        self.engine = engine
        #: The servers hooked (``compute``, ``compute-alt``).
        self.servers: typing.List[typing.Any] = []
        self._undo: typing.List[typing.Callable[[], None]] = []
        _FACTORY.add(self)

    def owns(self, endpoints: typing.Sequence[typing.Any]) -> bool:
        """Whether a server with ``endpoints`` is this compute's."""
        return bool(endpoints) and \
            getattr(endpoints[0], '_endpoint', None) is self.manager

    def hook(self, server: typing.Any) -> None:
        """Put the hooks on ``server`` (not started yet)."""
        dispatcher = server.dispatcher
        self._undo.append(patching.replace_on(
            server, '_process_incoming',
            functools.partial(self._process, type(server)._process_incoming,
                              server), PROCESS))
        self._undo.append(patching.replace_on(
            dispatcher, '_do_dispatch',
            functools.partial(self._dispatch, type(dispatcher)._do_dispatch,
                              dispatcher), DISPATCH))
        self.servers.append(server)

    def close(self) -> None:
        _FACTORY.remove(self)
        while self._undo:
            self._undo.pop()()

    # -- the hooks ----------------------------------------------------------

    def _process(self, real: typing.Callable[..., typing.Any],
                 server: typing.Any, incoming: typing.Any) -> typing.Any:
        message = incoming[0]
        point = PREFIX + str(message.message.get('method'))
        if point not in self.engine.armed:
            return real(server, incoming)
        wrapped = _Message(message, point, self.engine.host)
        _local.message = wrapped
        try:
            result = real(server, [wrapped] + list(incoming[1:]))
        finally:
            _local.message = None
        if wrapped.again is not None:
            self._again(wrapped)
        return result

    def _again(self, message: _Message) -> None:
        LOG.warning('faultdriver handling %s on %s again', message.point,
                    message.host)
        try:
            assert message.again is not None
            message.again()
        except Exception:
            LOG.exception('faultdriver: the second handling of %s on %s '
                          'failed (its answer goes nowhere)', message.point,
                          message.host)

    def _dispatch(self, real: typing.Callable[..., typing.Any],
                  dispatcher: typing.Any, endpoint: typing.Any, method: str,
                  ctxt: typing.Any, args: typing.Any) -> typing.Any:
        message: typing.Optional[_Message] = getattr(_local, 'message', None)
        if message is None or message.point != PREFIX + method:
            return real(dispatcher, endpoint, method, ctxt, args)
        _local.message = None       # a nested dispatch is not this one
        point = points_module.catalogue()[message.point]

        def handle(nova_ctxt: typing.Any, **kwargs: typing.Any
                   ) -> typing.Any:
            # What real's getattr(endpoint, method) finds: Nova's
            # tracking wrapper of the manager's method runs only if the
            # message is handled.
            hit = context(point, self.engine.host, kwargs)
            fate = self._hit(message, 'before', hit)
            if fate == rpc_actions.DROP:
                message.lost = True
                return None
            if fate == rpc_actions.TWICE:
                message.again = functools.partial(
                    real, dispatcher, endpoint, method, ctxt, args)
            elif fate == rpc_actions.LOST_REPLY:
                message.lost = True
            result = getattr(endpoint, method)(nova_ctxt, **kwargs)
            if self._hit(message, 'after', hit) == rpc_actions.LOST_REPLY:
                message.lost = True
            return result
        return real(dispatcher, types.SimpleNamespace(**{method: handle}),
                    method, ctxt, args)

    def _hit(self, message: _Message, phase: str,
             hit: typing.Dict[str, typing.Any]) -> typing.Optional[str]:
        """Fire ``message``'s point; the fate an rpc action chose."""
        if message.point not in self.engine.armed:
            return None
        try:
            self.engine.hit(  # type: ignore[no-untyped-call]
                message.point, phase, hit)
        except rpc_actions.Fate as fate:
            LOG.warning('faultdriver: %s of %s.%s on %s', fate.fate,
                        message.point, phase, message.host)
            return fate.fate
        return None


class _Factory:
    """The wrapper of ``oslo_messaging.get_rpc_server``, on while a
    FaultDriver's compute has RPC servers to be built (counted)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.owners: typing.List[RpcMessages] = []
        self.undo: typing.Optional[typing.Callable[[], None]] = None

    def make(self, layer: patching.Layer) -> typing.Callable[..., typing.Any]:
        factory = self

        @functools.wraps(layer.below)
        def get_rpc_server(transport: typing.Any, target: typing.Any,
                           endpoints: typing.Any, *args: typing.Any,
                           **kwargs: typing.Any) -> typing.Any:
            server = layer.below(transport, target, endpoints, *args,
                                 **kwargs)
            with factory.lock:
                owner = next((o for o in factory.owners
                              if o.owns(endpoints)), None)
            if owner is not None:
                owner.hook(server)
            return server
        return get_rpc_server

    def add(self, owner: RpcMessages) -> None:
        with self.lock:
            if self.undo is None:
                self.undo = patching.wrap(  # type: ignore[no-untyped-call]
                    GET_SERVER, self.make)
            self.owners.append(owner)

    def remove(self, owner: RpcMessages) -> None:
        with self.lock:
            if owner not in self.owners:
                return
            self.owners.remove(owner)
            if not self.owners and self.undo is not None:
                self.undo()
                self.undo = None


_FACTORY = _Factory()
