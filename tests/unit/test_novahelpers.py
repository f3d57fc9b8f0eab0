"""The helper methods exported Nova tests carry (faultdriver/export/
novahelpers.py), run here on a stand-in of the test class.

Invariant: each helper that reads the test's own records or Nova's API
answers computes what its docstring says (what breaks an invariant, a
count, a wait that ends or fails); the exporter copies exactly this
source (its text is each method's ``inspect.getsource``).  The helpers
that need a running Nova (boot, migrate, periodics) run in the
exported tests themselves (tests/nova-regressions-both-modes.sh).
"""

import inspect
import types

from nova.tests.functional import integrated_helpers
import pytest

from faultdriver.export import helpers
from faultdriver.export import novahelpers
from faultdriver.scenario import statuses


class Failed(AssertionError):
    pass


class Test(novahelpers.NovaHelpers):
    """What the exported class has from Nova's bases, as records."""

    #: Nova's wait (InstanceHelperMixin), which the helpers use.
    _wait_for_assert = integrated_helpers.InstanceHelperMixin._wait_for_assert

    def __init__(self, periodics=(), crashed=None, **attributes):
        # The proposed fixture's records (self.faults).
        self.faults = types.SimpleNamespace(periodics=list(periodics),
                                            crashed=crashed or {})
        self.computes = {}
        self.__dict__.update(attributes)

    def fail(self, message):
        raise Failed(message)

    def assertEqual(self, expected, actual):
        if expected != actual:
            raise Failed('%r != %r' % (expected, actual))


class Response:
    def __init__(self, body):
        self.body = body


class AdminAPI:
    """Nova's API answers for given servers and migrations."""

    def __init__(self, servers, migrations=()):
        self.servers, self.migrations = servers, list(migrations)

    def get_server(self, uuid):
        return self.servers[uuid]

    def api_get(self, url):
        uuid = url.rpartition('=')[2]
        return Response({'migrations': [
            m for m in self.migrations if m['instance_uuid'] == uuid]})


def _server(uuid, status='ACTIVE', task=None, host='src'):
    return {'id': uuid, 'status': status, 'OS-EXT-STS:task_state': task,
            'OS-EXT-SRV-ATTR:host': host}


def _migration(uuid, number, status, source='src', dest='dest'):
    return {'id': number, 'uuid': 'm%d' % number, 'instance_uuid': uuid,
            'status': status, 'source_compute': source,
            'dest_compute': dest}


def test_the_copied_source_is_the_methods():
    for name, helper in helpers.HELPERS.items():
        for method in helper.methods:
            assert inspect.getsource(getattr(novahelpers.NovaHelpers,
                                             method)) in helper.source


def test_terminal_is_the_scenario_layers():
    assert novahelpers.TERMINAL == statuses.TERMINAL


def test_failed_periodics_counts_one_hosts_failures():
    test = Test(periodics=[('src', True), ('src', False), ('dest', True),
                           ('src', True)])
    assert test._failed_periodics('src') == 2
    assert test._failed_periodics('other') == 0


def test_failed_periodics_since_a_mark_leaves_out_hosts_with_none():
    marker = 'Error updating resources for node %s'
    test = Test(computes={'src': None, 'dest': None},
                compute_log=types.SimpleNamespace(
                    output='\n'.join([marker % 'src'] * 3 +
                                     [marker % 'dest'])))
    assert test._periodic_errors_logged() == {'dest': 1, 'src': 3}
    assert test._failed_periodics_since({'src': 1, 'dest': 1}) == {'src': 2}


def test_unfinished_migrations_and_unsettled_servers():
    api = AdminAPI(
        {'u1': _server('u1'), 'u2': _server('u2', 'MIGRATING', 'migrating')},
        [_migration('u1', 2, 'completed'), _migration('u2', 3, 'running'),
         _migration('u1', 1, 'error')])
    test = Test(admin_api=api)
    servers = {'s1': {'id': 'u1'}, 's2': {'id': 'u2'}}
    assert [m['id'] for m in test._migrations(servers['s1'])] == [1, 2]
    assert test._unfinished_migrations(servers) == ['s2#3 running']
    assert test._unsettled_servers(servers) == ['s2 MIGRATING/migrating']
    # What Nova's rollback of the fault promises is taken, nothing else.
    assert test._unsettled_servers_but(
        servers, ['s2 MIGRATING/migrating']) == []
    assert test._unsettled_servers_but(
        servers, ['s2 SHELVED_OFFLOADED/None']) == ['s2 MIGRATING/migrating']


def test_wait_for_nth_migration_returns_it_or_fails_at_once_on_error():
    api = AdminAPI({}, [_migration('u1', 1, 'completed'),
                        _migration('u1', 2, 'error')])
    test = Test(admin_api=api)
    server = {'id': 'u1'}
    assert test._wait_for_nth_migration(server, 1, 'completed')['id'] == 1
    # An error migration never becomes completed: no wait for the timeout.
    with pytest.raises(Failed, match='migration 2 of u1 is not completed'):
        test._wait_for_nth_migration(server, 2, 'completed', timeout=600)


def test_tracked_tasks_names_a_running_computes_tasks_only():
    def compute(*tasks):
        return types.SimpleNamespace(manager=types.SimpleNamespace(
            _in_progress_tasks={i: t for i, t in enumerate(tasks)}))
    task = {'name': 'live_migration', 'instance_uuid': 'u1'}
    test = Test(computes={'src': compute(task), 'dest': compute(),
                          'gone': compute(task)}, crashed={'gone': 0})
    assert test._tracked_tasks(0) == {'src': ['live_migration (u1)']}
