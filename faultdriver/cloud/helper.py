"""The runner's side of the host helper: the script piped to the host's
``python3 -`` and its one JSON answer read back.

``runner`` is anything with ``host`` and ``run(argv, input=, timeout=)``
returning a CompletedProcess with bytes: a
:class:`~faultdriver.cloud.transport.Transport` (over SSH), or
:class:`LocalRunner` (this machine, as the tests and a single-node
cloud use it).
"""

import json
import os
import subprocess

from faultdriver.cloud import errors

#: The helper, read from its file: it is real, linted, tested Python.
SCRIPT_PATH = os.path.join(os.path.dirname(__file__), 'hosthelper.py')
#: The interpreter it runs under on the host (only the stdlib is used).
PYTHON = 'python3'


def script():
    with open(SCRIPT_PATH, 'rb') as f:
        return f.read()


class LocalRunner:
    """Runs the helper on this machine, with ``env`` added."""

    host = 'localhost'

    def __init__(self, env=None):
        self.env = env

    def run(self, argv, input=None, timeout=120):
        env = dict(os.environ, **self.env) if self.env else None
        return subprocess.run(argv, input=input, capture_output=True,
                              timeout=timeout, env=env)


class HostHelper:
    """The helper's verbs on ``runner``'s host."""

    def __init__(self, runner, python=PYTHON):
        self.runner = runner
        self.python = python

    @property
    def host(self):
        return self.runner.host

    def call(self, verb, *args, timeout=300):
        """The helper's answer to ``verb ARGS``; HostRefused naming the
        host and the helper's fact when it fails."""
        done = self.runner.run([self.python, '-', verb] + [
            str(a) for a in args], input=script(), timeout=timeout)
        text = done.stdout.decode('utf-8', 'replace').strip()
        try:
            answer = json.loads(text.splitlines()[-1]) if text else None
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            said = done.stderr.decode('utf-8', 'replace').strip()
            raise errors.HostRefused(
                self.host, errors.HELPER_FAILED, '%s: exit %d, %s' % (
                    verb, done.returncode,
                    (said.splitlines() or ['no answer'])[-1]))
        if done.returncode != 0 or 'error' in answer:
            error = answer.get('error') or {}
            raise errors.HostRefused(self.host, error.get(
                'fact', '%s failed (exit %d)' % (verb, done.returncode)))
        return answer

    # What needs no service manager.

    def journal(self, path, line=0):
        return self.call('journal', '--path', path, '--line', line)

    def journald(self, unit, cursor=None):
        args = ['--unit', unit] + (['--cursor', cursor] if cursor else [])
        return self.call('logs', *args)

    def log_file(self, path, offset=None):
        args = ['--file', path] + (
            ['--offset', offset] if offset is not None else [])
        return self.call('logs', *args)

    def guests(self, uri='qemu:///system', container=None):
        args = ['--uri', uri] + (['--container', container]
                                 if container else [])
        return self.call('guests', *args)['guests']

    def queued(self, vhost, container=None):
        args = ['--vhost', vhost] + (['--container', container]
                                     if container else [])
        return self.call('queued', *args)['queues']
