"""The crash action: the service dies at the step, no handler runs."""

import logging
import os
import re
import signal as signal_module

from faultdriver.actions import base

LOG = logging.getLogger(__name__)


#: Signals whose default action ends the process (with or without a
#: core dump).  The others stop it (STOP, TSTP, TTIN, TTOU), are ignored
#: by default (CHLD, CONT, URG, WINCH) or cannot be sent (0): with them a
#: "crash" would not be one.
FATAL_SIGNALS = tuple(sorted(
    getattr(signal_module, name) for name in (
        'SIGHUP', 'SIGINT', 'SIGQUIT', 'SIGILL', 'SIGTRAP', 'SIGABRT',
        'SIGBUS', 'SIGFPE', 'SIGKILL', 'SIGUSR1', 'SIGSEGV', 'SIGUSR2',
        'SIGPIPE', 'SIGALRM', 'SIGTERM', 'SIGSTKFLT', 'SIGXCPU', 'SIGXFSZ',
        'SIGVTALRM', 'SIGPROF', 'SIGIO', 'SIGPWR', 'SIGSYS')
    if hasattr(signal_module, name)))


def signal_number(value):
    """A signal that ends the process: a name such as KILL or SIGKILL, or
    its number."""
    choices = 'a name such as KILL or TERM, or the number of a signal ' \
        'that ends the process'
    if re.fullmatch('[0-9]{1,3}', value):
        number = int(value)
    elif re.fullmatch('[A-Za-z][A-Za-z0-9]{0,15}', value):
        name = value.upper()
        name = name if name.startswith('SIG') else 'SIG' + name
        number = getattr(signal_module, name, None)
        if not isinstance(number, signal_module.Signals):
            raise ValueError('unknown signal; expected %s' % choices)
    else:
        raise ValueError('not a signal; expected %s' % choices)
    if number not in FATAL_SIGNALS:
        raise ValueError('signal %d does not end the process (it is '
                         'ignored, stops it or is not a signal); expected %s'
                         % (number, choices))
    return int(number)


def exit_code(value):
    """An exit status from 1 to 255 (0 would read as a clean exit, and
    the OS keeps only the low 8 bits of anything else)."""
    if not re.fullmatch('[0-9]{1,3}', value) or not 1 <= int(value) <= 255:
        raise ValueError('expected an exit status from 1 to 255 (0 is a '
                         'clean exit: systemd Restart=on-failure would not '
                         'restart the service)')
    return int(value)


def _default_action(number):
    """Give signal ``number`` its default action again (a handler Nova
    or oslo.service installed would turn the crash into a shutdown, or
    nothing).  ``signal.signal`` only works in the main thread; libc's
    ``signal()`` works in any."""
    try:
        signal_module.signal(number, signal_module.SIG_DFL)
        return
    except ValueError:          # not the main thread
        pass
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).signal(number, 0)  # SIG_DFL
    except (OSError, AttributeError):
        LOG.error('faultdriver could not restore the default action of '
                  'signal %d; the crash may end with exit status instead',
                  number)


def crash_process(hit, signal=None, exit_code=137):
    """Kill this process: journal on disk first, then no cleanup at all.

    A journal that cannot be flushed is logged (ERROR) and the crash
    goes on: the fault is the crash, not an OSError.
    """
    LOG.warning('faultdriver crashing nova-compute on %s at %s (pid %d)',
                hit.host, hit.describe(), os.getpid())
    if hit.engine.journal is not None:
        hit.engine.journal.flush(sync=True)
    for handler in logging.getLogger().handlers:
        try:
            handler.flush()
        except Exception:       # a full disk must not stop the crash
            pass
    if signal is not None:
        _default_action(signal)
        signal_module.pthread_sigmask(signal_module.SIG_UNBLOCK, [signal])
        os.kill(os.getpid(), signal)
    os._exit(exit_code)


class Crash(base.Action):
    """crash(signal=<none>, exit_code=137): the compute service dies here.

    ``signal``: a signal whose default action ends the process (KILL,
    TERM, ABRT, SEGV, ...; not STOP, CONT, CHLD and other signals that
    do not); its default action is restored first, so a handler the
    service installed does not run.  ``exit_code``: 1 to 255.

    In a real nova-compute the journal is flushed to disk and the process
    ends with ``os._exit`` (or the given signal): no exception handler, no
    rollback, no RPC reply, exactly like a killed service.  In the
    embedded Nova the harness simulates the same: the host's RPC servers
    and timers stop without a graceful shutdown and the handler never
    returns.
    """

    name = 'crash'
    params = (('signal', signal_number), ('exit_code', exit_code))

    def __call__(self, hit):
        handler = hit.engine.crash_handler
        if handler is not None:
            handler(hit)
        else:
            crash_process(hit, self.args.get('signal'),
                          self.args.get('exit_code', 137))
