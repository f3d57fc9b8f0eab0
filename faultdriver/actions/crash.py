"""The crash action: the service dies at the step, no handler runs."""

import logging
import os
import signal as signal_module

from faultdriver.actions import base

LOG = logging.getLogger(__name__)


def signal_number(value):
    """A signal name such as KILL or SIGKILL, or a number."""
    if value.isdigit():
        return int(value)
    name = value.upper()
    name = name if name.startswith('SIG') else 'SIG' + name
    number = getattr(signal_module, name, None)
    if not isinstance(number, signal_module.Signals):
        raise ValueError('unknown signal; expected a name such as KILL')
    return int(number)


def crash_process(hit, signal=None, exit_code=137):
    """Kill this process: journal on disk first, then no cleanup at all."""
    LOG.warning('faultdriver crashing nova-compute on %s at %s (pid %d)',
                hit.host, hit.describe(), os.getpid())
    if hit.engine.journal is not None:
        hit.engine.journal.flush(sync=True)
    for handler in logging.getLogger().handlers:
        handler.flush()
    if signal is not None:
        os.kill(os.getpid(), signal)
    os._exit(exit_code)


class Crash(base.Action):
    """crash(signal=<none>, exit_code=137): the compute service dies here.

    In a real nova-compute the journal is flushed to disk and the process
    ends with ``os._exit`` (or the given signal): no exception handler, no
    rollback, no RPC reply, exactly like a killed service.  In the
    embedded Nova the harness simulates the same: the host's RPC servers
    and timers stop without a graceful shutdown and the handler never
    returns.
    """

    name = 'crash'
    params = (('signal', signal_number), ('exit_code', int))

    def __call__(self, hit):
        handler = hit.engine.crash_handler
        if handler is not None:
            handler(hit)
        else:
            crash_process(hit, self.args.get('signal'),
                          self.args.get('exit_code', 137))
