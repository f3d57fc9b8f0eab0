"""The base class every action plugin derives from."""

import re
import typing

if typing.TYPE_CHECKING:
    from faultdriver import points
    from faultdriver import rules
    from faultdriver.scenario import tiers


class Action:
    """An action; subclasses document themselves in their docstring."""

    #: The name rules use; equal to the entry-point name.
    name: typing.Optional[str] = None
    #: Positional and keyword parameters, in order: (name, converter).
    params: typing.Tuple[
        typing.Tuple[str, typing.Callable[[str], typing.Any]], ...] = ()
    #: How many leading parameters are required.
    required = 0
    #: The phases a rule may fire it at; None: any the point has.
    phases: typing.Optional[typing.Tuple[str, ...]] = None
    #: The point kinds (``Point.kind``) it acts at, its :meth:`check`
    #: refusing the others; None: any.  The sweep places its cases by
    #: it: an action that acts anywhere goes at the host's own steps.
    kinds: typing.Optional[typing.Tuple[str, ...]] = None
    #: How a refusal names the points of :attr:`kinds`.
    kinds_text = ''

    def __init__(self, term):
        self.term = term
        self.args = self.bind(term)

    @classmethod
    def bind(cls, term: 'rules.Term') -> typing.Dict[str, typing.Any]:
        """Bind a term's arguments to :attr:`params`; ValueError if bad."""
        names = [p for p, _ in cls.params]
        if len(term.args) > len(names):
            raise ValueError('takes at most %d arguments (%s), got %d'
                             % (len(names), ', '.join(names) or 'none',
                                len(term.args)))
        raw = dict(zip(names, term.args))
        for key, value in term.kwargs:
            if key not in names:
                raise ValueError('unknown argument %r; expected %s'
                                 % (key, ', '.join(names) or 'none'))
            if key in raw:
                raise ValueError('argument %r given twice' % key)
            raw[key] = value
        missing = [n for n in names[:cls.required] if n not in raw]
        if missing:
            raise ValueError('missing argument %s' % ', '.join(missing))
        bound = {}
        for key, convert in cls.params:
            if key in raw:
                try:
                    bound[key] = convert(raw[key])
                except ValueError as exc:
                    raise ValueError('argument %s=%r: %s'
                                     % (key, raw[key], exc)) from None
        return bound

    @classmethod
    def needs(cls, term: 'rules.Term', rule: 'rules.Rule'
              ) -> typing.FrozenSet['tiers.Provision']:
        """What ``term`` of ``rule`` needs of the place Nova runs in
        (:class:`faultdriver.scenario.tiers.Provision`): nothing, unless
        the action says; a scenario whose rules need what a tier lacks
        is refused there when it loads."""
        return frozenset()

    @classmethod
    def check(cls, term: 'rules.Term', point: 'points.Point') -> None:
        """Validate a term at configuration time; ValueError if bad: its
        arguments, or a point of a kind it does not act at."""
        cls.bind(term)
        if cls.kinds is not None and point.kind not in cls.kinds:
            raise ValueError('acts only at %s; %s is a %s point' % (
                cls.kinds_text or ' or '.join(cls.kinds) + ' points',
                point.name, point.kind))

    def prepare(self, hit):
        """Run under the engine lock before the hit is announced."""

    def cancel(self, hit):
        """Undo :meth:`prepare` for a hit whose action will not run."""

    def __call__(self, hit):
        raise NotImplementedError


def seconds(value):
    """A non-negative number of seconds, at most a day, in ASCII digits
    (``float()`` also reads 'nan', '1_0' and other scripts' digits)."""
    if not re.fullmatch(r'[0-9]{1,9}(?:\.[0-9]{1,9})?', value):
        raise ValueError('expected seconds between 0 and 86400, written '
                         'as digits (e.g. 30 or 0.5)')
    number = float(value)
    if not 0 <= number <= 86400:
        raise ValueError('expected seconds between 0 and 86400')
    return number
