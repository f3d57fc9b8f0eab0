"""The engine: arming, matching, chains, counters, barriers, journal."""

import logging
import random
import sys
import threading
import time

import pytest

from faultdriver import engine as engine_module
from faultdriver import journal as journal_module
from tests.unit import fakes

HOST = 'h1'
JOIN = 10.0          # generous upper bound for a thread that should finish


def make(*texts, enabled=True, seed=None, journal=None, host=HOST):
    return engine_module.Engine(host, fakes.ACTIONS,
                                [fakes.rule(t) for t in texts],
                                enabled=enabled, seed=seed, journal=journal)


def hits(engine, n, point='spawn', phase='before', context=None):
    """Hit ``point`` n times; return what record() saw."""
    seen = []
    for _ in range(n):
        engine.hit(point, phase, dict(context or {}), target=seen)
    return seen


def start(target, *args):
    thread = threading.Thread(target=target, args=args, daemon=True)
    thread.start()
    return thread


def fired_hits(seed, n, percent):
    """Hit numbers a lone ``percent%`` term fires on, for rng ``seed``."""
    rng = random.Random(seed)
    return [i for i in range(1, n + 1) if rng.random() * 100 < percent]


# -- enabling and arming --------------------------------------------------

def test_disabled_engine_arms_and_fires_nothing():
    engine = make('spawn: record', enabled=False)
    assert engine.armed == set()
    assert hits(engine, 3) == []
    engine.set_enabled(True)
    assert engine.armed == {'spawn'}
    assert hits(engine, 1) == [(None, 0, 1, 1)]


def test_armed_is_points_with_rules_and_watched_points():
    engine = make('spawn: off', 'spawn.after: off', 'live_migration: off')
    armed = engine.armed
    assert armed == {'spawn', 'live_migration'}
    with pytest.raises(TimeoutError):
        engine.wait_for_hit('destroy', timeout=0)
    assert armed == {'spawn', 'live_migration', 'destroy'}
    index = engine.add_rule(fakes.rule('pre_live_migration: off'))
    assert index == 3
    assert armed == {'spawn', 'live_migration', 'destroy',
                     'pre_live_migration'}
    assert engine.remove_rule(index) is True
    assert engine.remove_rule(index) is False
    assert armed == {'spawn', 'live_migration', 'destroy'}
    engine.set_enabled(False)
    assert armed == {'destroy'}
    engine.set_enabled(True)
    engine.set_rules([fakes.rule('spawn: off')])
    assert armed == {'spawn', 'destroy'}
    engine.close()
    assert armed == {'destroy'}
    assert engine.armed is armed      # the driver keeps a reference


def test_armed_point_never_drops_out_while_rearming():
    engine = make('spawn: off')
    missed = []
    stop = threading.Event()

    def reader():
        while not stop.is_set():
            for _ in range(100):
                if 'spawn' not in engine.armed:
                    missed.append(1)
            time.sleep(0)     # lets the writer run under eventlet too

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        thread = start(reader)
        # A fixed amount of rearming, however fast the machine is.
        for _ in range(200):
            for _ in range(100):
                engine.set_enabled(True)
            time.sleep(0)
    finally:
        stop.set()
        sys.setswitchinterval(interval)
    thread.join(JOIN)
    assert missed == []


# -- matching -------------------------------------------------------------

#: Instance and migration filters take UUIDs as Nova writes them.
I1, I2 = ('11111111-1111-4111-8111-111111111111',
          '22222222-2222-4222-8222-222222222222')
M1, M2 = ('33333333-3333-4333-8333-333333333333',
          '44444444-4444-4444-8444-444444444444')

# (rule, engine host, context, fires)
FILTERS = [
    ('spawn: record', HOST, {}, True),
    ('spawn[instance=%s]: record' % I1, HOST, {'instance': I1}, True),
    ('spawn[instance=%s]: record' % I1, HOST, {'instance': I2}, False),
    ('spawn[instance=%s]: record' % I1, HOST, {}, False),
    ('spawn[migration=%s]: record' % M1, HOST, {'migration': M1}, True),
    ('spawn[migration=%s]: record' % M1, HOST, {'migration': M2}, False),
    ('spawn[operation=resize]: record', HOST, {'operation': 'resize'}, True),
    ('spawn[operation=resize]: record', HOST, {'operation': 'migration'},
     False),
    ('spawn[host=h1]: record', 'h1', {}, True),
    ('spawn[host=h1]: record', 'h2', {}, False),
    ('spawn[host=h1]: record', 'h2', {'host': 'h1'}, False),
    ('spawn@dest: record', HOST, {'role': 'dest'}, True),
    ('spawn@dst: record', HOST, {'role': 'source'}, False),
    ('spawn@dest: record', HOST, {}, False),
    ('spawn[seed=3]: record', HOST, {}, True),
    ('spawn@dst[instance=%s, operation=resize]: record' % I1, HOST,
     {'role': 'dest', 'instance': I1, 'operation': 'resize'}, True),
    ('spawn@dst[instance=%s, operation=resize]: record' % I1, HOST,
     {'role': 'dest', 'instance': I1, 'operation': 'migration'}, False),
]


@pytest.mark.parametrize('text, host, context, fires', FILTERS)
def test_filters(text, host, context, fires):
    engine = make(text, host=host)
    assert hits(engine, 1, context=context) == (
        [(None, 0, 1, 1)] if fires else [])


def test_hits_that_do_not_match_do_not_count():
    engine = make('spawn[instance=%s]: 1*off -> record' % I1)
    seen = []
    for instance in (I2, I1, I2, I1, I1):
        engine.hit('spawn', 'before', {'instance': instance}, target=seen)
    assert seen == [(None, 0, 2, 1), (None, 0, 3, 2)]
    assert engine.rules()[0]['hits'] == 3
    assert engine.counters() == {'spawn.before': 5}


def test_phases_are_separate():
    engine = make('spawn: record(b)', 'spawn.after: 1*record(a)')
    assert hits(engine, 2, phase='before') == [('b', 0, 1, 1),
                                               ('b', 0, 2, 2)]
    assert hits(engine, 2, phase='after') == [('a', 1, 1, 1)]
    assert hits(engine, 1, point='destroy') == []
    assert engine.counters() == {'spawn.before': 2, 'spawn.after': 2,
                                 'destroy.before': 1}


def test_hit_carries_the_context():
    seen = []

    class Keep(fakes.Record):
        def __call__(self, hit):
            seen.append(hit)

    engine = engine_module.Engine(
        HOST, dict(fakes.ACTIONS, record=Keep),
        [fakes.rule('spawn.after@dst: record')], enabled=True)
    target = object()
    engine.hit('spawn', 'after', {'role': 'dest', 'instance': 'i',
                                  'migration': 'm', 'operation': 'resize'},
               target=target)
    [hit] = seen
    assert (hit.point, hit.phase, hit.host, hit.rule_index, hit.hit,
            hit.fired, hit.role, hit.instance, hit.migration, hit.operation,
            hit.target, hit.engine) == (
        'spawn', 'after', HOST, 0, 1, 1, 'dest', 'i', 'm', 'resize', target,
        engine)
    assert str(hit.rule) == 'spawn.after@dest: record'
    assert hit.describe() == 'spawn.after'


# -- chains ---------------------------------------------------------------

def test_counted_chain_fires_each_term_its_count_then_nothing():
    engine = make('spawn: 2*record(a) -> 1*record(b) -> 2*record(c)')
    assert hits(engine, 8) == [('a', 0, 1, 1), ('a', 0, 2, 2),
                               ('b', 0, 3, 1), ('c', 0, 4, 1),
                               ('c', 0, 5, 2)]
    assert engine.rules() == [{
        'index': 0, 'rule': 'spawn: 2*record(a) -> 1*record(b) -> '
        '2*record(c)', 'hits': 8, 'fired': 5, 'exhausted': True}]


def test_off_skips_hits_and_an_open_last_term_never_ends():
    journal = journal_module.Journal()
    engine = make('spawn: 2*off -> 1*record(x) -> record(y)',
                  journal=journal)
    assert hits(engine, 6) == [('x', 0, 3, 1), ('y', 0, 4, 1),
                               ('y', 0, 5, 2), ('y', 0, 6, 3)]
    assert [(e['action'], e['hit']) for e in journal.entries()] == [
        ('off', 1), ('off', 2), ('record', 3), ('record', 4), ('record', 5),
        ('record', 6)]
    assert engine.rules()[0]['exhausted'] is False


def test_probability_with_own_seed_is_exact():
    engine = make('spawn[seed=7]: 30%record')
    fired = [h for _, _, h, _ in hits(engine, 20)]
    assert fired == [2, 4, 7, 9, 11, 12, 15, 16]
    assert fired == fired_hits(7, 20, 30)


def test_probability_seed_is_engine_seed_plus_rule_index():
    engine = make('spawn: 50%record(a)', 'spawn: 50%record(b)', seed=100)
    seen = hits(engine, 40)
    assert [h for tag, _, h, _ in seen if tag == 'a'] == fired_hits(
        100, 40, 50)
    assert [h for tag, _, h, _ in seen if tag == 'b'] == fired_hits(
        101, 40, 50)


def test_rule_seed_overrides_engine_seed_and_seeds_differ():
    def fired(seed, engine_seed=None):
        engine = make('spawn[seed=%d]: 50%%record' % seed, seed=engine_seed)
        return [h for _, _, h, _ in hits(engine, 40)]

    assert fired(1) == fired(1, engine_seed=99) == fired_hits(1, 40, 50)
    assert fired(1) != fired(2)


def test_probability_with_count_stops_after_count_fires():
    # Hits that lose the roll of a fall through to b (fail(9), fail-rs);
    # once a fired twice, b takes every hit without a roll.
    engine = make('spawn[seed=3]: 50%2*record(a) -> record(b)')
    seen = hits(engine, 10)
    rng = random.Random(3)
    expected, fired_a, fired_b = [], 0, 0
    for n in range(1, 11):
        if fired_a < 2 and rng.random() * 100 < 50:
            fired_a += 1
            expected.append(('a', 0, n, fired_a))
        else:
            fired_b += 1
            expected.append(('b', 0, n, fired_b))
    assert seen == expected
    assert seen[:4] == [('a', 0, 1, 1), ('b', 0, 2, 1), ('a', 0, 3, 2),
                        ('b', 0, 4, 2)]


def test_lost_roll_falls_through_to_the_next_term():
    # The rules page's example: a quarter of the hits delayed, the others
    # logged.
    engine = make('spawn[seed=5]: 25%record(delay) -> record(log)')
    seen = hits(engine, 40)
    delayed = fired_hits(5, 40, 25)
    assert [h for tag, _, h, _ in seen if tag == 'delay'] == delayed
    assert [h for tag, _, h, _ in seen if tag == 'log'] == [
        n for n in range(1, 41) if n not in delayed]
    assert 0 < len(delayed) < 40


def test_hit_that_no_term_takes_passes_through():
    engine = make('spawn[seed=5]: 25%record(a) -> 10%record(b)')
    seen = hits(engine, 40)
    assert len(seen) < 40
    assert not engine.rules()[0]['exhausted']


# -- snapshots ------------------------------------------------------------

def test_set_rules_replaces_rules_and_counters():
    engine = make('spawn: 1*record')
    hits(engine, 3)
    assert engine.rules()[0]['hits'] == 3
    engine.set_rules([fakes.rule('spawn: 1*record(new)')])
    [state] = engine.rules()
    assert (state['rule'], state['hits'], state['fired'],
            state['exhausted']) == ('spawn: 1*record(new)', 0, 0, False)
    assert [tag for tag, *_ in hits(engine, 2)] == ['new']
    assert engine.counters() == {'spawn.before': 5}


def test_snapshots_are_copies():
    engine = make('spawn: off')
    counters, states = engine.counters(), engine.rules()
    hits(engine, 1)
    assert counters == {} and states[0]['hits'] == 0
    assert engine.counters() == {'spawn.before': 1}


# -- the record of a fault ------------------------------------------------

def test_each_fired_fault_logs_one_warning_and_one_journal_entry(caplog):
    journal = journal_module.Journal()
    engine = make('spawn@dst: 1*off -> 1*record', journal=journal)
    context = {'role': 'dest', 'instance': 'i1', 'migration': 'm1',
               'operation': 'resize'}
    with caplog.at_level(logging.WARNING, logger='faultdriver.engine'):
        hits(engine, 3, context=context)
    lines = [r.getMessage() for r in caplog.records
             if r.name == 'faultdriver.engine']
    assert lines == [
        'FAULTDRIVER-INJECT point=spawn.before host=h1 rule=0 '
        '[spawn@dest: 1*off -> 1*record] hit=%d action=%s role=dest '
        'instance=i1 migration=m1 operation=resize' % (n, action)
        for n, action in ((1, 'off'), (2, 'record'))]
    assert all(r.levelno == logging.WARNING for r in caplog.records)
    entries = journal.entries()
    assert [{k: v for k, v in e.items() if k != 'time'}
            for e in entries] == [
        {'kind': 'fault', 'host': 'h1', 'point': 'spawn', 'phase': 'before',
         'rule': 'spawn@dest: 1*off -> 1*record', 'rule_index': 0, 'hit': n,
         'action': action, 'role': 'dest', 'instance': 'i1',
         'migration': 'm1', 'operation': 'resize', 'in_periodic': False}
        for n, action in ((1, 'off'), (2, 'record'))]
    assert all(isinstance(e['time'], float) for e in entries)


# -- waiting --------------------------------------------------------------

def test_wait_for_hit_returns_when_the_count_is_reached():
    engine = make('spawn: off')

    def later():
        for _ in range(3):
            time.sleep(0.01)
            engine.hit('spawn', 'before', {})

    thread = start(later)
    assert engine.wait_for_hit('spawn', count=3, timeout=JOIN) == 3
    thread.join(JOIN)


def test_wait_for_hit_counts_its_phase_only():
    engine = make()
    engine.hit('spawn', 'after', {})
    with pytest.raises(TimeoutError):
        engine.wait_for_hit('spawn', timeout=0.01)
    assert engine.wait_for_hit('spawn', phase='after', timeout=0) == 1


def test_wait_for_hit_times_out_naming_the_point():
    engine = make('spawn: off')
    engine.hit('spawn', 'before', {})
    started = time.monotonic()
    with pytest.raises(TimeoutError) as info:
        engine.wait_for_hit('spawn', count=2, timeout=0.05)
    assert time.monotonic() - started >= 0.05
    assert str(info.value) == ('point spawn.before on host h1 was hit 1 '
                               'times, not 2, within 0.05s')


# -- barriers -------------------------------------------------------------

def hit_then(engine, done, point='spawn'):
    engine.hit(point, 'before', {})
    done.set()


def test_hang_holds_until_released():
    engine = make('spawn: hang(timeout=60)')
    done = threading.Event()
    thread = start(hit_then, engine, done)
    engine.wait_for_hit('spawn', timeout=JOIN)
    assert not done.wait(0.05)
    assert engine.held() == {'spawn': 1}
    assert engine.release('other') == 0
    assert engine.release('spawn') == 1
    thread.join(JOIN)
    assert done.is_set()
    assert engine.held() == {}
    assert engine.release('spawn') == 0


def test_hang_at_a_named_barrier():
    engine = make('spawn: hang(name=b1)')
    done = threading.Event()
    thread = start(hit_then, engine, done)
    engine.wait_for_hit('spawn', timeout=JOIN)
    assert engine.held() == {'b1': 1}
    assert engine.release() == 1
    thread.join(JOIN)
    assert done.is_set()


def test_hang_times_out_and_goes_on(caplog):
    engine = make('spawn: hang(timeout=0.05)')
    started = time.monotonic()
    with caplog.at_level(logging.WARNING):
        engine.hit('spawn', 'before', {})
    assert time.monotonic() - started >= 0.05
    assert engine.held() == {}
    assert "hang at barrier 'spawn' on h1 timed out after 0.05s" in (
        caplog.text)


def test_hang_timing_out_leaves_the_others_held():
    engine = make('spawn: 1*hang(timeout=0.2, name=b) -> hang(name=b)')
    first, second = threading.Event(), threading.Event()
    one = start(hit_then, engine, first)
    engine.wait_for_hit('spawn', timeout=JOIN)
    two = start(hit_then, engine, second)
    engine.wait_for_hit('spawn', count=2, timeout=JOIN)
    assert engine.held() == {'b': 2}
    one.join(JOIN)
    assert first.is_set()
    assert not second.wait(0.1)
    assert engine.held() == {'b': 1}
    assert engine.release('b') == 1
    two.join(JOIN)
    assert second.is_set()


def test_release_right_after_wait_for_hit_never_misses_the_hold():
    engine = make('spawn: hang(timeout=60)')
    for n in range(1, 31):
        done = threading.Event()
        thread = start(hit_then, engine, done)
        engine.wait_for_hit('spawn', count=n, timeout=JOIN)
        assert engine.release('spawn') == 1, 'hit %d' % n
        thread.join(JOIN)
        assert done.is_set()


def test_close_releases_everything_and_stops_firing(tmp_path):
    journal = journal_module.Journal(str(tmp_path / 'journal'))
    engine = make('spawn: 1*hang(timeout=60) -> record',
                  'destroy: hang(timeout=60, name=b)', journal=journal)
    done = [threading.Event(), threading.Event()]
    threads = [start(hit_then, engine, done[0], 'spawn'),
               start(hit_then, engine, done[1], 'destroy')]
    engine.wait_for_hit('spawn', timeout=JOIN)
    engine.wait_for_hit('destroy', timeout=JOIN)
    assert engine.held() == {'spawn': 1, 'b': 1}
    engine.close()
    for thread in threads:
        thread.join(JOIN)
    assert all(d.is_set() for d in done)
    assert hits(engine, 2) == []
    assert engine.counters() == {'spawn.before': 3, 'destroy.before': 1}
    assert len(journal_module.read(journal.path)) == 2
    assert engine.hold('late').is_set()
    assert engine.held() == {}


# -- concurrency ----------------------------------------------------------

THREADS, PER_THREAD = 32, 200
CALLS = THREADS * PER_THREAD


def hammer(engine, context=None):
    """Hit spawn CALLS times from THREADS threads released at once."""
    seen = []
    gate = threading.Barrier(THREADS)

    def worker():
        gate.wait()
        for _ in range(PER_THREAD):
            engine.hit('spawn', 'before', dict(context or {}), target=seen)

    threads = [start(worker) for _ in range(THREADS)]
    for thread in threads:
        thread.join(JOIN * 3)
    assert not any(t.is_alive() for t in threads)
    return seen


def test_nth_hit_is_exact_under_many_threads(caplog):
    caplog.set_level(logging.ERROR, logger='faultdriver.engine')
    journal = journal_module.Journal()
    engine = make('spawn: 99*off -> 1*record(nth) -> 5000*off -> '
                  'record(rest)', journal=journal)
    seen = hammer(engine)
    assert [e for e in seen if e[0] == 'nth'] == [('nth', 0, 100, 1)]
    rest = sorted(h for tag, _, h, _ in seen if tag == 'rest')
    assert rest == list(range(5101, CALLS + 1))
    assert sorted(f for tag, _, _, f in seen if tag == 'rest') == list(
        range(1, CALLS - 5100 + 1))
    assert sorted(e['hit'] for e in journal.entries()) == list(
        range(1, CALLS + 1))
    assert engine.counters() == {'spawn.before': CALLS}
    assert engine.rules()[0]['hits'] == engine.rules()[0]['fired'] == CALLS


def test_seeded_probability_is_exact_under_many_threads(caplog):
    caplog.set_level(logging.ERROR, logger='faultdriver.engine')
    engine = make('spawn[seed=5]: 10%record', 'spawn: 3*record(first)')
    seen = hammer(engine)
    assert sorted(h for tag, _, h, _ in seen if tag is None) == fired_hits(
        5, CALLS, 10)
    assert sorted(h for tag, _, h, _ in seen if tag == 'first') == [1, 2, 3]
    assert engine.counters() == {'spawn.before': CALLS}


class BlockingJournal:
    """A journal whose record() waits until ``go`` is set."""

    def __init__(self):
        self.go = threading.Event()
        self.kept = []

    def record(self, entry):
        self.go.wait(JOIN)
        self.kept.append(entry)

    def entries(self):
        return list(self.kept)


def test_a_hit_counts_only_once_what_fired_is_journaled():
    # wait_for_hit's callers read the journal next (the functional
    # tests' "[fired] = journal(host)"): a hit whose entry is still
    # being written must not count yet.
    journal = BlockingJournal()
    engine = make('spawn: record', journal=journal)
    thread = start(hits, engine, 1)
    with pytest.raises(TimeoutError):
        engine.wait_for_hit('spawn', timeout=0.5)
    journal.go.set()
    assert engine.wait_for_hit('spawn', timeout=JOIN) == 1
    assert [e.point for e in journal.entries()] == ['spawn']
    thread.join(JOIN)
