"""``periodic(host=NAME)``: another host's resource periodic, run at this
host's step and waited for.

A real nova-compute reaches the other host through that host's control
socket (``[fault_injection] peer_control_sockets``): here a real control
server for host ``src`` answers, its periodic a stand-in that records the
run; the hit is ``dest``'s, through the real action.  What cannot reach
the other host is refused at start (the driver, the embedded harness) or
journaled as the periodic's error, never silent.
"""

import nova.tests.unit  # noqa: F401  (Nova's patching and objects first)

import functools
import os
import shutil
import tempfile
import threading
import types

from nova import test

from faultdriver.actions import periodic
from faultdriver import conf
from faultdriver import confcheck
from faultdriver.control import ops as ops_module
from faultdriver.control import server as server_module
from faultdriver import driver as driver_module
from faultdriver import engine as engine_module
from faultdriver import exception
from faultdriver.harness import injection
from faultdriver import journal as journal_module
from faultdriver import rules
from tests.unit import fakes


def dest_hit(rule_text, journal, peer_periodic):
    """A hit of ``rule_text`` on dest, whose engine runs other hosts'
    periodics with ``peer_periodic``."""
    rule = rules.parse(rule_text)
    return rule, engine_module.Hit(
        point=rule.point, phase=rule.phase, host='dest', rule=rule,
        rule_index=0, hit=1, fired=1, in_periodic=False,
        target=types.SimpleNamespace(virtapi=types.SimpleNamespace(
            _compute=types.SimpleNamespace(
                _shutdown_in_progress=threading.Event()))),
        engine=types.SimpleNamespace(journal=journal,
                                     peer_periodic=peer_periodic))


class TestThroughTheOtherHostsSocket(test.NoDBTestCase):

    def setUp(self):
        super().setUp()
        self.dir = tempfile.mkdtemp(prefix='fdp', dir='/tmp')
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.src_ran = []
        self.src_error = None
        src = engine_module.Engine('src', fakes.ACTIONS, [], enabled=True)
        self.addCleanup(src.close)
        self.server = server_module.ControlServer(
            os.path.join(self.dir, 'src.sock'), src, fakes.CATALOGUE,
            fakes.rule, compute=ops_module.ComputeHooks(
                periodic=self._src_periodic)).start()
        self.addCleanup(self.server.stop)

    def _src_periodic(self):
        self.src_ran.append(threading.current_thread().name)
        if self.src_error:
            raise self.src_error

    def fire(self, sockets, text='live_migration.before: '
                                 'periodic(host=src)'):
        journal = journal_module.Journal()
        rule, hit = dest_hit(text, journal, functools.partial(
            periodic.by_control_socket, sockets))
        periodic.Periodic(rule.terms[0])(hit)
        [entry] = journal.entries()
        return entry

    def test_the_other_hosts_periodic_ran_before_the_step_went_on(self):
        entry = self.fire({'src': self.server.path})
        self.assertEqual(1, len(self.src_ran))
        self.assertEqual('periodic', entry['kind'])
        self.assertEqual(('dest', 'src'), (entry['host'],
                                           entry['periodic_host']))
        self.assertIsNone(entry['error'])
        self.assertIsNone(entry['waited_for_lock'])

    def test_its_error_is_journaled(self):
        self.src_error = RuntimeError('CPUPinningInvalid on src')
        entry = self.fire({'src': self.server.path})
        self.assertIn('CPUPinningInvalid on src', entry['error'])

    def test_a_host_without_a_socket_is_an_error_naming_the_option(self):
        entry = self.fire({})
        self.assertEqual([], self.src_ran)
        self.assertIn('peer_control_sockets', entry['error'])
        self.assertIn('src', entry['error'])

    def test_its_own_host_named_runs_its_own_periodic(self):
        journal = journal_module.Journal()
        ran = threading.Event()
        rule, hit = dest_hit('live_migration.before: periodic(host=dest)',
                             journal, None)
        hit.target.virtapi._compute.update_available_resource = \
            lambda context: ran.set()
        periodic.Periodic(rule.terms[0])(hit)
        self.assertTrue(ran.is_set())
        [entry] = journal.entries()
        self.assertIsNone(entry['periodic_host'])


class TestRefusedAtStart(test.NoDBTestCase):

    def setUp(self):
        super().setUp()
        conf.register_opts(driver_module.CONF)

    def test_a_rule_naming_an_unreachable_host_stops_the_service(self):
        rule = 'live_migration.before: periodic(host=src)'
        self.flags(rules=[rule], group='fault_injection')
        self.flags(peer_control_sockets={'other': '/run/other.sock'},
                   group='fault_injection')
        error = self.assertRaises(
            exception.ConfigError, confcheck.check,
            driver_module.CONF.fault_injection, False, 'dest')
        self.assertIn('periodic(host=src)', str(error))
        self.assertIn('peer_control_sockets', str(error))
        # Listed, or this host's own name: accepted.
        self.flags(peer_control_sockets={'src': '/run/src.sock'},
                   group='fault_injection')
        confcheck.check(driver_module.CONF.fault_injection, False, 'dest')
        self.flags(peer_control_sockets={}, group='fault_injection')
        confcheck.check(driver_module.CONF.fault_injection, False, 'src')

    def test_a_relative_socket_path_is_refused(self):
        self.flags(peer_control_sockets={'src': 'src.sock'},
                   group='fault_injection')
        error = self.assertRaises(
            exception.ConfigError, confcheck.check,
            driver_module.CONF.fault_injection, False)
        self.assertIn('peer_control_sockets src:src.sock', str(error))

    def test_the_embedded_nova_refuses_it_under_the_tracker_lock(self):
        """Its hosts share one tracker lock: the other host's periodic
        could only run after the step."""
        error = self.assertRaises(
            exception.ConfigError, injection.FaultInjection.parse,
            'tracker.drop_move_claim_at_dest.after: periodic(host=src)')
        self.assertIn('periodic(host=src) needs a nova-compute process per '
                      'host, which the embedded Nova lacks', str(error))
        self.assertIn('its unlocked phase holds none', str(error))
        injection.FaultInjection.parse(
            'tracker.drop_move_claim_at_dest.unlocked: periodic(host=src)')
        injection.FaultInjection.parse(
            'tracker.drop_move_claim_at_dest.after: periodic')
