"""How an assumption about Nova is checked: one small class per kind.

Each shape looks at the object a dotted Nova symbol resolves to (a
function, a class, a module attribute) and raises :class:`Broken` with
what it found when Nova is not as faultdriver expects.  Shapes read
Nova's code (signatures, source, syntax trees) and never call into it,
except :class:`BackReference`, which builds one small real object.
"""

import ast
import functools
import inspect
import os
import textwrap
import types
import typing
from unittest import mock


class Broken(Exception):
    """An assumption does not hold; the message says what was found."""


def _function(obj):
    """The plain function behind a method, classmethod or staticmethod."""
    if isinstance(obj, (classmethod, staticmethod)):
        obj = obj.__func__
    return getattr(obj, '__func__', obj)


def _test_double(obj):
    """A mock a test put in Nova's place: its signature is the test's
    business (the real symbol was checked before the test's setUp)."""
    return isinstance(obj, mock.NonCallableMock)


def source(obj):
    """Source text of ``obj``, dedented; Broken when there is none (a
    build without ``.py`` files, a generated function)."""
    try:
        return textwrap.dedent(inspect.getsource(_function(obj)))
    except (OSError, TypeError) as exc:
        raise Broken('its source code is not available (%s)' % exc)


def syntax(obj):
    """The syntax tree of ``obj``'s source."""
    try:
        return ast.parse(source(obj))
    except SyntaxError as exc:
        raise Broken('its source does not parse: %s' % exc)


class Shape:
    """Base: the symbol exists (resolving it is the whole check)."""

    what = 'exists'

    def check(self, obj):
        """Raise Broken unless ``obj`` has this shape."""


class Exists(Shape):
    """The symbol exists; optionally a value of ``kind`` (a type)."""

    def __init__(self, kind=None):
        self.kind = kind
        if kind is not None:
            self.what = 'exists, a %s' % self._names()

    def _names(self):
        kinds = self.kind if isinstance(self.kind, tuple) else (self.kind,)
        return ' or '.join(k.__name__ for k in kinds)

    def check(self, obj):
        if self.kind is not None and not isinstance(obj, self.kind):
            raise Broken('is a %s, not a %s' % (type(obj).__name__,
                                                self._names()))


class Params(Shape):
    """A callable whose parameters start with ``names`` (in order), so a
    replacement or a caller that binds them by name still fits."""

    def __init__(self, *names):
        self.names = names
        self.what = 'takes (%s, ...)' % ', '.join(names)

    def check(self, obj):
        if _test_double(obj):
            return
        if not callable(_function(obj)):
            raise Broken('is a %s, not a callable' % type(obj).__name__)
        try:
            found = list(inspect.signature(_function(obj)).parameters)
        except (TypeError, ValueError) as exc:
            raise Broken('has no readable signature (%s)' % exc)
        if found[:len(self.names)] != list(self.names):
            raise Broken('takes (%s), not (%s, ...)'
                         % (', '.join(found), ', '.join(self.names)))


class Fields(Shape):
    """A Nova versioned object class with these fields."""

    def __init__(self, *names):
        self.names = names
        self.what = 'has fields %s' % ', '.join(names)

    def check(self, obj):
        fields = getattr(obj, 'fields', None)
        if not isinstance(fields, dict):
            raise Broken('is not a Nova versioned object class')
        missing = [n for n in self.names if n not in fields]
        if missing:
            raise Broken('has no field %s' % ', '.join(missing))


class CallsInOrder(Shape):
    """A function whose source contains ``texts`` in this order."""

    def __init__(self, *texts):
        self.texts = texts
        self.what = 'calls %s in this order' % ', then '.join(texts)

    def check(self, obj):
        text = source(obj)
        positions = [text.find(t) for t in self.texts]
        missing = [t for t, p in zip(self.texts, positions) if p < 0]
        if missing:
            raise Broken('no longer calls %s' % ', '.join(missing))
        if positions != sorted(positions):
            raise Broken('calls %s in another order' % ', '.join(self.texts))


class DefinesMethod(Shape):
    """A class whose own source defines method ``name`` (found by its
    code's file and qualified name beneath any decorators, as the
    service-call hook finds the step on a thread's stack), with
    ``texts`` in its body."""

    def __init__(self, name, *texts):
        self.name = name
        self.texts = texts
        self.what = 'defines %s%s' % (name, ''.join(
            ', which calls %s' % t for t in texts))

    def check(self, obj):
        if not isinstance(obj, type):
            raise Broken('is a %s, not a class' % type(obj).__name__)
        tree = syntax(obj)
        found = [node for node in tree.body[0].body
                 if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and node.name == self.name]
        if not found:
            raise Broken('no longer defines %s in its own body' % self.name)
        body = ast.get_source_segment(source(obj), found[0]) or ''
        missing = [t for t in self.texts if t not in body]
        if missing:
            raise Broken('%s no longer calls %s'
                         % (self.name, ', '.join(missing)))


def returned(function):
    """The expression ``function`` (faultdriver's own) returns: its one
    ``return`` statement's, as a syntax tree."""
    found = [node.value for node in ast.walk(syntax(function))
             if isinstance(node, ast.Return)]
    if len(found) != 1:
        raise ValueError('%s must have exactly one return statement'
                         % function.__qualname__)
    return found[0]


class LoopCondition(Shape):
    """In a function, the ``if`` that guards ``call`` inside the loop over
    ``iterable`` tests exactly what ``condition`` (a function of
    faultdriver's, written with Nova's names) returns: compared as syntax
    trees, so layout and comments do not matter, and faultdriver runs the
    very condition it checked."""

    def __init__(self, iterable, call, condition):
        self.iterable = iterable
        self.call = call
        self.condition = condition
        self.what = ('loop over %s applies %s only if %s'
                     % (iterable, call, ast.unparse(returned(condition))))

    def _guard(self, tree):
        for loop in ast.walk(tree):
            if not (isinstance(loop, ast.For)
                    and ast.unparse(loop.iter) == self.iterable):
                continue
            for node in ast.walk(loop):
                if isinstance(node, ast.If) and any(
                        ast.unparse(inner) == self.call
                        for child in node.body
                        for inner in ast.walk(child)):
                    return node.test
            raise Broken('the loop over %s no longer guards %s with an if'
                         % (self.iterable, self.call))
        raise Broken('has no loop over %s' % self.iterable)

    def check(self, obj):
        found = self._guard(syntax(obj))
        expected = returned(self.condition)
        if ast.dump(found) != ast.dump(expected):
            raise Broken('its loop over %s now applies %s if %s'
                         % (self.iterable, self.call, ast.unparse(found)))


class PeriodicTaskList(Shape):
    """oslo.service's ``_periodic_tasks``: a list of ``(name, task)``
    pairs.  A task whose interval is negative or which is disabled is
    left out of it at class creation (oslo.service's
    ``_PeriodicTasksMeta._add_periodic_task``), so an entry's absence is
    a configuration (``update_resources_interval = -1``), not a broken
    assumption; whoever wraps an entry wraps it when it is there."""

    what = 'is a list of (name, task) pairs'

    def check(self, obj):
        try:
            [name for name, _task in obj]
        except (TypeError, ValueError):
            raise Broken('is a %s, not a list of (name, task) pairs'
                         % type(obj).__name__)


class LogText(Shape):
    """A function logs a message containing ``literal`` (a string
    constant of its source, placeholders included: ``'... %s'``)."""

    def __init__(self, literal):
        self.literal = literal
        self.what = 'logs %r' % literal

    def check(self, obj):
        constants = [node.value for node in ast.walk(syntax(obj))
                     if isinstance(node, ast.Constant)
                     and isinstance(node.value, str)]
        if not any(self.literal in c for c in constants):
            raise Broken('no longer logs %r' % self.literal)


class Decorated(Shape):
    """A function carries a decorator whose source is ``decorator``."""

    def __init__(self, decorator):
        self.decorator = decorator
        self.what = 'is decorated @%s' % decorator

    def check(self, obj):
        tree = syntax(obj)
        [definition] = tree.body[:1] or [None]
        found = [ast.unparse(d) for d in getattr(definition,
                                                 'decorator_list', ())]
        if self.decorator not in found:
            written = ', '.join('@' + d for d in found) or 'with nothing'
            raise Broken('is decorated %s, not @%s'
                         % (written, self.decorator))


class Assigns(Shape):
    """A function (an ``__init__``) or module assigns ``target``
    (``self.rt``), optionally exactly ``value`` (compared as syntax)."""

    def __init__(self, target, value=None):
        self.target = target
        self.value = value
        self.what = 'assigns %s%s' % (target, '' if value is None
                                      else ' = %s' % value)

    def check(self, obj):
        found = []
        for node in ast.walk(syntax(obj)):
            targets = getattr(node, 'targets', None) or (
                [node.target] if isinstance(node, ast.AnnAssign) else [])
            if any(ast.unparse(t) == self.target for t in targets):
                found.append(ast.unparse(node.value))
        if not found:
            raise Broken('no longer assigns %s' % self.target)
        if self.value is not None and self.value not in found:
            raise Broken('assigns %s = %s, not %s'
                         % (self.target, ' / '.join(found), self.value))


class BackReference(Shape):
    """A class built with one argument keeps it as ``attribute``: a real
    instance is built with a stand-in and the attribute is read back."""

    def __init__(self, attribute, **stand_in):
        self.attribute = attribute
        self.stand_in = stand_in
        self.what = 'keeps its argument as .%s' % attribute

    def check(self, obj):
        marker = types.SimpleNamespace(**self.stand_in)
        try:
            built = obj(marker)
        except Exception as exc:
            raise Broken('cannot be built with one argument: %s: %s'
                         % (type(exc).__name__, exc))
        if getattr(built, self.attribute, None) is not marker:
            raise Broken('does not keep its argument as .%s' % self.attribute)


class Inherited(Shape):
    """A method a class takes from a base without overriding it: the
    function is ``qualname`` (``Manager.post_start_hook``) of
    ``module``."""

    def __init__(self, module, qualname):
        self.module, self.qualname = module, qualname
        self.what = 'is %s.%s, not overridden' % (module, qualname)

    def check(self, obj):
        function = _function(obj)
        found = (getattr(function, '__module__', None),
                 getattr(function, '__qualname__', None))
        if found != (self.module, self.qualname):
            raise Broken('is overridden by %s.%s' % found)


class Options(Shape):
    """A list of oslo.config options that defines ``names``."""

    def __init__(self, *names):
        self.names = names
        self.what = 'defines the options %s' % ', '.join(names)

    def check(self, obj):
        try:
            found = {opt.name for opt in obj}
        except (TypeError, AttributeError):
            raise Broken('is a %s, not a list of options'
                         % type(obj).__name__)
        missing = [name for name in self.names if name not in found]
        if missing:
            raise Broken('no longer defines %s' % ', '.join(missing))


class All(Shape):
    """Several shapes of one symbol."""

    def __init__(self, *shapes):
        self.shapes = shapes
        self.what = '; '.join(s.what for s in shapes)

    def check(self, obj):
        for shape in self.shapes:
            shape.check(obj)


class Named(Shape):
    """A callable with parameters of these names (anywhere)."""

    def __init__(self, *names):
        self.names = names
        self.what = 'takes %s' % ', '.join(names) if names else 'is callable'

    def check(self, obj):
        if _test_double(obj):
            return
        try:
            found = inspect.signature(_function(obj)).parameters
        except (TypeError, ValueError) as exc:
            raise Broken('has no readable signature (%s)' % exc)
        missing = [n for n in self.names if n not in found]
        if missing:
            raise Broken('takes (%s): no %s' % (', '.join(found),
                                                ', '.join(missing)))


class HasNames(Shape):
    """A module with these attributes."""

    def __init__(self, *names):
        self.names = names
        self.what = 'has %d names faultdriver uses' % len(names)

    def check(self, obj):
        missing = [n for n in self.names if not hasattr(obj, n)]
        if missing:
            raise Broken('has no %s' % ', '.join(missing))


#: Nova's readers of ``[compute] cpu_dedicated_set`` / ``cpu_shared_set``.
CPU_SET_READERS = ('get_cpu_dedicated_set', 'get_cpu_shared_set')
#: How LibvirtDriver reaches them: directly or through its CPU API.
_CPU_SET_CALLS = tuple('hardware.%s(' % r for r in CPU_SET_READERS) + (
    'hardware.get_cpu_dedicated_set_nozero(', 'self.cpu_api.')
#: Modules besides the LibvirtDriver's own that may call the readers:
#: hardware itself and libvirt's CPU API (reached through the driver).
_CPU_SET_MODULES = ('nova/virt/hardware.py', 'nova/virt/libvirt/driver.py',
                    'nova/virt/libvirt/cpu/api.py')


@functools.lru_cache(maxsize=None)
def _reads_cpu_sets(func):
    """Whether ``func``'s source calls a CPU set reader.  Cached per
    function object (its source cannot change within a process): every
    embedded Nova's start asks again, and reading the source of each of
    LibvirtDriver's methods cost ~0.2 s of CPU a time."""
    try:
        text = inspect.getsource(func)
    except (OSError, TypeError):
        return False
    return any(call in text for call in _CPU_SET_CALLS)


def cpu_set_readers(cls: type) -> typing.List[str]:
    """Names of ``cls``'s own methods that read the CPU sets (directly or
    through ``self.cpu_api``)."""
    return sorted(name for name, value in vars(cls).items()
                  if inspect.isfunction(_function(value))
                  and _reads_cpu_sets(_function(value)))


@functools.lru_cache(maxsize=None)
def _other_cpu_set_callers(root):
    """Modules of the Nova tree at ``root`` (.../site-packages/nova), but
    for hardware, the libvirt driver and its CPU API and the tests, that
    call a CPU set reader.  Cached per tree: the installed files do not
    change under a running process, and reading all of them cost ~0.2 s
    of CPU at every embedded Nova's start."""
    others = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != 'tests']
        for name in files:
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, os.path.dirname(root))
            if not name.endswith('.py') or relative in _CPU_SET_MODULES:
                continue
            with open(path, encoding='utf-8') as stream:
                text = stream.read()
            if any(r + '(' in text for r in CPU_SET_READERS):
                others.append(relative)
    return tuple(sorted(others))


class ReadsCpuSets(Shape):
    """The CPU sets are read only inside LibvirtDriver's methods (or the
    CPU API they call), so wrapping those methods tells each read which
    host's driver is asking."""

    what = 'is the only reader of the CPU sets'

    def check(self, obj):
        if not cpu_set_readers(obj):
            raise Broken('has no method that reads %s any more'
                         % ' or '.join(CPU_SET_READERS))
        module = inspect.getmodule(obj)
        root = os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(module.__file__))))   # .../site-packages/nova
        others = _other_cpu_set_callers(root)
        if others:
            raise Broken('is not the only reader: %s call %s too'
                         % (', '.join(sorted(others)),
                            ' or '.join(CPU_SET_READERS)))
