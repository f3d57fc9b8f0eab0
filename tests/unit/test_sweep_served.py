"""The sweep's served runner: a stuck case is killed, not waited for."""

import subprocess
import sys

from faultdriver.sweep import served


def runner_with(code):
    """A Runner whose process runs ``code`` instead of a scenario runner."""
    runner = served.Runner('threading')
    runner.process = subprocess.Popen(
        [sys.executable, '-c', code], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, text=True)
    return runner


def test_a_runner_that_answers_is_heard():
    runner = runner_with('print("done"); import time; time.sleep(30)')
    try:
        assert runner._answer(60) is True
    finally:
        runner.process.kill()
        runner.process.wait()


def test_a_runner_that_dies_is_told_apart():
    runner = runner_with('pass')
    assert runner._answer(60) is False


def test_a_stuck_runner_is_killed():
    runner = runner_with('import time; time.sleep(600)')
    assert runner._answer(0.5) is None
    # Killed, not left behind.
    assert runner.process.poll() is not None


def test_a_stuck_case_becomes_an_internal_error(tmp_path, monkeypatch):
    monkeypatch.setattr(served, 'CASE_TIMEOUT', 0.5)
    runner = runner_with('import time; time.sleep(600)')
    monkeypatch.setattr(runner, '_start', lambda: None)
    runner.runs = 1
    log = tmp_path / 'case.log'
    report = runner.run(str(tmp_path / 'case.yaml'), 'case', str(log))
    assert report['verdict'] == 'internal error'
    assert 'killed after' in report['internal_error']
    assert runner.process is None           # replaced before the next case
    assert 'INTERNAL ERROR' in log.read_text()
