"""Fake-RPC listeners woken by deliveries (harness/rpcwake.py), on
oslo.messaging's own fake transport, RPC server and client."""

import threading

from oslo_config import cfg
import oslo_messaging
from oslo_messaging._drivers import impl_fake
import pytest

from faultdriver.harness import rpcwake


class Endpoint:
    def __init__(self):
        self.seen = []
        self.cast_arrived = threading.Event()

    def echo(self, ctxt, value):
        return value

    def note(self, ctxt, value):
        self.seen.append(value)
        if len(self.seen) == 5:
            self.cast_arrived.set()


@pytest.fixture
def bus():
    """A transport, a started server on ``host1`` and its client."""
    with rpcwake.PromptDelivery():
        # The global CONF: oslo.messaging registers its tracing options
        # there only.
        transport = oslo_messaging.get_rpc_transport(cfg.CONF, url='fake:/')
        target = oslo_messaging.Target(topic='compute', server='host1')
        endpoint = Endpoint()
        server = oslo_messaging.get_rpc_server(
            transport, target, [endpoint], executor='threading')
        server.start()
        client = oslo_messaging.get_rpc_client(transport, target)
        try:
            yield server, client, endpoint
        finally:
            if server.listener is not None:
                server.stop()
                server.wait()
            transport.cleanup()
            impl_fake.FakeExchangeManager.cleanup()


def test_a_call_is_answered(bus):
    server, client, endpoint = bus
    assert client.prepare(timeout=30).call({}, 'echo', value=42) == 42


def test_casts_arrive_in_the_order_sent(bus):
    server, client, endpoint = bus
    for value in range(5):
        client.cast({}, 'note', value=value)
    assert endpoint.cast_arrived.wait(30)
    assert endpoint.seen == [0, 1, 2, 3, 4]


def test_a_stopped_server_stops_and_its_messages_stay_queued(bus):
    server, client, endpoint = bus
    server.stop()
    server.wait()
    with pytest.raises(oslo_messaging.MessagingTimeout):
        client.prepare(timeout=1).call({}, 'echo', value=1)
    queued = [message for exchange in
              impl_fake.FakeExchangeManager._exchanges.values()
              for key, messages in exchange._server_queues.items()
              if key == ('compute', 'host1')
              for _ctxt, message, _reply, _requeue in messages]
    assert [m['method'] for m in queued] == ['echo']


def test_the_fake_drivers_own_listener_is_back_afterwards():
    original = impl_fake.FakeListener.poll
    with rpcwake.PromptDelivery():
        assert impl_fake.FakeListener.poll is not original
    assert impl_fake.FakeListener.poll is original
