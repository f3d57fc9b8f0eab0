"""A standing process-tier stack: the cloud ``faultdriver stack up`` starts.

The supervisor is a detached process (its own session; no
die-with-parent, so it outlives ``stack up``) that runs a
:class:`~faultdriver.process.stack.Stack` with Keystone and two
fake_numa computes, one key-only sshd per compute, and serves a small
unix control socket (mode 0600, no TCP) for what a cloud's service
manager does to a compute: stop (SIGTERM, bounded, then SIGKILL), crash
(SIGKILL of that compute's process group only), start, state (running,
stopped or crashed), and down.  The stack's own guardian semantics stay:
the supervisor is the parent, so if it dies its children die with it
and the guardian removes what is left.

Requests are served one at a time from the main thread: a compute
restarted there dies with the supervisor (``PR_SET_PDEATHSIG`` follows
the thread that started a child).

Its pidfile, socket and state (``stack.json``) are in a directory known
to both sides without configuration (:func:`state_dir`: per user), so a
host helper reached over SSH as that user finds it; one standing stack
per user.
"""

import argparse
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import typing

from faultdriver import hostshape
from faultdriver.process import config
from faultdriver.process import keystone
from faultdriver.process import network_standin
from faultdriver.process import procs
from faultdriver.process import runner
from faultdriver.process import sshd
from faultdriver.process import stack as stack_module
from faultdriver.process import standins

#: The scenario's host aliases -> the standing cloud's computes (names
#: of their own, so the cloud tier's host translation is exercised).
COMPUTES = {'src': 'compute1', 'dest': 'compute2'}
PIDFILE = 'supervisor.pid'
SOCKET = 'supervisor.sock'
STATE = 'stack.json'
LOG = 'supervisor.log'
#: Seconds a graceful stop of a compute may take by default.
STOP_BOUND = 60.0
#: How the supervisor is started (``python -m MODULE``).
MODULE = 'faultdriver.process.supervisor'


def state_dir() -> str:
    """``~/.local/state/faultdriver/stack`` of the user running this
    (from the password database, not $HOME: an ssh login and a CI job
    may see different ones).  The host helper computes the same path."""
    home = pwd.getpwuid(os.getuid()).pw_dir
    return os.path.join(home, '.local', 'state', 'faultdriver', 'stack')


def _path(name: str) -> str:
    return os.path.join(state_dir(), name)


def running_pid() -> typing.Optional[int]:
    """The live supervisor's pid, or None.  A pidfile left behind may
    name a pid another process has now: only a process running this
    module counts (so ``stack down`` never signals a stranger)."""
    try:
        with open(_path(PIDFILE)) as f:
            pid = int(f.read().strip())
        with open('/proc/%d/cmdline' % pid, 'rb') as f:
            argv = f.read().split(b'\0')
    except (OSError, ValueError):
        return None
    return pid if MODULE.encode() in argv else None


def read_state() -> dict[str, typing.Any]:
    try:
        with open(_path(STATE)) as f:
            state: dict[str, typing.Any] = json.load(f)
            return state
    except (OSError, ValueError):
        return {}


def _write_json(path: str, data: object, mode: int = 0o600) -> None:
    tmp = path + '.tmp'
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, 'w') as out:
        json.dump(data, out, indent=1)
    os.rename(tmp, path)


def call(request: dict[str, typing.Any], path: typing.Optional[str] = None,
         timeout: float = 180) -> dict[str, typing.Any]:
    """One request to the supervisor's socket; its answer."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(path or _path(SOCKET))
        sock.sendall(json.dumps(request).encode() + b'\n')
        data = b''
        while not data.endswith(b'\n'):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    answer: dict[str, typing.Any] = json.loads(data or b'{}')
    return answer


class Supervisor:
    """The stack, its sshds and its client files; serving requests."""

    def __init__(self, out: str, name: str, keystone_on: bool,
                 owner: typing.Optional[str]) -> None:
        self.out = os.path.abspath(out)
        self.name = name
        self.owner = owner
        #: The stack's directory (0700: nobody else reads it).
        self.stack_dir = tempfile.mkdtemp(prefix='faultdriver-stack-')
        faults: dict[str, config.ComputeFaults] = {
            host: {'inner_driver': 'fake_numa', 'enabled': True,
                   'extra': runner.host_settings(hostshape.PINNED_HOST)}
            for host in COMPUTES.values()}
        for host in COMPUTES.values():
            faults[host]['extra'].setdefault('fault_injection', {})[
                'start_rules_path'] = self.start_rules(host)
        self.stack = stack_module.Stack(
            hosts=tuple(COMPUTES.values()), faults=faults, mode='threading',
            keystone=keystone_on, progress=self.progress,
            workdir=self.stack_dir)
        #: compute -> 'stopped' or 'crashed' when we ended it.
        self.ended: dict[str, str] = {}
        self.sshds: dict[str, procs.Process] = {}
        self.ports = {host: procs.free_port() for host in COMPUTES.values()}
        self.serving = True

    def progress(self, text: str) -> None:
        print(text, flush=True)

    def start_rules(self, host: str) -> str:
        return os.path.join(self.stack_dir, 'compute-%s' % host,
                            'start-rules.json')

    # -- files for clients ------------------------------------------------

    def alias(self, host: str) -> str:
        return '%s-%s' % (self.name, host)

    def _start_sshds(self) -> None:
        """One key-only sshd per compute on its own loopback port; the
        client key pair, known_hosts and ssh_config in ``out``."""
        folder = os.path.join(self.stack.dir, 'sshd')
        os.makedirs(folder, mode=0o700)
        client_key = os.path.join(self.out, 'id_ed25519')
        public = sshd.keygen(client_key)
        known = os.path.join(self.out, 'known_hosts')
        config_lines = []
        with open(known, 'w') as known_out:
            for host, port in self.ports.items():
                here = os.path.join(folder, host)
                os.makedirs(here)
                host_key = sshd.keygen(os.path.join(here, 'host_key'))
                with open(os.path.join(here, 'authorized_keys'), 'w') as f:
                    f.write(public + '\n')
                config = os.path.join(here, 'sshd_config')
                with open(config, 'w') as f:
                    f.write(sshd.server_config(
                        [port], os.path.join(here, 'host_key'),
                        os.path.join(here, 'authorized_keys'),
                        os.path.join(here, 'sshd.pid')))
                known_out.write(sshd.known_host(port, host_key))
                config_lines.append(sshd.client_entry(
                    self.alias(host), port, sshd.user(), client_key, known))
                process = procs.Process(
                    'sshd-%s' % host, sshd.command(config),
                    os.path.join(self.stack.logs, 'sshd-%s.log' % host),
                    env=self.stack.env)
                self.sshds[host] = process.start()
        with open(os.path.join(self.out, 'ssh_config'), 'w') as f:
            f.write(''.join(config_lines))
        for host, port in self.ports.items():
            procs.wait_until(lambda: procs.port_open(port), 30,
                             'sshd %s' % host, process=self.sshds[host])

    def _write_clouds(self) -> None:
        stack = self.stack
        if stack.keystone:
            clouds = {'clouds': {'%s-admin' % self.name: {
                'auth': {'auth_url': stack.keystone_url,
                         'username': keystone.ADMIN,
                         'password': stack.password,
                         'project_name': keystone.ADMIN,
                         'user_domain_name': 'Default',
                         'project_domain_name': 'Default'},
                'auth_type': 'password',
                'region_name': keystone.REGION,
                'interface': 'public',
                'identity_api_version': 3}}}
            _write_yaml(os.path.join(self.out, 'clouds.yaml'), clouds)
        hosts = {}
        for alias, host in COMPUTES.items():
            hosts[alias] = {
                'ssh': self.alias(host), 'host': host, 'nodename': host,
                'manager': 'stack', 'unit': host,
                'socket': stack.control_socket(host),
                'journal': stack.journal_path(host),
                'log': {'file': stack.compute_log(host)},
                'start_rules': self.start_rules(host)}
        profile = {
            'format': 1, 'cloud': '%s-admin' % self.name,
            'clouds_yaml': os.path.join(self.out, 'clouds.yaml'),
            'fault_injection_allowed': True,
            'ssh_config': os.path.join(self.out, 'ssh_config'),
            'hosts': hosts, 'image': standins.IMAGE_ID,
            # The network stand-in's one network: a server with a port.
            'network': network_standin.NETWORK_ID}
        _write_yaml(os.path.join(self.out, 'profile.yaml'), profile)

    def _give(self) -> None:
        """``--owner``: the client files (and ``out``) to that user, who
        need not read anything else of the stack."""
        if not self.owner:
            return
        entry = pwd.getpwnam(self.owner)
        for name in [''] + sorted(os.listdir(self.out)):
            os.chown(os.path.join(self.out, name), entry.pw_uid,
                     entry.pw_gid)

    # -- life -------------------------------------------------------------

    def run(self) -> int:
        os.makedirs(self.out, exist_ok=True)
        os.chmod(self.out, 0o700)
        begin = time.monotonic()
        listener = self._listen()
        signal.signal(signal.SIGTERM, self._terminate)
        try:
            with self.stack:
                self.stack.wait_schedulable()
                self._start_sshds()
                self._write_clouds()
                self._give()
                _write_json(_path(STATE), {
                    'state': 'up', 'pid': os.getpid(),
                    'stack_dir': self.stack.dir, 'out': self.out,
                    'computes': COMPUTES, 'keystone': self.stack.keystone,
                    'seconds': round(time.monotonic() - begin, 1)})
                self.progress('standing cloud up in %.1fs'
                              % (time.monotonic() - begin))
                self._serve(listener)
                self.progress('going down')
                for process in self.sshds.values():
                    # Its connections first: they left its group.
                    leader = process.pid
                    for pid in (procs.descendants(leader)
                                if leader is not None else ()):
                        try:
                            os.kill(pid, signal.SIGKILL)
                        except OSError:
                            pass
                    process.stop(grace=0)
        except BaseException as exc:
            _write_json(_path(STATE), {
                'state': 'failed', 'pid': os.getpid(),
                'error': '%s: %s' % (type(exc).__name__, exc)})
            traceback.print_exc()
            return 1
        finally:
            listener.close()
            for name in (SOCKET, PIDFILE):
                try:
                    os.unlink(_path(name))
                except OSError:
                    pass
        _write_json(_path(STATE), {'state': 'down', 'pid': os.getpid()})
        return 0

    def _terminate(self, signum: int, frame: object) -> None:
        raise SystemExit('supervisor: SIGTERM')

    def _listen(self) -> socket.socket:
        path = _path(SOCKET)
        try:
            os.unlink(path)
        except OSError:
            pass
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            listener.bind(path)
        finally:
            os.umask(old)
        listener.listen(8)
        return listener

    def _serve(self, listener: socket.socket) -> None:
        while self.serving:
            conn, _addr = listener.accept()
            with conn:
                conn.settimeout(30)
                try:
                    data = b''
                    while not data.endswith(b'\n'):
                        chunk = conn.recv(65536)
                        if not chunk:
                            break
                        data += chunk
                    answer = self.handle(json.loads(data or b'{}'))
                except Exception as exc:
                    answer = {'ok': False, 'error': '%s: %s' % (
                        type(exc).__name__, exc)}
                try:
                    conn.sendall(json.dumps(answer).encode() + b'\n')
                except OSError:
                    pass

    # -- requests ---------------------------------------------------------

    def state(self, host: str) -> dict[str, typing.Any]:
        process = self.stack.computes.get(host)
        if process is not None and process.alive():
            return {'state': 'running', 'pid': process.pid}
        # Ended by us, or on its own (a crash action, an exception).
        return {'state': self.ended.get(host, 'crashed'),
                'returncode': process.returncode if process else None}

    def handle(self, request: dict[str, typing.Any]) -> dict[str, typing.Any]:
        op = request.get('op')
        if op == 'down':
            self.serving = False
            return {'ok': True}
        if op == 'status':
            return {'ok': True, 'computes': {
                host: self.state(host) for host in self.stack.computes}}
        host = request.get('compute')
        if host not in self.stack.computes:
            return {'ok': False, 'error': 'no compute %r here (the stack '
                    'has %s)' % (host, ', '.join(sorted(
                        self.stack.computes)))}
        process = self.stack.computes[host]
        if op == 'state':
            return dict(self.state(host), ok=True)
        if op == 'stop':
            bound = float(request.get('timeout', STOP_BOUND))
            start = time.monotonic()
            process.stop(grace=bound)
            self.ended[host] = 'stopped'
            return dict(self.state(host), ok=True, killed=time.monotonic(
            ) - start >= bound)
        if op == 'crash':
            # That compute's process group only: every other service
            # (and the other compute) keeps its pid.
            process.stop(grace=0)
            self.ended[host] = 'crashed'
            return dict(self.state(host), ok=True)
        if op == 'start':
            if process.alive():
                return dict(self.state(host), ok=True, changed=False)
            self.stack.start_compute(host)
            self.ended.pop(host, None)
            return dict(self.state(host), ok=True, changed=True)
        return {'ok': False, 'error': 'unknown op %r (expected state, '
                'stop, crash, start, status or down)' % op}


def _write_yaml(path: str, data: object) -> None:
    import yaml
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, 'w') as out:
        yaml.safe_dump(data, out, default_flow_style=False, sort_keys=False)


# -- the commands' side ---------------------------------------------------

class Refused(Exception):
    """``stack up`` or ``stack down`` cannot do what was asked."""


def up(out: str, name: str, keystone_on: bool, owner: typing.Optional[str],
       timeout: float = 600) -> dict[str, typing.Any]:
    """Start the supervisor detached; wait until its stack is up."""
    running = running_pid()
    if running:
        raise Refused('a standing stack already runs (supervisor pid %d; '
                      '`faultdriver stack down` first)' % running)
    if owner:
        try:
            pwd.getpwnam(owner)
        except KeyError:
            raise Refused('--owner %s: no such user' % owner) from None
    os.makedirs(state_dir(), mode=0o700, exist_ok=True)
    try:
        os.unlink(_path(STATE))
    except OSError:
        pass
    argv = [sys.executable, '-m', MODULE,
            '--out', os.path.abspath(out), '--name', name]
    if not keystone_on:
        argv.append('--no-keystone')
    if owner:
        argv += ['--owner', owner]
    with open(_path(LOG), 'ab') as log:
        # Its own session and no die-with-parent: it outlives `stack up`.
        popen = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=log,
            stderr=subprocess.STDOUT, start_new_session=True,
            cwd='/', env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                p for p in sys.path if p)))
    with open(_path(PIDFILE), 'w') as f:
        f.write('%d\n' % popen.pid)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = read_state()
        if state.get('pid') == popen.pid and state.get('state') == 'up':
            return state
        if state.get('state') == 'failed' or popen.poll() is not None:
            popen.wait()
            raise Refused('the stack did not start: %s (log: %s)' % (
                state.get('error', 'exit %s' % popen.returncode),
                _path(LOG)))
        time.sleep(0.5)
    down()
    raise Refused('the stack was not up in %ds (log: %s)' % (timeout,
                                                            _path(LOG)))


def down(timeout: float = 120) -> bool:
    """End the standing stack and everything of it; False if none ran."""
    pid = running_pid()
    state = read_state()
    stack_dir = state.get('stack_dir')
    if pid is None:
        _sweep(stack_dir)
        return False
    try:
        call({'op': 'down'}, timeout=30)
    except (OSError, ValueError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.2)
    if _alive(pid):
        # Its children die with it; the guardian removes the rest.
        os.kill(pid, signal.SIGKILL)
    _sweep(stack_dir)
    return True


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    # A zombie of ours (stack up in the same process) counts as gone.
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except OSError:
        return False


def _sweep(stack_dir: typing.Optional[str], timeout: float = 60) -> None:
    """Wait for the guardian to have left nothing of ``stack_dir``; kill
    what is left past ``timeout``."""
    if not stack_dir:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not procs.alive_in_sessions(procs.sessions_of_stack(stack_dir),
                                       stack_dir) and not any(
                marker == stack_dir
                for _pid, _fields, marker in procs._live_processes()):
            break
        time.sleep(0.2)
    procs.reap(stack_dir)
    shutil.rmtree(stack_dir, ignore_errors=True)


def main(argv: typing.Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog=MODULE)
    parser.add_argument('--out', required=True)
    parser.add_argument('--name', required=True)
    parser.add_argument('--no-keystone', action='store_true')
    parser.add_argument('--owner')
    args = parser.parse_args(argv)
    with open(_path(PIDFILE), 'w') as f:
        f.write('%d\n' % os.getpid())
    return Supervisor(args.out, args.name, not args.no_keystone,
                      args.owner).run()


if __name__ == '__main__':
    sys.exit(main())
