"""The failed-move outcome invariant (``outcome-after-failure``) and its
rollback table (faultdriver/data/rollback.yaml): a move that failed must
end as Nova's own rollback for the step promises.  The shelve rows, and
``servers-settled`` taking the one status a row promises outside its
own (a failed unshelve's SHELVED_OFFLOADED) and nothing else.

Table-driven against recorded run states (tests/runstates.py): a
rollback where the table says rollback passes; ERROR where Nova
promises a rollback breaks it, naming the code path; ERROR where Nova
errors out by design passes."""

import importlib
import types

import pytest

from faultdriver.scenario import expect
from faultdriver.scenario import model
from faultdriver.scenario import rollback
from faultdriver.sweep import cases
from tests import runstates

CLEAN = {'s1': {'status': 'ACTIVE', 'host': 'dest',
                'migrations': ['completed']},
         's2': {'status': 'ACTIVE', 'host': 'dest', 'migrations': []}}
ORIGIN = {'s1': 'src', 's2': 'dest'}


def check(point, host, action, s1, phase='before', exception=None,
          operation='live-migration', reset=None):
    """The invariant on a live migration of s1 src -> dest that ended
    ``s1`` = (status, host, task state, newest migration status), with
    the task states recover ``reset``."""
    status, where, task_state, migration = s1
    state = runstates.state({
        'servers': {'s1': {'status': status, 'host': where,
                           'task_state': task_state},
                    's2': {'host': 'dest'}},
        'migrations': [{'server': 's1', 'status': migration}]})
    steps = types.SimpleNamespace(task_states_reset=reset or {},
                                  operated=set())
    return expect.KINDS['outcome-after-failure'](
        steps, state, operation=operation, point=point, host=host,
        phase=phase, action=action, origin=ORIGIN, outcome=CLEAN,
        exception=exception)


ROLLED_BACK = ('ACTIVE', 'src', None, 'failed')
RESET = ('ACTIVE', 'src', None, 'error')
ERRORED = ('ERROR', 'dest', None, 'error')
ERRORED_ON_SOURCE = ('ERROR', 'src', None, 'error')


@pytest.mark.parametrize('point, host, action, s1, phase', [
    # Rollbacks where the table says rollback.
    ('pre_live_migration', 'dest', 'raise', ROLLED_BACK, 'before'),
    ('pre_live_migration', 'dest', 'crash', ROLLED_BACK, 'after'),
    ('check_can_live_migrate_destination', 'dest', 'crash', RESET,
     'before'),
    ('live_migration', 'src', 'crash', RESET, 'before'),
    # ERROR where Nova errors out by design.
    ('live_migration', 'src', 'raise', ERRORED_ON_SOURCE, 'before'),
    ('post_live_migration_at_destination', 'dest', 'raise', ERRORED,
     'before'),
    ('post_live_migration_at_destination', 'dest', 'crash', ERRORED,
     'after'),
])
def test_an_end_the_table_promises_keeps_it(point, host, action, s1,
                                            phase):
    met, _text, actual = check(point, host, action, s1, phase)
    assert met, actual
    assert 'as Nova promises' in actual['s1']
    assert set(actual) == {'s1'}        # s2 did not move in the clean run


@pytest.mark.parametrize('point, host, action, s1, wrong, nova', [
    # ERROR where Nova promises a rollback.
    ('pre_live_migration', 'dest', 'raise', ERRORED_ON_SOURCE,
     'status ERROR',
     'ComputeManager._do_pre_live_migration_from_source'),
    # A rollback that left its task state.
    ('pre_live_migration', 'dest', 'crash',
     ('ACTIVE', 'src', 'migrating', 'failed'), 'task state migrating',
     'ComputeManager._do_pre_live_migration_from_source'),
    # The migration status the rollback does not end in.
    ('pre_live_migration', 'dest', 'raise', RESET, 'migration error',
     'ComputeManager._do_pre_live_migration_from_source'),
    # Rolled back to the wrong host.
    ('check_can_live_migrate_destination', 'dest', 'raise',
     ('ACTIVE', 'dest', None, 'error'), 'on dest, not its source src',
     'ComputeTaskManager._live_migrate'),
    # A migration status the row does not allow.
    ('live_migration', 'src', 'raise', ('ERROR', 'src', None, 'running'),
     'migration running', 'ComputeManager._do_live_migration'),
])
def test_an_end_the_table_does_not_promise_breaks_it(point, host, action,
                                                     s1, wrong, nova):
    met, _text, actual = check(point, host, action, s1)
    assert not met
    assert wrong in actual['s1'] and nova in actual['s1'], actual


def test_a_move_that_ended_as_clean_keeps_it_whatever_the_row():
    met, _text, actual = check('pre_live_migration', 'dest', 'raise',
                               ('ACTIVE', 'dest', None, 'completed'))
    assert met and actual == {'s1': 'as in the clean run'}


def test_a_task_state_recover_reset_is_what_nova_left():
    """F3: the rollback stops before it resets the task state; the
    operator's reset-state in recover must not hide it."""
    met, _text, actual = check('pre_live_migration', 'dest', 'crash',
                               RESET, reset={'s1': 'migrating'})
    assert not met
    assert 'task state migrating (recover reset it)' in actual['s1']
    assert check('pre_live_migration', 'dest', 'crash', ROLLED_BACK)[0]


def test_a_fault_without_a_row_says_nova_promises_nothing():
    met, _text, actual = check('get_info', 'dest', 'raise', ERRORED)
    assert met and 'no row in the rollback table' in actual['s1']


def test_the_exception_picks_the_row():
    """migrate_disk_and_power_off: InstanceFaultRollback sets the
    vm_state back, any other exception errors the server."""
    rolled = rollback.promise('resize', 'migrate_disk_and_power_off',
                              'source', 'before', 'raise',
                              'InstanceFaultRollback')
    other = rollback.promise('resize', 'migrate_disk_and_power_off',
                             'source', 'before', 'raise-generic',
                             'InternalError')
    assert (rolled.ends, other.ends) == ('rollback', 'error')


def test_a_service_failure_raised_into_the_unshelve_rolls_it_back():
    """A Neutron failure binding the unshelve host's ports (LP 1862633's
    step) is the spawn's rollback, for either service failure class; a
    service point without a raise row promises nothing."""
    for action in ('http-error', 'connfail'):
        row = rollback.promise('shelve',
                               'network.setup_instance_network_on_host',
                               'dest', 'after', action)
        assert row.ends == 'shelved-offloaded'
        assert row.nova.endswith('ComputeManager._unshelve_instance')
    assert rollback.promise('live-migration', 'network.migrate_instance_start',
                            'src', 'before', 'http-error') is None


@pytest.mark.parametrize('point', [
    'network.get_instance_nw_info', 'volume.attachment_create',
    'network.setup_networks_on_host', 'volume.attachment_complete'])
def test_a_service_failure_in_dests_pre_live_migration_rolls_it_back(point):
    """Each service call of dest's pre_live_migration raises into it:
    the step's own rollback (the source's ACTIVE, migration failed); an
    ERROR there breaks the invariant."""
    for action in ('http-error', 'connfail'):
        met, _text, _actual = check(point, 'dest', action, ROLLED_BACK,
                                    'after')
        assert met
        met, _text, _actual = check(point, 'dest', action, ERRORED, 'before')
        assert not met
    # A failure at the source's call of the same point is no such row.
    assert rollback.promise('live-migration', point, 'src', 'before',
                            'http-error') is None


def test_a_phase_outside_the_row_has_no_promise():
    assert rollback.promise('live-migration', 'live_migration', 'source',
                            'before', 'crash').ends == 'rollback'
    assert rollback.promise('live-migration', 'live_migration', 'source',
                            'after', 'crash') is None


@pytest.mark.parametrize('row, error', [
    ({'point': 'pre_live_migrate'}, "'pre_live_migrate' is not a point"),
    ({'host': 'src'}, "host: 'src' is not one of any, dest, source"),
    ({'ends': 'fine'}, "ends: 'fine' is not one of error, rollback, "
     "shelved-offloaded"),
    ({'phases': ['during']}, "phases: 'during' is not one of"),
    ({'nova': 'somewhere'}, "'somewhere' is not file:function"),
    ({'colour': 'red'}, "unknown keys ['colour']"),
])
def test_a_bad_row_is_refused_naming_it(row, error):
    from faultdriver import points
    good = {'operations': ['live-migration'], 'point': 'pre_live_migration',
            'host': 'dest', 'action': 'raise', 'ends': 'rollback',
            'migration': ['error'], 'nova': 'compute/manager.py:f',
            'why': 'x'}
    with pytest.raises(ValueError) as raised:
        rollback._row(dict(good, **row), 'rows[3]', points.catalogue())
    assert 'rows[3]' in str(raised.value) and error in str(raised.value)


def test_every_row_names_a_nova_function_that_exists():
    """Each row's code path is Nova 34's: the table says where to read
    it, and a Nova that renamed it has to be read again."""
    for row in rollback.table():
        path, function = row.nova.split(':')
        module = importlib.import_module(
            'nova.' + path[:-len('.py')].replace('/', '.'))
        owner = module
        for name in function.split('.'):
            owner = getattr(owner, name, None)
            assert owner is not None, '%s: no %s in Nova' % (row.nova, name)


def test_raise_and_crash_cases_get_the_invariant_with_their_fault():
    workflow = model.load('live-migration')
    raised = cases.case_scenario(
        workflow, cases.Case('pre_live_migration', 'dest', 'before',
                             'raise'), clean=CLEAN)
    model.validate(raised, 'case.yaml')     # schema.yaml takes it
    [added] = [e['outcome-after-failure'] for e in raised['expectations']
               if 'outcome-after-failure' in e]
    assert added == {'operation': 'live-migration',
                     'point': 'pre_live_migration', 'host': 'dest',
                     'phase': 'before', 'action': 'raise',
                     'exception': 'MigrationError', 'origin': ORIGIN,
                     'outcome': CLEAN}
    crashed = cases.case_scenario(
        workflow, cases.Case('live_migration', 'src', 'before', 'crash'),
        clean=CLEAN)
    assert [e for e in crashed['expectations']
            if 'outcome-after-failure' in e]
    for action in ('periodic', 'shutdown', 'hang'):
        other = cases.case_scenario(
            workflow, cases.Case('pre_live_migration', 'dest', 'before',
                                 action), clean=CLEAN)
        assert not [e for e in other['expectations']
                    if 'outcome-after-failure' in e], action


# -- shelve: the rows, and servers-settled taking what they promise ---------

SHELVE_CLEAN = {'s1': {'status': 'ACTIVE', 'host': 'src', 'migrations': []},
                's2': {'status': 'ACTIVE', 'host': 'dest', 'migrations': []}}


def shelve_state(s1, s2=('ACTIVE', 'dest', None)):
    """The shelve workflow's end: ``s1``, ``s2`` = (status, host, task
    state); a shelve makes no migration."""
    return runstates.state({'servers': {
        alias: {'status': status, 'host': host, 'task_state': task_state}
        for alias, (status, host, task_state) in (('s1', s1), ('s2', s2))}})


def shelve_fault(point, action, host='src', phase='before'):
    """The case's fault as sweep.cases.failure_args writes it."""
    fault = {'operation': 'shelve', 'point': point, 'host': host,
             'phase': phase, 'action': action, 'origin': ORIGIN}
    if action == 'raise':
        fault['exception'] = 'HypervisorUnavailable'
    return fault


def shelve_steps(reset=None, operated=('s1',)):
    return types.SimpleNamespace(task_states_reset=reset or {},
                                 operated=set(operated))


def settled(s1, fault, s2=('ACTIVE', 'dest', None), operated=('s1',)):
    return expect.KINDS['servers-settled'](
        shelve_steps(operated=operated), shelve_state(s1, s2),
        **({'failure': fault} if fault else {}))


OFFLOADED = ('SHELVED_OFFLOADED', None, None)


@pytest.mark.parametrize('host', ['src', 'dest'])
def test_a_failed_unshelve_rolled_back_to_offloaded_settles(host):
    """_unshelve_instance: any exception of the claim or spawn leaves
    the server SHELVED_OFFLOADED, no host, no task state (Nova's design,
    wherever the scheduler put it)."""
    met, text, actual = settled(OFFLOADED, shelve_fault('spawn', 'raise',
                                                        host))
    assert met, actual
    assert 's1 SHELVED_OFFLOADED as Nova\'s rollback of spawn.before' \
        in actual
    met, _text, found = expect.KINDS['outcome-after-failure'](
        shelve_steps(), shelve_state(OFFLOADED), outcome=SHELVE_CLEAN,
        **shelve_fault('spawn', 'raise', host))
    assert met and found == {
        's1': 'rolled back as Nova promises (compute/manager.py:'
              'ComputeManager._unshelve_instance)'}


@pytest.mark.parametrize('s1, fault, s2, operated, shown', [
    # No fault: SHELVED_OFFLOADED is no settled status by itself.
    (OFFLOADED, None, ('ACTIVE', 'dest', None), ('s1',),
     's1 SHELVED_OFFLOADED/None'),
    # A task state left set: the unshelve stuck, not rolled back.
    (('SHELVED_OFFLOADED', None, 'spawning'), 'spawn-raise',
     ('ACTIVE', 'dest', None), ('s1',), 's1 SHELVED_OFFLOADED/spawning'),
    # F23: a shelve's task state left set (no recover reset here).
    (('ACTIVE', 'src', 'shelving'), 'snapshot-crash',
     ('ACTIVE', 'dest', None), ('s1',), 's1 ACTIVE/shelving'),
    # A fault whose row promises no such status (a crash at the spawn:
    # ERROR), or no row at all (get_info).
    (OFFLOADED, 'spawn-crash', ('ACTIVE', 'dest', None), ('s1',),
     's1 SHELVED_OFFLOADED/None'),
    (OFFLOADED, 'get_info-raise', ('ACTIVE', 'dest', None), ('s1',),
     's1 SHELVED_OFFLOADED/None'),
    # Another status than the row's.
    (('SHELVED', 'src', None), 'spawn-raise', ('ACTIVE', 'dest', None),
     ('s1',), 's1 SHELVED/None'),
    # A server no operation was asked of.
    (('ACTIVE', 'src', None), 'spawn-raise', OFFLOADED, ('s1',),
     's2 SHELVED_OFFLOADED/None'),
    (OFFLOADED, 'spawn-raise', ('ACTIVE', 'dest', None), (),
     's1 SHELVED_OFFLOADED/None'),
])
def test_servers_settled_takes_nothing_else(s1, fault, s2, operated,
                                            shown):
    if fault:
        point, action = fault.rsplit('-', 1)
        fault = shelve_fault(point, action)
    met, _text, actual = settled(s1, fault, s2, operated)
    assert not met and actual == [shown]


def test_f23_breaks_the_snapshot_crash_row_though_recover_reset_it():
    """The sweep's recover resets the 'shelving' F23 leaves; the row
    (_init_instance clears a snapshot's task states, not a shelve's)
    judges what Nova left."""
    reset = shelve_steps(reset={'s1': 'shelving'})
    met, _text, actual = expect.KINDS['outcome-after-failure'](
        reset, shelve_state(('ACTIVE', 'src', None)), outcome=SHELVE_CLEAN,
        **shelve_fault('snapshot', 'crash'))
    assert not met
    assert actual['s1'] == (
        'task state shelving (recover reset it) where Nova promises rolled '
        'back: ACTIVE on src, no task state, migration none '
        '(compute/manager.py:ComputeManager._init_instance)')
    # Not reset, rolled back as the row says: kept, as in the clean run.
    met, _text, actual = expect.KINDS['outcome-after-failure'](
        shelve_steps(), shelve_state(('ACTIVE', 'src', None)),
        outcome=SHELVE_CLEAN, **shelve_fault('snapshot', 'crash'))
    assert met and actual == {'s1': 'as in the clean run'}


def test_an_unoperated_unmoved_server_is_not_judged():
    met, _text, actual = expect.KINDS['outcome-after-failure'](
        shelve_steps(operated=()), shelve_state(OFFLOADED),
        outcome=SHELVE_CLEAN, **shelve_fault('spawn', 'crash'))
    assert met and actual == {}


def test_failing_cases_give_servers_settled_their_fault():
    workflow = model.load('shelve-unshelve')
    raised = cases.case_scenario(
        workflow, cases.Case('spawn', 'src', 'after', 'raise', skip=1),
        clean=SHELVE_CLEAN)
    model.validate(raised, 'case.yaml')     # schema.yaml takes it
    [settled_args] = [e['servers-settled'] for e in raised['expectations']
                      if 'servers-settled' in e]
    [failure_args] = [e['outcome-after-failure']
                      for e in raised['expectations']
                      if 'outcome-after-failure' in e]
    del failure_args['outcome']
    assert settled_args == {'failure': failure_args}
    assert failure_args['operation'] == 'shelve'
    timing = cases.case_scenario(
        workflow, cases.Case('spawn', 'src', 'after', 'periodic', skip=1),
        clean=SHELVE_CLEAN)
    assert {'servers-settled': {}} in timing['expectations']


def test_the_export_asserts_what_the_check_takes():
    from faultdriver.scenario.invariants import ended
    writer = types.SimpleNamespace(
        scenario=model.load('shelve-unshelve'),
        server_dict=lambda: "{'s1': s1, 's2': s2}")
    form = ended._export_settled(writer, shelve_fault('spawn', 'raise'))
    assert form.actual == ("self._unsettled_servers_but({'s1': s1, "
                           "'s2': s2}, ['s1 SHELVED_OFFLOADED/None'])")
    assert form.uses == ('unsettled_servers_but',)
    plain = ended._export_settled(writer, shelve_fault('snapshot', 'crash'))
    assert plain.actual == "self._unsettled_servers({'s1': s1, 's2': s2})"
