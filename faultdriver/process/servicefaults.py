"""Service-side faults: a stand-in service fails a request on a rule.

On the process tiers the conductor's calls to Neutron and Cinder (the
port bindings of a live migration, ...) run in nova-conductor, where no
FaultDriver runs: they can only fail at the service, as a real Neutron
or Cinder (or a proxy in front of it) fails them.  A stand-in's routes
go through a :class:`ServiceSide`, whose rules are written for the
pseudo-host named after the service (``neutron``, ``cinder``) with the
same rule parser and at the same service-call points as a compute's
(``volume.attachment_update: 1*http(500)``).  A point's ``request``
fact (``data/points.yaml``) says which request at the service is the
step's.  A hit fails that request as the service would: ``http(5xx)``
answers with the service's error document, before the work or, in
phase ``after``, once it is done (a proxy's 504 after a slow backend);
``connfail`` closes the connection without an answer (before the work,
or after it: the answer is lost).  The service fails the request
whoever sent it, a compute or the conductor: it knows no role,
instance or migration, so its rules take no role or filter.
"""

import typing

from faultdriver import actions as actions_module
from faultdriver.actions import service as service_actions
from faultdriver import engine as engine_module
from faultdriver import exception
from faultdriver import rules as rules_module
from faultdriver.scenario import tiers
from faultdriver import servicecall

#: The pseudo-hosts and the point family (service) each stands for.
SERVICES = tiers.STAND_INS

#: A stand-in's answer: ``(status, JSON body or None)``.
Answer = typing.Tuple[int, typing.Any]
Route = typing.Callable[[typing.Dict[str, typing.Any]], Answer]


class Dropped(Exception):
    """The connection is to close without an answer (``connfail``): the
    stand-ins' server (:mod:`faultdriver.process.standins`) closes it."""


def point_of(service: str, method: str, path: str) -> typing.Optional[str]:
    """The point whose request at ``service`` this is, or None."""
    for name, wanted, pattern in servicecall.standin_requests(service):
        if method == wanted and pattern.fullmatch(path.rstrip('/')):
            return name
    return None


def parse(host: str, text: str) -> rules_module.Rule:
    """A rule for pseudo-host ``host``, validated as nova.conf's are;
    ConfigError naming it where it cannot fire at that stand-in."""
    from faultdriver import conf
    try:
        rule = conf.RuleType()(text)
        servicecall.standin_rule(host, rule)
    except ValueError as exc:
        raise exception.ConfigError('rule %r for %s: %s' % (text, host, exc))
    return rule


class ServiceSide:
    """The rules of one stand-in service, and its route through them."""

    def __init__(self, host: str, route: Route,
                 journal: typing.Any = None) -> None:
        if host not in SERVICES:
            raise ValueError('no stand-in service %r: expected one of %s'
                             % (host, ', '.join(sorted(SERVICES))))
        self.host = host
        self.service = SERVICES[host]
        self.below = route
        self.engine = engine_module.Engine(  # type: ignore[no-untyped-call]
            host, actions_module.load_all(), enabled=True, journal=journal)

    def set_rules(self, texts: typing.Iterable[str]) -> None:
        """The rules (texts) to fail requests by, replacing any."""
        self.engine.set_rules([parse(self.host, t) for t in texts])

    def route(self, environ: typing.Dict[str, typing.Any]) -> Answer:
        """The stand-in's answer, or the rule's (Dropped: close)."""
        point = point_of(self.service, environ['REQUEST_METHOD'],
                         environ['PATH_INFO'])
        if point is None or point not in self.engine.armed:
            return self.below(environ)
        given = self._hit(point, 'before')
        if given is not None:
            return given
        answer = self.below(environ)
        given = self._hit(point, 'after')
        return answer if given is None else given

    def _hit(self, point: str, phase: str) -> typing.Optional[Answer]:
        import requests
        try:
            self.engine.hit(point, phase, {})  # type: ignore[no-untyped-call]
        except service_actions.ServiceAnswer as given:
            return given.status, servicecall.error_body(
                point, given.status, given.message)
        except requests.exceptions.ConnectionError:
            raise Dropped(point) from None
        return None
