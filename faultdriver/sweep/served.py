"""The sweep's embedded-Nova runner processes, each running one case
after another (``python -m faultdriver.harness.runner --serve MODE``):
the imports and Nova's cached database schema are paid once per worker
instead of once per case; every case still gets a fresh embedded Nova
(a new database, new services, its own rules and log capture).  The
sweep starts them together with its clean, traced run (which one of them
serves), so their imports use the core that run leaves idle.

A runner whose case failed a step or hit an internal error is replaced
before the next case, and every runner after ``RUNS`` cases, so what one
case leaves behind (a thread still unwinding) cannot reach many others.
"""

import contextlib
import json
import os
import select
import subprocess
import sys
import threading
import time
import typing

from faultdriver.scenario import tiers
from faultdriver.scenario import worker
from faultdriver.sweep import records

#: Cases one runner process runs before it is replaced.  Each case
#: leaves its frozen garbage behind (harness/heap.py, ~6 MB); 40 cases
#: are more than a worker's share of a whole live-migration sweep.
RUNS = 40
#: Seconds a case may take before its runner is killed: a case's own
#: waits are bounded (a minute each at most), so a case past this is
#: stuck for good (a deadlock), and the sweep goes on without it.
CASE_TIMEOUT = 600


class Runner:
    """One served runner process, started when first needed."""

    def __init__(self, mode: str,
                 env: typing.Optional[typing.Mapping[str, str]] = None
                 ) -> None:
        self.mode = mode
        #: The environment of the runner process (the Nova under test's).
        self.env = env
        self.process: typing.Optional['subprocess.Popen[str]'] = None
        self.runs = 0

    def run(self, path: str, variant: str, log: str) -> records.Report:
        """The report of ``variant`` of the scenario at ``path`` (with its
        verdict); the run's output is appended to ``log``."""
        process = self._process()
        out = os.path.splitext(log)[0] + '.report.json'
        self.runs += 1
        began = time.monotonic()
        stdin = _pipe(process.stdin)
        stdin.write(json.dumps({
            'path': path, 'variant': variant, 'out': out, 'log': log}) + '\n')
        stdin.flush()
        answered = self._answer(CASE_TIMEOUT)
        report = worker.read(
            out, variant, self.mode, tiers.DEFAULT, 'the runner process %s '
            'without a report' % {True: 'answered', False: 'died',
                                  None: 'was killed after %d s (the case was '
                                  'stuck)' % CASE_TIMEOUT}[answered])
        if os.path.exists(out):
            os.unlink(out)
        with open(log, 'a', encoding='utf-8') as stream:
            stream.write('[%s] done in %.1fs: %s\n' % (
                variant, time.monotonic() - began,
                report.verdict.upper()))
        if not answered or report.verdict in ('internal error',
                                              'step failed'):
            self.close()
        # The sweep reads reports as JSON data (its own format).
        return report.to_json()

    def _answer(self, timeout: float) -> typing.Optional[bool]:
        """True once the runner said ``done``; False if it died first;
        None if it said nothing for ``timeout`` seconds (it is killed)."""
        process = self.process
        assert process is not None, 'a runner answers once started'
        stdout = _pipe(process.stdout)
        ready, _, _ = select.select([stdout], [], [], timeout)
        if ready:
            return stdout.readline() == 'done\n'
        process.kill()
        process.wait()
        return None

    def _process(self) -> 'subprocess.Popen[str]':
        """The running process, started (again) where needed."""
        if not self.started or self.runs >= RUNS:
            self.start()
        assert self.process is not None, 'start() leaves a process'
        return self.process

    @property
    def started(self) -> bool:
        """Whether the process is running (it may still be importing)."""
        return self.process is not None and self.process.poll() is None

    def start(self) -> None:
        """Start a new process (ending the old one): it imports Nova while
        the caller does other things."""
        self.close()
        env = dict(self.env or os.environ, PYTHONWARNINGS='ignore',
                   OS_NOVA_DISABLE_EVENTLET_PATCHING=worker.MODES[
                       self.mode])
        self.process = subprocess.Popen(
            [sys.executable, '-m', *tiers.get(tiers.DEFAULT).runner,
             '--serve', self.mode], env=env, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.runs = 0

    def close(self) -> None:
        """End the process (it exits at the end of its input)."""
        if self.process is None:
            return
        process, self.process = self.process, None
        try:
            _pipe(process.stdin).close()
        except OSError:
            pass
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _pipe(stream: typing.Optional[typing.IO[str]]) -> typing.IO[str]:
    """A runner process's pipe (started with stdin and stdout piped)."""
    assert stream is not None, 'a runner is started with its pipes'
    return stream


class Pool:
    """``size`` runners, lent to one case at a time; each started when
    first lent or by ``warm``."""

    def __init__(self, mode: str, size: int,
                 env: typing.Optional[typing.Mapping[str, str]] = None
                 ) -> None:
        self._runners = [Runner(mode, env) for _ in range(max(1, size))]
        self._idle = list(self._runners)
        self._changed = threading.Condition()

    def warm(self, count: int) -> None:
        """Start up to ``count`` runners now (their imports run while the
        caller goes on)."""
        for runner in self._runners[:count]:
            if not runner.started:
                runner.start()

    @contextlib.contextmanager
    def runner(self) -> typing.Iterator[Runner]:
        """An idle runner (a started one first) for the ``with`` block."""
        with self._changed:
            self._changed.wait_for(lambda: self._idle)
            self._idle.sort(key=lambda each: not each.started)
            lent = self._idle.pop(0)
        try:
            yield lent
        finally:
            with self._changed:
                self._idle.append(lent)
                self._changed.notify()

    def close(self) -> None:
        for runner in self._runners:
            runner.close()
