# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.

"""Faults of a nova-compute service at one call, for functional tests.

A test can stop a compute between operations, not kill one in the middle of
one: here its RPC servers and timers stop (callers time out, its heartbeat
stops) and its thread unwinds with ComputeDied, a BaseException.
"""

import itertools
import threading
import time

import fixtures

from nova import context as nova_context


class ComputeDied(BaseException):
    """Unwinds the thread in which a compute service died."""


class ComputeFaultFixture(fixtures.Fixture):
    """Crash a compute, raise or run a periodic at a call of its driver
    (``'spawn'``) or resource tracker (``'tracker.resize_claim'``); restart
    it.  Use it before computes start: a dead one shows down in seconds.
    """

    RPC_TIMEOUT, LONG_RPC_TIMEOUT = 3, 6

    def __init__(self, test):
        super().__init__()
        self.test = test
        self.fired = []         # (hostname, point, action)
        self.crashed = {}       # hostname -> when it died (monotonic)
        self.periodics = []     # (hostname, whether it failed)
        self._changed = threading.Condition()

    def setUp(self):
        super().setUp()
        self.test.flags(rpc_response_timeout=self.RPC_TIMEOUT,
                        long_rpc_timeout=self.LONG_RPC_TIMEOUT,
                        report_interval=1, service_down_time=3)
        # level=None: what it logs still reaches the test's own loggers.
        self.log = self.useFixture(fixtures.FakeLogger(
            name='nova.compute.manager', level=None))

    def inject(self, hostname, point, action, skip=0, after=False,
               error=None, peer=None, wait=60):
        """At call skip + 1 of ``point`` on ``hostname`` (before it, or
        ``after``): the compute dies (crash), it raises ``error`` (raise),
        it waits ``wait`` s (delay), or the periodic of ``peer`` or
        ``hostname`` runs in a thread, as its timer could, waited for
        ``wait`` s (0: not; the call may hold the lock it needs).
        """
        manager = self.test.computes[hostname].manager
        target = manager.rt if point.startswith('tracker.') else manager.driver
        method = point.rpartition('.')[2]
        real = getattr(target, method)
        calls = itertools.count(1)      # next() is atomic

        def fault():
            if action == 'delay':
                return time.sleep(wait)
            if action == 'periodic':
                thread = threading.Thread(target=self.periodic, daemon=True,
                                          args=(peer or hostname,))
                thread.start()
                return thread.join(wait) if wait else None
            with self._changed:
                self.fired.append((hostname, point, action))
                self._changed.notify_all()
            if action == 'raise':
                raise error
            self.die(hostname)

        def hooked(*args, **kwargs):
            if next(calls) != skip + 1:
                return real(*args, **kwargs)
            if not after:
                fault()
            result = real(*args, **kwargs)
            if after:
                fault()
            return result

        self.useFixture(fixtures.MockPatchObject(
            target, method, autospec=True, side_effect=hooked))

    def count(self, hostname=None, point=None, action=None):
        """How many injected faults fired, of those that match."""
        return len([fired for fired in self.fired
                    if hostname in (None, fired[0]) and
                    point in (None, fired[1]) and action in (None, fired[2])])

    def wait_for(self, hostname, point, timeout=30):
        """Wait until the fault at ``point`` on ``hostname`` fired."""
        with self._changed:
            if not self._changed.wait_for(
                    lambda: self.count(hostname, point), timeout):
                self.test.fail('no fault at %s on %s' % (point, hostname))

    def periodic(self, hostname):
        """Run the periodic of ``hostname`` now; whether it failed."""
        marker = 'Error updating resources for node %s' % hostname
        before = self.log.output.count(marker)
        self.test.computes[hostname].manager.update_available_resource(
            nova_context.get_admin_context())
        failed = self.log.output.count(marker) > before
        self.periodics.append((hostname, failed))
        return failed

    def die(self, hostname):
        """nova-compute on ``hostname`` dies in the calling thread."""
        compute = self.test.computes[hostname]
        self.crashed[hostname] = time.monotonic()
        for server in filter(None, (compute.rpcserver, compute.rpcserver_alt)):
            server.stop()
        compute.tg.stop_timers()
        raise ComputeDied(hostname)

    def restart(self, hostname):
        """Start it again; a dead one is not stopped: it never returns."""
        if self.crashed.pop(hostname, None) is None:
            return self.test.restart_compute_service(hostname)
        test, compute = self.test, self.test.computes.pop(hostname)
        test.compute_rp_uuids.pop(hostname)
        test.start_compute(
            hostname, cell_name=test.host_mappings[hostname].cell_mapping.name,
            connection=compute.driver._get_connection())
        return test.computes[hostname]

    def restart_dead(self, timeout=30):
        """Restart each dead compute once no caller waits for it."""
        for hostname, died in sorted(self.crashed.items()):
            time.sleep(max(0, died + self.LONG_RPC_TIMEOUT - time.monotonic()))
            self.restart(hostname)
            self.test._wait_for_service_parameter(
                hostname, 'nova-compute', {'state': 'up'},
                max_retries=int(timeout * 2))
