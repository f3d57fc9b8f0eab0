"""The control protocol: JSON lines over a local stream socket.

A client connects, writes one request per line and reads one response
line per request, in order; it may send several requests on one
connection or close after one (``faultdriver ctl`` does).  UTF-8 JSON,
each object on one line, at most :data:`MAX_REQUEST` bytes per request::

    -> {"op": "add", "rule": "pre_live_migration@dest: 1*hang(60, b)"}
    <- {"ok": true, "result": {"index": 0, "rule": "pre_live_migration..."}}
    -> {"op": "wait", "point": "pre_live_migration", "timeout": 5}
    <- {"ok": false, "error": {"kind": "timeout", "message": "point ..."}}

Operations (arguments; what ``result`` is):

==========  ===========================================  =================
op          arguments                                     result
==========  ===========================================  =================
status      -                                             host, pid, enabled,
                                                          rules, held,
                                                          journal,
                                                          journal_error,
                                                          time; in a
                                                          nova-compute also
                                                          nodenames,
                                                          nova_version,
                                                          faultdriver_version,
                                                          settings,
                                                          tracker_fixes,
                                                          rpc_started, timer,
                                                          start_rules
points      -                                             list of points
rules       -                                             list of rules with
                                                          their counters
counters    -                                             {"point.phase": n}
add         rule (text, nova.conf grammar)                {index, rule}
remove      index                                         {index}
clear       -                                             {removed}
enable      -                                             {enabled}
disable     -                                             {enabled}
release     name (barrier; null for every barrier)       {released}
wait        point, count=1, phase="before", timeout=60   {point, hits}
journal     last (newest entries only; null for all)     list of entries
periodic    timeout=60 (the resource-tracker periodic    {host, seconds,
            runs now; answered when it ended)             error}
tasks       -                                             list of {name,
                                                          instance_uuid}
pinning     host (default this one), nodename (default   {host, nodes,
            every node of the host)                       pinned_cpus}
timer       on (true/false switches; null only shows)    {host, on,
                                                          interval}
==========  ===========================================  =================

Error kinds: ``bad-rule`` (the rule does not parse or validate; nothing
changed), ``bad-request`` (unknown op, missing or wrong argument, unknown
point or rule index), ``timeout`` (``wait`` ran out of time, or a
``periodic`` did not end in time), ``stopped`` (the server is stopping:
a pending ``wait`` gets this answer too), ``busy`` (the server already
has :data:`MAX_CONNECTIONS` connections; the new one is closed after
this answer) and ``internal``.
A failed request never ends the server or the connection.  A connection
with no request for :data:`IDLE_TIMEOUT` seconds is closed.
"""

import json

#: Largest request line the server reads, newline included.
MAX_REQUEST = 64 * 1024
#: Most connections served at once (each has a thread).
MAX_CONNECTIONS = 16
#: Seconds a connection may wait between requests before it is closed.
IDLE_TIMEOUT = 120.0

BAD_RULE = 'bad-rule'
BAD_REQUEST = 'bad-request'
TIMEOUT = 'timeout'
STOPPED = 'stopped'
BUSY = 'busy'
INTERNAL = 'internal'


class ControlError(Exception):
    """A control request failed; ``kind`` is one of the error kinds."""

    kind = INTERNAL

    def __init__(self, message, kind=None):
        super().__init__(message)
        if kind is not None:
            self.kind = kind


class RequestRejected(ControlError):
    """The request was wrong (bad rule, unknown point, ...); nothing
    changed."""

    kind = BAD_REQUEST


class WaitTimeout(ControlError):
    """``wait`` ran out of time before the point was hit."""

    kind = TIMEOUT


class Unreachable(ControlError):
    """No control server answers at the socket path."""


def error_for(kind, message):
    """The client-side exception for an error the server reported."""
    if kind in (BAD_RULE, BAD_REQUEST):
        return RequestRejected(message, kind)
    if kind == TIMEOUT:
        return WaitTimeout(message)
    if kind == BUSY:
        return Unreachable(message)
    return ControlError(message, kind)


def encode(obj):
    return (json.dumps(obj, sort_keys=True, default=str) + '\n').encode()


def _object(pairs):
    """A JSON object whose keys are given once: with a key given twice
    the request would mean whichever came last."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen = set()
        twice = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise ValueError('key %r given twice' % twice[:60])
    return obj


def decode(line):
    """One request or response object from a line; ValueError if not."""
    try:
        obj = json.loads(line.decode('utf-8'), object_pairs_hook=_object)
    except RecursionError:
        raise ValueError('not a JSON line: nested too deeply') from None
    except ValueError as exc:
        # Also a number of more than 4300 digits.
        raise ValueError('not a JSON line: %s' % exc) from None
    if not isinstance(obj, dict):
        raise ValueError('expected a JSON object, got %s'
                         % type(obj).__name__)
    return obj


def success(result):
    return {'ok': True, 'result': result}


def failure(kind, message):
    return {'ok': False, 'error': {'kind': kind, 'message': message}}
