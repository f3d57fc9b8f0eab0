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

    def __init__(self):
        self.directory = tempfile.mkdtemp(prefix='fdhost')
        self.bin = os.path.join(self.directory, 'bin')
        self.runtime_dir = os.path.join(self.directory, 'run')
        os.mkdir(self.bin)
        for name in PROGRAMS:
            path = os.path.join(self.bin, name)
            with open(path, 'w') as f:
                f.write(FAKE % sys.executable)
            os.chmod(path, 0o755)
        self.answer()

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
        return helper.HostHelper(helper.LocalRunner(env={
            'PATH': self.bin + os.pathsep + os.environ['PATH'],
            'FAKEHOST_DIR': self.directory}))

    def close(self):
        shutil.rmtree(self.directory, ignore_errors=True)
