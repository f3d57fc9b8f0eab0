"""Candidate fixes for the resource tracker (stevedore plugins).

Each fix is one module with one class in the
``faultdriver.tracker_patches`` namespace, enabled per compute service by
``[fault_injection] tracker_patches``.  A fix overrides one decision the
tracker makes; it never edits Nova's files or copies its code, and it
verifies at start-up that the Nova code it relies on is what it expects.
"""

from importlib import metadata

import stevedore

from faultdriver import exception
from faultdriver import rules

NAMESPACE = 'faultdriver.tracker_patches'


def registered():
    return sorted({ep.name for ep in metadata.entry_points(group=NAMESPACE)})


def load(names):
    """Instantiate and verify the named fixes; ConfigError if any fails."""
    choices = registered()
    patches = []
    for name in names or ():
        if name not in choices:
            raise exception.ConfigError(
                '[fault_injection] tracker_patches: unknown fix %r%s; '
                'expected one of %s' % (name, rules.suggest(name, choices),
                                        ', '.join(choices) or 'none'))
        patch = stevedore.DriverManager(NAMESPACE, name,
                                        invoke_on_load=True).driver
        try:
            patch.verify()
        except RuntimeError as exc:
            raise exception.ConfigError(
                '[fault_injection] tracker_patches: fix %r refuses to run '
                'on this Nova: %s' % (name, exc)) from exc
        patches.append(patch)
    return patches


class TrackerPatch:
    """A candidate fix; subclasses override the decisions they fix."""

    name = None

    def verify(self):
        """Raise RuntimeError if Nova's code is not what the fix expects."""

    def should_apply_migration_context(self, tracker, instance, migration):
        """Periodic: apply ``migration``'s context to ``instance``?"""
        return True
