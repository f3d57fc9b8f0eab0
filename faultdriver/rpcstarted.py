"""Whether this nova-compute's RPC servers have started: ``rpc_started``.

A restarted compute is ready for a scenario when it consumes its RPC
queues, which no API shows (the service record says up only after a
report, and says it while the old process's record is fresh).  Nova 34's
``Service.start`` calls ``manager.post_start_hook()`` right after both
RPC servers (``compute`` and ``compute-alt``) started and before the
service joins its group; ComputeManager does not override the hook, so
the base method (``nova.manager.Manager.post_start_hook``) is what runs.
This wraps it on the one manager instance FaultDriver runs under (another
host of the same process is untouched) and records the moment.  All of
it is declared in :mod:`faultdriver.novacompat.declared` and checked at
every start.
"""

import threading

from faultdriver.novacompat import patching

HOOK = 'nova.manager.Manager.post_start_hook'


class RpcStarted:
    """Set once ``manager``'s service started its RPC servers."""

    def __init__(self, manager):
        self._event = threading.Event()
        owner = type(manager)

        def post_start_hook():
            result = owner.post_start_hook(manager)
            self._event.set()
            return result
        self._undo = patching.replace_on(manager, 'post_start_hook',
                                         post_start_hook, HOOK)

    @property
    def started(self):
        return self._event.is_set()

    def close(self):
        """Take the hook off the manager (the driver's close)."""
        if self._undo is not None:
            self._undo()
            self._undo = None
