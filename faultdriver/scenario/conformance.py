"""Whether a tier keeps the scenario contract, checked before a run.

:mod:`faultdriver.scenario.backend` declares the contract and
:mod:`faultdriver.scenario.backend_base` its shared half; this module
holds a tier to both, so neither of them imports the other lazily (they
did: the check lived in ``backend`` and needed ``backend_base``).

A member is compared by name, by parameters (a parameter of the
contract's the tier's member does not take, or a default the contract
gives and the tier's member lacks) and by annotations: where the tier's
member annotates a parameter or its return, it must be the contract's
annotation, so a tier that says it returns something else is named here,
not found out by a step mid-run.  A tier whose members carry no
annotations is compared by names and defaults only.
"""

import inspect
import typing

from faultdriver.scenario import backend
from faultdriver.scenario import backend_base

Protocol = type
Found = list[str]


def _members(protocol: Protocol) -> list[str]:
    return [name for name, value in vars(protocol).items()
            if not name.startswith('_') and callable(value)]


#: The primitives every tier implements itself.
MEMBERS = _members(backend.NovaBackend)
#: The attributes every tier's backend has.
ATTRIBUTES = list(backend.NovaBackend.__annotations__)
FAULT_MEMBERS = _members(backend.FaultControl)
API_MEMBERS = _members(backend.ComputeAPI)


def _hints(member: object) -> dict[str, object]:
    """The member's annotations, resolved; ``{}`` where they cannot be
    (a C function, a name its module does not define)."""
    func: object = getattr(member, '__func__', member)
    try:
        return dict(typing.get_type_hints(func))
    except (NameError, TypeError):
        return {}


def _signature_problems(protocol: Protocol, name: str, member: object,
                        where: str = '') -> Found:
    found = []
    contract = vars(protocol)[name]
    if not callable(member):
        return ['%s%s: missing method' % (where, name)]
    wanted = inspect.signature(contract).parameters
    have = inspect.signature(member).parameters
    takes_any = any(p.kind is p.VAR_KEYWORD for p in have.values())
    for param in wanted.values():
        if param.name == 'self' or param.kind is param.VAR_KEYWORD:
            continue
        if param.name not in have:
            if not takes_any:
                found.append('%s%s: takes no %r' % (where, name, param.name))
            continue
        if param.default is not param.empty and \
                have[param.name].default is param.empty:
            found.append('%s%s: %r has no default' % (where, name,
                                                      param.name))
    wanted_hints = _hints(contract)
    for key, annotation in _hints(member).items():
        if key in wanted_hints and annotation != wanted_hints[key]:
            found.append('%s%s: %s is %s, not %s' % (
                where, name, 'returns' if key == 'return' else repr(key),
                _name(annotation), _name(wanted_hints[key])))
    return found


def _name(annotation: object) -> str:
    return getattr(annotation, '__name__', None) or repr(annotation)


def _protocol_problems(protocol: Protocol, names: typing.Iterable[str],
                       obj: object, where: str = '') -> Found:
    found = []
    for name in names:
        found += _signature_problems(protocol, name,
                                     getattr(obj, name, None), where)
    return found


def fault_control_problems(faults: object, where: str = '') -> Found:
    """What ``faults`` (a class or an instance) lacks of FaultControl."""
    found = _protocol_problems(backend.FaultControl, FAULT_MEMBERS, faults,
                               where)
    if not isinstance(faults, type) and not isinstance(
            getattr(faults, 'rpc_timeout', None), (int, float)):
        found.append('%srpc_timeout: not a number' % where)
    return found


def api_problems(api: object, where: str = '') -> Found:
    """What ``api`` (a class or an instance) lacks of ComputeAPI."""
    return _protocol_problems(backend.ComputeAPI, API_MEMBERS, api, where)


def problems(nova: object) -> Found:
    """What ``nova`` (a class or an instance) lacks of the contract:
    missing members, parameters of the contract it does not take or
    annotates otherwise, shared members it overrides; for an instance
    also its ``faults`` and APIs."""
    found = []
    cls = nova if isinstance(nova, type) else type(nova)
    if not issubclass(cls, backend_base.BackendBase):
        found.append('not a backend_base.BackendBase')
    else:
        for name in backend_base.SHARED:
            if getattr(cls, name) is not getattr(backend_base.BackendBase,
                                                 name):
                found.append('%s: overrides the shared member' % name)
    found += _protocol_problems(backend.NovaBackend, MEMBERS, nova)
    if not isinstance(nova, type):
        for name in ATTRIBUTES:
            if not hasattr(nova, name):
                found.append('%s: missing attribute' % name)
        faults = getattr(nova, 'faults', None)
        if faults is not None:
            found += fault_control_problems(faults, 'faults.')
        for api in ('api', 'admin_api'):
            if getattr(nova, api, None) is not None:
                found += api_problems(getattr(nova, api), api + '.')
    return found


def check(nova: object) -> None:
    """Refuse a backend that does not keep the contract, naming why."""
    found = problems(nova)
    if found:
        raise TypeError('%s is not a scenario backend: %s' % (
            type(nova).__name__, '; '.join(found)))
