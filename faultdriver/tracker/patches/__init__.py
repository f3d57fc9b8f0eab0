"""Candidate fixes for the resource tracker (stevedore plugins).

Each fix is one module with one class in the
``faultdriver.tracker_patches`` namespace, enabled per compute service by
``[fault_injection] tracker_patches``.  A fix overrides one decision the
tracker makes; it never edits Nova's files or copies its code.  It
names the Nova symbols it relies on (``requires``); their assumptions in
:mod:`faultdriver.novacompat.declared` are checked when it loads, and any
failure to load or verify it stops the service with a ConfigError naming
the fix and the symbol.
"""

from importlib import metadata
import logging

import stevedore

from faultdriver import exception
from faultdriver import novacompat
from faultdriver import rules

NAMESPACE = 'faultdriver.tracker_patches'
LOG = logging.getLogger(__name__)


def registered() -> list[str]:
    return sorted({ep.name for ep in metadata.entry_points(group=NAMESPACE)})


def load(names):
    """Instantiate and verify the named fixes; ConfigError if any fails.
    A fix whose feature a changed Nova under test made unavailable is
    left out, with a warning (:func:`unavailable` says which)."""
    choices = registered()
    patches = []
    gone = novacompat.unavailable()
    for name in names or ():
        if name not in choices:
            raise exception.ConfigError(
                '[fault_injection] tracker_patches: unknown fix %r%s; '
                'expected one of %s' % (name, rules.suggest(name, choices),
                                        ', '.join(choices) or 'none'))
        patch = None
        try:
            patch = stevedore.DriverManager(NAMESPACE, name,
                                            invoke_on_load=True).driver
            patch.verify()
        except Exception as exc:
            symbols = getattr(patch, 'requires', ()) or ('its plugin',)
            raise exception.ConfigError(
                '[fault_injection] tracker_patches: fix %r refuses to run '
                'on this Nova (%s; it relies on %s): %s: %s'
                % (name, novacompat.nova_version_text(), ', '.join(symbols),
                   type(exc).__name__, exc)) from exc
        why = _why_unavailable(patch.requires, gone)
        if why:
            LOG.warning('%s fix=%s: %s', novacompat.UNAVAILABLE_MARKER, name,
                        why)
            continue
        patches.append(patch)
    return patches


def unavailable(names):
    """``{fix: why}`` for the named fixes that rely on a feature this
    (changed) Nova under test made unavailable."""
    gone = novacompat.unavailable()
    found = {}
    choices = registered() if gone else ()
    for name in names or ():
        if name in choices:
            why = _why_unavailable(
                stevedore.DriverManager(NAMESPACE, name).driver.requires,
                gone)
            if why:
                found[name] = why
    return found


def _why_unavailable(requires, gone):
    """Why a fix relying on the Nova symbols ``requires`` cannot run,
    given the unavailable features ``gone`` (novacompat.unavailable), or
    None."""
    needs = {a.optional for a in novacompat.assumptions()
             if a.symbol in requires and a.optional}
    why = ['%s: %s' % (f, gone[f]) for f in sorted(needs & set(gone))]
    if not why:
        return None
    return 'unavailable on this Nova under test (%s)' % '; '.join(why)


class TrackerPatch:
    """A candidate fix; subclasses override the decisions they fix."""

    name = None
    #: Dotted Nova symbols the fix relies on (declared in novacompat).
    requires = ()

    def verify(self):
        """ConfigError unless every assumption about ``requires`` holds."""
        declared = [a for a in novacompat.assumptions()
                    if a.symbol in self.requires]
        unknown = set(self.requires) - {a.symbol for a in declared}
        if unknown:
            raise exception.ConfigError(
                'fix %s requires %s, which faultdriver.novacompat does not '
                'declare' % (self.name, ', '.join(sorted(unknown))))
        novacompat.verify(declared=declared)

    def should_apply_migration_context(self, tracker, instance, migration):
        """Periodic: apply ``migration``'s context to ``instance``?"""
        return True
