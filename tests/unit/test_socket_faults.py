"""The rule half of a socket-reached tier's fault control
(faultdriver.scenario.socket_faults), over a real control server and
client on a real AF_UNIX socket and a real Engine (the unit tests' fake
catalogue and actions, no Nova): every rule goes through the tier's
``rule`` hook, indexes and counts come back as ints, a missing rule is
False, barriers are seen held and released; and both tiers built on it
keep the contract and the cloud's alias hook."""

import os
import threading
import types

import pytest

from faultdriver.cloud import backend as cloud_backend
from faultdriver.control import client as client_module
from faultdriver.control import server as server_module
from faultdriver.process import nova as process_nova
from faultdriver.scenario import conformance
from faultdriver.scenario import socket_faults
from tests.unit import fakes

JOIN = 10.0          # generous upper bound for a thread that should finish


class Renaming(socket_faults.SocketFaults):
    """A tier whose rules name ``tagged`` where the scenario wrote
    ``TAG`` (as the cloud names a host's real name)."""

    rpc_timeout = 0.0

    def __init__(self, paths):
        self.paths = paths

    def control(self, host):
        return client_module.Client(self.paths[host])

    def rule(self, text):
        return text.replace('TAG', 'tagged')


@pytest.fixture
def faults(sock_dir, engine):
    path = os.path.join(sock_dir, 'h1.sock')
    server = server_module.ControlServer(path, engine, fakes.CATALOGUE,
                                         fakes.rule).start()
    yield Renaming({'h1': path})
    server.stop()


def installed(faults):
    return [r['rule'] for r in faults.control('h1').rules()]


def test_rules_go_through_the_tiers_hook(faults):
    assert faults.add_rule('h1', 'spawn: record(TAG)') == 0
    assert installed(faults) == ['spawn: record(tagged)']
    faults.set_rules('h1', ['destroy: record(TAG)', 'spawn: off'])
    assert installed(faults) == ['destroy: record(tagged)',
                                 'spawn: off']


def test_removing_a_rule_says_whether_there_was_one(faults):
    index = faults.add_rule('h1', 'spawn: off')
    assert faults.remove_rule('h1', index) is True
    assert faults.remove_rule('h1', index) is False
    assert installed(faults) == []


def test_held_threads_are_seen_waited_for_and_released(faults, engine):
    faults.add_rule('h1', 'spawn: hang(60, b)')
    thread = threading.Thread(target=engine.hit,
                              args=('spawn', 'before', {}), daemon=True)
    thread.start()
    assert faults.wait_for_hit('h1', 'spawn', timeout=JOIN) == 1
    assert faults.held('h1') == {'b': 1}
    assert faults.release('h1', 'other') == 0
    assert faults.release('h1') == 1
    thread.join(JOIN)
    assert not thread.is_alive()
    assert faults.held('h1') == {}


def test_callers_gave_up_after_one_rpc_timeout_bounded(monkeypatch):
    slept = []
    monkeypatch.setattr(socket_faults.time, 'sleep', slept.append)
    faults = Renaming({})
    faults.rpc_timeout = 8.0
    assert faults.wait_callers_gave_up('h1', timeout=120) is None
    assert faults.wait_callers_gave_up('h1', timeout=3) is None
    assert slept == [9.0, 3]       # one RPC timeout and a second, bounded


@pytest.mark.parametrize('tier', [process_nova.Faults,
                                  cloud_backend.CloudFaults])
def test_both_tiers_take_the_rule_half_from_it(tier):
    assert issubclass(tier, socket_faults.SocketFaults)
    for name in ('add_rule', 'remove_rule', 'set_rules', 'release', 'held',
                 'wait_for_hit', 'wait_callers_gave_up'):
        assert getattr(tier, name) is getattr(socket_faults.SocketFaults,
                                              name), name
    assert conformance.fault_control_problems(tier) == []


def test_the_process_tier_sends_a_rule_as_written():
    faults = process_nova.Faults(types.SimpleNamespace())
    text = 'pre_live_migration@dest: 1*periodic(host=src)'
    assert faults.rule(text) == text
