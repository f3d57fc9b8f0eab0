"""The proposed Nova fixture (faultdriver/export/novafixture/
compute_fault.py, nova/tests/fixtures/compute_fault.py in Nova's tree),
run here on a stand-in of a Nova functional test: computes whose driver
and resource tracker are plain objects.

Invariant: a fault fires at exactly the call it names (skip, before or
after the real call), a crash stops the service's RPC servers and timers
and unwinds with an exception no ``except Exception`` catches, a
periodic at a call runs the named host's periodic and records whether
it failed, and a crashed compute is started again on its hypervisor.
The exported tests that use it on a running Nova are nova-regressions/.
"""

import logging
import time
import types

import pytest

from faultdriver.export import novafixture
from faultdriver.export.novafixture import compute_fault


class Failed(AssertionError):
    pass


class Driver:
    def __init__(self, calls):
        self.calls = calls

    def spawn(self, name):
        self.calls.append(name)
        return name.upper()


class Manager:
    def __init__(self, host, calls):
        self.host = host
        self.driver = Driver(calls)
        self.rt = types.SimpleNamespace()
        self.periodics = 0
        self.broken = False

    def update_available_resource(self, context):
        self.periodics += 1
        if self.broken:
            logging.getLogger('nova.compute.manager').error(
                'Error updating resources for node %s', self.host)


class Stopped:
    def __init__(self, log, name):
        self.log, self.name = log, name

    def stop(self):
        self.log.append(self.name)


class Test:
    """What the fixture reads of a Nova functional test."""

    def __init__(self):
        self.calls, self.stopped, self.flagged, self.started = [], [], {}, []
        self.computes = {host: self._compute(host) for host in ('src',
                                                                'dest')}
        self.compute_rp_uuids = {'src': 'rp1', 'dest': 'rp2'}
        self.host_mappings = {
            host: types.SimpleNamespace(
                cell_mapping=types.SimpleNamespace(name='cell1'))
            for host in self.computes}

    def _compute(self, host):
        return types.SimpleNamespace(
            manager=Manager(host, self.calls),
            rpcserver=Stopped(self.stopped, host + ' rpc'),
            rpcserver_alt=None,
            tg=types.SimpleNamespace(
                stop_timers=lambda: self.stopped.append(host + ' timers')),
            driver=types.SimpleNamespace(
                _get_connection=lambda: 'hypervisor of ' + host))

    def flags(self, **options):
        self.flagged.update(options)

    def fail(self, message):
        raise Failed(message)

    def start_compute(self, hostname, cell_name=None, connection=None):
        self.started.append((hostname, cell_name, connection))
        self.computes[hostname] = self._compute(hostname)


@pytest.fixture
def faults():
    test = Test()
    fixture = compute_fault.ComputeFaultFixture(test)
    fixture.setUp()
    yield fixture
    fixture.cleanUp()


def test_timeouts_are_short_before_the_computes_start(faults):
    assert faults.test.flagged == {
        'rpc_response_timeout': 3, 'long_rpc_timeout': 6,
        'report_interval': 1, 'service_down_time': 3}


def test_a_crash_at_the_nth_call_stops_the_service_and_unwinds(faults):
    test = faults.test
    faults.inject('dest', 'spawn', 'crash', skip=1)
    driver = test.computes['dest'].manager.driver
    assert driver.spawn('a') == 'A'             # the skipped call runs
    with pytest.raises(compute_fault.ComputeDied):
        try:
            driver.spawn('b')
        except Exception:
            pytest.fail('ComputeDied must not be an Exception')
    assert test.calls == ['a']                  # before: b never ran
    assert test.stopped == ['dest rpc', 'dest timers']
    assert 'dest' in faults.crashed
    assert faults.count('dest', 'spawn', 'crash') == 1
    assert faults.count(action='raise') == 0
    assert driver.spawn('c') == 'C'             # one fault only


def test_a_raise_after_the_call_returned(faults):
    test = faults.test
    faults.inject('src', 'spawn', 'raise', after=True,
                  error=ValueError('injected'))
    with pytest.raises(ValueError, match='injected'):
        test.computes['src'].manager.driver.spawn('a')
    assert test.calls == ['a']                  # after: it ran
    assert faults.crashed == {} and test.stopped == []
    faults.wait_for('src', 'spawn', timeout=0)
    with pytest.raises(Failed, match='no fault at spawn on dest'):
        faults.wait_for('dest', 'spawn', timeout=0)


def test_a_periodic_at_a_call_runs_the_peers_and_records_its_failure(
        faults):
    test = faults.test
    test.computes['src'].manager.broken = True
    faults.inject('dest', 'spawn', 'periodic', peer='src')
    test.computes['dest'].manager.driver.spawn('a')
    assert test.computes['src'].manager.periodics == 1
    assert test.computes['dest'].manager.periodics == 0
    assert faults.periodics == [('src', True)]
    assert faults.periodic('dest') is False
    assert faults.count() == 0                  # a periodic is no fault


def test_a_delay_waits_in_the_hits_thread_and_the_call_goes_on(faults):
    test = faults.test
    faults.inject('src', 'spawn', 'delay', wait=0.2)
    began = time.monotonic()
    assert test.computes['src'].manager.driver.spawn('a') == 'A'
    assert time.monotonic() - began >= 0.2
    assert faults.count() == 0                  # no fault fired


def test_a_crashed_compute_starts_again_on_its_hypervisor(faults):
    test = faults.test
    faults.inject('dest', 'spawn', 'crash')
    with pytest.raises(compute_fault.ComputeDied):
        test.computes['dest'].manager.driver.spawn('a')
    faults.restart('dest')
    assert test.started == [('dest', 'cell1', 'hypervisor of dest')]
    assert faults.crashed == {}
    assert 'dest' not in test.compute_rp_uuids


def test_restart_dead_starts_each_dead_compute_and_waits_until_up(faults):
    test = faults.test
    waited = []
    test._wait_for_service_parameter = (
        lambda host, binary, params, max_retries: waited.append(
            (host, binary, params)))
    # Died longer ago than the longest RPC timeout: no caller waits.
    faults.crashed['dest'] = time.monotonic() - 10
    faults.restart_dead()
    assert test.started == [('dest', 'cell1', 'hypervisor of dest')]
    assert waited == [('dest', 'nova-compute', {'state': 'up'})]
    assert faults.crashed == {}


def test_the_shipped_text_is_the_module_and_within_its_budget():
    with open(compute_fault.__file__, encoding='utf-8') as stream:
        assert novafixture.text() == stream.read()
    assert len(novafixture.text().splitlines()) <= 150
    assert novafixture.NOVA_PATH == 'nova/tests/fixtures/compute_fault.py'
