"""Actions a service answers with: an HTTP error status, a lost
connection, a slow answer.

They act only at service-call points (``network.*``, ``volume.*``,
``placement.*``), where :mod:`faultdriver.servicecall` fires rules at the
HTTP request beneath a Nova client method: an ``http`` action makes the
request answer with a status instead of the service's answer (in phase
``before`` the service never saw the request; in phase ``after`` it did
the work and its answer is replaced, a proxy's 504 after a slow
backend), ``connfail`` makes it fail the way requests does when the
connection is refused or drops, and ``slow`` makes the service take its
time, past the client's own timeout where the deployment set one.  What
Nova then does (its client's exception translation, its retries, a
branch that tolerates the failure) is Nova's own.  No Nova import
here.
"""

import time
import typing

from faultdriver.actions import base
from faultdriver import exception

if typing.TYPE_CHECKING:
    from faultdriver import engine


class ServiceAnswer(exception.InjectedFault, Exception):
    """Raised by :class:`Http` inside a hit: the service-call hook turns
    it into the HTTP response the request returns (it never reaches
    Nova)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _status(value: str) -> int:
    if not value.isdigit() or not 500 <= int(value) <= 599:
        raise ValueError('expected an HTTP server error status from 500 to '
                         '599 (e.g. 500, 503, 504)')
    return int(value)


class _AtServicePoint(base.Action):
    """Common ground of the service's answers: they act at service-call
    points only, where :mod:`faultdriver.servicecall` turns them into
    the HTTP request's outcome."""

    kinds = ('service',)
    kinds_text = ('service-call points (network.*, volume.*, '
                  'placement.*)')


def _text(hit: 'engine.Hit') -> str:
    return '[faultdriver] injected at %s on %s (rule %d, hit %d)' % (
        hit.describe(), hit.host, hit.rule_index, hit.hit)


class Http(_AtServicePoint):
    """http(status): the service answers with a 5xx status.

    At a service-call point only.  ``point: http(500)`` answers the
    request before the service sees it; ``point.after: http(504)``
    answers after the service did the work (its own answer is dropped).
    The body is the error document that service sends, so Nova's client
    translates it as it would the real one.  ``1*http(500)`` fails once
    (Nova's retry, where it has one, then succeeds); without a count it
    fails until the rule is removed (``faultdriver ctl remove``).
    """

    name = 'http'
    params = (('status', _status),)
    required = 1

    def __call__(self, hit: 'engine.Hit') -> typing.NoReturn:
        raise ServiceAnswer(self.args['status'], _text(hit))


class ConnFail(_AtServicePoint):
    """connfail: the connection to the service fails.

    At a service-call point only.  Raises requests' ``ConnectionError``
    beneath keystoneauth, which turns it into ``ConnectFailure`` and
    retries as often as the client's ``connect_retries`` say (Nova's
    ``[neutron]``/``[cinder]`` ``http_retries``); then Nova translates or
    tolerates it (placement's ``@safe_connect`` returns None).  In phase
    ``after`` the service did the work and the answer is lost.
    """

    name = 'connfail'

    def __call__(self, hit: 'engine.Hit') -> typing.NoReturn:
        import requests
        raise requests.exceptions.ConnectionError(_text(hit))


class Request(typing.NamedTuple):
    """The request a service-call hit is at (an action's ``hit.target``
    there): what ``slow`` needs to answer as the client would see it."""
    method: str
    url: str
    #: The seconds requests waits for the answer (the read timeout): the
    #: session's ``timeout`` (Nova's ``[neutron]``/``[cinder]``/
    #: ``[placement] timeout``), None where it is unset (the default).
    timeout: typing.Optional[float]


class Slow(_AtServicePoint):
    """slow(seconds): the service takes ``seconds`` to answer.

    At a service-call point only.  Where the request has a timeout
    shorter than ``seconds`` (the deployment set ``[placement] timeout``
    or the like), the client gives up after it, as requests does: in
    phase ``before`` the service never took the request (``Connect
    Timeout``), in phase ``after`` it did the work and its answer came
    too late (``ReadTimeout``); keystoneauth turns either into its
    ``ConnectTimeout`` and retries as the client's ``connect_retries``
    say.  Where there is no timeout (Nova's default) or a longer one, the
    request waits ``seconds`` and goes on: a slow answer, which Nova
    waits out.
    """

    name = 'slow'
    params = (('seconds', base.seconds),)
    required = 1

    def __call__(self, hit: 'engine.Hit') -> None:
        import requests
        seconds = self.args['seconds']
        request = hit.target if isinstance(hit.target, Request) else None
        timeout = request.timeout if request else None
        if timeout is None or timeout >= seconds:
            time.sleep(seconds)
            return
        time.sleep(timeout)
        if hit.phase == 'after':
            raise requests.exceptions.ReadTimeout(_text(hit))
        raise requests.exceptions.ConnectTimeout(_text(hit))
