"""The libvirt tier's host namespaces: the relays out of them and the
tap agent that reports their taps.

The relay tests make real network namespaces (``unshare --net``), as
the tier does: root only, which CI and the tier are.
"""

import os
import socket
import subprocess
import threading

import pytest

from faultdriver.process import netns_relay
from faultdriver.process import network_standin
from faultdriver.process import procs
from faultdriver.process import tap_agent

needs_root = pytest.mark.skipif(
    os.geteuid() != 0, reason='network namespaces need root (as the '
    'libvirt tier does)')


@pytest.fixture
def namespace():
    """A new network namespace with its loopback up, while a process
    holds it; yields its path."""
    holders = []

    def make():
        holder = subprocess.Popen(
            ['unshare', '--net', 'sh', '-c',
             'ip link set lo up && echo up && exec sleep 600'],
            stdout=subprocess.PIPE, text=True)
        assert holder.stdout.readline().strip() == 'up'
        holders.append(holder)
        return '/proc/%d/ns/net' % holder.pid
    yield make
    for holder in holders:
        holder.kill()
        holder.wait()


def echo_server(netns, address):
    """A server in ``netns`` on ``address`` that answers each connection
    with what it read, upper-cased; returns its port."""
    listener = netns_relay.socket_in(netns)
    listener.bind((address, 0))
    listener.listen(4)

    def serve():
        while True:
            conn, _peer = listener.accept()
            with conn:
                conn.sendall(conn.recv(1024).upper())
    threading.Thread(target=serve, daemon=True).start()
    return listener.getsockname()[1]


def ask(netns, address, port, text=b'ping'):
    with netns_relay.socket_in(netns) as sock:
        sock.settimeout(30)
        sock.connect((address, port))
        sock.sendall(text)
        return sock.recv(1024)


@needs_root
def test_a_hosts_loopback_reaches_a_service_on_this_machine(namespace):
    host = namespace()
    port = echo_server(None, '127.0.0.1')
    assert not procs.port_open(port, netns=host)
    relay = netns_relay.Relay()
    try:
        relay.forward(host, '127.0.0.1', port, None)
        assert ask(host, '127.0.0.1', port) == b'PING'
    finally:
        relay.stop()
    assert not procs.port_open(port, netns=host)


@needs_root
def test_a_host_reaches_a_peers_address_in_the_peers_namespace(namespace):
    src, dest = namespace(), namespace()
    port = echo_server(dest, '127.0.9.3')
    with pytest.raises(ConnectionRefusedError):
        ask(src, '127.0.9.3', port)
    relay = netns_relay.Relay()
    try:
        relay.forward(src, '127.0.9.3', port, dest)
        assert ask(src, '127.0.9.3', port, b'migrate') == b'MIGRATE'
    finally:
        relay.stop()


@needs_root
def test_a_relayed_connection_to_nothing_is_refused(namespace):
    host = namespace()
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        port = probe.getsockname()[1]     # nothing listens on it
    relay = netns_relay.Relay()
    try:
        relay.forward(host, '127.0.0.1', port, None)
        with netns_relay.socket_in(host) as sock:
            sock.settimeout(30)
            sock.connect(('127.0.0.1', port))
            assert sock.recv(16) == b''   # closed without an answer
    finally:
        relay.stop()


class Host:
    """What the agent reads of a libvirt host: its devices."""

    def __init__(self):
        self.devices = {'lo'}

    def interfaces(self):
        return set(self.devices)


def bound_port(network, host):
    """A server's port, bound on ``host``; returns (port id, its tap)."""
    status, answer = network.route({
        'REQUEST_METHOD': 'POST', 'PATH_INFO': '/v2.0/ports',
        'QUERY_STRING': '', 'wsgi.input': None,
        'faultdriver.body': {'port': {
            'network_id': network_standin.NETWORK_ID, 'device_id': 'srv-1',
            'binding:host_id': host}}})
    assert status == 201, answer
    port_id = answer['port']['id']
    return port_id, network_standin.tap_name(port_id)


@pytest.fixture
def network(monkeypatch):
    from faultdriver.process import standins
    monkeypatch.setattr(standins, 'request_body',
                        lambda environ: environ['faultdriver.body'])
    return network_standin.Network('project')


def test_a_new_tap_on_a_host_the_port_is_bound_to_is_reported(network):
    port_id, tap = bound_port(network, 'dest')
    hosts = {'src': Host(), 'dest': Host()}
    agent = tap_agent.TapAgent(network, hosts)
    assert agent.scan('dest', hosts['dest']) == []
    hosts['dest'].devices.add(tap)
    assert agent.scan('dest', hosts['dest']) == [port_id]
    # Seen once: not again while it stays.
    assert agent.scan('dest', hosts['dest']) == []
    # Deleted and created again (a rollback, then another try).
    hosts['dest'].devices.discard(tap)
    assert agent.scan('dest', hosts['dest']) == []
    hosts['dest'].devices.add(tap)
    assert agent.scan('dest', hosts['dest']) == [port_id]


def test_a_failed_report_is_tried_again_then_given_up(network, monkeypatch,
                                                     caplog):
    port_id, tap = bound_port(network, 'dest')
    hosts = {'dest': Host()}
    agent = tap_agent.TapAgent(network, hosts)
    hosts['dest'].devices.add(tap)
    report = network.tap_appeared
    down = [True]

    def tap_appeared(host, device):
        if down[0]:
            raise ConnectionRefusedError('the API is down')
        return report(host, device)
    monkeypatch.setattr(network, 'tap_appeared', tap_appeared)
    assert agent.scan('dest', hosts['dest']) == []
    down[0] = False
    assert agent.scan('dest', hosts['dest']) == [port_id]
    assert agent.scan('dest', hosts['dest']) == []
    # Down for good: the report is given up after REPORT_TRIES, loudly.
    hosts['dest'].devices.discard(tap)
    agent.scan('dest', hosts['dest'])
    hosts['dest'].devices.add(tap)
    down[0] = True
    for _ in range(tap_agent.REPORT_TRIES):
        assert agent.scan('dest', hosts['dest']) == []
    down[0] = False
    assert agent.scan('dest', hosts['dest']) == []
    assert 'not reported after %d tries' % tap_agent.REPORT_TRIES in (
        caplog.text)


def test_a_tap_on_a_host_without_the_ports_binding_is_not_reported(network):
    _port_id, tap = bound_port(network, 'dest')
    hosts = {'src': Host(), 'dest': Host()}
    agent = tap_agent.TapAgent(network, hosts)
    hosts['src'].devices.add(tap)
    assert agent.scan('src', hosts['src']) == []
    hosts['src'].devices.add('tap-not-a-port')
    assert agent.scan('src', hosts['src']) == []


def test_nothing_listens_in_a_namespace_that_is_gone():
    # A libvirtd that exited takes its namespace with it: its start
    # check must see "not listening" (then the exit), not an error.
    assert not procs.port_open(16509, netns='/proc/0/ns/net')
