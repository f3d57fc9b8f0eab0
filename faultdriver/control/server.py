"""The control server of one FaultDriver: accept loop and connections.

It runs in plain daemon ``threading.Thread`` objects, not in Nova's
executors: an accept loop lives as long as the service and would hold
a pool worker for good.  Under eventlet ``threading`` and ``socket`` are
monkey-patched, so the same code runs as green threads on green sockets
and waits in the hub; with native threads it runs as native threads.
Either way each connection has its own thread, so a ``wait`` or a
thread held in ``hang`` never stops the server answering others.  The
accept loop polls a stop flag between short accept timeouts, which ends
it promptly in both modes.
"""

import logging
import os
import socket
import struct
import threading

from faultdriver.control import listen
from faultdriver.control import ops as ops_module
from faultdriver.control import protocol

LOG = logging.getLogger(__name__)

#: Seconds between checks of the stop flag in the accept loop.
ACCEPT_POLL = 0.25
#: Requests that change nothing; the others are logged.
_READS = frozenset(('status', 'points', 'rules', 'counters', 'journal',
                    'wait', 'tasks', 'pinning'))


class ControlServer:
    """Serves the control protocol for ``engine`` at ``path``.

    ``catalogue`` maps point names to points; ``parse_rule`` parses and
    validates one rule as nova.conf does (:class:`faultdriver.conf.
    RuleType`); ``compute``: what the nova-compute around the engine
    answers (:class:`~faultdriver.control.ops.ComputeHooks`: the
    ``periodic``, ``tasks``, ``pinning`` and ``timer`` ops and the
    status fields only it knows; none where there is no compute manager).
    """

    def __init__(self, path, engine, catalogue, parse_rule,
                 max_connections=protocol.MAX_CONNECTIONS,
                 idle_timeout=protocol.IDLE_TIMEOUT,
                 compute=ops_module.NO_COMPUTE):
        self.path = os.path.abspath(path)
        self.engine = engine
        self.max_connections = max_connections
        self.idle_timeout = idle_timeout
        self._stopping = threading.Event()
        self._ops = ops_module.Operations(engine, catalogue, parse_rule,
                                          self._stopping, compute)
        self._listener = None
        self._identity = None
        self._thread = None
        self._lock = threading.Lock()
        self._connections = set()
        # Requests being answered; stop() lets them answer first.
        self._answering = 0
        self._answered = threading.Condition(self._lock)

    def start(self):
        """Create the socket and serve; raises
        :class:`~faultdriver.control.listen.SocketInUse` if taken."""
        self._listener = listen.listen(self.path)
        stat = os.stat(self.path)
        self._identity = (stat.st_dev, stat.st_ino)
        self._listener.settimeout(ACCEPT_POLL)
        self._thread = threading.Thread(
            target=self._accept_loop, daemon=True,
            name='faultdriver-control-%s' % self.engine.host)
        self._thread.start()
        LOG.info('faultdriver control socket of %s listening at %s',
                 self.engine.host, self.path)
        return self

    def stop(self, timeout=5.0):
        """Stop serving, end pending waits, remove the socket file."""
        if self._thread is None or self._stopping.is_set():
            return
        self._stopping.set()
        self._wake()
        self._thread.join(timeout)
        self._listener.close()
        self._remove_file()
        # A pending wait sees the flag within one slice and answers
        # "stopped"; give every request in progress that long to answer.
        with self._lock:
            self._answered.wait_for(lambda: not self._answering, timeout)
            connections = list(self._connections)
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        LOG.info('faultdriver control socket of %s at %s closed',
                 self.engine.host, self.path)

    def _wake(self):
        # Saves the accept loop its last poll; harmless if it fails.
        wake = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        wake.settimeout(ACCEPT_POLL)
        try:
            wake.connect(self.path)
        except OSError:
            pass
        finally:
            wake.close()

    def _remove_file(self):
        # Only our own socket: another process may own the path by now.
        try:
            stat = os.lstat(self.path)
        except FileNotFoundError:
            return
        if (stat.st_dev, stat.st_ino) == self._identity:
            os.unlink(self.path)

    # -- serving ------------------------------------------------------------

    def _accept_loop(self):
        while not self._stopping.is_set():
            try:
                conn, _ = self._listener.accept()
            except socket.timeout:
                continue
            except OSError:
                if self._stopping.is_set():
                    return
                LOG.exception('faultdriver control socket %s: accept '
                              'failed', self.path)
                self._stopping.wait(ACCEPT_POLL)
                continue
            if self._stopping.is_set():
                conn.close()
                return
            with self._lock:
                full = len(self._connections) >= self.max_connections
                if not full:
                    self._connections.add(conn)
            if full:
                self._refuse(conn)
                continue
            threading.Thread(target=self._converse, args=(conn,),
                             daemon=True,
                             name='faultdriver-control-conn').start()

    def _refuse(self, conn):
        """Answer a connection beyond the cap, without a thread."""
        LOG.warning('faultdriver control socket %s: refusing a connection '
                    'from %s: already %d', self.path, _peer(conn),
                    self.max_connections)
        try:
            conn.settimeout(ACCEPT_POLL)
            try:
                # Read what the client sent first, so that closing does
                # not reset the connection before it reads the answer.
                conn.recv(protocol.MAX_REQUEST)
            except socket.timeout:
                pass
            conn.sendall(protocol.encode(protocol.failure(
                protocol.BUSY, 'the control server of %s already serves %d '
                'connections; try again later' % (self.engine.host,
                                                  self.max_connections))))
        except OSError:
            pass
        finally:
            conn.close()

    def _converse(self, conn):
        """Answer request lines on ``conn`` until it closes, is idle for
        ``idle_timeout`` or the server stops."""
        peer = _peer(conn)
        try:
            conn.settimeout(self.idle_timeout)
            with conn.makefile('rb') as reader:
                while not self._stopping.is_set():
                    line = reader.readline(protocol.MAX_REQUEST + 1)
                    if not line:
                        return
                    if not line.endswith(b'\n'):
                        conn.sendall(protocol.encode(protocol.failure(
                            protocol.BAD_REQUEST, 'request longer than %d '
                            'bytes or not ended by a newline'
                            % protocol.MAX_REQUEST)))
                        return
                    with self._lock:
                        self._answering += 1
                    try:
                        conn.sendall(protocol.encode(
                            self._respond(line, peer)))
                    finally:
                        with self._lock:
                            self._answering -= 1
                            self._answered.notify_all()
        except socket.timeout:
            LOG.debug('faultdriver control connection %s closed: idle for '
                      '%ss', peer, self.idle_timeout)
        except OSError as exc:
            LOG.debug('faultdriver control connection %s ended: %s',
                      peer, exc)
        finally:
            with self._lock:
                self._connections.discard(conn)
            conn.close()

    def _respond(self, line, peer):
        try:
            request = protocol.decode(line)
        except ValueError as exc:
            return protocol.failure(protocol.BAD_REQUEST, str(exc))
        try:
            result = self._ops.handle(request)
        except protocol.ControlError as exc:
            return protocol.failure(exc.kind, str(exc))
        except Exception as exc:
            LOG.exception('faultdriver control request %r failed', request)
            return protocol.failure(protocol.INTERNAL, '%s: %s' % (
                type(exc).__name__, exc))
        if _changes(request):
            LOG.warning('faultdriver control of %s by %s: %s -> %s',
                        self.engine.host, peer, request, result)
        return protocol.success(result)


def _changes(request):
    """Whether ``request`` (answered) changed something: it is logged."""
    if request['op'] == 'timer':
        return request.get('on') is not None
    return request['op'] not in _READS


def _peer(conn):
    """``pid=N uid=N`` of the connected process where the OS tells."""
    option = getattr(socket, 'SO_PEERCRED', None)
    if option is None:
        return 'a local process'
    try:
        pid, uid, _gid = struct.unpack(
            '3i', conn.getsockopt(socket.SOL_SOCKET, option,
                                  struct.calcsize('3i')))
    except OSError:
        return 'a local process'
    return 'pid=%d uid=%d' % (pid, uid)
