"""Bad input, surface 1: fault rules (nova.conf ``rules``, ``ctl add``,
scenario rules, ``faultdriver validate RULE``).

Invariant: a rule that would not do what it says is refused when it is
read, with a message naming the rule and what was expected: digits that
are not ASCII, counts and seeds out of range (also 5000-digit ones),
crashes that would not be crashes (signal 0, STOP, exit status 0 or 256),
filters that could never match.  A crash that is accepted is the crash
written, even when the service handles the signal.
"""

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from faultdriver.actions import crash
from faultdriver import rules
from tests.unit import badinput
from tests.unit import fakes

ACTIONS = dict(fakes.ACTIONS, crash=crash.Crash)
UUID = '3f2504e0-4f89-41d3-9a0c-0305e82c3301'
REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def check(text):
    return rules.validate(rules.parse(text), fakes.CATALOGUE, ACTIONS)


# (rule, what the message must say)
REFUSED = [
    # Digits of other scripts: int() reads them, the grammar must not.
    ('spawn: \u0663*off', "expected an action name, found '\u0663*off'"),
    ('spawn: \u0663%off', "expected an action name, found '\u0663%off'"),
    ('spawn: delay("\u0663")', "argument seconds='\u0663': expected "
     'seconds between 0 and 86400, written as digits'),
    ('spawn: hang("\u0663")', "argument timeout='\u0663'"),
    ('spawn[seed="\u0663"]: off', "seed '\u0663' is not a whole number"),
    ('spawn: crash("\u0663")', "argument signal='\u0663': not a signal"),
    ('spawn: crash(exit_code="\u0663")', "argument exit_code='\u0663': "
     'expected an exit status from 1 to 255'),
    # Counts and seeds: in range, and never a 5000-digit conversion.
    ('spawn: %s*off' % ('9' * 5000), 'rule has 5011 characters; at most '
     '4096'),
    ('spawn: %s*off' % ('9' * 50), 'count 99999999999999999999... out '
     'of range; expected a whole number from 1 to 1000000000'),
    ('spawn: 1000000001*off', 'count 1000000001 out of range'),
    ('spawn[seed=%s]: off' % ('9' * 50), "seed '99999999999999999999...'"
     ' is not a whole number from 0 to 18446744073709551615'),
    ('spawn[seed=18446744073709551616]: off', 'is not a whole number'),
    ('spawn: delay(1e400)', 'written as digits'),
    ('spawn: delay(inf)', 'written as digits'),
    ('spawn: delay(1_0)', 'written as digits'),
    ('spawn: delay(%s)' % ('9' * 50), 'written as digits'),
    # A crash that would not be a crash.
    ('spawn: crash(0)', 'signal 0 does not end the process'),
    ('spawn: crash(STOP)', 'signal 19 does not end the process'),
    ('spawn: crash(SIGCONT)', 'signal 18 does not end the process'),
    ('spawn: crash(CHLD)', 'signal 17 does not end the process'),
    ('spawn: crash(99999)', 'not a signal'),
    ('spawn: crash(%s)' % ('9' * 50), 'not a signal'),
    ('spawn: crash(SIG_DFL)', 'not a signal'),
    ('spawn: crash(NOSUCH)', 'unknown signal'),
    ('spawn: crash(exit_code=0)', 'expected an exit status from 1 to 255 '
     '(0 is a clean exit'),
    ('spawn: crash(exit_code=256)', 'expected an exit status from 1 to 255'),
    ('spawn: crash(exit_code=-1)', 'expected an exit status from 1 to 255'),
    ('spawn: crash(exit_code=%s)' % ('9' * 50), 'expected an exit status'),
    # Filters that compare text and could never match.
    ('spawn[instance=abc]: off', "instance 'abc' is not a UUID as Nova "
     'writes it'),
    ('spawn[instance=%s]: off' % UUID.upper(), 'write %s' % UUID),
    ('spawn[migration="%s "]: off' % UUID, 'is not a UUID'),
    ('spawn[migration="%s\n"]: off' % UUID, 'is not a UUID'),
    ('spawn[instance="{%s}"]: off' % UUID, 'is not a UUID'),
    # Sizes.
    ('spawn: log("%s")' % ('x' * 5000), 'rule has 5014 characters; at '
     'most 4096'),
]


def _short(value):
    return value if len(value) < 60 else value[:50] + '...%d' % len(value)


@pytest.mark.parametrize('text, problem', REFUSED,
                         ids=[_short(t) for t, _ in REFUSED])
def test_refused_with_a_message_naming_the_rule(text, problem):
    with pytest.raises(rules.RuleError) as caught:
        check(text)
    message = str(caught.value)
    assert problem in message
    assert message.startswith('rule ')
    assert len(message) < 400


ACCEPTED = [
    ('spawn: crash', {}),
    ('spawn: crash(KILL)', {'signal': 9}),
    ('spawn: crash(sigterm)', {'signal': 15}),
    ('spawn: crash(6)', {'signal': 6}),
    ('spawn: crash(exit_code=1)', {'exit_code': 1}),
    ('spawn: crash(exit_code=255)', {'exit_code': 255}),
    ('spawn: crash(ABRT, 134)', {'signal': 6, 'exit_code': 134}),
]


@pytest.mark.parametrize('text, bound', ACCEPTED)
def test_real_crashes_are_accepted_as_written(text, bound):
    rule = check(text)
    assert crash.Crash(rule.terms[0]).args == bound


def test_uuid_filters_and_big_valid_numbers_are_accepted():
    rule = check('spawn[instance=%s, migration=%s, seed=%d]: 1000000000*off'
                 % (UUID, UUID, 2 ** 64 - 1))
    assert rule.terms[0].count == 10 ** 9
    assert rule.filter('instance') == UUID


def test_validate_cli_refuses_a_rule_with_exit_2(capsys, tmp_path,
                                                 monkeypatch):
    monkeypatch.chdir(tmp_path)
    message = badinput.refused(capsys, 'validate', 'spawn: crash(exit_code'
                               '=256)', root=tmp_path)
    assert "rule 'spawn: crash(exit_code=256)'" in message
    assert 'expected an exit status from 1 to 255' in message
    message = badinput.refused(capsys, 'validate',
                               'spawn: \u0663*crash', root=tmp_path)
    assert "expected an action name, found '\u0663*crash'" in message


def _crash_in_child(rule, handler=True, journal='none'):
    """Fire ``rule`` in a child process whose SIGTERM handler (like
    oslo.service's) would shut down gracefully, from a thread that is
    not the main one; returns the child's exit status."""
    code = textwrap.dedent('''
        import signal, sys, threading
        from faultdriver.actions import crash
        from faultdriver import engine as engine_module
        from faultdriver import journal as journal_module
        from faultdriver import rules
        from tests.unit import fakes
        if %(handler)r:
            signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
        actions = dict(fakes.ACTIONS, crash=crash.Crash)
        journal = (journal_module.Journal(%(journal)r)
                   if %(journal)r != 'none' else None)
        engine = engine_module.Engine(
            'h1', actions, [rules.validate(rules.parse(%(rule)r),
                                           fakes.CATALOGUE, actions)],
            enabled=True, journal=journal)
        thread = threading.Thread(
            target=engine.hit, args=('spawn', 'before', {}))
        thread.start()
        thread.join()
        sys.exit(0)       # only if the crash did not happen
    ''') % {'rule': rule, 'handler': handler, 'journal': journal}
    done = subprocess.run([sys.executable, '-c', code], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    return done.returncode, done.stderr


def test_crash_signal_is_the_signal_even_with_a_handler_installed():
    code, err = _crash_in_child('spawn: crash(TERM)')
    assert code == -signal.SIGTERM, err


def test_crash_exit_code_is_the_exit_code():
    code, err = _crash_in_child('spawn: crash(exit_code=42)', handler=False)
    assert code == 42, err
