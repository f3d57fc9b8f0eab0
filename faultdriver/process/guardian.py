"""Teardown that happens even when the runner is killed.

Direct children die with the runner (``PR_SET_PDEATHSIG``), but not what
they started in turn: QEMU guests that libvirtd spawned with an
environment of its own, daemons that detached (``virtlogd -d``), cgroups
and the stack's directory.  The guardian is a small process in its own
session that waits for its standard input to close, which happens when
the runner exits for any reason, then does what :meth:`Stack.stop` does.

Usage (by the stack): ``python -m faultdriver.process.guardian DIR
[--keep]``.
"""

import os
import shutil
import subprocess
import sys

from faultdriver.process import libvirt_host
from faultdriver.process import procs
from faultdriver.process import volume_standin


def start(stack_dir, env, keep=False):
    """Start the guardian of ``stack_dir``; keep the returned object
    until :func:`dismiss` (its pipe is what the guardian watches)."""
    env = dict(os.environ, **env)
    env.pop(procs.MARKER, None)     # reap() must not end its guardian
    argv = [sys.executable, '-m', 'faultdriver.process.guardian', stack_dir]
    if keep:
        argv.append('--keep')
    return subprocess.Popen(argv, stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env,
                            start_new_session=True)


def dismiss(process):
    """The runner tore the stack down itself: let the guardian check
    that nothing is left, and wait for it."""
    process.stdin.close()
    process.wait(60)


def clean(stack_dir, keep=False):
    """Kill what the stack left, remove its cgroups and directory."""
    killed = procs.reap(stack_dir)
    killed += libvirt_host.kill_cgroups(stack_dir)
    # The volumes' loop devices (libvirt tier), before their files go.
    volume_standin.detach_loops(stack_dir)
    if not keep and os.path.isdir(stack_dir):
        shutil.rmtree(stack_dir, ignore_errors=True)
    return killed


def main(argv=None):
    args = list(sys.argv[1:] if argv is None else argv)
    keep = '--keep' in args
    stack_dir = [a for a in args if a != '--keep'][0]
    while sys.stdin.buffer.read(4096):
        pass
    clean(stack_dir, keep)
    return 0


if __name__ == '__main__':
    sys.exit(main())
