"""The cloud's refusals: a host cannot be used, and why.

Each names the host as the runner reached it (the SSH alias) and the
fact, so that a message alone says which machine to look at and what
to fix.  The command line exits 2 on them, as on any bad input.
"""

from faultdriver import exception


class HostRefused(exception.FaultDriverError):
    """``host`` cannot be used for the reason ``fact`` (a short phrase:
    ``host down or unreachable``, ``key refused``, ``socket absent``)."""

    def __init__(self, host: str, fact: str, detail: str = '') -> None:
        self.host = host
        self.fact = fact
        self.detail = detail
        super().__init__('%s: %s%s' % (host, fact,
                                       ' (%s)' % detail if detail else ''))


#: The facts the transport tells apart.
HOST_DOWN = 'host down or unreachable'
KEY_REFUSED = 'key refused'
SOCKET_ABSENT = 'socket absent'
FORWARD_REFUSED = 'stream-local forwarding refused'
HELPER_FAILED = 'host helper failed'
