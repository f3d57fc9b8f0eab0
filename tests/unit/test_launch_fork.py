"""Variants side by side on one Nova under test are forked from one
runner that imported Nova once (``runner --fork``); each still gets a
process, a report and a verdict of its own.

The runner here is tests/unit/forking_runner.py: the worker protocol's
real ``fork_each`` and the launcher's real processes, with runs that
leave marks instead of starting Nova (the embedded runner's own path
is what the main command and every functional scenario test run).
"""

import dataclasses
import os
import threading

import pytest

from faultdriver.scenario import launch
from faultdriver.scenario import model
from faultdriver.scenario import tiers

SEED = 'stale-error-migration-context'      # variants stock and fix
#: What runs of no expectations give them (stock expects the bug).
VERDICTS = {'stock': 'bug reproduced', 'fix': 'ok'}


@pytest.fixture
def marks(tmp_path, monkeypatch):
    # The embedded tier, whose runner forks, with the test's runner.
    monkeypatch.setitem(tiers.TIERS, 'embedded', dataclasses.replace(
        tiers.get('embedded'), runner=('tests.unit.forking_runner',)))
    monkeypatch.setenv('FORKING_RUNNER_MARKS', str(tmp_path))
    monkeypatch.chdir(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    return tmp_path


def _run(parallel=True):
    scenario = model.read(SEED)
    return launch.run(scenario, ['stock', 'fix'], 'threading',
                      parallel=parallel, backend='embedded',
                      stream=open(os.devnull, 'w'))


def test_variants_are_forked_from_one_preloaded_runner(marks):
    reports = _run()
    assert {v: r.verdict for v, r in reports.items()} == VERDICTS
    preloads = [m.name for m in marks.iterdir()
                if m.name.startswith('preload-')]
    assert len(preloads) == 1
    runner = preloads[0].split('-')[1]
    assert sorted(m.name for m in marks.iterdir()
                  if m.name.startswith('ran-')) == [
        'ran-fix-' + runner, 'ran-stock-' + runner]


def test_one_after_the_other_each_variant_gets_its_own_runner(marks):
    reports = _run(parallel=False)
    assert {v: r.verdict for v, r in reports.items()} == VERDICTS
    assert not [m for m in marks.iterdir() if m.name.startswith('preload')]


def test_a_forked_variant_that_dies_gets_an_internal_error(
        marks, monkeypatch):
    monkeypatch.setenv('FORKING_RUNNER_DIE', 'fix')
    reports = _run()
    assert reports['stock'].verdict == VERDICTS['stock']
    assert reports['fix'].verdict == 'internal error'
    assert reports['fix'].internal_error == (
        'the forked runner of variant fix ended with status 7 without a '
        'report')


def test_a_thread_left_by_the_preload_fails_every_variant(
        marks, monkeypatch):
    # A child would inherit the thread's locks but not the thread.
    monkeypatch.setenv('FORKING_RUNNER_THREAD', '1')
    reports = _run()
    for report in reports.values():
        assert report.verdict == 'internal error'
        assert report.internal_error == (
            'cannot fork the variants: importing Nova left threads '
            'running (left-behind)')
    assert not [m for m in marks.iterdir() if m.name.startswith('ran-')]


def test_forking_needs_one_nova_under_test_and_a_forking_tier():
    embedded, process = tiers.get('embedded'), tiers.get('process')
    same = {'stock': {'A': '1'}, 'fix': {'A': '1'}}
    assert launch._forked(embedded, True, same)
    assert not launch._forked(embedded, False, same)
    assert not launch._forked(process, True, same)
    assert not launch._forked(embedded, True, {'stock': {'A': '1'}})
    assert not launch._forked(embedded, True, {
        'stock': {'A': '1'}, 'fix': {'A': '2'}})


def test_a_run_the_launcher_ended_writes_no_report(tmp_path):
    """The launcher ends a run at another variant's scenario error and
    removes the reports' directory; the forked runner then has nobody to
    write a failed variant's report for, and writes none (it ended with
    a traceback before, which the launcher's stderr showed)."""
    from faultdriver.scenario import worker
    gone = tmp_path / 'reports'
    stop = threading.Event()

    def preload(mode):
        # A thread left running: fork_each fails every variant at once.
        threading.Thread(target=stop.wait, daemon=True).start()
    try:
        worker.fork_each(['threading', 'scenario.yaml',
                          'a=%s' % (gone / 'a.json')], preload, None,
                         'embedded')
    finally:
        stop.set()
    assert not gone.exists()
