"""The rule grammar: valid and invalid rules, messages, round-trip."""

import os
import subprocess
import sys

import hypothesis
from hypothesis import strategies as st
import pytest

from faultdriver import rules
from faultdriver.rules import Rule
from faultdriver.rules import Term
from tests.unit import fakes

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

OFF = Term('off')
#: Instance and migration filters take Nova's UUIDs.
UUID = '3f2504e0-4f89-41d3-9a0c-0305e82c3301'

# (text, the rule it parses to)
VALID = [
    ('spawn: off', Rule('spawn', (OFF,))),
    ('spawn.before: off', Rule('spawn', (OFF,))),
    ('spawn.after: off', Rule('spawn', (OFF,), phase='after')),
    ('tracker.instance_claim: off',
     Rule('tracker.instance_claim', (OFF,))),
    ('tracker.instance_claim.after: off',
     Rule('tracker.instance_claim', (OFF,), phase='after')),
    ('pre_live_migration@dest: off',
     Rule('pre_live_migration', (OFF,), role='dest')),
    ('pre_live_migration@dst: off',
     Rule('pre_live_migration', (OFF,), role='dest')),
    ('live_migration@source: off',
     Rule('live_migration', (OFF,), role='source')),
    ('live_migration.after@src: off',
     Rule('live_migration', (OFF,), phase='after', role='source')),
    ('spawn[instance=%s, host=h1]: off' % UUID,
     Rule('spawn', (OFF,), filters=(('host', 'h1'), ('instance', UUID)))),
    ('spawn[seed=3, migration="%s", operation=resize]: off' % UUID,
     Rule('spawn', (OFF,), filters=(('migration', UUID),
                                    ('operation', 'resize'),
                                    ('seed', '3')))),
    ('spawn: 50%log', Rule('spawn', (Term('log', percent=50.0),))),
    ('spawn: 12.5%3*log(hi)',
     Rule('spawn', (Term('log', ('hi',), count=3, percent=12.5),))),
    ('spawn: 3*delay(0.5)',
     Rule('spawn', (Term('delay', ('0.5',), count=3),))),
    ('spawn: log()', Rule('spawn', (Term('log'),))),
    ('spawn: hang(30, name=b1)',
     Rule('spawn', (Term('hang', ('30',), (('name', 'b1'),)),))),
    ('spawn: hang(name=b1, timeout=5)',
     Rule('spawn', (Term('hang', (), (('name', 'b1'), ('timeout', '5'))),))),
    (r'spawn: log(message="say \"hi\", C:\\ and -> too")',
     Rule('spawn', (Term('log', (), (
         ('message', 'say "hi", C:\\ and -> too'),)),))),
    ('spawn: log("h\u00e9llo \u2192 \u2713")',
     Rule('spawn', (Term('log', ('h\u00e9llo \u2192 \u2713',)),))),
    ('spawn: log("")', Rule('spawn', (Term('log', ('',)),))),
    ('spawn: 2*off -> 1*log -> delay(0)',
     Rule('spawn', (Term('off', count=2), Term('log', count=1),
                    Term('delay', ('0',))))),
    ('  spawn.after @ dst [ instance = %s ,host=h ] :  50%% 2*hang ( 5 , '
     'name = y )  ->  off  ' % UUID,
     Rule('spawn', (Term('hang', ('5',), (('name', 'y'),), count=2,
                         percent=50.0), OFF),
          phase='after', role='dest',
          filters=(('host', 'h'), ('instance', UUID)))),
    # A probability term lets the hits that lose its roll fall through.
    ('spawn: 25%delay(3) -> log(slow)',
     Rule('spawn', (Term('delay', ('3',), percent=25.0),
                    Term('log', ('slow',))))),
    ('spawn: 2*off -> 50%log -> off',
     Rule('spawn', (Term('off', count=2), Term('log', percent=50.0), OFF))),
]


@pytest.mark.parametrize('text, expected', VALID)
def test_valid_rule_parses_to_fields(text, expected):
    assert rules.parse(text) == expected


@pytest.mark.parametrize('text, expected', VALID)
def test_valid_rule_validates_unchanged(text, expected):
    rule = rules.parse(text)
    assert rules.validate(rule, fakes.CATALOGUE, fakes.ACTIONS) is rule


# (text, its canonical form)
CANONICAL = [
    ('spawn.before@src[instance=i,host=h]: 50.0%3*log(x,message="a b")',
     'spawn@source[host=h, instance=i]: 50%3*log(x, message="a b")'),
    ('spawn.after@dst: 0.00001%log', 'spawn.after@dest: 0.00001%log'),
    ('spawn: log("plain")', 'spawn: log(plain)'),
    (r'spawn: log("a\\b\"c")', r'spawn: log("a\\b\"c")'),
]


@pytest.mark.parametrize('text, canonical', CANONICAL)
def test_str_is_canonical(text, canonical):
    assert str(rules.parse(text)) == canonical


def test_point_named_like_a_phase_keeps_its_phase():
    rule = Rule('tracker.after', (OFF,))
    assert str(rule) == 'tracker.after.before: off'
    assert rules.parse(str(rule)) == rule


def test_rule_is_hashable_value():
    assert len({rules.parse('spawn: off'), rules.parse(' spawn :off ')}) == 1
    assert rules.parse('spawn[host=h]: off').filter('host') == 'h'
    assert rules.parse('spawn: off').filter('host', 'x') == 'x'


# (text, 1-based column or None, problem)
SYNTAX_ERRORS = [
    ('', None, 'empty rule'),
    ('   ', None, 'empty rule'),
    ('1spawn: off', 1, "expected a point name, found '1spawn: of'"),
    ('spawn off', 7,
     "expected ':' between the point and its actions, found 'off'"),
    ('spawn . after: off', 7,
     "expected ':' between the point and its actions, found '. after: o'"),
    ('spawn:', 7, "expected an action name, found 'end of rule'"),
    ('spawn: off ->', 14, "expected an action name, found 'end of rule'"),
    ('spawn: off log', 12, "unexpected 'log'; terms are joined with '->'"),
    ('spawn: off)', 11, "unexpected ')'; terms are joined with '->'"),
    ('spawn: log("abc', 12, 'unterminated string'),
    ('spawn: log("abc\\")', 12, 'unterminated string'),
    ('spawn: 0%off', 8, 'probability 0% out of range; expected more than 0 '
     'and at most 100'),
    ('spawn: 150%off', 8, 'probability 150% out of range; expected more '
     'than 0 and at most 100'),
    ('spawn: 100.5%off', 8, 'probability 100.5% out of range; expected '
     'more than 0 and at most 100'),
    ('spawn: 0*off', 8,
     'count 0 out of range; expected a whole number from 1 to 1000000000'),
    ('spawn: 1.5*off', 8,
     'count 1.5 out of range; expected a whole number from 1 to '
     '1000000000'),
    ('spawn: 50% 0*off', 12,
     'count 0 out of range; expected a whole number from 1 to 1000000000'),
    ('spawn: 50 %off', 8, "expected an action name, found '50 %off'"),
    ('spawn[foo=1]: off', 7, "unknown filter 'foo'; expected one of "
     'instance, migration, operation, host, seed'),
    ('spawn[ foo=1]: off', 8, "unknown filter 'foo'; expected one of "
     'instance, migration, operation, host, seed'),
    ('spawn[host=a, host=b]: off', 15, "filter 'host' given twice"),
    ('spawn[host]: off', 11,
     "expected '=' after filter 'host', found ']: off'"),
    # ':' is part of a bare value (host:port), so the value runs on.
    ('spawn[host=a: off', 15,
     "expected ']' to close the filters, found 'off'"),
    ('spawn@left: off', 7,
     "unknown host role 'left'; expected 'source' or 'dest'"),
    ('spawn@ left: off', 8,
     "unknown host role 'left'; expected 'source' or 'dest'"),
    ('spawn: log(message=a, b)', 23,
     'positional argument after a keyword argument'),
    ('spawn: log(a', 13,
     "expected ')' to close the arguments of 'log', found 'end of rule'"),
    ('spawn: log(a b)', 14,
     "expected ')' to close the arguments of 'log', found 'b)'"),
    ('spawn: log(a=)', 14, "expected a value, found ')'"),
]


@pytest.mark.parametrize('text, column, problem', SYNTAX_ERRORS)
def test_syntax_error_says_what_and_where(text, column, problem):
    with pytest.raises(rules.RuleError) as info:
        rules.parse(text)
    exc = info.value
    assert isinstance(exc, ValueError)
    assert exc.problem == problem
    if column is None:
        assert exc.position is None
        assert str(exc) == 'rule %r: %s' % (text, problem)
    else:
        assert exc.position == column - 1
        assert str(exc) == 'rule %r at column %d: %s' % (text, column,
                                                         problem)


def test_parse_rejects_non_strings():
    with pytest.raises(rules.RuleError, match='empty rule'):
        rules.parse(None)


# (text, position, problem): parses, but the catalogue or actions reject it
ACTIONS_LIST = 'delay, hang, log, off, record'
SEMANTIC_ERRORS = [
    ('pre_live_migrate: off', 0, "unknown point 'pre_live_migrate'; did you "
     "mean 'pre_live_migration'? (faultdriver points lists them)"),
    ('xyzzy: off', 0,
     "unknown point 'xyzzy' (faultdriver points lists them)"),
    ('spawn: of', None, "unknown action 'of'; did you mean 'off'?; "
     'expected one of ' + ACTIONS_LIST),
    ('spawn: explode', None,
     "unknown action 'explode'; expected one of " + ACTIONS_LIST),
    ('pre_live_migration@src: off', None, "point 'pre_live_migration' runs "
     'only on the dest host, never on the source'),
    ('live_migration@dst: off', None, "point 'live_migration' runs only on "
     'the source host, never on the dest'),
    ('spawn[operation=teleport]: off', None, "unknown operation 'teleport';"
     ' expected one of live-migration, migration, resize, evacuation'),
    ('pre_live_migration[operation=resize]: off', None,
     "point 'pre_live_migration' is not used by resize; it is used by "
     'live-migration'),
    ('spawn[seed=abc]: off', None,
     "seed 'abc' is not a whole number from 0 to 18446744073709551615"),
    ('spawn[seed=-1]: off', None, "seed '-1' is not a whole number from 0 to "
     '18446744073709551615'),
    ('spawn[seed="\u00b2"]: off', None,
     "seed '\u00b2' is not a whole number from 0 to "
     '18446744073709551615'),
    ('spawn: off -> log', None, "term 'off' never ends, so the terms after "
     'it can never fire; give it a count (N*) or a probability below 100%'),
    ('spawn: 2*off -> 100%log -> off', None, "term '100%log' never ends, so "
     'the terms after it can never fire; give it a count (N*) or a '
     'probability below 100%'),
    ('spawn: delay', None, "action 'delay': missing argument seconds"),
    ('spawn: delay()', None, "action 'delay': missing argument seconds"),
    ('spawn: delay(-1)', None, "action 'delay': argument seconds='-1': "
     'expected seconds between 0 and 86400, written as digits (e.g. 30 '
     'or 0.5)'),
    ('spawn: delay(nan)', None, "action 'delay': argument seconds='nan': "
     'expected seconds between 0 and 86400, written as digits (e.g. 30 '
     'or 0.5)'),
    ('spawn: delay(x)', None, "action 'delay': argument seconds='x': "
     'expected seconds between 0 and 86400, written as digits (e.g. 30 '
     'or 0.5)'),
    ('spawn: delay(1, 2)', None,
     "action 'delay': takes at most 1 arguments (seconds), got 2"),
    ('spawn: delay(secs=1)', None,
     "action 'delay': unknown argument 'secs'; expected seconds"),
    ('spawn: delay(1, seconds=2)', None,
     "action 'delay': argument 'seconds' given twice"),
    ('spawn.unlocked: crash', None, "phase 'unlocked': only tracker points "
     "that take the tracker lock have it (before the lock); 'spawn' takes no "
     "lock, use before"),
    ('spawn: off(1)', None,
     "action 'off': takes at most 0 arguments (none), got 1"),
    ('spawn: hang(timeout=90000)', None, "action 'hang': argument "
     "timeout='90000': expected seconds between 0 and 86400"),
]


@pytest.mark.parametrize('text, position, problem', SEMANTIC_ERRORS)
def test_validate_error_says_what(text, position, problem):
    rule = rules.parse(text)
    with pytest.raises(rules.RuleError) as info:
        rules.validate(rule, fakes.CATALOGUE, fakes.ACTIONS)
    exc = info.value
    assert exc.problem == problem
    assert exc.position == position
    assert exc.text == str(rule)


def test_validate_message_names_the_rule():
    with pytest.raises(rules.RuleError) as info:
        fakes.rule('pre_live_migrate@dst: 2*off ->  log')
    assert str(info.value) == (
        "rule 'pre_live_migrate@dest: 2*off -> log' at column 1: unknown "
        "point 'pre_live_migrate'; did you mean 'pre_live_migration'? "
        '(faultdriver points lists them)')


def test_suggest():
    assert rules.suggest('spwan', ['spawn', 'destroy']) == (
        "; did you mean 'spawn'?")
    assert rules.suggest('zzz', ['spawn', 'destroy']) == ''


# -- round trip -----------------------------------------------------------

_FIRST = 'abcxyzABZ_'
_REST = _FIRST + '019'
_simple_names = st.builds(str.__add__, st.sampled_from(_FIRST),
                          st.text(_REST, max_size=5))
_dotted_names = st.lists(_simple_names, min_size=1, max_size=3).map(
    '.'.join)
_points = st.one_of(
    st.sampled_from(sorted(fakes.CATALOGUE)),
    st.sampled_from(['before', 'after', 'x.after', 'tracker.before']),
    _dotted_names)
_values = st.one_of(
    st.text(max_size=8),
    st.text('aZ09_.:/+-', min_size=1, max_size=8),
    st.sampled_from(['', '"', '\\', '\\"', 'a b', '->', 'x=y', ',', ')',
                     ']', ' lead', 'trail ', 'h\u00e9\u2713', 'a\nb']))
_percents = st.one_of(
    st.none(),
    st.integers(1, 100).map(float),
    st.floats(min_value=0, max_value=100, exclude_min=True,
              allow_nan=False))
_terms = st.builds(
    Term,
    action=_dotted_names,
    args=st.lists(_values, max_size=3).map(tuple),
    kwargs=st.lists(st.tuples(_simple_names, _values),
                    max_size=3).map(tuple),
    count=st.one_of(st.none(), st.integers(1, 10 ** 9)),
    percent=_percents)
_rules = st.builds(
    Rule,
    point=_points,
    terms=st.lists(_terms, min_size=1, max_size=4).map(tuple),
    phase=st.sampled_from(rules.PHASES),
    role=st.sampled_from([None, 'source', 'dest']),
    filters=st.dictionaries(st.sampled_from(rules.FILTER_KEYS), _values,
                            max_size=3).map(lambda d: tuple(sorted(
                                d.items()))))


@hypothesis.settings(max_examples=100, deadline=None, database=None)
@hypothesis.given(_rules)
@hypothesis.example(Rule('x.after', (Term('off', percent=5e-324),)))
@hypothesis.example(Rule(
    'spawn', (Term('log', ('"\\', ' '), (('m', ''),), 1, 12.5),),
    phase='after', role='dest', filters=(('host', 'a b'), ('seed', '1'))))
def test_str_parses_back_to_the_same_rule(rule):
    text = str(rule)
    assert rules.parse(text) == rule
    assert str(rules.parse(text)) == text


# -- isolation ------------------------------------------------------------

def test_grammar_and_engine_tests_import_no_nova():
    code = ('import sys\n'
            'import tests.unit.test_rules, tests.unit.test_engine\n'
            'import tests.unit.test_journal\n'
            'print(sorted(m for m in sys.modules if m.split(".")[0] == '
            '"nova"))\n')
    out = subprocess.run([sys.executable, '-c', code], cwd=REPO, check=True,
                         capture_output=True, text=True).stdout
    assert out.strip() == '[]'


def test_a_locked_tracker_point_has_a_phase_before_its_lock():
    rule = fakes.rule('tracker.instance_claim.unlocked: 1*off')
    assert (rule.point, rule.phase) == ('tracker.instance_claim', 'unlocked')
    assert str(rule) == 'tracker.instance_claim.unlocked: 1*off'
