"""``faultdriver ctl relay``: a control socket on stdin and stdout.

Where sshd forbids stream-local forwarding (``AllowStreamLocalForwarding
no``), or the socket lives inside a container (``docker exec
nova_compute faultdriver ctl relay``), the runner reaches the control
socket by running this over SSH: every byte read on stdin goes to the
socket, every byte the socket sends goes to stdout, until both sides
have closed.  One run carries one control connection; the protocol is
the socket's own (:mod:`faultdriver.control.protocol`), untouched.

It runs on the compute host, in nova-compute's environment, so it
imports nothing beyond the standard library.
"""

import argparse
import os
import socket
import sys
import threading
import typing

#: Bytes moved per read.
CHUNK = 65536


class SocketAbsent(Exception):
    """Nothing listens at the socket path; names it."""


def connect(path: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError as exc:
        sock.close()
        raise SocketAbsent('no faultdriver control server at %s: %s'
                           % (path, exc.strerror or exc)) from None
    return sock


def relay(path: str, stdin_fd: int = 0, stdout_fd: int = 1) -> None:
    """Relay between the socket at ``path`` and the two descriptors until
    the socket closes; SocketAbsent before any byte moves if nothing
    listens there."""
    sock = connect(path)

    def upstream() -> None:
        # stdin to the socket; its end becomes the socket's half-close,
        # so the server still answers the last request.
        try:
            while True:
                data = os.read(stdin_fd, CHUNK)
                if not data:
                    break
                sock.sendall(data)
        except OSError:
            pass
        finally:
            try:
                sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    threading.Thread(target=upstream, daemon=True,
                     name='faultdriver-relay').start()
    try:
        while True:
            try:
                data = sock.recv(CHUNK)
            except ConnectionResetError:
                data = b''
            if not data:
                return
            view = memoryview(data)
            while view:
                view = view[os.write(stdout_fd, view):]
    finally:
        sock.close()


def main(argv: typing.Optional[typing.List[str]] = None) -> int:
    """``python3 -m faultdriver.cloud.relay --socket PATH``: exit 0 when
    the connection ended, 2 naming the path when nothing listens."""
    parser = argparse.ArgumentParser(prog='faultdriver ctl relay')
    parser.add_argument('--socket', required=True, metavar='PATH')
    args = parser.parse_args(argv)
    try:
        relay(args.socket)
    except SocketAbsent as exc:
        sys.stderr.write('%s\n' % exc)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main())
