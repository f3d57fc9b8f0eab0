"""The resource-tracker periodic on the service's timer: off and on at
run time.

``[DEFAULT] update_resources_interval = -1`` keeps the periodic off the
timer, but Nova reads it when ``nova.compute.manager`` is imported
(oslo.service leaves a task with a negative spacing out of the class's
``_periodic_tasks``), so changing it takes a restart.  A run on a
cloud wants the timer's periodic off while a case runs (a periodic
whenever the timer fires would move hit counts) and back on after,
without a restart.  oslo.service's ``run_periodic_tasks`` iterates the
manager's ``_periodic_tasks`` afresh at each timer tick, so this switch
gives the one manager instance a list without the periodic's entry, or
gives it back its own: a new list object each time, so a tick iterating
the old one is never disturbed, with green and with native threads
alike.  Calls of the periodic itself (``ctl periodic``, the ``periodic``
action, Nova's own start-up call) are not affected.  The entry it
takes out is the one :mod:`faultdriver.tracker.periodic_mark` put in.
"""

import threading

from faultdriver.novacompat import declared
from faultdriver.novacompat import patching

#: The timer's name of the resource periodic (oslo.service's
#: ``_periodic_name``: the method's name).
TASK = 'update_available_resource'


class TimerOff(ValueError):
    """The periodic was never on this service's timer."""


class TimerSwitch:
    """Switches ``manager``'s resource periodic off and on its timer."""

    def __init__(self, manager):
        self.manager = manager
        self._lock = threading.Lock()
        self._undo = None
        #: The spacing the timer has for the periodic (None: the
        #: periodic was never on the timer).
        self.interval = (manager._periodic_spacing.get(TASK)
                         if TASK in self._names() else None)

    def _names(self):
        return [name for name, _task in self.manager._periodic_tasks]

    @property
    def on(self):
        """Whether the service's timer runs the periodic now."""
        return TASK in self._names()

    def switch(self, on):
        """Put the periodic on the timer (``on``) or take it off; returns
        whether it is on.  TimerOff if it should go on but never was."""
        with self._lock:
            if on and self._undo is None and not self.on:
                raise TimerOff(
                    'update_resources_interval was negative when '
                    'nova-compute started, so oslo.service never put the '
                    'resource periodic on its timer; set it to 0 or more '
                    'and restart nova-compute')
            if on and self._undo is not None:
                self._undo()
                self._undo = None
            elif not on and self._undo is None and self.on:
                without = [(name, task) for name, task
                           in self.manager._periodic_tasks if name != TASK]
                self._undo = patching.replace_on(
                    self.manager, '_periodic_tasks', without,
                    declared.MANAGER + '._periodic_tasks')
            return self.on

    def close(self):
        """Give the manager its timer's periodic back (the driver's
        close: a timer switched off is not left off)."""
        with self._lock:
            if self._undo is not None:
                self._undo()
                self._undo = None
