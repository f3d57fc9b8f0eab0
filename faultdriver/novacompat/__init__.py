"""Every assumption faultdriver makes about Nova's internals, checked.

faultdriver reaches past Nova's public interfaces in a few dozen places:
resource-tracker methods and their lock, the compute manager's
back-references, oslo.messaging's fake transport, fakelibvirt, the log
lines scenario expectations count.  A Nova release that changes one of
them must stop faultdriver with a message, never let a fault or a fix
silently not happen.  So each one is declared once, in
:mod:`faultdriver.novacompat.declared` (the Nova symbol, the faultdriver
feature that needs it, how it is checked), and checked:

* by ``FaultDriver.__init__`` on every start (group ``driver``; and
  ``fake_numa`` when that is the inner driver),
* by the functional-test fixture (``harness``) and the embedded scenario
  Nova (``scenario``), and by the process tier (:data:`PROCESS_GROUPS`),
* by ``faultdriver doctor``, which prints them all.

A broken assumption raises :class:`~faultdriver.exception.ConfigError`
naming the Nova symbol, the feature and the Nova version seen.  Nova
symbols are patched only through :mod:`faultdriver.novacompat.patching`,
which refuses to create what is not there.
"""

import dataclasses
import functools
import importlib
from importlib import metadata
import logging
import typing

from faultdriver import exception
from faultdriver.novacompat import shapes
from faultdriver import novaundertest

LOG = logging.getLogger(__name__)

#: The Nova releases this faultdriver supports (requirements.txt agrees).
SUPPORTED = 'nova>=34.0.0,<35'
#: Nova versions the whole check and the test suites were run against.
CHECKED_AGAINST = ('34.0.0',)

#: What each tier checks when it starts.
DRIVER_GROUPS = ('driver',)
HARNESS_GROUPS = ('driver', 'harness')
SCENARIO_GROUPS = ('driver', 'harness', 'scenario')
PROCESS_GROUPS = ('driver', 'fake_numa', 'scenario')
GROUPS = ('driver', 'fake_numa', 'harness', 'scenario')

Broken = shapes.Broken


class Unavailable(Broken):
    """A module the check needs is not installed (the test harness
    without ``faultdriver[scenarios]``): nothing to check, nothing broken."""


@dataclasses.dataclass(frozen=True)
class Assumption:
    """One thing faultdriver relies on in Nova (or in a library Nova's
    tests use).

    ``symbol`` is dotted (``nova.compute.resource_tracker.
    ResourceTracker._update_available_resource``); ``feature`` says what
    in faultdriver stops working without it; ``group`` says when it is
    checked (see :data:`GROUPS`); ``counted`` lists the scenario log texts
    that rely on it.
    """

    symbol: str
    shape: shapes.Shape
    feature: str
    group: str = 'driver'
    counted: tuple = ()
    #: The one faultdriver feature (a point's name) this assumption is
    #: for, where faultdriver can run without it: on a changed Nova under
    #: test (a fix may change that very code) a broken one makes the
    #: feature unavailable, loudly, instead of refusing to start.  None:
    #: faultdriver cannot run without it.
    optional: str | None = None

    @property
    def what(self):
        return '%s %s' % (self.symbol, self.shape.what)

    def check(self, overrides=None):
        """Raise Broken unless Nova has this shape."""
        self.shape.check(resolve(self.symbol, overrides))


@dataclasses.dataclass(frozen=True)
class Result:
    """The outcome of one assumption's check."""

    assumption: Assumption
    problem: str | None
    skipped: bool = False

    @property
    def ok(self):
        return self.problem is None or self.skipped

    def message(self):
        return ('%s %s; needed by: %s (on %s; faultdriver supports %s, '
                'checked against %s)'
                % (self.assumption.symbol, self.problem,
                   self.assumption.feature, nova_version_text(), SUPPORTED,
                   ', '.join(CHECKED_AGAINST)))


def nova_version():
    """The installed Nova's version, or None."""
    try:
        return metadata.version('nova')
    except metadata.PackageNotFoundError:
        return None


def nova_version_text():
    return 'Nova %s' % (nova_version() or '(version unknown)')


def resolve(symbol: str, overrides: typing.Optional[
        typing.Mapping[str, typing.Any]] = None) -> typing.Any:
    """The object a dotted symbol names; Broken if it is missing.

    ``overrides`` maps a dotted prefix to an object that stands for it
    (tests give an altered copy of a Nova module or class this way).
    """
    overrides = overrides or {}
    parts = symbol.split('.')
    obj, rest = None, None
    for cut in range(len(parts), 0, -1):
        prefix = '.'.join(parts[:cut])
        if prefix in overrides:
            obj, rest = overrides[prefix], parts[cut:]
            break
    if rest is None:
        obj, rest = _import_longest(parts)
    walked = []
    for part in rest:
        walked.append(part)
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise Broken('is missing (no attribute %r)' % part) from None
    return obj


def _import_longest(parts):
    if parts[:2] == ['nova', 'objects']:
        _register_objects()
    for cut in range(len(parts), 0, -1):
        name = '.'.join(parts[:cut])
        try:
            return importlib.import_module(name), parts[cut:]
        except ModuleNotFoundError as exc:
            if exc.name and not name.startswith(exc.name):
                # The module exists but needs one that is not installed.
                raise Unavailable('cannot be imported here: %s' % exc)
            continue
        except ImportError as exc:
            raise Broken('cannot be imported: %s' % exc)
    raise Broken('is missing (module %s cannot be imported)' % parts[0])


@functools.lru_cache(maxsize=None)
def _register_objects():
    from nova import objects
    objects.register_all()      # what every Nova service does; idempotent


def assumptions(groups=GROUPS):
    """The declared assumptions of ``groups``, in declaration order."""
    from faultdriver.novacompat import declared
    return [a for a in declared.ASSUMPTIONS if a.group in groups]


def check(groups=GROUPS, overrides=None, declared=None):
    """Check assumptions (``declared`` or those of ``groups``); returns a
    :class:`Result` for each."""
    results = []
    for assumption in (declared if declared is not None
                       else assumptions(groups)):
        try:
            assumption.check(overrides)
        except Unavailable as exc:
            results.append(Result(assumption, str(exc), skipped=True))
        except Broken as exc:
            results.append(Result(assumption, str(exc)))
        else:
            results.append(Result(assumption, None))
    return results


def verify(groups: typing.Iterable[str] = DRIVER_GROUPS,
           overrides: typing.Optional[typing.Mapping[str, typing.Any]] = None,
           declared: typing.Any = None) -> None:
    """Raise ConfigError naming every broken assumption (on a changed
    Nova under test: every one faultdriver cannot run without; those of
    an optional feature make it unavailable, see :func:`unavailable`)."""
    if declared is None and overrides is None:
        broken = [r for group in groups for r in _verified(group)]
    else:
        broken = [r for r in check(groups, overrides, declared) if not r.ok]
    lenient = novaundertest.is_changed()
    refused = [r for r in broken
               if not (lenient and r.assumption.optional)]
    if refused:
        raise exception.ConfigError(
            'faultdriver cannot run on this Nova: '
            + '; '.join(r.message() for r in refused))
    for result in broken:
        _warn_unavailable(result.assumption.optional, result.message())


#: The greppable marker of a feature a changed Nova made unavailable.
UNAVAILABLE_MARKER = 'FAULTDRIVER-UNAVAILABLE'


@functools.lru_cache(maxsize=None)
def _warn_unavailable(feature, message):
    LOG.warning('%s feature=%s on this Nova under test (%s): %s',
                UNAVAILABLE_MARKER, feature, novaundertest.describe(
                    novaundertest.recorded()), message)


def unavailable(
        groups: typing.Iterable[str] = DRIVER_GROUPS) -> typing.Dict[str, str]:
    """``{feature: why}``: the optional features this Nova lacks (only
    ever non-empty on a changed Nova under test: on any other Nova a
    broken assumption refuses the start).  ``groups``: what this process
    checks (default what every FaultDriver start checks: a real
    nova-compute must never import Nova's test framework, which the
    harness group reaches)."""
    found: typing.Dict[str, typing.List[str]] = {}
    if not novaundertest.is_changed():
        return {}
    for group in groups:
        for result in _verified(group):
            if result.assumption.optional:
                found.setdefault(result.assumption.optional, []).append(
                    result.message())
    return {feature: '; '.join(why) for feature, why in found.items()}


def remember(groups: typing.Iterable[str]) -> None:
    """Check the assumptions of ``groups`` now, once for this process and
    every process it forks afterwards: their :func:`verify` and
    :func:`unavailable` answer from memory (a scenario's variants forked
    from one process that imported Nova: ``scenario.worker.fork_each``)."""
    for group in groups:
        _verified(group)


@functools.lru_cache(maxsize=None)
def _verified(group):
    # Nova does not change within a process: every later start of a
    # service (tests start hundreds) reuses the first answer, which the
    # first fixture or service took before any test patched Nova.
    return tuple(r for r in check((group,)) if not r.ok)


def declaration(symbol):
    """The assumption declared for ``symbol`` (one with the most specific
    shape when several are); LookupError if none is."""
    found = [a for a in assumptions() if a.symbol == symbol]
    if not found:
        raise LookupError('%s is not declared in faultdriver.novacompat.'
                          'declared; declare it (symbol, feature, shape) '
                          'before patching it' % symbol)
    return found[0]
