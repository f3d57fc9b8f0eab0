"""Child processes that cannot outlive the run.

Every child gets its own session (so its whole process group can be
signalled) and ``PR_SET_PDEATHSIG`` (so it is killed by the kernel if the
runner itself dies without cleaning up).
"""

import os
import random
import signal
import socket
import subprocess
import typing

from faultdriver import lifeline
from faultdriver.process import netns_relay
from faultdriver import waiting


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now, outside
    the kernel's ephemeral range.

    A port the kernel hands out for ``bind(0)`` is one it also hands out as
    the source port of an outgoing connection: between our check and the
    service binding it, any of the run's hundreds of connections may take
    it (CI saw RabbitMQ refuse to start: ``dist_port_already_used``,
    ``not_erlang``).  Ports outside ``ip_local_port_range`` are only ever
    taken by a listener, which the bind below sees.  Ports handed out by
    this process are not handed out twice.
    """
    low, high = _ephemeral_range()
    candidates = [port for port in range(_LOWEST_PORT, 65536)
                  if not low <= port <= high and port not in _handed_out]
    for port in random.sample(candidates, min(len(candidates), 200)):
        with socket.socket() as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind(('127.0.0.1', port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    # The ephemeral range covers (nearly) every port: the kernel's choice.
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        chosen: int = sock.getsockname()[1]
        return chosen


# Below this are the ports of services a machine may run (and X11's).
_LOWEST_PORT = 10000
_handed_out: set[int] = set()


def _ephemeral_range() -> tuple[int, int]:
    try:
        with open('/proc/sys/net/ipv4/ip_local_port_range') as f:
            low, high = (int(word) for word in f.read().split())
    except (OSError, ValueError):
        low, high = 32768, 60999
    return low, high


def port_open(port: int, host: str = '127.0.0.1',
              netns: typing.Optional[str] = None) -> bool:
    """Whether something listens on ``host:port``; with ``netns`` (a
    libvirt host's network namespace), asked inside it (not when the
    namespace is gone: its processes exited)."""
    try:
        sock = netns_relay.socket_in(netns)
    except OSError:
        return False
    with sock:
        sock.settimeout(0.5)
        try:
            sock.connect((host, port))
            return True
        except OSError:
            return False


def check_alive(processes: typing.Iterable['Process'], what: str) -> None:
    """Raise naming the first of ``processes`` (started ones) that has
    exited: ``what`` is not going to happen.  The message ends with the
    last lines of its output and, for a Nova service, of its own log file
    beside it (``NAME.log``, where oslo.log writes why it exited): a
    stack's teardown removes both."""
    for process in processes:
        if process.popen is not None and not process.alive():
            service_log = os.path.splitext(process.log)[0] + '.log'
            raise RuntimeError('%s: %s exited with %s before it was ready; '
                               'log: %s%s%s' % (
                                   what, process.name, process.returncode,
                                   process.log, tail(process.log),
                                   tail(service_log, lines=8, limit=2000)
                                   if service_log != process.log else ''))


def read_end(path: str, limit: int) -> str:
    """The last ``limit`` bytes of ``path`` as text, or '' if it cannot
    be read (a log a service never wrote)."""
    try:
        with open(path, 'rb') as stream:
            stream.seek(max(0, os.fstat(stream.fileno()).st_size - limit))
            return stream.read().decode('utf-8', 'replace')
    except OSError:
        return ''


def tail(path: str, lines: int = 5, limit: int = 1000) -> str:
    """``path``'s last ``lines`` (at most ``limit`` characters), after
    ' ending: ', or '' if there are none."""
    text = read_end(path, limit)
    last = ' | '.join(line.strip() for line in text.splitlines()[-lines:]
                      if line.strip())
    return ' ending: %s' % last[-limit:] if last else ''


def wait_until(check: typing.Callable[[], object], timeout: float, what: str,
               interval: float = 0.2,
               process: typing.Optional['Process'] = None) -> bool:
    """Poll ``check()`` until true (:func:`faultdriver.waiting.until`);
    stop at once if ``process`` exits first; name its log on failure."""
    def ready() -> typing.Optional[bool]:
        if check():
            return True
        check_alive([process] if process else [], what)
        return None
    return waiting.until(ready, timeout, '%s%s' % (
        what, '; log: %s' % process.log if process else ''), interval)


class Process:
    """One named child process, its log file and its process group.

    ``PR_SET_PDEATHSIG`` fires when the *thread* that started the child
    ends: start a process that must outlive a worker thread from a
    thread that lives as long (the stack starts its services from the
    thread that runs it).
    """

    def __init__(self, name: str, argv: typing.Iterable[str], log: str,
                 env: typing.Optional[typing.Mapping[str, str]] = None,
                 cwd: typing.Optional[str] = None) -> None:
        self.name = name
        self.argv = list(argv)
        self.log = log
        self.env = env
        self.cwd = cwd
        self.popen: typing.Optional['subprocess.Popen[bytes]'] = None
        self.marker: typing.Optional[str] = None

    def start(self) -> 'Process':
        env = dict(os.environ)
        env.update(self.env or {})
        with open(self.log, 'ab') as out:
            self.popen = subprocess.Popen(
                self.argv, stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.STDOUT, env=env, cwd=self.cwd,
                start_new_session=True, preexec_fn=lifeline.die_with_parent)
        _register_session(env, self.popen.pid)
        #: The stack's marker it carries (None: not a stack's).
        self.marker = env.get(MARKER)
        return self

    @property
    def pid(self) -> typing.Optional[int]:
        return self.popen.pid if self.popen else None

    @property
    def returncode(self) -> typing.Optional[int]:
        return self.popen.poll() if self.popen else None

    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def wait(self, timeout: typing.Optional[float]) -> int:
        assert self.popen is not None, 'wait() follows start()'
        return self.popen.wait(timeout)

    def signal(self, signum: int) -> None:
        if self.popen is not None and self.alive():
            try:
                os.killpg(self.popen.pid, signum)
            except ProcessLookupError:
                pass

    def stop(self, grace: float = 5.0) -> None:
        """SIGTERM the group, SIGKILL what is left after ``grace``
        (at once if ``grace`` is 0)."""
        if self.popen is None:
            return
        if grace:
            self.signal(signal.SIGTERM)
            try:
                self.popen.wait(grace)
            except subprocess.TimeoutExpired:
                pass
        if self.alive():
            try:
                os.killpg(self.popen.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        else:
            # The group may hold children of the exited leader: kill them
            # too, by their marker.  Never by the group's number alone:
            # the leader's pid is free once it was waited for, and
            # another process (another stack's: stacks run side by side)
            # may lead a group of that number now.
            for pid in marked_in_group(self.popen.pid, self.marker):
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        # Until the kill landed: with grace 0 a wait of 0 s returned
        # before it did, and a restart right after found the process
        # "still running".
        try:
            self.popen.wait(KILL_WAIT)
        except subprocess.TimeoutExpired:
            pass


#: Seconds ``stop`` waits for a SIGKILLed process to be gone (it takes
#: milliseconds, unless the process is stuck in the kernel).
KILL_WAIT = 30

MARKER = 'FAULTDRIVER_STACK'
#: File in the marker's directory: the session of every child started
#: with the marker, one per line.
SESSIONS = 'sessions'


def _register_session(env: typing.Mapping[str, str], pid: int) -> None:
    """Remember a marked child's session (its pid: it leads a new one)."""
    folder = env.get(MARKER)
    if folder and os.path.isdir(folder):
        with open(os.path.join(folder, SESSIONS), 'a') as out:
            out.write('%d\n' % pid)


def sessions_of_stack(marker_value: str) -> set[int]:
    try:
        with open(os.path.join(marker_value, SESSIONS)) as stream:
            return {int(line) for line in stream if line.strip()}
    except (OSError, ValueError):
        return set()


def _live_processes() -> typing.Iterator[
        tuple[int, list[bytes], typing.Optional[str]]]:
    """``(pid, stat fields, stack marker or None)`` of every live process
    but this one (not zombies: their parent has yet to wait for them)."""
    for entry in os.listdir('/proc'):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            fields = _stat_fields(entry)
            if fields[0] != b'Z':
                yield int(entry), fields, _environ_marker(entry)
        except (OSError, IndexError, ValueError):
            continue


def alive_in_sessions(sessions: typing.Container[int],
                      marker_value: typing.Optional[str] = None) -> list[int]:
    """Pids of live processes in any of ``sessions``; with
    ``marker_value`` (the stack whose sessions they are), not those
    carrying another stack's marker: a session number is a pid, which
    another stack's session may have now."""
    return [pid for pid, fields, marker in _live_processes()
            if int(fields[3]) in sessions and marker in (None, marker_value)]


def _stat_fields(pid: typing.Union[int, str]) -> list[bytes]:
    """``/proc/PID/stat``'s fields after the command: state, ppid, pgrp,
    session, ..."""
    with open('/proc/%s/stat' % pid, 'rb') as f:
        # pid (comm) state ppid pgrp session ...; comm may hold spaces.
        return f.read().rsplit(b')', 1)[1].split()


def _environ_marker(pid: typing.Union[int, str]) -> typing.Optional[str]:
    """The MARKER value in ``pid``'s environment (None without one)."""
    with open('/proc/%s/environ' % pid, 'rb') as f:
        for item in f.read().split(b'\0'):
            if item.startswith(MARKER.encode() + b'='):
                return item.split(b'=', 1)[1].decode('utf-8', 'replace')
    return None


def descendants(pid: int) -> list[int]:
    """Pids of ``pid``'s live children, theirs, and so on: what a daemon
    forked into sessions of their own (sshd's per-connection processes
    call setsid and overwrite their environment with their title, so
    neither the group nor the marker finds them)."""
    children: dict[int, list[int]] = {}
    for each, fields, _ in _live_processes():
        children.setdefault(int(fields[1]), []).append(each)
    found: list[int] = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def marked_in_group(pgid: int,
                    marker_value: typing.Optional[str]) -> list[int]:
    """Pids of live processes in process group ``pgid`` whose
    environment carries ``marker_value`` (none without a marker)."""
    if not marker_value:
        return []
    return [pid for pid, fields, marker in _live_processes()
            if int(fields[2]) == pgid and marker == marker_value]


def reap(marker_value: str) -> list[int]:
    """SIGKILL every process whose environment carries our marker, or
    that runs in the session of a child started with it.

    The marker catches what escaped its process group (Erlang starts
    ``epmd -daemon`` on its own when a node or CLI finds none running);
    the sessions catch what hides its environment (oslo's setproctitle
    overwrites it: nova-conductor's forked workers) once their parent
    died with the runner.  A session number is a pid: once its leader is
    gone, another stack's process may lead a session of that number, so
    what carries another stack's marker is that stack's.
    """
    sessions = sessions_of_stack(marker_value)
    killed: list[int] = []
    for pid, fields, marker in _live_processes():
        if marker == marker_value or (marker is None and
                                      int(fields[3]) in sessions):
            try:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            except OSError:
                continue
    return killed
