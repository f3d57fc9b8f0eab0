"""The runner's side of the host helper: the script piped to the host's
``python3 -`` and its one JSON answer read back.

``runner`` is a :class:`Runner`, anything with ``host`` and
``run(argv, input=, timeout=)`` returning a CompletedProcess with bytes:
a :class:`~faultdriver.cloud.transport.Transport` (over SSH), or
:class:`LocalRunner` (this machine, as the tests and a single-node
cloud use it).  Each verb's answer is a record (JournalAnswer, Guest...)
as hosthelper.py prints it: the helper itself, which runs under the
host's Python, imports none of them.
"""

import json
import os
import subprocess
import typing

from faultdriver.cloud import errors

#: A value of the helper's JSON answer as it printed it: typed Any by
#: name, as api.Json is (the verbs below give their answers' records).
Json = typing.Any
#: One answer of the helper, any verb.
Answer = typing.Dict[str, Json]


class JournalAnswer(typing.TypedDict):
    """``journal``: FaultDriver's journal lines from the line asked for
    (each one JSON entry), and where the complete lines end."""

    lines: typing.List[str]
    next: int


class JournaldAnswer(typing.TypedDict):
    """``logs --unit``: the records since ``cursor``, and the cursor to
    read on from (without one: no records, the log's end now)."""

    records: typing.List[str]
    cursor: typing.Optional[str]


class LogFileAnswer(typing.TypedDict):
    """``logs --file``: the complete lines since the byte offset asked
    for, and the offset to read on from."""

    records: typing.List[str]
    offset: int


class Disk(typing.TypedDict):
    """One row of ``virsh domblklist --details``."""

    type: str
    device: str
    target: str
    source: str


class Guest(typing.TypedDict):
    """One of libvirt's guests: its uuid, ``virsh domstate``, disks."""

    uuid: str
    state: str
    disks: typing.List[Disk]


class Runner(typing.Protocol):
    """Where the helper runs: its host's name and a ``subprocess.run``
    of ``argv`` there."""

    @property
    def host(self) -> str:
        ...

    def run(self, argv: typing.List[str],
            input: typing.Optional[bytes] = None,
            timeout: float = 120) -> 'subprocess.CompletedProcess[bytes]':
        ...


#: The helper, read from its file: it is real, linted, tested Python.
SCRIPT_PATH = os.path.join(os.path.dirname(__file__), 'hosthelper.py')
#: The interpreter it runs under on the host (only the stdlib is used).
PYTHON = 'python3'


def script() -> bytes:
    with open(SCRIPT_PATH, 'rb') as f:
        return f.read()


class LocalRunner:
    """Runs the helper on this machine, with ``env`` added."""

    host = 'localhost'

    def __init__(self,
                 env: typing.Optional[typing.Dict[str, str]] = None) -> None:
        self.env = env

    def run(self, argv: typing.List[str],
            input: typing.Optional[bytes] = None,
            timeout: float = 120) -> 'subprocess.CompletedProcess[bytes]':
        env = dict(os.environ, **self.env) if self.env else None
        return subprocess.run(argv, input=input, capture_output=True,
                              timeout=timeout, env=env)


class HostHelper:
    """The helper's verbs on ``runner``'s host."""

    def __init__(self, runner: Runner, python: str = PYTHON) -> None:
        self.runner = runner
        self.python = python

    @property
    def host(self) -> str:
        return self.runner.host

    def call(self, verb: str, *args: object, timeout: float = 300) -> Answer:
        """The helper's answer to ``verb ARGS``; HostRefused naming the
        host and the helper's fact when it fails."""
        done = self.runner.run([self.python, '-', verb] + [
            str(a) for a in args], input=script(), timeout=timeout)
        text = done.stdout.decode('utf-8', 'replace').strip()
        try:
            answer: Json = json.loads(text.splitlines()[-1]) if text \
                else None
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

    def journal(self, path: str, line: int = 0) -> JournalAnswer:
        answer = self.call('journal', '--path', path, '--line', line)
        return {'lines': answer['lines'], 'next': answer['next']}

    def journald(self, unit: str,
                 cursor: typing.Optional[str] = None) -> JournaldAnswer:
        args = ['--unit', unit] + (['--cursor', cursor] if cursor else [])
        answer = self.call('logs', *args)
        return {'records': answer['records'], 'cursor': answer['cursor']}

    def log_file(self, path: str,
                 offset: typing.Optional[int] = None) -> LogFileAnswer:
        args: typing.List[object] = ['--file', path] + (
            ['--offset', offset] if offset is not None else [])
        answer = self.call('logs', *args)
        return {'records': answer['records'], 'offset': answer['offset']}

    def guests(self, uri: str = 'qemu:///system',
               container: typing.Optional[str] = None) -> typing.List[Guest]:
        args = ['--uri', uri] + (['--container', container]
                                 if container else [])
        found: typing.List[Guest] = self.call('guests', *args)['guests']
        return found

    def queued(self, vhost: str, container: typing.Optional[str] = None
               ) -> typing.Dict[str, int]:
        """Messages ready per queue of ``vhost``."""
        args = ['--vhost', vhost] + (['--container', container]
                                     if container else [])
        queues: typing.Dict[str, int] = self.call('queued', *args)['queues']
        return queues
