"""Actions on an incoming RPC message: drop it, lose its reply, handle it
twice.

They act only at RPC points (``rpc.*``), where
:mod:`faultdriver.rpcmessage` fires rules inside oslo.messaging's
dispatch of a message to this compute's manager: the action raises
:class:`Fate`, which the hook catches and carries out (it never reaches
Nova).  A dropped message and a lost reply leave the caller without an
answer, so it times out as in a cloud; raising in the method is not a
drop (``raise`` sends an error reply at once).  No Nova import here.
"""

import typing

from faultdriver.actions import base
from faultdriver import exception
from faultdriver.scenario import tiers

if typing.TYPE_CHECKING:
    from faultdriver import engine
    from faultdriver import points
    from faultdriver import rules

DROP = 'drop'
LOST_REPLY = 'lostreply'
TWICE = 'twice'


class Fate(exception.InjectedFault, Exception):
    """Raised by an RPC action inside a hit: what the RPC hook does with
    the message (:data:`DROP`, :data:`LOST_REPLY`, :data:`TWICE`)."""

    def __init__(self, fate: str) -> None:
        super().__init__(fate)
        self.fate = fate


def _point_of(rule: 'rules.Rule') -> typing.Optional['points.Point']:
    from faultdriver import points
    found: typing.Optional['points.Point'] = points.catalogue().get(
        rule.point)
    return found


class _AtRpcPoint(base.Action):
    """Common ground of the RPC actions: they act at ``rpc.*`` points
    only, where :mod:`faultdriver.rpcmessage` carries out a Fate."""

    kinds = ('rpc',)
    kinds_text = 'RPC points (rpc.*)'


class _Unanswered(_AtRpcPoint):
    """Common ground of the actions that leave a caller unanswered."""

    @classmethod
    def needs(cls, term: 'rules.Term', rule: 'rules.Rule'
              ) -> typing.FrozenSet[tiers.Provision]:
        """A call made with ``call_monitor_timeout`` times out without its
        heartbeats: only a transport that sends them shows when."""
        point = _point_of(rule)
        if point is not None and point.monitored:
            return frozenset({tiers.Provision.CALL_HEARTBEATS})
        return frozenset()

    def __call__(self, hit: 'engine.Hit') -> typing.NoReturn:
        raise Fate(typing.cast(str, self.name))


class Drop(_Unanswered):
    """drop: the incoming message is never handled; no reply.

    At an RPC point only, phase ``before``.  The compute's RPC server
    took the message off its queue and the manager's method never runs;
    a caller of a call gets no answer and no call-monitor heartbeat, so
    it times out (``MessagingTimeout``) after its ``call_monitor_timeout``
    where it gave one, else after its ``timeout``.  A dropped cast is
    simply lost.  On a transport without heartbeats (the embedded Nova's
    fake one) a drop of a call made with ``call_monitor_timeout`` is
    refused: the caller would wait its whole ``long_rpc_timeout``.
    """

    name = DROP
    phases = ('before',)


class LostReply(_Unanswered):
    """lostreply: the message is handled; its reply never arrives.

    At an RPC point that a call reaches.  The manager's method runs to
    its end (heartbeats go to a caller that gave ``call_monitor_timeout``
    meanwhile); then its result or its error is not sent, so the caller
    times out after its ``call_monitor_timeout`` (the heartbeats
    stopped) or its ``timeout``.  Refused where the fake transport has
    no heartbeats, as ``drop``.
    """

    name = LOST_REPLY

    @classmethod
    def check(cls, term: 'rules.Term', point: 'points.Point') -> None:
        super().check(term, point)
        if point.rpc == 'cast':
            raise ValueError('%s is a cast: it has no reply to lose (use '
                             'drop)' % point.name)


class Twice(_AtRpcPoint):
    """twice: the message is handled twice, as a redelivered one.

    At an RPC point only, phase ``before``.  The first handling answers
    the caller; then the message is dispatched again from its serialized
    form (Nova's objects fresh from it, its task tracking as for any
    message) and what the second handling returns or raises goes
    nowhere (it is logged).
    """

    name = TWICE
    phases = ('before',)

    def __call__(self, hit: 'engine.Hit') -> typing.NoReturn:
        raise Fate(TWICE)
