"""``faultdriver scenario run`` end to end, as a user runs it.

Invariant: the bundled stale-context seed runs both variants on the
embedded Nova and exits 0; the stock tracker's variant reports the bug
reproduced (CPUPinningInvalid breaks dest's periodic) and the candidate
fix's variant reports none of it, its accounting matching placement.
Its JSON document is the golden one (data/seed-report.golden.json),
modulo what differs per run (tests/golden.py).
"""

import json
import os
import re
import subprocess
import sys

from tests import golden

GOLDEN = os.path.join(os.path.dirname(__file__), 'data',
                      'seed-report.golden.json')


def run_cli(*args, timeout=600):
    env = dict(os.environ, PYTHONWARNINGS='ignore')
    return subprocess.run(
        [sys.executable, '-m', 'faultdriver.cmd.main'] + list(args),
        capture_output=True, text=True, timeout=timeout, env=env)


def test_stale_context_seed_a_b():
    mode = ('threading' if os.environ.get(
        'OS_NOVA_DISABLE_EVENTLET_PATCHING', 'True') == 'True'
        else 'eventlet')
    done = run_cli('scenario', 'run', 'stale-error-migration-context',
                   '--mode', mode, '-f', 'json')
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result['verdicts'] == {'stock': 'bug reproduced', 'fix': 'ok'}
    stock, fix = result['variants']['stock'], result['variants']['fix']
    assert '[stock] 22/22' in done.stderr        # progress was shown
    # The document keeps its shape, key for key (issue 39).
    with open(GOLDEN, encoding='utf-8') as saved:
        diff = golden.differences(saved.read(), result)
    assert not diff, '\n'.join(diff[:200])
    # What the stock variant shows is worded as the bug, and each
    # variant names the Nova it runs.
    assert "[stock] shows the bug: 'CPUPinningInvalid' logged" in \
        done.stderr
    assert re.search(r'\[fix\] starting embedded Nova \(\w+ mode, tracker '
                     r'fixes: stale_migration_context, Nova under test: '
                     r'nova \S+ \(stock\)\)', done.stderr), done.stderr

    def actual(report, text):
        [found] = [e for e in report['expectations']
                   if e['expectation'] == text]
        return found['actual']
    assert actual(stock, 'periodic errors on dest >= 1') >= 1
    assert actual(stock, "log 'CPUPinningInvalid' count >= 1") >= 1
    assert actual(fix, "log 'CPUPinningInvalid' count == 0") == 0
    assert actual(fix, 'periodic errors on dest == 0') == 0
    assert all(h['matches'] for h in fix['state']['hosts'].values())
    assert [f['action'] for f in stock['state']['faults']] == ['crash',
                                                              'hang']


def test_bad_scenario_exits_2(tmp_path):
    path = tmp_path / 'bad.yaml'
    path.write_text('name: bad\ndescription: x\nvariants: {stock: {}}\n'
                    'steps:\n  - bot: {server: s1}\n')
    done = run_cli('scenario', 'run', str(path))
    assert done.returncode == 2
    assert "steps[0]: unknown key 'bot'; did you mean 'boot'?" in done.stderr


def test_what_only_the_variants_check_exits_2(tmp_path):
    """What only the checks importing Nova find (a rule's point) is found
    by the variants' processes, which import Nova anyway; the run still
    exits 2 with the one message, no traceback, nothing written."""
    path = tmp_path / 'bad.yaml'
    path.write_text(
        'name: bad\ndescription: x\nvariants: {a: {}, b: {}}\n'
        'steps:\n  - add-rule: {host: dest, rule: "pre_live_migraton: '
        'crash"}\n')
    before = sorted(os.listdir(tmp_path))
    done = run_cli('scenario', 'run', str(path))
    assert done.returncode == 2, done.stderr[-3000:]
    assert 'Traceback' not in done.stderr
    assert done.stdout == ''
    assert done.stderr.strip().splitlines()[-1] == (
        "%s: steps[0].add-rule.rule: invalid rule: rule 'pre_live_migraton:"
        " crash' at column 1: unknown point 'pre_live_migraton'; did you "
        "mean 'pre_live_migration'? (faultdriver points lists them)" % path)
    assert sorted(os.listdir(tmp_path)) == before


def test_recover_rules_for_a_host_it_does_not_start_fail_the_run(tmp_path):
    """Rules arm with the service ``recover`` starts: rules for a host
    that is up would never fire, so the step fails and says so instead of
    letting the run pass as if they had been tried."""
    path = tmp_path / 'unarmed.yaml'
    path.write_text(
        'name: unarmed\ndescription: recover rules for a live host\n'
        'topology: {hosts: [src, dest]}\n'
        'variants: {stock: {description: stock}}\n'
        'expectations: [{servers-settled: {}}]\n'
        'steps:\n'
        '  - boot: {server: s1, host: src}\n'
        '  - recover:\n'
        '      rules: {dest: ["tracker.drop_move_claim_at_source: '
        'periodic"]}\n')
    done = run_cli('scenario', 'run', str(path), '-f', 'json')
    assert done.returncode == 1, done.stderr[-3000:]
    assert ('recover: rules for dest, which recover does not start'
            in done.stdout + done.stderr), done.stderr[-3000:]
