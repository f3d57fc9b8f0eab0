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
    monkeypatch.setattr(runner, 'start', lambda: None)
    runner.runs = 1
    log = tmp_path / 'case.log'
    report = runner.run(str(tmp_path / 'case.yaml'), 'case', str(log))
    assert report['verdict'] == 'internal error'
    assert 'killed after' in report['internal_error']
    assert runner.process is None           # replaced before the next case
    assert 'INTERNAL ERROR' in log.read_text()


def test_a_refused_case_comes_back_with_its_scenario_error(tmp_path,
                                                           monkeypatch):
    """A runner that found the case's scenario bad answers with a report
    that has no verdict of its own: the sweep gets its scenario error."""
    runner = runner_with(
        'import json, sys\n'
        'request = json.loads(sys.stdin.readline())\n'
        'json.dump({"variant": "case", "mode": "threading",\n'
        '           "scenario_error": "bad"}, open(request["out"], "w"))\n'
        'print("done", flush=True)\n'
        'sys.stdin.read()\n')
    monkeypatch.setattr(runner, 'start', lambda: None)
    runner.runs = 1
    log = tmp_path / 'case.log'
    try:
        report = runner.run(str(tmp_path / 'case.yaml'), 'case', str(log))
    finally:
        runner.close()
    assert report['scenario_error'] == 'bad' and 'verdict' not in report
    assert 'INTERNAL ERROR' in log.read_text()


def sleeping_runners(monkeypatch):
    """Runners whose processes wait for the end of their input (as a
    served runner does when closed) instead of importing Nova."""
    def start(runner):
        runner.close()
        runner.process = subprocess.Popen(
            [sys.executable, '-c', 'import sys; sys.stdin.read()'],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    monkeypatch.setattr(served.Runner, 'start', start)


def test_warm_starts_as_many_runners_as_asked(monkeypatch):
    sleeping_runners(monkeypatch)
    pool = served.Pool('threading', 3)
    try:
        pool.warm(2)
        assert [r.started for r in pool._runners] == [True, True, False]
    finally:
        pool.close()
    assert not any(r.started for r in pool._runners)


def test_a_started_runner_is_lent_first_and_to_one_holder(monkeypatch):
    sleeping_runners(monkeypatch)
    pool = served.Pool('threading', 2)
    try:
        pool.warm(1)
        with pool.runner() as first:
            assert first.started
            with pool.runner() as second:
                assert second is not first
                assert not second.started
        # Both back: the started one is lent first again.
        with pool.runner() as again:
            assert again is first
    finally:
        pool.close()
