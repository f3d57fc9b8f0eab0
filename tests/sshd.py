"""A real, key-only sshd on 127.0.0.1 for the cloud transport's tests.

Started by hand on free ports with its own host key and authorized key
in a private directory, never as a system service, and ended by its pid.
Port ``plain`` allows stream-local forwarding; port ``no_forwarding``
forbids it (``AllowStreamLocalForwarding no``), as some sites do.  An
ssh_config beside it names the aliases the tests reach it by, as an
operator's ``~/.ssh/config`` does:

* ``fd-a``: the plain port with the authorized key;
* ``fd-noforward``: the port without forwarding;
* ``fd-badkey``: the plain port with a key it does not know;
* ``fd-down``: a port nobody listens on.
"""

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from faultdriver.process import sshd as sshd_parts

SSHD = sshd_parts.SSHD
#: Why the tests skip where there is no sshd.
MISSING = ('no OpenSSH server here (%s); apt-get install openssh-server '
           'openssh-client' % SSHD)


def available():
    return os.access(SSHD, os.X_OK) and shutil.which('ssh') is not None


def _free_port():
    probe = socket.socket()
    probe.bind(('127.0.0.1', 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


_keygen = sshd_parts.keygen


class Sshd:
    """The running sshd and the files a client needs."""

    def __init__(self):
        self.directory = tempfile.mkdtemp(prefix='fdsshd', dir='/tmp')
        self.plain, self.no_forwarding = _free_port(), _free_port()
        self.down = _free_port()
        #: Who logs in: whoever runs the tests (an sshd started by a
        #: user other than root can only let that user in).
        self.user = sshd_parts.user()
        self.proc = None

    def path(self, name):
        return os.path.join(self.directory, name)

    def start(self):
        host_key = _keygen(self.path('host_key'))
        client_key = _keygen(self.path('id'))
        _keygen(self.path('other'))
        with open(self.path('authorized_keys'), 'w') as f:
            f.write(client_key + '\n')
        with open(self.path('known_hosts'), 'w') as f:
            for port in (self.plain, self.no_forwarding):
                f.write(sshd_parts.known_host(port, host_key))
        with open(self.path('sshd_config'), 'w') as f:
            f.write(sshd_parts.server_config(
                (self.plain, self.no_forwarding), self.path('host_key'),
                self.path('authorized_keys'), self.path('sshd.pid'),
                no_forwarding=(self.no_forwarding,)))
        with open(self.path('ssh_config'), 'w') as f:
            for alias, port, key in (
                    ('fd-a', self.plain, 'id'),
                    ('fd-noforward', self.no_forwarding, 'id'),
                    ('fd-badkey', self.plain, 'other'),
                    ('fd-down', self.down, 'id')):
                f.write(sshd_parts.client_entry(
                    alias, port, self.user, self.path(key),
                    self.path('known_hosts')))
        self.proc = subprocess.Popen(
            sshd_parts.command(self.path('sshd_config')),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=open(self.path('sshd.log'), 'w'))
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(('127.0.0.1', self.plain), 1).close()
                break
            except OSError:
                if self.proc.poll() is not None or \
                        time.monotonic() > deadline:
                    with open(self.path('sshd.log')) as f:
                        raise RuntimeError('sshd did not start: %s'
                                           % f.read())
                time.sleep(0.05)
        return self

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        shutil.rmtree(self.directory, ignore_errors=True)


#: The repository this helper is in.
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: The real ``faultdriver ctl relay`` command class, run on the "host"
#: from this worktree (the installed console script may predate it).
RELAY = ('env', 'PYTHONPATH=%s' % ROOT, sys.executable, '-c',
         'import sys; from faultdriver.cmd import cloud, main; '
         'app = main.FaultDriverApp(); '
         'app.command_manager.add_command("ctl relay", cloud.CtlRelay); '
         'sys.exit(app.run(sys.argv[1:]))', 'ctl', 'relay')
