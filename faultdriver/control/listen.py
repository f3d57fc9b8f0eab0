"""Create the control socket file: mode 0600 from the first instant, a
stale file replaced, a live one refused.

Connecting to an AF_UNIX socket needs write permission on its file, so
the mode decides who can control the host: its owner (nova-compute's
user) and root.  The socket is bound inside a fresh 0700 directory,
made 0600 there and then hard-linked into place, so it is never
reachable with a wider mode (changing the process-wide umask instead
would race with other threads creating files) and a file that appeared
meanwhile is never replaced.  A socket file nobody listens on (left by a
process that crashed) is removed; one that answers belongs to a running
process and is refused, naming it when it is a faultdriver.
"""

import contextlib
import errno
import logging
import os
import socket
import stat
import tempfile

from faultdriver import exception

LOG = logging.getLogger(__name__)

#: Longest AF_UNIX path Linux accepts (sun_path less the final NUL).
MAX_PATH = 107
#: How long to wait for an existing socket to answer.
PROBE_TIMEOUT = 2.0


class SocketInUse(exception.ConfigError):
    """The control socket path is taken by a running process or a file."""


#: The private directory and name the socket is bound at first, next
#: to its path (``tempfile.mkdtemp`` adds 8 characters to the prefix).
_PRIVATE_SUFFIX = '/.fdXXXXXXXX/s'


def _existing(directory):
    """``directory`` or its nearest ancestor that exists."""
    while not os.path.lexists(directory):
        directory = os.path.dirname(directory)
    return directory


def check_path(path):
    """Refuse a socket path that cannot work or is not private enough:
    too long for AF_UNIX (with the temporary name next to it), or whose
    directory others can write (they could put their own socket there
    and receive the commands).  ConfigError naming control_socket."""
    path = os.path.abspath(path)
    _check_length(path)
    parent = os.path.dirname(path)
    _check_length(path, parent + _PRIVATE_SUFFIX,
                  'the temporary path next to it, %s,'
                  % (parent + _PRIVATE_SUFFIX))
    directory = os.path.realpath(_existing(parent))
    try:
        mode = os.stat(directory).st_mode
    except OSError as exc:
        raise exception.ConfigError('[fault_injection] control_socket %s: '
                                    'directory %s cannot be examined: %s'
                                    % (path, directory, exc.strerror))
    if not stat.S_ISDIR(mode):
        raise exception.ConfigError('[fault_injection] control_socket %s: '
                                    '%s is not a directory' % (path,
                                                               directory))
    writable = mode & (stat.S_IWGRP | stat.S_IWOTH)
    if writable and not mode & stat.S_ISVTX:
        raise exception.ConfigError(
            '[fault_injection] control_socket %s: directory %s is writable '
            'by %s (mode %o): they could replace the socket; use a '
            'directory only nova-compute\'s user can write' % (
                path, directory,
                'everyone' if mode & stat.S_IWOTH else 'its group',
                stat.S_IMODE(mode)))


def parent_warning(path):
    """What is risky but allowed about the socket's directory, or None:
    reached through a symlink (whoever can change the link chooses where
    the socket is), or a shared sticky directory such as /tmp (others
    cannot remove the socket but can take its name first)."""
    path = os.path.abspath(path)
    existing = _existing(os.path.dirname(path))
    real = os.path.realpath(existing)
    if real != existing:
        return ('faultdriver: [fault_injection] control_socket %s is '
                'reached through a symbolic link (%s is %s): whoever can '
                'change the link chooses where the socket is' % (
                    path, existing, real))
    mode = os.stat(real).st_mode
    if mode & (stat.S_IWGRP | stat.S_IWOTH):
        return ('faultdriver: [fault_injection] control_socket %s is in %s, '
                'a directory others can write (mode %o): they can take the '
                'socket\'s name first; prefer a directory only '
                'nova-compute\'s user can write' % (
                    path, real, stat.S_IMODE(mode)))
    return None


def listen(path, backlog=16):
    """A listening socket at ``path`` (made absolute), mode 0600."""
    path = os.path.abspath(path)
    check_path(path)
    warning = parent_warning(path)
    if warning:
        LOG.warning(warning)
    parent = os.path.dirname(path)
    os.makedirs(parent, mode=0o700, exist_ok=True)
    _remove_if_stale(path)
    private = tempfile.mkdtemp(prefix='.fd', dir=parent)   # mode 0700
    temp = os.path.join(private, 's')
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        _check_length(path, temp, 'the temporary path %s next to it'
                      % temp)
        sock.bind(temp)
        os.chmod(temp, 0o600)
        sock.listen(backlog)
        try:
            os.link(temp, path)
        except FileExistsError:
            raise SocketInUse('control socket %s appeared while this '
                              'service was creating it: is another '
                              'nova-compute configured with the same '
                              '[fault_injection] control_socket?' % path)
    except BaseException:
        sock.close()
        raise
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        os.rmdir(private)
    return sock


def _check_length(path, measured=None, what=None):
    """ConfigError naming control_socket ``path`` if ``measured`` (the
    path itself unless given) is too long for AF_UNIX."""
    size = len(os.fsencode(measured or path))
    if size > MAX_PATH:
        raise exception.ConfigError(
            '[fault_injection] control_socket %s is too long: %s has %d '
            'bytes and a local socket path at most %d'
            % (path, what or 'it', size, MAX_PATH))


def _remove_if_stale(path):
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(mode):
        raise SocketInUse('[fault_injection] control_socket %s exists and '
                          'is not a socket; faultdriver will not replace it'
                          % path)
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(PROBE_TIMEOUT)
    try:
        probe.connect(path)
    except ConnectionRefusedError:
        LOG.warning('faultdriver: removing stale control socket %s (no '
                    'process listens on it; one probably crashed)', path)
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise SocketInUse('[fault_injection] control_socket %s: a stale '
                              'socket is there and cannot be removed: %s'
                              % (path, exc.strerror))
        return
    except OSError as exc:
        if exc.errno == errno.ENOENT:     # removed meanwhile
            return
        raise SocketInUse('control socket %s exists and cannot be probed '
                          '(%s); remove it if no nova-compute uses it'
                          % (path, exc))
    finally:
        probe.close()
    raise SocketInUse('control socket %s is in use by %s; give every '
                      'nova-compute its own [fault_injection] '
                      'control_socket' % (path, _owner(path)))


def _owner(path):
    """Who answers at ``path``: a faultdriver's host and pid if it is
    one, else just 'another process'."""
    from faultdriver.control import client
    try:
        status = client.Client(path, timeout=PROBE_TIMEOUT).status()
    except Exception:
        return 'another running process'
    return 'the faultdriver of host %s (pid %s)' % (status['host'],
                                                    status['pid'])
