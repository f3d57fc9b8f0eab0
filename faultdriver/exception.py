"""Exceptions of faultdriver itself (no Nova imports)."""


class FaultDriverError(Exception):
    """Base class of faultdriver's own errors."""


class ConfigError(FaultDriverError):
    """A [fault_injection] option is wrong; raised at service start."""


class InjectedFault:
    """Mixin marking an exception raised by a rule, not by Nova.

    Injected Nova exceptions are dynamic subclasses of the real class that
    keep its name and module, so RPC carries them as the real class and
    Nova takes its real recovery path; locally ``isinstance(exc,
    InjectedFault)`` tells them apart.
    """


class SimulatedCrash(BaseException):
    """Unwinds a crashed handler thread in-process.

    A ``BaseException`` so that Nova's ``except Exception`` handlers, which
    a real crash would never run, do not catch it.
    """


class StartFailed(FaultDriverError):
    """A fault a host's rules inject ended its nova-compute's start (the
    host is down, as nova-compute exits when its start fails)."""


class ScenarioError(FaultDriverError):
    """A scenario file is wrong: names the file, the key path and what
    was expected."""
