"""Fake-RPC listeners that wake when a message arrives, not every 50 ms.

oslo.messaging's fake driver (the embedded Nova's message bus) has every
RPC server's listener look at its queues, then sleep 50 ms, for as long
as the service runs.  The four services of an embedded Nova so wake 80
times a second with nothing to do (part of the ~4% of a core an idle
embedded Nova burns: every sweep runner burns it all the time), and a
cast or call waits 25 ms on average before its server sees it (a move
is dozens of them).  RabbitMQ pushes a message to its consumer; here the
listener waits on a condition that a delivery (or the listener's stop)
notifies.  The queues, their order and what stays queued for a stopped
(crashed) host are the fake driver's own, untouched.
"""

import threading
import time
import typing

import fixtures
from oslo_messaging._drivers import base as driver_base
from oslo_messaging._drivers import impl_fake

from faultdriver.novacompat import patchfixtures

FAKE = 'oslo_messaging._drivers.impl_fake.'
#: Longest a listener waits without a notification before it looks at
#: its queues anyway (a safety net: every delivery notifies).
LONGEST_WAIT = 1.0


class PromptDelivery(fixtures.Fixture):
    """While up, fake-RPC listeners sleep until something is delivered."""

    def _setUp(self) -> None:
        self._arrived = threading.Condition()
        self._deliveries = 0
        deliver = impl_fake.FakeExchange.deliver_message
        stop = impl_fake.FakeListener.stop

        def deliver_and_wake(exchange: typing.Any, *args: typing.Any,
                             **kwargs: typing.Any) -> typing.Any:
            try:
                return deliver(exchange, *args, **kwargs)
            finally:
                self._wake()

        def stop_and_wake(listener: typing.Any) -> None:
            stop(listener)
            self._wake()

        self.useFixture(patchfixtures.Patch(
            FAKE + 'FakeExchange.deliver_message', deliver_and_wake))
        self.useFixture(patchfixtures.Patch(
            FAKE + 'FakeListener.stop', stop_and_wake))
        self.useFixture(patchfixtures.Patch(
            FAKE + 'FakeListener.poll',
            driver_base.batch_poll_helper(self._poll)))

    def _wake(self) -> None:
        with self._arrived:
            self._deliveries += 1
            self._arrived.notify_all()

    def _poll(self, listener: typing.Any,
              timeout: typing.Optional[float] = None) -> typing.Any:
        """One message for ``listener`` (its targets in its order), or
        None once it is stopped or ``timeout`` passed."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not listener._stopped.is_set():
            with self._arrived:
                seen = self._deliveries
            for target in listener._targets:
                exchange = listener._exchange_manager.get_exchange(
                    target.exchange)
                ctxt, message, reply_q, requeue = exchange.poll(
                    target, listener._pool)
                if message is not None:
                    return impl_fake.FakeIncomingMessage(
                        ctxt, message, reply_q, requeue)
            wait = LONGEST_WAIT
            if deadline is not None:
                wait = min(wait, deadline - time.monotonic())
                if wait <= 0:
                    return None
            with self._arrived:
                self._arrived.wait_for(
                    lambda: self._deliveries != seen, wait)
        return None
