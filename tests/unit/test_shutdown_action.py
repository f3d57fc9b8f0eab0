"""The shutdown action outside Nova: in a process of its own it sends
that process a real SIGTERM (what ``systemctl stop`` sends) and the call
that hit the rule goes on; ``kill_after`` SIGKILLs a process whose stop
outlives it; the journal says so.  In a process that owns several hosts
(the embedded Nova) the owner's handler stops the host instead.  The
sweep's shutdown classes and their invariant."""

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from faultdriver.actions import shutdown
from faultdriver import engine as engine_module
from faultdriver import journal as journal_module
from faultdriver import rules
from faultdriver.scenario import expect
from faultdriver.sweep import cases
from tests import runstates
from tests.unit import badinput
from tests.unit import fakes


REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
ACTIONS = dict(fakes.ACTIONS, shutdown=shutdown.Shutdown)

#: A child process standing in for nova-compute: its SIGTERM handler
#: writes a line (oslo.service would run Service.stop()) and, unless
#: told to hang, exits 0; the hit's caller prints that it went on.
CHILD = textwrap.dedent('''
    import signal, sys, time
    from faultdriver import engine as engine_module
    from faultdriver import journal as journal_module
    from faultdriver import rules
    from tests.unit import test_shutdown_action as here

    HANG = sys.argv[3] == 'hang'

    def on_term(signum, frame):
        print('SIGTERM received', flush=True)
        if not HANG:
            sys.exit(0)
    signal.signal(signal.SIGTERM, on_term)
    rule = rules.validate(rules.parse(sys.argv[2]), here.fakes.CATALOGUE,
                          here.ACTIONS)
    engine = engine_module.Engine('h1', here.ACTIONS, [rule], enabled=True,
                                  journal=journal_module.Journal(sys.argv[1]))
    try:
        engine.hit('spawn', 'before', {})
        print('the call went on', flush=True)
    except SystemExit:
        print('the call went on', flush=True)
        raise
    time.sleep(60)
''')


def run_child(tmp_path, rule, hang=False):
    journal = tmp_path / 'journal'
    done = subprocess.run(
        [sys.executable, '-c', CHILD, str(journal), rule,
         'hang' if hang else 'exit'], cwd=REPO, capture_output=True,
        text=True, timeout=120)
    return done, [json.loads(line) for line in
                  journal.read_text().splitlines()]


def test_a_process_gets_sigterm_and_the_call_goes_on(tmp_path):
    done, entries = run_child(tmp_path, 'spawn: shutdown')
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ['SIGTERM received',
                                        'the call went on']
    assert engine_module.MARKER in done.stderr
    assert [(e['kind'], e.get('action'), e.get('outcome'))
            for e in entries] == [('fault', 'shutdown', None),
                                  ('shutdown', None, 'signalled')]


def test_kill_after_sigkills_a_stop_that_outlives_it(tmp_path):
    done, entries = run_child(tmp_path, 'spawn: shutdown(kill_after=0.5)',
                              hang=True)
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert 'SIGTERM received' in done.stdout
    assert [e.get('outcome') for e in entries
            if e['kind'] == 'shutdown'] == ['signalled', 'killed']
    assert entries[-1]['kill_after_seconds'] == 0.5


def test_the_owner_of_the_process_stops_the_host_instead():
    stopped = []
    engine = engine_module.Engine(
        'h1', ACTIONS, [rules.validate(rules.parse(
            'spawn: shutdown(hold=0.1)'), fakes.CATALOGUE, ACTIONS)],
        enabled=True, journal=journal_module.Journal(None),
        shutdown_handler=lambda hit, **kw: stopped.append((hit.host, kw)))
    engine.hit('spawn', 'before', {})       # no SIGTERM: we are alive
    assert stopped == [('h1', {'hold': 0.1, 'kill_after': None})]


@pytest.mark.parametrize('text, error', [
    ('spawn: shutdown(hold=-1)', 'argument hold'),
    ('spawn: shutdown(kill_after=x)', 'argument kill_after'),
    ('spawn: shutdown(1, 2, 3)', 'at most 2 arguments'),
])
def test_bad_arguments_are_refused_naming_them(text, error):
    with pytest.raises(ValueError, match=error):
        rules.validate(rules.parse(text), fakes.CATALOGUE, ACTIONS)


def test_a_shutdown_entry_keeps_its_own_fields_only():
    entry = journal_module.JournalEntry(
        kind=journal_module.SHUTDOWN, time=1.0, host='h1', point='spawn',
        outcome='finished', duration_seconds=0.5, hold_seconds=2.0)
    data = entry.to_json()
    assert data['outcome'] == 'finished'
    assert data['duration_seconds'] == 0.5
    assert 'action' not in data and 'waited_for_lock' not in data
    assert journal_module.JournalEntry.from_json(data) == entry


# -- the sweep's classes and their invariant --------------------------------

def case(action):
    return cases.Case('pre_live_migration', 'dest', 'before', action)


def test_the_sweep_classes_become_shutdown_rules():
    assert case('shutdown').rule() == 'pre_live_migration.before: ' \
        '1*shutdown'
    assert case('shutdown-hold').rule() == 'pre_live_migration.before: ' \
        '1*shutdown(hold=15)'


CLEAN = {'s1': {'status': 'ACTIVE', 'host': 'dest',
                'migrations': ['completed']}}


def after_shutdown(s1, rollback=True):
    state = {'servers': {'s1': {'status': s1[0], 'host': s1[1]}},
             'migrations': [{'server': 's1', 'status': s1[2]}]}
    return expect.KINDS['outcome-after-shutdown'](
        None, runstates.state(state), outcome=CLEAN, origin={'s1': 'src'},
        rollback=rollback)


def test_after_shutdown_a_move_ends_as_clean_or_rolls_back_cleanly():
    assert after_shutdown(('ACTIVE', 'dest', 'completed'))[::2] == (
        True, {'s1': 'as in the clean run'})
    assert after_shutdown(('ACTIVE', 'src', 'failed'))[::2] == (
        True, {'s1': 'rolled back (failed)'})


def test_after_shutdown_error_or_a_rollback_of_an_evacuation_breaks_it():
    met, _text, actual = after_shutdown(('ACTIVE', 'src', 'error'))
    assert not met and actual['s1']['migrations'] == ['error']
    assert not after_shutdown(('ACTIVE', 'src', 'failed'),
                              rollback=False)[0]
    assert not after_shutdown(('ERROR', 'src', 'failed'))[0]


def test_only_plain_shutdown_cases_get_the_invariant():
    from faultdriver.scenario import model
    workflow = model.load('live-migration')
    clean = {'s1': CLEAN['s1'], 's2': {'status': 'ACTIVE', 'host': 'dest',
                                       'migrations': []}}
    data = cases.case_scenario(workflow, case('shutdown'), clean=clean)
    [added] = [e['outcome-after-shutdown'] for e in data['expectations']
               if 'outcome-after-shutdown' in e]
    assert added == {'outcome': clean, 'origin': {'s1': 'src', 's2': 'dest'},
                     'rollback': True}
    held = cases.case_scenario(workflow, case('shutdown-hold'), clean=clean)
    assert not [e for e in held['expectations']
                if 'outcome-after-shutdown' in e]


def test_kill_after_is_refused_where_the_embedded_nova_runs(tmp_path):
    """One process runs every embedded host: a scenario that may run
    there cannot kill one (exit 2 naming the rule's key)."""
    badinput.refused_until_backends(
        tmp_path / 'kill.yaml',
        'name: kill\ndescription: d\n'
        "rules: {src: ['live_migration: shutdown(kill_after=5)']}\n"
        'variants: {stock: {description: d}}\n'
        'steps:\n  - boot: {server: s1}\n',
        r'rules\.src\[0\]: shutdown\(kill_after=5\) needs a nova-compute '
        r'process per host; backend embedded lacks it; write '
        r'"backends: \[process, libvirt, cloud\]"',
        ['process', 'libvirt', 'cloud'])
