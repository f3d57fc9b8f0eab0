"""The raise action: a real Nova exception the step can really raise."""

import functools
import inspect
import typing

from faultdriver.actions import base
from faultdriver import exception

if typing.TYPE_CHECKING:
    from faultdriver import engine
    from faultdriver import points
    from faultdriver import rules


@functools.lru_cache(maxsize=None)
def injected_class(name: str) -> typing.Type[typing.Any]:
    """The injected twin of ``nova.exception.<name>``."""
    from nova import exception as nova_exception
    real = getattr(nova_exception, name)
    return type(real.__name__, (real, exception.InjectedFault),
                {'__module__': real.__module__,
                 '__qualname__': real.__qualname__})


#: How an injected exception's message starts (in its traceback too).
INJECTED_PREFIX = '[faultdriver] injected at'


class Raise(base.Action):
    """raise(ExceptionName, message=<generated>): raise a Nova exception.

    ``ExceptionName`` is a class of ``nova.exception`` that the step can
    really raise (``faultdriver points --raises`` lists them per point), so
    Nova runs the recovery it runs in the field.  The exception keeps its
    class name over RPC; in the process that raised it, ``isinstance(exc,
    faultdriver.exception.InjectedFault)`` is true and its message starts
    with ``[faultdriver]``.  An exception that wraps another
    (``InstanceFaultRollback``) wraps an injected ``InternalError`` with
    that message, which is what Nova re-raises after rolling back.
    """

    name = 'raise'
    params = (('exception', str), ('message', str))
    required = 1

    @classmethod
    def check(cls, term: 'rules.Term', point: 'points.Point') -> None:
        args = cls.bind(term)
        name = args['exception']
        if name not in point.raises:
            raise ValueError('%s cannot be raised at %s; expected one of %s'
                             % (name, point.name, ', '.join(point.raises)))

    def __call__(self, hit: 'engine.Hit') -> typing.NoReturn:
        message = '%s %s on %s (rule %d, hit %d)' % (
            INJECTED_PREFIX, hit.describe(), hit.host, hit.rule_index,
            hit.hit)
        if 'message' in self.args:
            message += ': ' + self.args['message']
        cls = injected_class(self.args['exception'])
        if 'inner_exception' in inspect.signature(cls.__init__).parameters:
            raise cls(inner_exception=injected_class('InternalError')(
                message=message))
        raise cls(message=message)
