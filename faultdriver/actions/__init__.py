"""Actions: what a rule does when it fires (stevedore plugins).

Each action is a class in the ``faultdriver.actions`` entry-point
namespace; its docstring is its user documentation.  Loading is strict: a
name that does not resolve, or a plugin that fails to import, is an error
at start-up that names the plugin and the choices.
"""

import typing

import stevedore

if typing.TYPE_CHECKING:
    from faultdriver.actions import base

NAMESPACE = 'faultdriver.actions'


def load_all() -> typing.Dict[str, typing.Type['base.Action']]:
    """Map every action name to its class; fail loudly on a bad plugin."""
    def on_failure(manager, entrypoint, exc):
        raise RuntimeError('faultdriver action plugin %r (%s) failed to load:'
                           ' %s' % (entrypoint.name, entrypoint.value, exc))

    manager = stevedore.ExtensionManager(
        NAMESPACE, invoke_on_load=False, on_load_failure_callback=on_failure)
    actions = {ext.name: ext.plugin for ext in manager}
    if not actions:
        raise RuntimeError('no faultdriver actions are registered in %r: is '
                           'faultdriver installed (pip install, not only on '
                           'sys.path)?' % NAMESPACE)
    return actions
