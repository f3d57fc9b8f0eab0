"""The client of a FaultDriver control socket.

One connection per request, so a client object holds no socket and can
be shared between threads.  Errors the server reports come back as the
exceptions of :mod:`faultdriver.control.protocol`; a socket nobody
listens on is :class:`~faultdriver.control.protocol.Unreachable`.
"""

import socket
import typing

from faultdriver.control import protocol

#: Extra time a ``wait`` request gets beyond its own timeout for the
#: answer to arrive.
WAIT_MARGIN = 10.0


class Client:
    """Requests to the control server at ``path``."""

    def __init__(self, path: str, timeout: float = 10.0) -> None:
        self.path = path
        self.timeout = timeout

    def request(self, op: str, io_timeout: typing.Optional[float] = None,
                **args: object) -> typing.Any:
        """Send one request; return its result or raise its error.

        ``io_timeout`` overrides the client's timeout for this request.
        """
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout if io_timeout is None else io_timeout)
        try:
            try:
                sock.connect(self.path)
            except OSError as exc:
                raise protocol.Unreachable(
                    'no faultdriver control server at %s: %s (is '
                    '[fault_injection] control_socket set to it and '
                    'nova-compute running?)' % (self.path, exc)) from None
            try:
                sock.sendall(protocol.encode(dict(args, op=op)))
            except (BrokenPipeError, ConnectionResetError):
                pass        # it may have answered (busy) before closing
            reply = self._read_line(sock)
        except socket.timeout:
            raise protocol.ControlError(
                'no answer from %s to %r within %ss'
                % (self.path, op, sock.gettimeout())) from None
        finally:
            sock.close()
        if reply.get('ok'):
            return reply.get('result')
        error = reply.get('error') or {}
        raise protocol.error_for(error.get('kind'),
                                 error.get('message', str(reply)))

    def _read_line(self, sock: socket.socket) -> typing.Any:
        chunks = []
        while True:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                # The server's process died with the connection open
                # (a crash while it answered).
                chunk = b''
            if not chunk:
                raise protocol.ControlError(
                    'the control server at %s closed the connection '
                    'without answering' % self.path)
            chunks.append(chunk)
            if chunk.endswith(b'\n'):
                return protocol.decode(b''.join(chunks))

    # One method per operation; see protocol's table.

    def status(self) -> typing.Any:
        return self.request('status')

    def points(self) -> typing.Any:
        return self.request('points')

    def rules(self) -> typing.Any:
        return self.request('rules')

    def counters(self) -> typing.Any:
        return self.request('counters')

    def add(self, rule: str) -> typing.Any:
        return self.request('add', rule=rule)

    def remove(self, index: int) -> typing.Any:
        return self.request('remove', index=index)

    def clear(self) -> typing.Any:
        return self.request('clear')

    def enable(self) -> typing.Any:
        return self.request('enable')

    def disable(self) -> typing.Any:
        return self.request('disable')

    def release(self, name: typing.Optional[str] = None) -> typing.Any:
        """Release barrier ``name`` (every barrier if None); returns how
        many threads were released."""
        return self.request('release', name=name)['released']

    def wait(self, point: str, count: int = 1, timeout: float = 60.0,
             phase: str = 'before') -> typing.Any:
        """Block until ``point.phase`` was hit ``count`` times (counted
        since the point was armed); returns the hit count."""
        return self.request('wait', io_timeout=timeout + WAIT_MARGIN,
                            point=point, count=count, phase=phase,
                            timeout=timeout)['hits']

    def journal(self, last: typing.Optional[int] = None) -> typing.Any:
        return self.request('journal', last=last)

    def tasks(self) -> typing.Any:
        """The tasks the host's compute manager tracks for a graceful
        stop: ``[{name, instance_uuid}]``, oldest first."""
        return self.request('tasks')

    def periodic(self, timeout: float = 60.0) -> typing.Any:
        """Run the host's resource-tracker periodic now; returns when it
        ended: ``{host, seconds, error}``."""
        return self.request('periodic', io_timeout=timeout + WAIT_MARGIN,
                            timeout=timeout)

    def pinning(self, host: typing.Optional[str] = None,
                nodename: typing.Optional[str] = None) -> typing.Any:
        """The pCPUs ``host``'s compute node records (this host's by
        default; ``nodename``'s only if given) hold as pinned: ``{host,
        nodes: {nodename: [pCPU]}, pinned_cpus}``."""
        return self.request('pinning', host=host, nodename=nodename)

    def timer(self, on: typing.Optional[bool] = None) -> typing.Any:
        """Switch the resource periodic on (True) or off (False) the
        service's timer, or only ask (None): ``{host, on, interval}``."""
        return self.request('timer', on=on)
