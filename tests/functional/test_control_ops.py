"""What a runner on another machine reads through a compute's control
socket, on real compute services (issue 42, the cloud tier).

Invariants: ``pinning`` through a host's socket equals what its compute
node record holds (the embedded backend's ``pinned_cpus``), for its own
node and for the other host's, even while that host is down; ``status``
says the RPC servers started (``Service.start`` ran the manager's
``post_start_hook``), names the host's node and reports nova.conf's
settings; ``timer off`` keeps the resource periodic out of the service
timer's run (``Service.periodic_tasks``, what oslo.service's timer
calls) until ``timer on``.
"""

from nova import conf as nova_conf

from tests.functional import base

CONF = nova_conf.CONF
POINT = 'tracker.update_available_resource'


class TestControlOps(base.FaultTestBase):

    CONTROL = True
    PINNED = True

    def test_pinning_equals_the_node_record_even_of_a_host_that_is_down(
            self):
        src, dest = self.faults.control('src'), self.faults.control('dest')
        self.assertEqual({'host': 'src', 'nodes': {'src': []},
                          'pinned_cpus': []}, src.pinning())
        self.boot(host='src')
        pinned = self.pinned_cpus('src')
        self.assertEqual(self.default_vcpus, len(pinned))
        self.assertEqual({'host': 'src', 'nodes': {'src': pinned},
                          'pinned_cpus': pinned}, src.pinning())
        self.assertEqual(pinned, dest.pinning(host='src')['pinned_cpus'])
        self.assertEqual(pinned, dest.pinning(
            host='src', nodename='src')['pinned_cpus'])
        self.assertEqual([], dest.pinning()['pinned_cpus'])
        self.faults.crash_host('src')
        self.assertEqual(pinned, dest.pinning(host='src')['pinned_cpus'])

    def test_status_has_what_a_remote_runner_needs(self):
        status = self.faults.control('dest').status()
        self.assertEqual(('dest', ['dest'], True, True, []),
                         (status['host'], status['nodenames'],
                          status['rpc_started'], status['timer'],
                          status['tracker_fixes']))
        self.assertEqual(
            (CONF.rpc_response_timeout, CONF.update_resources_interval,
             CONF.compute.cpu_dedicated_set),
            (status['settings']['rpc_response_timeout'],
             status['settings']['update_resources_interval'],
             status['settings']['compute.cpu_dedicated_set']))
        self.assertEqual('34.0.0', status['nova_version'])

    def timer_run(self, host):
        """One run of ``host``'s service timer with the resource periodic
        due; how often the tracker's periodic point was hit since the
        rule went in."""
        service = self.computes[host]
        service.manager._periodic_last_run['update_available_resource'] = None
        service.periodic_tasks()
        return self.faults.control(host).counters().get(POINT + '.before', 0)

    def test_timer_off_keeps_the_periodic_out_of_the_timer_s_run(self):
        dest = self.faults.control('dest')
        dest.add(POINT + ': log(timer)')
        self.assertEqual({'host': 'dest', 'on': False,
                          'interval': 60 if CONF.update_resources_interval
                          == 0 else CONF.update_resources_interval},
                         dest.timer(False))
        self.assertEqual(0, self.timer_run('dest'))
        # A periodic asked for runs all the same.
        dest.periodic(timeout=30)
        self.assertEqual(1, dest.counters()[POINT + '.before'])
        self.assertTrue(dest.timer(True)['on'])
        self.assertEqual(2, self.timer_run('dest'))
        self.assertTrue(dest.status()['timer'])
