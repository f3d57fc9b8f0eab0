"""The allocations-consistent invariant on hand-made states: each way
placement can hold what Nova does not account for is named, and a
consistent state (a move in progress included) holds."""

from faultdriver.scenario import expect
from tests import runstates

S1, S2, M1 = 'uuid-s1', 'uuid-s2', 'uuid-m1'
CPU = {'VCPU': 2, 'MEMORY_MB': 512, 'DISK_GB': 1}


def _migration(status, source='src', dest='dest'):
    return {'server': 's1', 'id': 1, 'uuid': M1, 'status': status,
            'source_compute': source, 'dest_compute': dest}


def _check(servers, migrations, allocations):
    state = runstates.state({'servers': servers, 'migrations': migrations})
    return expect.misplaced_allocations(state.servers, state.migrations,
                                        allocations)


SERVERS = {'s1': {'id': S1, 'host': 'dest'}, 's2': {'id': S2, 'host': 'src'}}


def test_each_server_on_its_host_after_a_completed_move_holds():
    assert _check(SERVERS, [_migration('completed')], {
        'src': {S2: CPU}, 'dest': {S1: CPU}}) == []


def test_a_move_in_progress_holds_both_ends():
    servers = dict(SERVERS, s1={'id': S1, 'host': 'dest'})
    # A resize waiting for its confirm: the migration holds the source.
    assert _check(servers, [_migration('finished')], {
        'src': {S2: CPU, M1: CPU}, 'dest': {S1: CPU}}) == []
    # An evacuation whose source is not back: the server holds both.
    assert _check(servers, [_migration('done')], {
        'src': {S2: CPU, S1: CPU}, 'dest': {S1: CPU}}) == []


def test_an_ended_migration_holding_its_source_is_named():
    found = _check(SERVERS, [_migration('error')], {
        'src': {S2: CPU, M1: CPU}, 'dest': {S1: CPU}})
    assert found == ['src holds 1 DISK_GB, 512 MEMORY_MB, 2 VCPU for '
                     'migration s1#1 (error)']


def test_a_server_held_on_a_host_it_left_is_named():
    found = _check(SERVERS, [_migration('completed')], {
        'src': {S2: CPU, S1: {'PCPU': 2}}, 'dest': {S1: CPU}})
    assert found == ['src holds 2 PCPU for s1, which is on dest']


def test_a_consumer_of_no_server_or_migration_is_named():
    found = _check(SERVERS, [], {
        'src': {S2: CPU, 'gone': {'VCPU': 1}}, 'dest': {S1: CPU}})
    assert found == ['src holds 1 VCPU for gone, no server or migration of '
                     'the scenario']


def test_a_server_its_host_holds_nothing_for_is_named():
    found = _check(SERVERS, [], {'src': {S2: CPU}, 'dest': {}})
    assert found == ['dest holds nothing for s1, which is on it']


def test_the_invariant_reads_the_collected_state():
    state = {'servers': SERVERS, 'migrations': [_migration('error')],
             'hosts': {'src': {'allocations': {S2: CPU, M1: CPU}},
                       'dest': {'allocations': {S1: CPU}}}}
    met, text, actual = expect.KINDS['allocations-consistent'](
        None, runstates.state(state))
    assert not met and len(actual) == 1
    state['hosts']['src']['allocations'].pop(M1)
    assert expect.KINDS['allocations-consistent'](
        None, runstates.state(state))[0]
