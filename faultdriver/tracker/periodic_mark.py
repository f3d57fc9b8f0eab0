"""Which threads run their host's resource periodic: a thread-local mark.

A hit's ``in_periodic`` (the journal, the sweep's traces, and the
``periodic`` action, which starts no second periodic inside one: a real
nova-compute runs one at a time) is read from a thread-local mark
(:func:`faultdriver.hitcontext.in_periodic`, which owns it).  The mark
is set by hooks on the compute manager FaultDriver runs under, put
on that one manager instance when the tracker is hooked and taken off
when the driver closes (another host of the same process is untouched):

* ``update_available_resource``, the periodic as its callers reach it
  (``manager.update_available_resource(...)``: Nova's start-up and
  post-live-migration calls, Nova's functional tests, the ``periodic``
  action and ``ctl periodic``);
* its entry in the manager's ``_periodic_tasks``, the periodic as the
  service's timer runs it (oslo.service calls the function it collected
  when the class was defined, not the attribute);
* ``_update_available_resource_for_node``, the per-node update, which Nova
  34 runs on its UPDATE_RESOURCES executor: another thread, which the
  mark of the thread that spawned it does not reach.

What the hooks assume of Nova and oslo.service is declared in
:mod:`faultdriver.novacompat.declared` and checked at every start.
"""

import functools

from faultdriver import hitcontext
from faultdriver.novacompat import declared
from faultdriver.novacompat import patching

#: The manager's methods that mark the thread running them.
MARKED = ('update_available_resource', '_update_available_resource_for_node')


def _marking(manager, name):
    """``manager.<name>`` marking its thread.  Nova's method is looked up
    on the class at each call, so a test that patches it is reached."""
    @functools.wraps(getattr(type(manager), name))
    def method(*args, **kwargs):
        with hitcontext.periodic_marked():
            return getattr(type(manager), name)(manager, *args, **kwargs)
    return method


def _timer_task(task):
    """The periodic task ``task`` (Nova's function) marking its thread;
    its ``_periodic_*`` attributes, which oslo.service reads at each run,
    are copied."""
    @functools.wraps(task)
    def run(self, context):
        with hitcontext.periodic_marked():
            return task(self, context)
    return run


def install(manager):
    """Mark ``manager``'s resource periodic; returns the undo."""
    undo = [patching.replace_on(manager, name, _marking(manager, name),
                                declared.MANAGER + '.' + name)
            for name in MARKED]
    tasks = [(name, _timer_task(task) if name == MARKED[0] else task)
             for name, task in manager._periodic_tasks]
    undo.append(patching.replace_on(manager, '_periodic_tasks', tasks,
                                    declared.MANAGER + '._periodic_tasks'))

    def uninstall():
        for each in reversed(undo):
            each()
    return uninstall
