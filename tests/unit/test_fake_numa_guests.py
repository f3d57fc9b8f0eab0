"""fake_numa's guests outlive the driver, as a hypervisor's outlive
nova-compute: every change is on disk, atomically, before it returns."""

import nova.tests.unit  # noqa: F401  (Nova's patching and objects first)

import json
import os

import fixtures
from nova.compute import power_state
from nova import context
from nova import objects
from nova import test
from nova.tests.unit import fake_instance
from nova.virt import fake

from faultdriver.virt import guests
from faultdriver.virt import numa_fake

RUNNING, SHUTDOWN = power_state.RUNNING, power_state.SHUTDOWN


class TestGuestTable(test.NoDBTestCase):

    def setUp(self):
        super().setUp()
        self.path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                                 'sub', 'host.json')

    def reload(self):
        return {uuid: (g.name, g.state)
                for uuid, g in guests.GuestTable(self.path).items()}

    def test_missing_file_is_an_empty_table(self):
        table = guests.GuestTable(self.path)
        self.assertEqual(0, len(table))
        self.assertFalse(os.path.exists(self.path))

    def test_every_change_is_on_disk(self):
        table = guests.GuestTable(self.path)
        table['u1'] = fake.FakeInstance('instance-1', RUNNING, 'u1')
        table['u2'] = fake.FakeInstance('instance-2', RUNNING, 'u2')
        self.assertEqual({'u1': ('instance-1', RUNNING),
                          'u2': ('instance-2', RUNNING)}, self.reload())
        table['u1'].state = SHUTDOWN
        del table['u2']
        self.assertEqual({'u1': ('instance-1', SHUTDOWN)}, self.reload())
        self.assertEqual('instance-1', table['u1']['name'])
        table.pop('u1')
        self.assertEqual({}, self.reload())

    def test_failed_write_keeps_the_old_table(self):
        table = guests.GuestTable(self.path)
        table['u1'] = fake.FakeInstance('instance-1', RUNNING, 'u1')
        self.assertRaises(TypeError, table.__setitem__, 'u2',
                          fake.FakeInstance('instance-2', object(), 'u2'))
        self.assertEqual({'u1': ('instance-1', RUNNING)}, self.reload())
        self.assertEqual(['host.json'],
                         os.listdir(os.path.dirname(self.path)))

    def test_unreadable_file_names_itself(self):
        os.makedirs(os.path.dirname(self.path))
        with open(self.path, 'w') as f:
            f.write('{"guests": [')
        error = self.assertRaises(ValueError, guests.GuestTable, self.path)
        self.assertIn(self.path, str(error))
        with open(self.path, 'w') as f:
            json.dump({'version': 99, 'guests': []}, f)
        error = self.assertRaises(ValueError, guests.GuestTable, self.path)
        self.assertIn('version 99, expected 1', str(error))


class TestDriverGuestsAcrossRestart(test.NoDBTestCase):
    """A new driver (a restarted nova-compute) sees the guests the old one
    had; live migration moves them between the two hosts' tables."""

    def setUp(self):
        super().setUp()
        self.flags(state_path=self.useFixture(fixtures.TempDir()).path)
        self.ctxt = context.get_admin_context()
        self.instance = fake_instance.fake_instance_obj(
            self.ctxt, uuid='9e3b0a4c-5a8e-4a43-b8a2-2d6f5a3f2a11')

    def driver(self, host):
        self.flags(host=host)
        driver = numa_fake.NumaFakeDriver(fake.FakeVirtAPI())
        driver.init_host(host)
        return driver

    def test_spawn_power_off_restart(self):
        src = self.driver('src')
        src.spawn(self.ctxt, self.instance, None, [], None, {})
        src.power_off(self.instance)
        restarted = self.driver('src')
        self.assertEqual([self.instance.uuid],
                         restarted.list_instance_uuids())
        self.assertEqual([self.instance.name], restarted.list_instances())
        self.assertEqual(SHUTDOWN, restarted.get_info(self.instance).state)
        self.assertEqual([], self.driver('dest').list_instance_uuids())

    def test_live_migration_moves_the_guest(self):
        src, dest = self.driver('src'), self.driver('dest')
        src.spawn(self.ctxt, self.instance, None, [], None, {})
        done = []
        src.live_migration(
            self.ctxt, self.instance, 'dest',
            lambda *args: done.append('post'),
            lambda *args, **kwargs: done.append('recover'),
            migrate_data=objects.LibvirtLiveMigrateData())
        self.assertEqual(['post'], done)
        # What the manager's post_method then runs on each host.
        src.post_live_migration(self.ctxt, self.instance, None)
        dest.post_live_migration_at_destination(
            self.ctxt, self.instance, None)
        self.assertEqual([], self.driver('src').list_instance_uuids())
        self.assertEqual([self.instance.uuid],
                         self.driver('dest').list_instance_uuids())

    def test_live_migration_without_guest_recovers(self):
        src = self.driver('src')
        done = []
        src.live_migration(
            self.ctxt, self.instance, 'dest',
            lambda *args: done.append('post'),
            lambda *args, **kwargs: done.append('recover'))
        self.assertEqual(['recover'], done)

    def test_rollback_at_destination_removes_a_guest(self):
        dest = self.driver('dest')
        dest.post_live_migration_at_destination(
            self.ctxt, self.instance, None)
        dest.rollback_live_migration_at_destination(
            self.ctxt, self.instance, None, None)
        self.assertEqual([], self.driver('dest').list_instance_uuids())


class TestRegistered(test.NoDBTestCase):

    def test_inner_driver_name_loads_it(self):
        from faultdriver import inner
        self.assertIs(numa_fake.NumaFakeDriver, inner.load_class('fake_numa'))
        self.assertTrue(
            numa_fake.NumaFakeDriver.capabilities['supports_pcpus'])
