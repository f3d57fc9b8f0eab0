"""What the process and libvirt suites share: the run's concurrency mode,
a stack shaped for pinned servers, what a stack left on the machine, and
a stack made to fail at one part of its start."""

import os
import shutil
import socket
import sys
import threading
import time

from faultdriver import hostshape
from faultdriver.process import libvirt_host
from faultdriver.process import procs
from faultdriver.process import runner
from faultdriver.process import stack as stack_module

#: The concurrency mode of the run (``OS_NOVA_DISABLE_EVENTLET_PATCHING``,
#: as tox sets it).
MODE = ('threading' if os.environ.get('OS_NOVA_DISABLE_EVENTLET_PATCHING',
                                      'True').lower() == 'true'
        else 'eventlet')


def pinned_stack(hosts=('src', 'dest')):
    """A fake_numa stack whose hosts have dedicated pCPUs, as a ``pinned:
    true`` scenario's, so pinned servers fit (without a dedicated set a
    host has no PCPU inventory and every pinned boot is NoValidHost); a
    context manager."""
    faults = {host: {'inner_driver': 'fake_numa', 'enabled': True,
                     'extra': runner.host_settings(hostshape.PINNED_HOST)}
              for host in hosts}
    return stack_module.Stack(faults=faults, mode=MODE, progress=print)


def unpinned_stack(hosts=('src', 'dest')):
    """A fake_numa stack without dedicated pCPUs, for unpinned servers
    (no NUMA claim adds steps to what a test looks at); a context
    manager."""
    faults = {host: {'inner_driver': 'fake_numa', 'enabled': True}
              for host in hosts}
    return stack_module.Stack(faults=faults, mode=MODE, progress=print)


#: Seconds a failed start and its teardown may take: a hang guard, not a
#: speed target.
BOUND = 120


def leftovers(stack_dir, sessions=()):
    """What of a stack is still on the machine: processes carrying its
    marker or in the sessions of its children, cgroups, mounts, its
    directory."""
    found = ['process %d' % pid for pid in sorted(
        set(procs.alive_in_sessions(set(sessions), stack_dir)) |
        marked(stack_dir))]
    name = os.path.basename(stack_dir)
    for controller in libvirt_host.CGROUP_CONTROLLERS:
        folder = os.path.join(libvirt_host.CGROUP_ROOT, controller)
        if os.path.isdir(folder):
            found += ['cgroup %s/%s' % (controller, c)
                      for c in os.listdir(folder) if name in c]
    with open('/proc/mounts') as mounts:
        found += ['mount ' + line.split()[1] for line in mounts
                  if stack_dir in line]
    if os.path.exists(stack_dir):
        found.append('directory ' + stack_dir)
    return found


def marked(stack_dir):
    """Pids of the processes whose environment carries the stack's
    marker."""
    needle = ('%s=%s' % (procs.MARKER, stack_dir)).encode()
    found = set()
    for entry in os.listdir('/proc'):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                with open('/proc/%s/environ' % entry, 'rb') as f:
                    if needle in f.read().split(b'\0'):
                        found.add(int(entry))
            except OSError:
                pass
    return found


class FailingStack(stack_module.Stack):
    """A stack whose part ``failing`` is made to fail: with ``how``
    'command', its command exits at once (the stack's test hook); with
    'port', the test takes its port; with 'config', the test breaks its
    configuration.  It remembers its sessions before
    the teardown removes the file listing them."""

    def __init__(self, failing, how, **kwargs):
        self.failing = failing
        self.how = how
        self.sessions = set()
        super().__init__(**kwargs)

    def command(self, part, argv):
        if (part, self.how) != (self.failing, 'command'):
            return argv
        return [sys.executable, '-c',
                'raise SystemExit("%s made to fail by the test")' % part]

    def stop(self):
        self.sessions |= procs.sessions_of_stack(self.dir)
        super().stop()


def assert_part_fails(stack, part, cause, blocked=None):
    """Start ``stack`` (a FailingStack made to fail at ``part``) with
    ``blocked``, an ``(address, port)`` bound but not listening, if
    given: the part's own bind fails, and nothing answers on the port it
    waits for.  The start fails naming ``part`` and ``cause``, within
    BOUND, and leaves nothing behind."""
    blocker = socket.socket()
    if blocked:
        blocker.bind(blocked)
    with blocker:
        error, seconds = start_and_stop(stack)
    print('%s failed; start and teardown took %.1fs' % (part, seconds))
    assert isinstance(error, stack_module.PartFailed), repr(error)
    # The error's own words when another part failed first (CI once saw
    # the mariadb case fail there, beside other lines' stacks; unseen
    # alone or after the control-plane test).
    assert error.part == part, str(error)
    assert str(error).startswith('%s did not start: ' % part)
    assert cause in str(error)
    assert leftovers(stack.dir, stack.sessions) == []
    # A Nova service made to fail wrote its log: kept to be read after
    # the run (a part failing before any log was written keeps none).
    assert_logs_kept(error, cause if stack.how == 'command' else None)


def assert_logs_kept(error, cause):
    """The failed start's note names the directory its logs were kept
    in, and ``cause`` is in one of them; ``cause`` None: if there is
    such a note.  Then the directory is removed."""
    notes = [note for note in getattr(error, '__notes__', ())
             if 'are kept in ' in note]
    if cause is None and not notes:
        return
    assert len(notes) == 1, getattr(error, '__notes__', None)
    kept = notes[0].rsplit(' ', 1)[1]
    try:
        texts = []
        for root, _dirs, names in os.walk(kept):
            for name in names:
                with open(os.path.join(root, name), errors='replace') as f:
                    texts.append(f.read())
        assert texts, 'nothing kept in %s' % kept
        assert (cause or '') in ''.join(texts), 'no %r in %s' % (cause, kept)
    finally:
        shutil.rmtree(kept, ignore_errors=True)


def start_and_stop(stack):
    """``with stack: pass`` in a thread; the error it ended with, and
    the seconds it took.  Fails if it has not ended within BOUND."""
    ended = {}

    def run():
        try:
            with stack:
                pass
        except BaseException as exc:
            ended['error'] = exc
    began = time.monotonic()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(BOUND)
    assert not thread.is_alive(), (
        '%s failing: start and teardown still running after %ds'
        % (stack.failing, BOUND))
    return ended.get('error'), time.monotonic() - began
