"""Exceptions of faultdriver itself (no Nova imports)."""

import typing


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

    @classmethod
    def by_fault(cls, host: str,
                 entries: typing.Iterable[typing.Mapping[str, typing.Any]],
                 cause: typing.Optional[BaseException] = None
                 ) -> typing.Optional['StartFailed']:
        """The StartFailed naming the last crash, raise or shutdown among
        ``entries`` (journal entries written during ``host``'s start), or
        None when no such fault fired (the start failed for another
        reason, which the caller re-raises).  Both tiers word it alike, so
        a scenario's expectation holds on either."""
        fired = [e for e in entries
                 if e.get('action') in ('crash', 'raise', 'shutdown')]
        if not fired:
            return None
        message = '%s failed to start: %s at %s' % (
            host, fired[-1]['action'], fired[-1]['point'])
        if cause is not None:
            message += ' (%s: %s)' % (type(cause).__name__, cause)
        return cls(message)


class ScenarioError(FaultDriverError):
    """A scenario file is wrong: names the file, the key path and what
    was expected."""


class MissingPrerequisite(FaultDriverError):
    """What a tier needs on this machine (a program from a Debian
    package, a Python module, root) is missing: names each missing thing
    and the command that installs it.  Raised before anything starts."""
