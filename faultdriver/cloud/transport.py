"""OpenSSH to a compute: one ControlMaster per host, its control socket
forwarded to a private local socket.

Only ``ssh HOST`` is run, so ``~/.ssh/config`` (aliases such as the seed
report's ``devstack0a``, users, keys, jump hosts) applies as it does for
the operator; nothing here reads that file.  A stack that writes its own
ssh_config passes it as ``ssh_config`` (``ssh -F``).

The compute's control socket is forwarded with ``-L LOCAL:REMOTE`` into
a directory of mode 0700 that only this run can enter, the local socket
created 0600 (``StreamLocalBindMask=0177``), so
:class:`faultdriver.control.client.Client` talks to it unchanged and no
network port is opened on either side.  Where sshd forbids stream-local
forwarding (``AllowStreamLocalForwarding no``), the same local socket is
served by :class:`LocalRelay`: each connection runs ``faultdriver ctl
relay --socket REMOTE`` on the host through the master (slower: one
remote command per connection).

Every failure to reach the host is a :class:`~.errors.HostRefused`
naming the host and the fact: host down or unreachable, key refused,
socket absent.
"""

import dataclasses
import io
import os
import shlex
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import typing

from faultdriver.cloud import errors
from faultdriver.control import client as control_client
from faultdriver.control import protocol
from faultdriver import lifeline

#: ssh's own exit status when it, not the remote command, failed.
SSH_FAILED = 255
#: Seconds a probe of the forwarded socket may take.
PROBE_TIMEOUT = 10.0
#: What ssh writes when it fails, and the fact each means (first wins).
_FACTS = (
    ('Permission denied', errors.KEY_REFUSED),
    ('Too many authentication failures', errors.KEY_REFUSED),
    ('Host key verification failed', 'host key not trusted'),
    # sshd answers a forward it forbids as one it could not connect;
    # the socket was seen there first, so this is the refusal.
    ('open failed', errors.FORWARD_REFUSED),
)


@dataclasses.dataclass(frozen=True)
class SshTarget:
    """How to reach one host: what ``ssh`` takes as its host argument (an
    alias of ``~/.ssh/config`` or ``user@name``), an ssh_config file to
    use instead of the user's own (``-F``), and the command that runs
    the relay there (kolla: ``docker exec nova_compute faultdriver ctl
    relay``)."""

    host: str
    ssh_config: typing.Optional[str] = None
    relay_command: typing.Tuple[str, ...] = ('faultdriver', 'ctl', 'relay')
    connect_timeout: int = 10


def classify(host: str, text: str) -> errors.HostRefused:
    """The HostRefused ssh's message ``text`` means."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    detail = lines[-1] if lines else 'ssh exited %d' % SSH_FAILED
    for marker, fact in _FACTS:
        for line in lines:
            if marker in line:
                return errors.HostRefused(host, fact, line.strip())
    return errors.HostRefused(host, errors.HOST_DOWN, detail)


class Transport:
    """SSH to ``target.host``: a master connection, command runs through
    it, and control sockets forwarded (or relayed) to local ones.

    Use as a context manager, or call :meth:`open` and :meth:`close`.
    """

    def __init__(self, target: SshTarget,
                 workdir: typing.Optional[str] = None) -> None:
        self.target = target
        # Private to this run: the master's socket, the forwarded
        # sockets and ssh's log, none reachable by other users.
        self.directory = tempfile.mkdtemp(prefix='fdssh', dir=workdir)
        self.master = os.path.join(self.directory, 'master')
        self.log = os.path.join(self.directory, 'ssh.log')
        #: remote socket -> 'forward' | 'relay'
        self.mode: typing.Dict[str, str] = {}
        #: remote socket -> local socket
        self._local: typing.Dict[str, str] = {}
        self._relays: typing.List[LocalRelay] = []
        self._opened = False
        #: The master connection's process (a child of this one).
        self._master: typing.Optional[
            'subprocess.Popen[bytes]'] = None

    def __enter__(self) -> 'Transport':
        try:
            return self.open()
        except BaseException:
            self.close()        # the private directory goes too
            raise

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def host(self) -> str:
        return self.target.host

    def _ssh(self, *options: str) -> typing.List[str]:
        argv = ['ssh']
        if self.target.ssh_config:
            argv += ['-F', self.target.ssh_config]
        return argv + [
            '-o', 'BatchMode=yes',
            '-o', 'ConnectTimeout=%d' % self.target.connect_timeout,
            '-o', 'ControlPath=%s' % self.master] + list(options)

    def _log_since(self, offset: int) -> str:
        try:
            with open(self.log, errors='replace') as f:
                f.seek(offset)
                return f.read()
        except FileNotFoundError:
            return ''

    def _log_size(self) -> int:
        try:
            return os.path.getsize(self.log)
        except FileNotFoundError:
            return 0

    def open(self) -> 'Transport':
        """Start the master connection; HostRefused if the host cannot be
        reached or refuses the key."""
        if shutil.which('ssh') is None:
            raise errors.HostRefused(self.host, 'no ssh client here',
                                     'apt-get install openssh-client')
        start = self._log_size()
        # In the foreground (no -f, which would put it in a session of
        # its own): a child in this process's group, so a runner killed
        # with its group takes the master (and its forwards) down with
        # it; opened from the main thread, it also dies with the runner
        # alone (PR_SET_PDEATHSIG follows the thread that started it).
        # Its messages go to the log (-E), as pipes it inherited would
        # keep a caller reading them waiting for good.
        argv = self._ssh('-o', 'ControlMaster=yes',
                         '-o', 'ControlPersist=no',
                         '-o', 'StreamLocalBindMask=0177',
                         '-o', 'StreamLocalBindUnlink=yes',
                         '-o', 'ExitOnForwardFailure=yes',
                         '-E', self.log, '-NT', self.host)
        main_thread = threading.current_thread() is threading.main_thread()
        self._master = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=lifeline.die_with_parent if main_thread else None)
        limit = self.target.connect_timeout * 3
        deadline = time.monotonic() + limit
        while not self._master_answers():
            if self._master.poll() is not None:
                self._master = None
                raise classify(self.host, self._log_since(start))
            if time.monotonic() > deadline:
                self._master.kill()
                self._end_master()
                raise errors.HostRefused(
                    self.host, errors.HOST_DOWN,
                    'no SSH session within %ds' % limit)
            time.sleep(0.1)
        self._opened = True
        return self

    def _master_answers(self) -> bool:
        """Whether the master is up: its control socket exists (ssh
        creates it once authenticated) and answers ``-O check``."""
        if not os.path.exists(self.master):
            return False
        return subprocess.run(
            self._ssh('-O', 'check', self.host), stdin=subprocess.DEVNULL,
            capture_output=True, timeout=30).returncode == 0

    def _end_master(self) -> None:
        """Wait for the master to exit; SIGKILL it after a while."""
        if self._master is None:
            return
        try:
            self._master.wait(10)
        except subprocess.TimeoutExpired:
            self._master.kill()
            self._master.wait(10)
        self._master = None

    def close(self) -> None:
        """End relays, the master and its forwards; remove the directory."""
        for each in self._relays:
            each.stop()
        self._relays = []
        if self._opened:
            # The master ends itself once asked (its forwards with it).
            subprocess.run(self._ssh('-O', 'exit', self.host),
                           stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=30)
            self._opened = False
        elif self._master is not None:
            self._master.terminate()    # started, never answered
        self._end_master()
        shutil.rmtree(self.directory, ignore_errors=True)

    # -- commands ------------------------------------------------------------

    def command(self, argv: typing.Sequence[object]) -> typing.List[str]:
        """The local argv that runs ``argv`` on the host (through the
        master when it is open).  ssh hands the remote shell one string,
        so each argument is quoted."""
        return self._ssh(self.host, '--',
                         ' '.join(shlex.quote(str(a)) for a in argv))

    def run(self, argv: typing.Sequence[object],
            input: typing.Optional[bytes] = None,
            timeout: float = 120) -> 'subprocess.CompletedProcess[bytes]':
        """Run ``argv`` on the host; CompletedProcess with bytes.
        HostRefused when ssh itself failed (exit 255)."""
        start = self._log_size()
        try:
            done = subprocess.run(self.command(argv), input=input,
                                  capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise errors.HostRefused(
                self.host, 'no answer within %ss' % timeout,
                ' '.join(str(a) for a in argv[:3])) from None
        if done.returncode == SSH_FAILED:
            raise classify(self.host, done.stderr.decode(errors='replace')
                           + self._log_since(start))
        return done

    # -- control sockets -----------------------------------------------------

    def control_socket(self, remote: str) -> str:
        """A local socket path whose connections reach the control socket
        ``remote`` on the host: forwarded, or relayed where sshd forbids
        forwarding.  HostRefused ``socket absent`` if no socket is there,
        or naming what else went wrong."""
        if remote in self._local:
            return self._local[remote]
        if not self._opened:
            self.open()
        if self.run(['test', '-S', remote]).returncode != 0:
            raise errors.HostRefused(
                self.host, errors.SOCKET_ABSENT,
                '%s is not a socket there: is nova-compute running with '
                '[fault_injection] control_socket = %s?' % (remote, remote))
        local = os.path.join(self.directory, 'c%d.sock' % len(self._local))
        start = self._log_size()
        done = subprocess.run(
            self._ssh('-O', 'forward', '-L', '%s:%s' % (local, remote),
                      self.host),
            stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
        if done.returncode != 0:
            # The master could not set the forward up (its own side).
            said = done.stderr.decode(errors='replace').strip()
            raise errors.HostRefused(self.host, 'forward failed',
                                     said.splitlines()[-1] if said else
                                     'ssh -O forward exited %d'
                                     % done.returncode)
        os.chmod(local, 0o600)
        refusal = self._probe(local, start)
        if refusal is None:
            self.mode[remote] = 'forward'
        elif refusal.fact == errors.FORWARD_REFUSED:
            subprocess.run(
                self._ssh('-O', 'cancel', '-L', '%s:%s' % (local, remote),
                          self.host),
                stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
            if os.path.lexists(local):
                os.unlink(local)
            relay = LocalRelay(self, remote, local).start()
            self._relays.append(relay)
            refusal = self._probe(local, self._log_size(), relayed=True)
            if refusal is not None:
                raise refusal
            self.mode[remote] = 'relay'
        else:
            raise refusal
        self._local[remote] = local
        return local

    def _probe(self, local: str, log_start: int,
               relayed: bool = False) -> typing.Optional[errors.HostRefused]:
        """None if a control server answers ``status`` at ``local``, else
        the HostRefused ssh's log explains (forwarding refused, or what
        the relay said)."""
        try:
            control_client.Client(local, timeout=PROBE_TIMEOUT).status()
            return None
        except protocol.ControlError as exc:
            failure = exc
        # The master logs a refused channel as it closes it, and writes
        # the relay's words as they arrive, maybe after the connection
        # ended: give the line a moment to reach the file.
        wanted = '\n' if relayed else 'open failed'
        deadline = time.monotonic() + 2.0
        while True:
            text = self._log_since(log_start)
            if wanted in text or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        refusal = classify(self.host, text) if text.strip() else None
        if refusal is not None and refusal.fact != errors.HOST_DOWN:
            return refusal
        # What the relay said on the host (nothing listens, permission
        # denied) is the log's last line.
        return errors.HostRefused(
            self.host, 'control socket not answering',
            refusal.detail if refusal is not None else str(failure))


class LocalRelay:
    """A local socket at ``local`` (in the transport's private directory,
    mode 0600) whose every connection is carried by one run of the relay
    command on the host: the fallback where sshd forbids forwarding."""

    def __init__(self, transport: Transport, remote: str,
                 local: str) -> None:
        self.transport = transport
        self.remote = remote
        self.local = local
        self._stopping = threading.Event()
        self._listener: typing.Optional[socket.socket] = None
        self._thread: typing.Optional[threading.Thread] = None

    def start(self) -> 'LocalRelay':
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener = listener
        listener.bind(self.local)
        os.chmod(self.local, 0o600)
        listener.listen(16)
        listener.settimeout(0.25)
        self._thread = threading.Thread(target=self._accept,
                                        args=(listener,), daemon=True,
                                        name='faultdriver-local-relay')
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(5)
        if self._listener is not None:
            self._listener.close()
        if os.path.lexists(self.local):
            os.unlink(self.local)

    def _accept(self, listener: socket.socket) -> None:
        while not self._stopping.is_set():
            try:
                conn, _ = listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            threading.Thread(target=self._carry, args=(conn,), daemon=True,
                             name='faultdriver-local-relay-conn').start()

    def _carry(self, conn: socket.socket) -> None:
        argv = list(self.transport.target.relay_command) + [
            '--socket', self.remote]
        with open(self.transport.log, 'ab') as log:
            proc = subprocess.Popen(self.transport.command(argv),
                                    stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=log)
        # Both pipes are there (PIPE above), stdout buffered (bufsize's
        # default): what read1 needs.
        stdin = proc.stdin
        stdout = proc.stdout
        assert stdin is not None and isinstance(stdout, io.BufferedReader)

        def upstream() -> None:
            try:
                while True:
                    data = conn.recv(65536)
                    if not data:
                        break
                    stdin.write(data)
                    stdin.flush()
            except OSError:
                pass
            finally:
                try:
                    stdin.close()
                except OSError:
                    pass

        threading.Thread(target=upstream, daemon=True).start()
        try:
            while True:
                data = stdout.read1(65536)
                if not data:
                    break
                conn.sendall(data)
        except OSError:
            pass
        finally:
            stdout.close()
            proc.wait()
            # shutdown, not only close: the upstream thread's recv holds
            # the socket, and a close alone would send nothing until it
            # returns -- the client would wait for an answer for good.
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            conn.close()
