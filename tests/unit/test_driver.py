"""FaultDriver is a transparent ComputeDriver until a rule fires."""

import nova.tests.unit  # noqa: F401  (Nova's patching and objects first)

import inspect
from unittest import mock

import fixtures
from nova import exception as nova_exception
from nova import test
from nova.virt import driver as nova_driver
from nova.virt import fake
from oslo_config import fixture as config_fixture

from faultdriver import conf
from faultdriver import driver
from faultdriver import exception
from faultdriver import surface


class Recorder:
    """Inner driver double: records each call, returns a unique object."""

    def __init__(self):
        self.calls = []
        self.capabilities = {'supports_evacuate': True}
        self.rebalances_nodes = False
        self._host = 'the-inner-host'

    def __getattr__(self, name):
        def call(*args, **kwargs):
            result = object()
            self.calls.append((name, args, kwargs, result))
            return result
        return call


class DriverTestBase(test.NoDBTestCase):

    def setUp(self):
        super().setUp()
        conf.register_opts(nova_driver.CONF)
        self.flags(host='hostA')
        self.flags(inner_driver='fake_small', group='fault_injection')

    def make(self, *rules, enabled=True):
        self.flags(rules=list(rules), enabled=enabled,
                   group='fault_injection')
        return driver.FaultDriver(fake.FakeVirtAPI())

    def make_from_file(self, rule):
        """Load ``rule`` as if read from nova.conf: parsed on access."""
        self.useFixture(config_fixture.Config(nova_driver.CONF)) \
            .load_raw_values(group='fault_injection', rules=rule)
        return driver.FaultDriver(fake.FakeVirtAPI())


class TestDelegation(DriverTestBase):

    def test_every_public_method_is_delegated(self):
        methods = surface.public_methods()
        self.assertGreaterEqual(len(methods), 100)
        generated = driver.FaultDriver.__mro__[1]
        for name in methods:
            own = inspect.getattr_static(generated, name)
            base = inspect.getattr_static(nova_driver.ComputeDriver, name)
            self.assertIs(own.__wrapped_base__, base, name)
        # FaultDriver's own overrides extend a delegate, never replace it.
        overrides = {n for n in vars(driver.FaultDriver) if n in methods}
        self.assertEqual({'init_host', 'cleanup_host'}, overrides)
        wrapped = self.make()
        wrapped._inner = recorder = Recorder()
        wrapped.init_host('hostA')
        wrapped.cleanup_host('hostA')
        self.assertEqual(['init_host', 'cleanup_host'],
                         [call[0] for call in recorder.calls])

    def test_methods_with_default_bodies_are_delegated_too(self):
        defaults = [n for n in surface.public_methods()
                    if surface.has_default_body(n)]
        # ComputeDriver implements ~27 of them (pass, return input, ...).
        self.assertGreaterEqual(len(defaults), 25)
        for name in ('rollback_live_migration_at_source',
                     'post_live_migration',
                     'check_source_migrate_data_at_dest',
                     'post_claim_migrate_data', 'node_is_available'):
            self.assertIn(name, defaults)
        wrapped = self.make()
        wrapped._inner = Recorder()
        for name in defaults:
            result = getattr(wrapped, name)(1, key=2)
            self.assertEqual((name, (1,), {'key': 2}),
                             wrapped._inner.calls[-1][:3])
            self.assertIs(wrapped._inner.calls[-1][3], result, name)

    def test_signatures_equal_the_base(self):
        wrapped = self.make()
        for name in surface.public_methods():
            self.assertEqual(
                inspect.signature(getattr(nova_driver.ComputeDriver(None),
                                          name)),
                inspect.signature(getattr(wrapped, name)), name)

    def test_a_method_added_to_compute_driver_is_covered(self):
        def frobnicate(self, instance, *, gently=True):
            raise NotImplementedError()

        newer = type('NewerComputeDriver', (nova_driver.ComputeDriver,),
                     {'frobnicate': frobnicate})
        generated = driver.generated_class(newer)
        self.assertIn('frobnicate', vars(generated))
        self.assertEqual(inspect.signature(frobnicate),
                         inspect.signature(vars(generated)['frobnicate']))

    def test_arguments_and_results_pass_through_unchanged(self):
        for rules in ((), ('spawn: off', 'spawn.after: off')):
            wrapped = self.make(*rules)
            wrapped._inner = recorder = Recorder()
            for name in surface.public_methods():
                args = (object(), object())
                kwargs = {'migrate_data': object()}
                result = getattr(wrapped, name)(*args, **kwargs)
                self.assertEqual((name, args, kwargs, result),
                                 recorder.calls[-1], name)

    def test_capabilities_is_the_inner_live_dict(self):
        wrapped = self.make()
        self.assertIs(wrapped.inner.capabilities, wrapped.capabilities)
        wrapped.inner.capabilities['supports_evacuate'] = 'changed'
        self.assertEqual('changed', wrapped.capabilities['supports_evacuate'])
        self.assertEqual(wrapped.inner.rebalances_nodes,
                         wrapped.rebalances_nodes)
        wrapped.rebalances_nodes = True     # regression tests set it
        self.assertTrue(wrapped.inner.rebalances_nodes)
        wrapped.capabilities = {'supports_evacuate': False}
        self.assertEqual({'supports_evacuate': False},
                         wrapped.inner.capabilities)

    def test_other_attributes_read_through(self):
        wrapped = self.make()
        wrapped._inner = Recorder()
        self.assertEqual('the-inner-host', wrapped._host)
        self.assertRaises(AttributeError, getattr, wrapped, '__nothing__')

    def test_patching_through_the_wrapper_reaches_the_inner_driver(self):
        wrapped = self.make()
        with mock.patch.object(wrapped, 'list_instance_uuids',
                               autospec=True, return_value=['patched']):
            self.assertEqual(['patched'], wrapped.inner.list_instance_uuids())
            self.assertEqual(['patched'], wrapped.list_instance_uuids())
        self.assertEqual([], wrapped.list_instance_uuids())
        with mock.patch.object(wrapped, 'instances', {'uuid': 'x'}):
            self.assertEqual({'uuid': 'x'}, wrapped.inner.instances)
        self.assertEqual({}, wrapped.inner.instances)
        self.assertNotIn('instances', vars(wrapped))

    def test_real_inner_driver_answers(self):
        wrapped = self.make()
        self.assertIsInstance(wrapped.inner, fake.SmallFakeDriver)
        self.assertEqual([], wrapped.list_instance_uuids())
        self.assertEqual(wrapped.inner.get_available_nodes(),
                         wrapped.get_available_nodes())


class TestLoading(DriverTestBase):

    def test_nova_loads_it_by_compute_driver_name(self):
        loaded = nova_driver.load_compute_driver(
            fake.FakeVirtAPI(), 'faultdriver.FaultDriver')
        self.assertIsInstance(loaded, driver.FaultDriver)
        self.assertIsInstance(loaded, nova_driver.ComputeDriver)
        self.assertIsInstance(loaded.inner, fake.SmallFakeDriver)

    def test_inner_driver_in_compute_driver_syntax(self):
        self.flags(inner_driver='fake.MediumFakeDriver',
                   group='fault_injection')
        self.assertIsInstance(self.make().inner, fake.MediumFakeDriver)

    def test_unknown_inner_driver_lists_the_names(self):
        self.flags(inner_driver='libvrt', group='fault_injection')
        exc = self.assertRaises(exception.ConfigError, self.make)
        self.assertIn("inner_driver 'libvrt' is unknown; did you mean "
                      "'libvirt'?", str(exc))
        self.assertIn('fake_live_migration', str(exc))

    def test_unset_inner_driver(self):
        self.flags(inner_driver=None, group='fault_injection')
        exc = self.assertRaises(exception.ConfigError, self.make)
        self.assertIn('inner_driver is not set', str(exc))

    def test_inner_driver_cannot_be_itself(self):
        self.flags(inner_driver='faultdriver.FaultDriver',
                   group='fault_injection')
        exc = self.assertRaises(exception.ConfigError, self.make)
        self.assertIn('is faultdriver itself', str(exc))

    def test_unimportable_inner_driver(self):
        self.flags(inner_driver='nothere.Driver', group='fault_injection')
        exc = self.assertRaises(exception.ConfigError, self.make)
        self.assertIn('cannot be imported as nova.virt.nothere.Driver',
                      str(exc))

    def test_malformed_rule_stops_the_driver(self):
        exc = self.assertRaises(exception.ConfigError, self.make_from_file,
                                'pre_live_migrate@dest: crash')
        self.assertIn("rule 'pre_live_migrate@dest: crash' at column 1: "
                      "unknown point 'pre_live_migrate'; did you mean "
                      "'pre_live_migration'?", str(exc))

    def test_rule_for_the_wrong_host_role(self):
        exc = self.assertRaises(exception.ConfigError, self.make_from_file,
                                'pre_live_migration@source: crash')
        self.assertIn("point 'pre_live_migration' runs only on the dest "
                      "host, never on the source", str(exc))

    def test_exception_the_step_cannot_raise(self):
        exc = self.assertRaises(exception.ConfigError, self.make_from_file,
                                'pre_live_migration: raise(ResizeError)')
        self.assertIn('ResizeError cannot be raised at pre_live_migration; '
                      'expected one of MigrationError', str(exc))


class TestFiring(DriverTestBase):

    def test_disabled_rules_never_fire(self):
        wrapped = self.make('list_instance_uuids: raise(InternalError)',
                            enabled=False)
        self.assertEqual([], wrapped.list_instance_uuids())
        self.assertEqual(set(), wrapped.engine.armed)
        self.assertEqual([], wrapped.engine.journal.entries())

    def test_injected_exception_is_the_real_nova_class(self):
        logs = self.useFixture(fixtures.FakeLogger(level='WARNING'))
        wrapped = self.make(
            'list_instance_uuids: 1*raise(InternalError, "disk on fire")')
        exc = self.assertRaises(nova_exception.InternalError,
                                wrapped.list_instance_uuids)
        self.assertIsInstance(exc, exception.InjectedFault)
        self.assertEqual('InternalError', type(exc).__name__)
        self.assertEqual('nova.exception', type(exc).__module__)
        self.assertIn('[faultdriver] injected at list_instance_uuids.before '
                      'on hostA (rule 0, hit 1): disk on fire', str(exc))
        self.assertEqual([], wrapped.list_instance_uuids())  # count used up
        self.assertIn('FAULTDRIVER-INJECT point=list_instance_uuids.before '
                      'host=hostA rule=0', logs.output)
        [entry] = wrapped.engine.journal.entries()
        self.assertEqual(('list_instance_uuids', 'raise', 1),
                         (entry['point'], entry['action'], entry['hit']))

    def test_after_phase_fires_after_the_real_call(self):
        wrapped = self.make(
            'get_available_nodes.after: raise(VirtDriverNotReady)')
        wrapped._inner = recorder = Recorder()
        self.assertRaises(nova_exception.VirtDriverNotReady,
                          wrapped.get_available_nodes)
        self.assertEqual('get_available_nodes', recorder.calls[-1][0])

    def test_before_phase_fires_before_the_real_call(self):
        wrapped = self.make('get_available_nodes: raise(VirtDriverNotReady)')
        wrapped._inner = recorder = Recorder()
        self.assertRaises(nova_exception.VirtDriverNotReady,
                          wrapped.get_available_nodes)
        self.assertEqual([], recorder.calls)

    def test_host_filter_scopes_a_rule_to_one_service(self):
        wrapped = self.make(
            'list_instance_uuids[host=hostB]: raise(InternalError)')
        self.assertEqual([], wrapped.list_instance_uuids())
        self.flags(host='hostB')
        other = self.make(
            'list_instance_uuids[host=hostB]: raise(InternalError)')
        self.assertRaises(nova_exception.InternalError,
                          other.list_instance_uuids)

    def test_journal_file(self):
        path = self.useFixture(fixtures.TempDir()).join('j/journal.jsonl')
        self.flags(journal_path=path, group='fault_injection')
        wrapped = self.make('list_instance_uuids: log(hello)')
        wrapped.list_instance_uuids()
        wrapped.list_instance_uuids()
        from faultdriver import journal
        self.assertEqual([1, 2], [e['hit'] for e in journal.read(path)])
