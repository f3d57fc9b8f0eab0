"""TCP relays into the network namespaces of the libvirt tier's hosts.

Each libvirt host has a network namespace of its own, so that its
guests' taps (``tap`` + the port id's first 11 characters, the same name
on every host) do not clash with another host's, as on separate
machines.  Everything else on the stack still listens on this machine's
loopback, which a namespace does not share: its own ``127.0.0.1`` is
empty.  A :class:`Relay` therefore listens inside each host's namespace
on the addresses the host's processes use, and connects each accepted
connection in the namespace where the service really is:

- the controller's services (the broker, the databases, the APIs and
  the stand-ins): ``127.0.0.1:PORT`` in the host's namespace leads to
  ``127.0.0.1:PORT`` on this machine, so configuration stays the same on
  every tier;
- the other hosts: libvirtd's TCP port and QEMU's migration ports on a
  peer's loopback address lead into that peer's namespace, where its
  libvirtd and QEMU listen (a live migration's control and data).

A socket belongs to the namespace it was created in; a thread enters a
namespace with ``setns(2)`` only for the moment it creates one
(:func:`socket_in`), so the relay's own threads stay in this machine's.
"""

import ctypes
import errno
import os
import socket
import threading
import typing

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


def _setns(fd: int) -> None:
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        code = ctypes.get_errno()
        raise OSError(code, 'setns: %s' % os.strerror(code))


def socket_in(netns: typing.Optional[str]) -> socket.socket:
    """A TCP socket created inside the network namespace ``netns`` (a
    path such as ``/proc/PID/ns/net``; None: this thread's own)."""
    if netns is None:
        return socket.socket()
    own = os.open('/proc/thread-self/ns/net', os.O_RDONLY)
    try:
        target = os.open(netns, os.O_RDONLY)
        try:
            _setns(target)
            try:
                return socket.socket()
            finally:
                _setns(own)
        finally:
            os.close(target)
    finally:
        os.close(own)


def _pump(source: socket.socket, target: socket.socket) -> None:
    """Copy until ``source`` ends, then end ``target``'s sending side."""
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            target.sendall(data)
    except OSError:
        pass
    finally:
        for sock, how in ((target, socket.SHUT_WR), (source, socket.SHUT_RD)):
            try:
                sock.shutdown(how)
            except OSError:
                pass


class Relay:
    """The stack's relays: :meth:`forward`, then :meth:`stop`."""

    def __init__(self) -> None:
        self._listeners: list[socket.socket] = []
        self._stopped = threading.Event()

    def forward(self, listen_netns: typing.Optional[str], address: str,
                port: int, connect_netns: typing.Optional[str]) -> None:
        """Accept on ``address:port`` inside ``listen_netns`` and connect
        each connection to the same address and port inside
        ``connect_netns`` (None: this machine's namespace)."""
        listener = socket_in(listen_netns)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((address, port))
        listener.listen(64)
        self._listeners.append(listener)
        threading.Thread(
            target=self._accept, args=(listener, address, port,
                                       connect_netns),
            name='relay-%s:%d' % (address, port), daemon=True).start()

    def _accept(self, listener: socket.socket, address: str, port: int,
                connect_netns: typing.Optional[str]) -> None:
        while not self._stopped.is_set():
            try:
                client, _peer = listener.accept()
            except OSError as exc:
                if exc.errno in (errno.EINTR, errno.ECONNABORTED):
                    continue
                return      # closed by stop()
            threading.Thread(
                target=self._connect,
                args=(client, address, port, connect_netns),
                daemon=True).start()

    def _connect(self, client: socket.socket, address: str, port: int,
                 connect_netns: typing.Optional[str]) -> None:
        try:
            upstream = socket_in(connect_netns)
            upstream.connect((address, port))
        except OSError:
            # Nothing listens there (yet, or any more): the client sees
            # the connection refused, as it would without the relay.
            client.close()
            return
        for sock in (client, upstream):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        back = threading.Thread(target=_pump, args=(upstream, client),
                                daemon=True)
        back.start()
        _pump(client, upstream)
        back.join()
        client.close()
        upstream.close()

    def stop(self) -> None:
        """Stop accepting (connections already relayed end with their
        ends); safe to call twice."""
        self._stopped.set()
        for listener in self._listeners:
            try:
                listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            listener.close()
        self._listeners = []
