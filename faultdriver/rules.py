"""The rule grammar: parse, validate and format fault rules.

A rule says where a fault fires and what it does::

    rule    := target ":" chain
    target  := point ["." phase] ["@" role] ["[" filter ("," filter)* "]"]
    phase   := "before" | "after" | "unlocked"          (default: before)
    role    := "source" | "dest"                         (aliases: src, dst)
    filter  := key "=" value     key: instance, migration, operation, host,
                                      seed
    chain   := term ("->" term)*
    term    := [percent "%"] [count "*"] action ["(" arg ("," arg)* ")"]
    arg     := value | key "=" value

The chain follows the failpoint style of FreeBSD fail(9) and fail-rs: every
matching hit is handled by the first term that still has hits left; ``3*``
lets a term fire three times, ``25%`` makes it fire on a quarter of the hits.
A hit that loses a term's roll falls through to the next term, as in fail(9)
and fail-rs (``25%delay(3) -> log(slow)``: a quarter of the hits are
delayed, the others logged); one that no term takes passes through.  A
lost roll does not count towards the term's ``N*``.  The rolls
of a rule come from ``random.Random(seed)``: its own ``[seed=N]`` filter,
else the engine's seed plus the rule's index, so a seeded run repeats
exactly.  Unlike fail-rs, unknown points, actions, filters and
out-of-range numbers are errors.

This module imports no Nova code: the catalogue of points and the registry
of actions are handed to :func:`validate`, so the grammar can be unit
tested in isolation.
"""

import dataclasses
import decimal
import difflib
import re
import typing

PHASES = ('before', 'after', 'unlocked')
#: The phase of tracker points that take the tracker lock: before the
#: lock is taken, where the periodic can still run between the manager's
#: last step and the tracker's (Nova's reproducer of bug 1879878 runs it
#: there); ``before``/``after`` fire inside the lock.
UNLOCKED = 'unlocked'
ROLES = {'source': 'source', 'src': 'source', 'dest': 'dest', 'dst': 'dest'}
OPERATIONS = ('live-migration', 'migration', 'resize', 'evacuation')
FILTER_KEYS = ('instance', 'migration', 'operation', 'host', 'seed')

#: Longest rule text; a rule is one line of nova.conf or one request.
MAX_RULE = 4096
#: Largest ``N*`` count (about a billion hits: more is a typo).
MAX_COUNT = 10 ** 9
#: Largest ``seed`` filter (a 64-bit seed).
MAX_SEED = 2 ** 64 - 1

_NAME = re.compile(r'[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*')
_BARE = re.compile(r'[A-Za-z0-9_.:/+-]+')
# ASCII digits only: int() also reads other scripts' digits ('\u0663').
_NUMBER = re.compile(r'[0-9]+(?:\.[0-9]+)?')
_KEYWORD = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)\s*=')
#: A UUID as Nova writes it (lowercase, hyphenated): instance and
#: migration filters compare it as text.
_UUID = re.compile(r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-'
                   r'[0-9a-f]{12}')


class RuleError(ValueError):
    """A rule is malformed; the message names the rule, where and what."""

    def __init__(self, text, position, problem):
        self.text = text
        self.position = position
        self.problem = problem
        where = '' if position is None else ' at column %d' % (position + 1)
        super().__init__('rule %r%s: %s' % (text, where, problem))


@dataclasses.dataclass(frozen=True)
class Term:
    """One step of a chain: which action, how often, how likely."""

    action: str
    args: tuple = ()
    kwargs: tuple = ()          # ((key, value), ...) in written order
    count: int | None = None
    percent: float | None = None

    def __str__(self):
        text = ''
        if self.percent is not None:
            text += '%s%%' % _format_number(self.percent)
        if self.count is not None:
            text += '%d*' % self.count
        text += self.action
        parts = [_format_value(a) for a in self.args]
        parts += ['%s=%s' % (k, _format_value(v)) for k, v in self.kwargs]
        if parts:
            text += '(%s)' % ', '.join(parts)
        return text


@dataclasses.dataclass(frozen=True)
class Rule:
    """A parsed rule: a value type, hashable and printable."""

    point: str
    terms: tuple
    phase: str = 'before'
    role: str | None = None
    filters: tuple = ()         # ((key, value), ...) sorted by key

    def filter(self, key, default=None):
        return dict(self.filters).get(key, default)

    def __str__(self):
        text = self.point
        # A point whose last part reads as a phase keeps its phase explicit.
        if (self.phase != 'before'
                or self.point.rpartition('.')[2] in PHASES):
            text += '.' + self.phase
        if self.role:
            text += '@' + self.role
        if self.filters:
            text += '[%s]' % ', '.join(
                '%s=%s' % (k, _format_value(v)) for k, v in self.filters)
        return '%s: %s' % (text, ' -> '.join(str(t) for t in self.terms))


def _format_number(value):
    if float(value).is_integer():
        return '%d' % value
    # repr() may use an exponent (1e-05) that the grammar does not read.
    return format(decimal.Decimal(repr(float(value))), 'f')


def _format_value(value):
    if _BARE.fullmatch(value):
        return value
    return '"%s"' % value.replace('\\', '\\\\').replace('"', '\\"')


def split_phase(dotted: str) -> typing.Tuple[str, typing.Optional[str]]:
    """``(point, phase)`` of ``POINT.PHASE``, ``(point, None)`` of a
    point named without its phase: the one reading of a dotted name, for
    a rule's target and the sweep's ``--points`` alike."""
    point, _, last = dotted.rpartition('.')
    if last in PHASES and point:
        return point, last
    return dotted, None


class _Parser:
    """A small recursive-descent parser that knows where it is."""

    def __init__(self, text):
        self.text = text
        self.pos = 0

    def fail(self, problem, position=None):
        raise RuleError(self.text, self.pos if position is None else position,
                        problem)

    def skip_space(self):
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self, literal):
        self.skip_space()
        return self.text.startswith(literal, self.pos)

    def accept(self, literal):
        if self.peek(literal):
            self.pos += len(literal)
            return True
        return False

    def expect(self, literal, what):
        if not self.accept(literal):
            found = self.text[self.pos:self.pos + 10] or 'end of rule'
            self.fail('expected %s, found %r' % (what, found))

    def match(self, pattern, what):
        self.skip_space()
        found = pattern.match(self.text, self.pos)
        if not found:
            rest = self.text[self.pos:self.pos + 10] or 'end of rule'
            self.fail('expected %s, found %r' % (what, rest))
        self.pos = found.end()
        return found.group(0)

    def value(self):
        self.skip_space()
        if self.peek('"'):
            start = self.pos
            self.pos += 1
            chars = []
            while self.pos < len(self.text):
                char = self.text[self.pos]
                if char == '\\' and self.pos + 1 < len(self.text):
                    chars.append(self.text[self.pos + 1])
                    self.pos += 2
                    continue
                if char == '"':
                    self.pos += 1
                    return ''.join(chars)
                chars.append(char)
                self.pos += 1
            self.fail('unterminated string', start)
        return self.match(_BARE, 'a value')

    def rule(self):
        point, phase, role, filters = self.target()
        self.expect(':', "':' between the point and its actions")
        terms = [self.term()]
        while self.accept('->'):
            terms.append(self.term())
        self.skip_space()
        if self.pos != len(self.text):
            self.fail("unexpected %r; terms are joined with '->'"
                      % self.text[self.pos:self.pos + 10])
        return Rule(point=point, terms=tuple(terms), phase=phase, role=role,
                    filters=filters)

    def target(self):
        point, phase = split_phase(self.match(_NAME, 'a point name'))
        phase = phase or 'before'
        role = None
        if self.accept('@'):
            self.skip_space()
            role_pos = self.pos
            word = self.match(_NAME, "a host role ('source' or 'dest')")
            if word not in ROLES:
                self.fail("unknown host role %r; expected 'source' or 'dest'"
                          % word, role_pos)
            role = ROLES[word]
        filters = {}
        if self.accept('['):
            while True:
                self.skip_space()
                key_pos = self.pos
                key = self.match(_NAME, 'a filter name')
                if key not in FILTER_KEYS:
                    self.fail('unknown filter %r; expected one of %s'
                              % (key, ', '.join(FILTER_KEYS)), key_pos)
                if key in filters:
                    self.fail('filter %r given twice' % key, key_pos)
                self.expect('=', "'=' after filter %r" % key)
                filters[key] = self.value()
                if not self.accept(','):
                    break
            self.expect(']', "']' to close the filters")
        return point, phase, role, tuple(sorted(filters.items()))

    def term(self):
        percent = count = None
        self.skip_space()
        start = self.pos
        number = _NUMBER.match(self.text, self.pos)
        if number and self.text.startswith('%', number.end()):
            percent = float(number.group(0))
            if not 0 < percent <= 100:
                self.fail('probability %s%% out of range; expected more '
                          'than 0 and at most 100' % number.group(0), start)
            self.pos = number.end() + 1
            self.skip_space()
            start = self.pos
            number = _NUMBER.match(self.text, self.pos)
        if number and self.text.startswith('*', number.end()):
            digits = number.group(0)
            if (not digits.isdigit() or len(digits) > 10
                    or not 1 <= int(digits) <= MAX_COUNT):
                self.fail('count %s out of range; expected a whole number '
                          'from 1 to %d' % (_clip(digits), MAX_COUNT),
                          start)
            count = int(number.group(0))
            self.pos = number.end() + 1
        action = self.match(_NAME, 'an action name')
        args, kwargs = [], []
        if self.accept('('):
            if not self.accept(')'):
                while True:
                    self.skip_space()
                    found = _KEYWORD.match(self.text, self.pos)
                    if found:
                        self.pos = found.end()
                        kwargs.append((found.group(1), self.value()))
                    elif kwargs:
                        self.fail('positional argument after a keyword '
                                  'argument')
                    else:
                        args.append(self.value())
                    if not self.accept(','):
                        break
                self.expect(')', "')' to close the arguments of %r" % action)
        return Term(action=action, args=tuple(args), kwargs=tuple(kwargs),
                    count=count, percent=percent)


def _clip(text, size=20):
    """``text`` cut to about ``size`` characters for a message."""
    return text if len(text) <= size else text[:size] + '...'


def parse(text: object) -> 'Rule':
    """Parse one rule's syntax; raise :class:`RuleError` if malformed."""
    if not isinstance(text, str) or not text.strip():
        raise RuleError(_clip(str(text), 80), None, 'empty rule')
    if len(text) > MAX_RULE:
        raise RuleError(_clip(text, 80), None, 'rule has %d characters; '
                        'at most %d' % (len(text), MAX_RULE))
    return _Parser(text.strip()).rule()


def _canonical_uuid(value):
    import uuid
    try:
        return 'write %s' % uuid.UUID(value)
    except ValueError:
        return 'e.g. 8f0c2c7e-1b7a-4f3e-9d0e-2a1b3c4d5e6f'


def suggest(word: str, choices: typing.Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1)
    return '; did you mean %r?' % close[0] if close else ''


def validate(rule, catalogue, actions):
    """Check a parsed rule against the points and actions that exist.

    ``catalogue`` maps a point name to an object with ``roles`` (tuple of
    host roles it runs on, empty when any), ``operations`` (the move
    operations that use it, empty when none) and ``raises`` (exception
    names the step can raise).  ``actions`` maps an action name to a class
    with ``check(term, point)`` that raises ``ValueError`` on bad
    arguments.  Returns the rule unchanged so it can be used inline.
    """
    text = str(rule)
    point = catalogue.get(rule.point)
    if point is None:
        raise RuleError(text, 0, 'unknown point %r%s (faultdriver points '
                        'lists them)' % (rule.point,
                                         suggest(rule.point, catalogue)))
    if rule.phase == UNLOCKED and not getattr(point, 'tracker_lock', False):
        raise RuleError(text, None, 'phase %r: only tracker points that take '
                        'the tracker lock have it (before the lock); %r '
                        'takes no lock, use before' % (UNLOCKED, rule.point))
    if rule.role and point.roles and rule.role not in point.roles:
        raise RuleError(text, None, 'point %r runs only on the %s host, '
                        'never on the %s' % (rule.point,
                                             ' or '.join(point.roles),
                                             rule.role))
    operation = rule.filter('operation')
    if operation is not None:
        if operation not in OPERATIONS:
            raise RuleError(text, None, 'unknown operation %r; expected one '
                            'of %s' % (operation, ', '.join(OPERATIONS)))
        if point.operations and operation not in point.operations:
            raise RuleError(text, None, 'point %r is not used by %s; it is '
                            'used by %s' % (rule.point, operation,
                                            ', '.join(point.operations)))
    seed = rule.filter('seed')
    if seed is not None and not (re.fullmatch('[0-9]{1,20}', seed)
                                 and int(seed) <= MAX_SEED):
        raise RuleError(text, None, 'seed %r is not a whole number from 0 '
                        'to %d' % (_clip(seed), MAX_SEED))
    for key in ('instance', 'migration'):
        value = rule.filter(key)
        if value is not None and not _UUID.fullmatch(value):
            raise RuleError(text, None, '%s %r is not a UUID as Nova writes '
                            'it (lowercase, hyphenated: %s); the filter '
                            'compares text, so it would never match'
                            % (key, _clip(value, 40), _canonical_uuid(value)))
    for term in rule.terms:
        action = actions.get(term.action)
        if action is None:
            raise RuleError(text, None, 'unknown action %r%s; expected one '
                            'of %s' % (term.action,
                                       suggest(term.action, actions),
                                       ', '.join(sorted(actions))))
        try:
            action.check(term, point)
        except ValueError as exc:
            raise RuleError(text, None, 'action %r: %s' % (term.action, exc))
        phases = getattr(action, 'phases', None)
        if phases is not None and rule.phase not in phases:
            raise RuleError(text, None, 'action %r acts at phase %s only, '
                            'not %s' % (term.action, ' or '.join(phases),
                                        rule.phase))
    for term in rule.terms[:-1]:
        # A P% term below 100 lets the hits that lose its roll through.
        if term.count is None and (term.percent or 100) >= 100:
            raise RuleError(text, None, 'term %r never ends, so the terms '
                            'after it can never fire; give it a count '
                            '(N*) or a probability below 100%%'
                            % str(term))
    return rule
