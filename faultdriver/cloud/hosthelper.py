"""faultdriver's host helper: what must work on a compute host while
nova-compute is down.

The runner pipes this file to the host's Python over SSH::

    ssh HOST python3 - VERB [OPTIONS] < hosthelper.py

so a host needs no faultdriver outside nova-compute's environment (on
kolla FaultDriver lives in the container; systemd, journald, docker and
virsh on the host).  It is therefore ONE file using only the standard
library, importing nothing of faultdriver.

Every call prints one JSON document on stdout.  An error exits 2 with
``{"error": {"verb": ..., "fact": ...}}`` naming what failed.

Verbs (``--manager systemd|docker|podman|stack --unit UNIT`` where a
service is meant; a docker unit is the container's name, a ``stack``
unit the compute's name in ``faultdriver stack up``'s cloud, whose
supervisor's socket ``--supervisor PATH`` names, by default where the
supervisor puts it for the user logged in):

* ``state``: running, stopping, stopped (a clean exit) or crashed
  (killed by a signal, or a non-zero exit);
* ``stop --timeout S``: a graceful stop, SIGKILL of the unit past S;
* ``crash``: SIGKILL of nova-compute's unit only -- its cgroup under
  systemd, its container under docker -- so libvirtd and the guests
  (in their own units) live on;
* ``start``: clear a failed state and start;
* ``restart-policy``, ``disable-restart``, ``restore-restart
  --previous P``: an automatic restart would turn a crash into a
  blip; systemd's is overridden by a runtime drop-in (under /run, gone
  at reboot), docker's by ``docker update --restart=no``;
* ``journal --path P [--line N]``: FaultDriver's journal file from line N;
* ``logs --unit U [--cursor C]`` (journald) or ``logs --file P
  [--offset N]``: log records since a cursor or byte offset; without
  one, only where the log ends now (a run's starting point);
* ``guests [--uri U] [--container C]``: libvirt's guests, their states
  and disks (``virsh``, in a container on kolla);
* ``queued --vhost V [--container C]``: the broker's queued messages.

Annotated for mypy (strict, as the rest of ``faultdriver.cloud``) in
what Python 3.6 evaluates: ``typing``'s ``Dict``, ``List`` and
``Optional`` (no ``dict[...]``, ``X | None``, ``TypedDict`` or
``from __future__ import annotations``, which a host's older
python3 would refuse).  The answers' records are typed on the
runner's side (``faultdriver.cloud.helper``).
"""

import argparse
import json
import os
import pwd
import re
import socket
import subprocess
import sys
import time
from typing import Dict, List, Optional

#: Where ``systemctl edit --runtime`` puts a drop-in (systemd 252, on
#: Debian 12, has no ``edit --stdin``: the file is written directly).
RUNTIME_UNITS = '/run/systemd/system'
DROP_IN = '50-faultdriver-no-restart.conf'
#: Seconds between polls of a stopping unit.
POLL = 0.2
#: Seconds a killed unit is given to be seen down.
KILL_GRACE = 10.0
#: systemd's ActiveState values of a unit whose process still runs.
UP_STATES = ('active', 'activating', 'deactivating', 'reloading')
_ANSI = re.compile(r'\x1b\[[0-9;]*[A-Za-z]')
#: One answer: a JSON document, printed on stdout.
Answer = Dict[str, object]


#: What a change to a unit and journald's records need: nothing as
#: root; ``sudo -n`` as any other SSH user (devstack's stack user has
#: passwordless sudo; a sudo that asks for a password fails, naming
#: the command, never waits).  Reading a unit's state needs neither.
SUDO: List[str] = [] if os.geteuid() == 0 else ['sudo', '-n']


class Failed(Exception):
    """What went wrong, as the one fact the runner reports."""


def as_root(argv: List[str]) -> List[str]:
    return SUDO + argv


def run(argv: List[str], check: bool = True,
        text_in: Optional[str] = None) -> str:
    """stdout of ``argv`` (given ``text_in`` on stdin); Failed naming the
    command if it fails."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True,
                              input=text_in,
                              stdin=None if text_in is not None
                              else subprocess.DEVNULL)
    except FileNotFoundError:
        raise Failed('no %s on this host' % argv[0]) from None
    if check and done.returncode != 0:
        said = (done.stderr.strip().splitlines() or ['no message'])[-1]
        raise Failed('`%s` failed (exit %d): %s' % (
            ' '.join(argv), done.returncode, said))
    return done.stdout


def unit_file_name(unit: str) -> str:
    return unit if '.' in unit.split('@')[-1] else unit + '.service'


# -- systemd ------------------------------------------------------------------

def _show(unit: str, *names: str) -> Dict[str, str]:
    found: Dict[str, str] = {}
    for line in run(['systemctl', 'show', '-p', ','.join(names),
                     unit]).splitlines():
        key, _, value = line.partition('=')
        found[key] = value
    if found.get('LoadState') == 'not-found':
        raise Failed('no unit %s' % unit)
    return found


def systemd_state(unit: str) -> Answer:
    shown = _show(unit, 'LoadState', 'ActiveState', 'SubState', 'Result',
                  'ExecMainCode', 'ExecMainStatus', 'MainPID')
    active = shown.get('ActiveState', '')
    if active == 'deactivating':
        state = 'stopping'
    elif active in UP_STATES:
        state = 'running'
    elif shown.get('Result', 'success') == 'success':
        state = 'stopped'
    else:
        state = 'crashed'
    return {'state': state, 'active': active,
            'result': shown.get('Result'),
            'status': shown.get('ExecMainStatus'),
            'pid': shown.get('MainPID')}


def _is_active(unit: str) -> str:
    return run(['systemctl', 'is-active', unit], check=False).strip()


def systemd_stop(unit: str, timeout: float) -> Answer:
    run(as_root(['systemctl', 'stop', '--no-block', unit]))
    deadline = time.monotonic() + timeout
    while _is_active(unit) in UP_STATES:
        if time.monotonic() >= deadline:
            systemd_crash(unit)
            grace = time.monotonic() + KILL_GRACE
            while _is_active(unit) in UP_STATES:
                if time.monotonic() >= grace:
                    raise Failed('%s still up %ss after SIGKILL'
                                 % (unit, KILL_GRACE))
                time.sleep(POLL)
            return {'stopped': True, 'killed': True}
        time.sleep(POLL)
    return {'stopped': True, 'killed': False}


def systemd_crash(unit: str) -> Answer:
    # --kill-who=all: every process of the unit's cgroup, and nothing
    # outside it (libvirtd and the QEMU guests have their own units).
    run(as_root(['systemctl', 'kill', '--kill-who=all', '--signal=SIGKILL',
                 unit]))
    return {'killed': unit}


def systemd_start(unit: str) -> Answer:
    run(as_root(['systemctl', 'reset-failed', unit]), check=False)
    run(as_root(['systemctl', 'start', unit]))
    return {'started': unit}


def systemd_policy(unit: str) -> str:
    return _show(unit, 'LoadState', 'Restart').get('Restart', 'no')


def _drop_in(unit: str, runtime_dir: str) -> str:
    return os.path.join(runtime_dir, unit_file_name(unit) + '.d', DROP_IN)


def systemd_disable_restart(unit: str, runtime_dir: str) -> Answer:
    previous = systemd_policy(unit)
    if previous == 'no':
        return {'changed': False, 'previous': previous}
    path = _drop_in(unit, runtime_dir)
    run(as_root(['mkdir', '-p', os.path.dirname(path)]))
    run(as_root(['tee', path]), text_in=(
        '# faultdriver: no automatic restart during a run\n'
        '[Service]\nRestart=no\n'))
    run(as_root(['systemctl', 'daemon-reload']))
    return {'changed': True, 'previous': previous, 'drop_in': path}


def systemd_restore_restart(unit: str, previous: str,
                            runtime_dir: str) -> Answer:
    path = _drop_in(unit, runtime_dir)
    if os.path.exists(path):
        run(as_root(['rm', '-f', path]))
        # Other drop-ins stay (rmdir fails on a directory not empty).
        run(as_root(['rmdir', os.path.dirname(path)]), check=False)
        run(as_root(['systemctl', 'daemon-reload']))
    return {'restored': previous, 'drop_in': path}


# -- faultdriver stack up's supervisor ---------------------------------------

def stack_socket() -> str:
    """Where ``faultdriver stack up``'s supervisor listens for this user
    (faultdriver.process.supervisor.state_dir, computed alike)."""
    home = pwd.getpwuid(os.getuid()).pw_dir
    return os.path.join(home, '.local', 'state', 'faultdriver', 'stack',
                        'supervisor.sock')


def stack_call(path: str, request: Answer,
               timeout: float = 180.0) -> Answer:
    """One JSON-line request to the supervisor; its answer."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            sock.connect(path)
            sock.sendall(json.dumps(request).encode() + b'\n')
            data = b''
            while not data.endswith(b'\n'):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
    except OSError as exc:
        raise Failed('no stack supervisor at %s: %s' % (path, exc)) from None
    answer: Answer = json.loads(data or b'{}')
    if not answer.get('ok'):
        raise Failed('stack supervisor: %s' % answer.get('error'))
    return answer


def stack_service(verb: str, unit: str, path: str,
                  timeout: Optional[float] = None) -> Answer:
    """The supervisor never restarts a compute on its own: no restart
    policy to change."""
    if verb == 'restart-policy':
        return {'policy': 'no'}
    if verb in ('disable-restart', 'restore-restart'):
        return {'changed': False}
    request: Answer = {'op': verb, 'compute': unit}
    if timeout is not None:
        request['timeout'] = timeout
    answer = stack_call(path, request,
                        (timeout or 0) + KILL_GRACE + 60)
    answer.pop('ok')
    if verb == 'stop':
        return {'stopped': True, 'killed': answer.get('killed', False)}
    if verb == 'crash':
        return {'killed': unit}
    if verb == 'start':
        return {'started': unit}
    return answer


# -- docker and podman -------------------------------------------------------

def container_state(manager: str, name: str) -> Answer:
    try:
        shown = json.loads(run([manager, 'inspect', '--format',
                                '{{json .State}}', name]))
    except ValueError:
        raise Failed('%s inspect %s: not JSON' % (manager, name)) from None
    if shown.get('Running'):
        state = 'running'
    elif shown.get('ExitCode') in (0, 143) and not shown.get('OOMKilled'):
        state = 'stopped'
    else:
        state = 'crashed'
    return {'state': state, 'status': shown.get('Status'),
            'exit_code': shown.get('ExitCode'), 'pid': shown.get('Pid')}


def container_stop(manager: str, name: str, timeout: float) -> Answer:
    # The engine bounds the stop itself: SIGKILL after the timeout.
    run([manager, 'stop', '--time', '%d' % max(1, round(timeout)), name])
    state = container_state(manager, name)
    return {'stopped': True, 'killed': state['exit_code'] == 137}


def container_crash(manager: str, name: str) -> Answer:
    run([manager, 'kill', '--signal', 'KILL', name])
    return {'killed': name}


def container_start(manager: str, name: str) -> Answer:
    run([manager, 'start', name])
    return {'started': name}


def container_policy(manager: str, name: str) -> str:
    return run([manager, 'inspect', '--format',
                '{{.HostConfig.RestartPolicy.Name}}', name]).strip() or 'no'


def container_disable_restart(manager: str, name: str) -> Answer:
    previous = container_policy(manager, name)
    if previous == 'no':
        return {'changed': False, 'previous': previous}
    run([manager, 'update', '--restart=no', name])
    return {'changed': True, 'previous': previous}


def container_restore_restart(manager: str, name: str,
                              previous: str) -> Answer:
    run([manager, 'update', '--restart=%s' % previous, name])
    return {'restored': previous}


# -- what the host records ------------------------------------------------

def journal(path: str, line: int) -> Answer:
    """FaultDriver's journal file (one JSON entry a line) from ``line``."""
    try:
        with open(path) as f:
            lines = f.read().split('\n')
    except FileNotFoundError:
        raise Failed('no journal file %s' % path) from None
    complete = lines[:-1]           # a line being written has no newline
    return {'lines': complete[line:], 'next': len(complete)}


def journald(unit: str, cursor: Optional[str]) -> Answer:
    argv = as_root(['journalctl', '-u', unit, '-o', 'json', '--no-pager'])
    if cursor is None:
        argv += ['-n', '1']
    else:
        argv += ['--after-cursor', cursor]
    records, last = [], cursor
    for line in run(argv).splitlines():
        if not line.strip():
            continue
        entry = json.loads(line)
        last = entry.get('__CURSOR', last)
        if cursor is None:
            continue
        message = entry.get('MESSAGE', '')
        if isinstance(message, list):           # journald's binary form
            message = bytes(message).decode('utf-8', 'replace')
        records.append(_ANSI.sub('', message))
    return {'records': records, 'cursor': last}


def log_file(path: str, offset: Optional[int]) -> Answer:
    try:
        size = os.path.getsize(path)
    except FileNotFoundError:
        raise Failed('no log file %s' % path) from None
    if offset is None:
        return {'records': [], 'offset': size}
    if size < offset:
        raise Failed('log file %s is shorter (%d bytes) than the offset %d: '
                     'rotated during the run?' % (path, size, offset))
    with open(path, 'rb') as f:
        f.seek(offset)
        data = f.read()
    end = data.rfind(b'\n') + 1             # complete lines only
    text = data[:end].decode('utf-8', 'replace')
    return {'records': [_ANSI.sub('', line) for line in text.splitlines()],
            'offset': offset + end}


def guests(uri: str, container: Optional[str]) -> Answer:
    prefix = (['docker', 'exec', container] if container else []) + [
        'virsh', '-c', uri]
    found = []
    for uuid in run(prefix + ['list', '--all', '--uuid']).split():
        state = run(prefix + ['domstate', uuid]).strip()
        disks = []
        table = run(prefix + ['domblklist', uuid, '--details'])
        for row in table.splitlines()[2:]:
            fields = row.split(None, 3)
            if len(fields) == 4:
                disks.append(dict(zip(('type', 'device', 'target', 'source'),
                                      fields)))
        found.append({'uuid': uuid, 'state': state, 'disks': disks})
    return {'guests': found}


def queued(vhost: str, container: Optional[str]) -> Answer:
    prefix = ['docker', 'exec', container] if container else []
    queues = {}
    for line in run(prefix + ['rabbitmqctl', '-q', '-p', vhost,
                              'list_queues', '--no-table-headers',
                              'name', 'messages_ready']).splitlines():
        fields = line.split()
        if len(fields) == 2 and fields[1].isdigit():
            queues[fields[0]] = int(fields[1])
    return {'queues': queues}


# -- the command line --------------------------------------------------------

SERVICE_VERBS = ('state', 'stop', 'crash', 'start', 'restart-policy',
                 'disable-restart', 'restore-restart')


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog='hosthelper')
    verbs = top.add_subparsers(dest='verb', required=True)
    for verb in SERVICE_VERBS:
        sub = verbs.add_parser(verb)
        sub.add_argument('--manager', required=True,
                         choices=('systemd', 'docker', 'podman', 'stack'))
        sub.add_argument('--unit', required=True)
        sub.add_argument('--supervisor', default=None)
        sub.add_argument('--runtime-dir', default=RUNTIME_UNITS)
        if verb == 'stop':
            sub.add_argument('--timeout', type=float, required=True)
        if verb == 'restore-restart':
            sub.add_argument('--previous', required=True)
    sub = verbs.add_parser('journal')
    sub.add_argument('--path', required=True)
    sub.add_argument('--line', type=int, default=0)
    sub = verbs.add_parser('logs')
    source = sub.add_mutually_exclusive_group(required=True)
    source.add_argument('--unit')
    source.add_argument('--file')
    sub.add_argument('--cursor')
    sub.add_argument('--offset', type=int)
    sub = verbs.add_parser('guests')
    sub.add_argument('--uri', default='qemu:///system')
    sub.add_argument('--container')
    sub = verbs.add_parser('queued')
    sub.add_argument('--vhost', required=True)
    sub.add_argument('--container')
    return top


def service(args: argparse.Namespace) -> Answer:
    unit, manager = args.unit, args.manager
    if manager == 'stack':
        return stack_service(args.verb, unit,
                             args.supervisor or stack_socket(),
                             getattr(args, 'timeout', None))
    systemd = manager == 'systemd'
    if args.verb == 'state':
        return (systemd_state(unit) if systemd
                else container_state(manager, unit))
    if args.verb == 'stop':
        return (systemd_stop(unit, args.timeout) if systemd
                else container_stop(manager, unit, args.timeout))
    if args.verb == 'crash':
        return (systemd_crash(unit) if systemd
                else container_crash(manager, unit))
    if args.verb == 'start':
        return (systemd_start(unit) if systemd
                else container_start(manager, unit))
    if args.verb == 'restart-policy':
        return {'policy': systemd_policy(unit) if systemd
                else container_policy(manager, unit)}
    if args.verb == 'disable-restart':
        return (systemd_disable_restart(unit, args.runtime_dir) if systemd
                else container_disable_restart(manager, unit))
    return (systemd_restore_restart(unit, args.previous, args.runtime_dir)
            if systemd
            else container_restore_restart(manager, unit, args.previous))


def dispatch(args: argparse.Namespace) -> Answer:
    if args.verb in SERVICE_VERBS:
        return service(args)
    if args.verb == 'journal':
        return journal(args.path, args.line)
    if args.verb == 'logs':
        return (journald(args.unit, args.cursor) if args.unit
                else log_file(args.file, args.offset))
    if args.verb == 'guests':
        return guests(args.uri, args.container)
    return queued(args.vhost, args.container)


def main(argv: List[str]) -> int:
    top = parser()
    # A wrong argument is an error document too, not argparse's text.
    try:
        args = top.parse_args(argv)
    except SystemExit:
        print(json.dumps({'error': {'verb': argv[0] if argv else None,
                                    'fact': 'bad arguments: %s'
                                    % ' '.join(argv)}}))
        return 2
    try:
        result = dispatch(args)
    except Failed as exc:
        print(json.dumps({'error': {'verb': args.verb, 'fact': str(exc)}}))
        return 2
    print(json.dumps(result, sort_keys=True))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
