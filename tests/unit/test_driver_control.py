"""FaultDriver serves its control socket from init_host until it stops."""

import nova.tests.unit  # noqa: F401  (Nova's patching and objects first)

import os
import shutil
import stat
import tempfile
import time

from nova import exception as nova_exception
from nova.virt import fake

from faultdriver.control import client as client_module
from faultdriver.control import listen
from faultdriver.control import protocol
from faultdriver import driver
from faultdriver import exception
from faultdriver import hostfacts
from faultdriver import novacompat
from tests.unit import test_driver

#: The class DriverTestBase's inner_driver fake_small names.
INNER_CLASS = 'nova.virt.fake.SmallFakeDriver'


class TestControlSocket(test_driver.DriverTestBase):

    def setUp(self):
        super().setUp()
        directory = tempfile.mkdtemp(prefix='fdd', dir='/tmp')
        self.addCleanup(shutil.rmtree, directory, ignore_errors=True)
        self.path = os.path.join(directory, 'run', 'c.sock')

    def start(self, host='hostA', path=None):
        self.flags(host=host)
        self.flags(control_socket=path or self.path, enabled=True,
                   group='fault_injection')
        wrapped = driver.FaultDriver(fake.FakeVirtAPI())
        self.addCleanup(wrapped.close)
        wrapped.init_host(host)
        return wrapped

    def test_serves_from_init_host_until_cleanup_host(self):
        self.flags(control_socket=self.path, group='fault_injection')
        wrapped = driver.FaultDriver(fake.FakeVirtAPI())
        self.addCleanup(wrapped.close)
        self.assertFalse(os.path.exists(self.path))
        self.assertIsNone(wrapped.control_socket)
        wrapped.init_host('hostA')
        self.assertEqual(self.path, wrapped.control_socket)
        self.assertEqual(0o600, stat.S_IMODE(os.lstat(self.path).st_mode))
        self.assertEqual(0o700, stat.S_IMODE(os.lstat(
            os.path.dirname(self.path)).st_mode))    # made for it
        self.assertEqual('hostA',
                         client_module.Client(self.path).status()['host'])
        wrapped.cleanup_host('hostA')
        self.assertFalse(os.path.exists(self.path))
        self.assertIsNone(wrapped.control_socket)

    def test_tracker_rule_refused_where_no_tracker_is_hooked(self):
        # FakeVirtAPI has no compute manager: no tracker to hook.
        wrapped = self.start()
        client = client_module.Client(self.path)
        exc = self.assertRaises(
            protocol.ControlError, client.add,
            'tracker.update_available_resource: log(x)')
        self.assertIn('no resource tracker hooked', str(exc))
        self.assertEqual([], client.rules())
        self.assertIsNotNone(wrapped.control_socket)

    def test_periodic_refused_where_there_is_no_compute_manager(self):
        # FakeVirtAPI has no compute manager: no periodic to run.
        self.start()
        client = client_module.Client(self.path)
        exc = self.assertRaises(protocol.RequestRejected, client.periodic)
        self.assertEqual(
            'FaultDriver on hostA runs outside a compute manager: it has '
            'no resource-tracker periodic to run', str(exc))

    def test_rule_added_at_run_time_fires_on_the_real_driver(self):
        wrapped = self.start()
        client = client_module.Client(self.path)
        self.assertEqual([], wrapped.list_instance_uuids())
        client.add('list_instance_uuids: 1*raise(InternalError, "late")')
        exc = self.assertRaises(nova_exception.InternalError,
                                wrapped.list_instance_uuids)
        self.assertIsInstance(exc, exception.InjectedFault)
        self.assertEqual([], wrapped.list_instance_uuids())
        self.assertEqual(['raise'],
                         [e['action'] for e in client.journal()])

    def test_rules_are_checked_against_the_real_catalogue(self):
        self.start()
        client = client_module.Client(self.path)
        error = self.assertRaises(
            protocol.RequestRejected, client.add,
            'list_instance_uuids: raise(MigrationPreCheckError)')
        self.assertIn("rule 'list_instance_uuids: raise("
                      "MigrationPreCheckError)'", str(error))
        self.assertEqual([], client.rules())

    def test_a_second_service_on_the_same_socket_is_refused(self):
        self.start()
        error = self.assertRaises(listen.SocketInUse, self.start, 'hostB')
        self.assertIsInstance(error, exception.ConfigError)
        self.assertIn('in use by the faultdriver of host hostA (pid %d)'
                      % os.getpid(), str(error))
        self.assertEqual('hostA',
                         client_module.Client(self.path).status()['host'])

    def test_unset_means_no_socket(self):
        self.flags(control_socket=None, group='fault_injection')
        wrapped = driver.FaultDriver(fake.FakeVirtAPI())
        wrapped.init_host('hostA')
        self.assertIsNone(wrapped.control_socket)
        self.assertFalse(os.path.exists(os.path.dirname(self.path)))
        wrapped.cleanup_host('hostA')

    def test_status_tells_a_remote_runner_this_compute_s_facts(self):
        self.flags(rpc_response_timeout=8, long_rpc_timeout=70,
                   report_interval=3, graceful_shutdown_timeout=40,
                   manager_shutdown_timeout=30, update_resources_interval=-1,
                   debug=True)
        self.flags(cpu_dedicated_set='2-3', cpu_shared_set='0-1',
                   group='compute')
        self.flags(connection_uri='qemu+tcp://h/system', group='libvirt')
        self.start()
        before = time.time()
        status = client_module.Client(self.path).status()
        self.assertLessEqual(before, status.pop('time'))
        self.assertEqual({
            'host': 'hostA', 'pid': os.getpid(), 'enabled': True,
            'rules': 0, 'held': {}, 'journal': None, 'journal_error': None,
            # FakeVirtAPI: no compute manager, nothing to know of it.
            'nodenames': None, 'rpc_started': None, 'timer': None,
            'nova_version': novacompat.nova_version(),
            'faultdriver_version': hostfacts.faultdriver_version(),
            'tracker_fixes': [], 'start_rules': None,
            'inner_driver': INNER_CLASS,
            'settings': {
                'rpc_response_timeout': 8, 'long_rpc_timeout': 70,
                'report_interval': 3, 'graceful_shutdown_timeout': 40,
                'manager_shutdown_timeout': 30,
                'update_resources_interval': -1, 'debug': True,
                'compute.cpu_dedicated_set': '2-3',
                'compute.cpu_shared_set': '0-1',
                'libvirt.connection_uri': 'qemu+tcp://h/system'}}, status)
        self.assertEqual('34.0.0', status['nova_version'])

    def test_timer_refused_where_there_is_no_compute_manager(self):
        self.start()
        exc = self.assertRaises(protocol.RequestRejected,
                                client_module.Client(self.path).timer)
        self.assertEqual('FaultDriver on hostA runs outside a compute '
                         'manager: it has no timer to switch', str(exc))
