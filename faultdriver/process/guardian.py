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
import typing

from faultdriver.process import libvirt_host
from faultdriver.process import procs
from faultdriver.process import volume_standin


def start(stack_dir: str, env: typing.Mapping[str, str],
          keep: bool = False) -> 'subprocess.Popen[bytes]':
    """Start the guardian of ``stack_dir``; keep the returned object
    until :func:`dismiss` (its pipe is what the guardian watches)."""
    environ = dict(os.environ, **env)
    environ.pop(procs.MARKER, None)     # reap() must not end its guardian
    argv = [sys.executable, '-m', 'faultdriver.process.guardian', stack_dir]
    if keep:
        argv.append('--keep')
    return subprocess.Popen(argv, stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=environ,
                            start_new_session=True)


def dismiss(process: 'subprocess.Popen[bytes]') -> None:
    """The runner tore the stack down itself: let the guardian check
    that nothing is left, and wait for it."""
    assert process.stdin is not None    # started with stdin=PIPE
    process.stdin.close()
    process.wait(60)


def clean(stack_dir: str, keep: bool = False) -> list[int]:
    """Kill what the stack left, remove its cgroups and directory."""
    killed = procs.reap(stack_dir)
    killed += libvirt_host.kill_cgroups(stack_dir)
    # The volumes' loop devices (libvirt tier), before their files go.
    volume_standin.detach_loops(stack_dir)
    if not keep and os.path.isdir(stack_dir):
        shutil.rmtree(stack_dir, ignore_errors=True)
    return killed


def main(argv: typing.Optional[typing.Sequence[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    keep = '--keep' in args
    stack_dir = [a for a in args if a != '--keep'][0]
    while sys.stdin.buffer.read(4096):
        pass
    clean(stack_dir, keep)
    return 0


if __name__ == '__main__':
    sys.exit(main())
