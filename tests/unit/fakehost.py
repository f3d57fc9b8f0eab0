"""A host of recording fakes for the host helper's tests.

``systemctl``, ``docker``, ``podman``, ``journalctl``, ``virsh`` and
``rabbitmqctl`` are small executables in a temporary bin directory put
first on PATH: a real subprocess runs each; it appends its argv to
``calls.jsonl`` and answers with the first canned answer whose argv is
a prefix of its own (else nothing, exit 0).  The helper itself runs for
real, as ``python3 -`` with its script on stdin.  Real systemd and
docker wait for a devstack run (issue 42).
"""

import json
import os
import shutil
import sys
import tempfile

from faultdriver.cloud import helper

PROGRAMS = ('systemctl', 'docker', 'podman', 'journalctl', 'virsh',
            'rabbitmqctl')

#: The system's Python, which any user may run (the helper's python3 on
#: a host).
SYSTEM_PYTHON = '/usr/bin/python3'

#: ``sudo``: records its argv, then runs the command it was given (a
#: recording fake itself), as passwordless sudo does.
SUDO = '''#!%s -S
import json, os, sys
home = os.environ['FAKEHOST_DIR']
with open(os.path.join(home, 'calls.jsonl'), 'a') as f:
    f.write(json.dumps(['sudo'] + sys.argv[1:]) + '\\n')
command = [a for a in sys.argv[1:] if a != '-n']
os.execvp(command[0], command)
'''

FAKE = '''#!%s -S
import json, os, sys
home = os.environ['FAKEHOST_DIR']
argv = [os.path.basename(sys.argv[0])] + sys.argv[1:]
calls = os.path.join(home, 'calls.jsonl')
before = []
if os.path.exists(calls):
    with open(calls) as f:
        before = [json.loads(line) for line in f]
with open(calls, 'a') as f:
    f.write(json.dumps(argv) + '\\n')
with open(os.path.join(home, 'answers.json')) as f:
    answers = json.load(f)
for answer in answers:
    after = answer.get('after')
    if after and not any(c[:len(after)] == after for c in before):
        continue
    if argv[:len(answer['argv'])] == answer['argv']:
        sys.stdout.write(answer.get('out', ''))
        sys.stderr.write(answer.get('err', ''))
        sys.exit(answer.get('code', 0))
'''


class FakeHost:

    def __init__(self, user=None):
        """``user``: the helper runs as this user (``runuser``; the
        caller must be root), as an SSH user that is not root does."""
        self.user = user
        # Another user cannot run this process's interpreter (a venv
        # under root's home): the system's python3 then.
        python = sys.executable if user is None else SYSTEM_PYTHON
        self.directory = tempfile.mkdtemp(prefix='fdhost')
        self.bin = os.path.join(self.directory, 'bin')
        self.runtime_dir = os.path.join(self.directory, 'run')
        os.mkdir(self.bin)
        for name in PROGRAMS:
            path = os.path.join(self.bin, name)
            with open(path, 'w') as f:
                f.write(FAKE % python)
            os.chmod(path, 0o755)
        with open(os.path.join(self.bin, 'sudo'), 'w') as f:
            f.write(SUDO % python)
        os.chmod(os.path.join(self.bin, 'sudo'), 0o755)
        self.answer()
        if user is not None:
            os.chmod(self.directory, 0o777)     # its calls, as that user

    def answer(self, *answers):
        """Canned answers: ``(argv prefix, stdout[, exit code[, stderr[,
        after]]])``, the first that matches wins; one with ``after`` (an
        argv prefix) only once such a call was made."""
        with open(os.path.join(self.directory, 'answers.json'), 'w') as f:
            json.dump([dict(zip(('argv', 'out', 'code', 'err', 'after'), a))
                       for a in answers], f)

    def calls(self):
        try:
            with open(os.path.join(self.directory, 'calls.jsonl')) as f:
                return [json.loads(line) for line in f]
        except FileNotFoundError:
            return []

    def helper(self):
        env = {'PATH': self.bin + os.pathsep + os.environ['PATH'],
               'FAKEHOST_DIR': self.directory}
        if self.user is None:
            return helper.HostHelper(helper.LocalRunner(env=env))
        return helper.HostHelper(AsUser(self.user, env),
                                 python=SYSTEM_PYTHON)

    def close(self):
        shutil.rmtree(self.directory, ignore_errors=True)


class AsUser(helper.LocalRunner):
    """Runs the helper on this machine as ``user`` (root runs
    ``runuser``, which keeps the environment)."""

    def __init__(self, user, env):
        super().__init__(env=env)
        self.user = user

    def run(self, argv, input=None, timeout=120):
        return super().run(['runuser', '-u', self.user, '--'] + argv,
                           input=input, timeout=timeout)
