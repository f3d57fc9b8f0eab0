"""The lines Nova logs that faultdriver counts, as Nova words them: one
source for the scenario runner, the expectations and the declared
assumptions that check Nova still logs them (this module imports no
Nova, so the runner can use it before it sets up Nova's concurrency
mode)."""

#: The line Nova logs when a resource-tracker periodic fails on a node
#: (``%s``: the node); the ``periodic`` step and the ``periodic-errors``
#: expectation count it.
PERIODIC_ERROR = 'Error updating resources for node %s'
#: The end of the line the periodic logs when it applies an incoming
#: migration's context (``%s``: the migration's status).
APPLIED_CONTEXT = 'Migration status is %s'

#: The instance actions of a resize's confirm and revert
#: (``nova.compute.instance_actions``).
CONFIRM_ACTION = 'confirmResize'
REVERT_ACTION = 'revertResize'
#: Per decision: its instance action and the compute manager method whose
#: event (``compute_<method>``, ``@wrap_instance_event(prefix='compute')``)
#: is the last of its handling: a confirm is handled by the source's
#: confirm_resize; a revert by the destination's revert_resize, then the
#: source's finish_revert_resize.
DECISIONS = {'confirm': (CONFIRM_ACTION, 'confirm_resize'),
             'revert': (REVERT_ACTION, 'finish_revert_resize')}
#: The compute manager methods that record the decisions' events.
DECISION_METHODS = ('confirm_resize', 'revert_resize', 'finish_revert_resize')
