"""The one way faultdriver waits for something it cannot be told about:
poll a check until it answers, within a deadline.

Every wait in the harnesses, the process tier and the scenario steps is
this loop; what differs is the check (which may raise to stop at once,
e.g. when a server went to ERROR or a process died), the message (which
may be a callable, to show the state at the deadline) and the error a
timeout raises (AssertionError inside a test case, TimeoutError
elsewhere), or none for a bounded wait that never fails.
"""

import time
import typing

T = typing.TypeVar('T')
#: What a wait says it waited for: a string, or a callable giving one.
What = typing.Union[str, typing.Callable[[], str]]


@typing.overload
def until(check: typing.Callable[[], typing.Optional[T]], timeout: float,
          what: What, interval: float = ...,
          error: typing.Callable[[str], BaseException] = ...,
          fail: typing.Literal[True] = ...) -> T: ...


@typing.overload
def until(check: typing.Callable[[], typing.Optional[T]], timeout: float,
          what: What, interval: float = ...,
          error: typing.Callable[[str], BaseException] = ...,
          *, fail: bool) -> typing.Optional[T]: ...


def until(check: typing.Callable[[], typing.Optional[T]], timeout: float,
          what: What, interval: float = 0.2,
          error: typing.Callable[[str], BaseException] = TimeoutError,
          fail: bool = True) -> typing.Optional[T]:
    """Call ``check()`` every ``interval`` seconds until it returns a
    true value, and return that value.

    After ``timeout`` seconds raise ``error`` naming ``what`` (a string,
    or a callable giving one, called then), or, with ``fail=False``,
    return None.
    """
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() >= deadline:
            if not fail:
                return None
            text = what() if callable(what) else what
            raise error('%s: not within %ss' % (text, timeout))
        time.sleep(interval)
