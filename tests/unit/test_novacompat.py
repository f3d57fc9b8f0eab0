"""faultdriver refuses a Nova that changed under it, naming the symbol.

Each test feeds the check real Nova code with one small, scoped change
(a copy of a Nova module with one line edited, a subclass, an attribute
removed for the test) and expects a refusal whose message names the
Nova symbol, the feature that needs it and the Nova version.  The
installed Nova must pass every check.
"""

import nova.tests.unit  # noqa: F401  (Nova's patching and objects first)

import importlib.util
import inspect
import itertools
import json
import os
import sys
import types

import fixtures
from nova.compute import manager as compute_manager
from nova.compute import resource_tracker
from nova import objects
from nova import test
from nova.virt import driver as nova_driver
from nova.virt import fake
from oslo_utils.fixture import uuidsentinel as uuids
import testtools

from faultdriver import conf
from faultdriver import driver
from faultdriver import exception
from faultdriver import novacompat
from faultdriver.novacompat import declared
from faultdriver.novacompat import logtexts
from faultdriver.novacompat import patchfixtures
from faultdriver.tracker import patches
from faultdriver.tracker import periodic_scope

VERSION = 'Nova %s' % novacompat.nova_version()
_copies = itertools.count()


def altered_copy(test_case, module, old, new):
    """A copy of Nova's ``module`` (imported from a file of its own) with
    ``old`` replaced by ``new`` once; ``old`` must be in Nova's source."""
    text = inspect.getsource(module)
    test_case.assertEqual(1, text.count(old), 'Nova changed: %r' % old)
    folder = test_case.useFixture(fixtures.TempDir()).path
    name = 'altered_%s_%d' % (module.__name__.replace('.', '_'),
                              next(_copies))
    path = '%s/%s.py' % (folder, name)
    with open(path, 'w', encoding='utf-8') as stream:
        stream.write(text.replace(old, new))
    spec = importlib.util.spec_from_file_location(name, path)
    copy = importlib.util.module_from_spec(spec)
    sys.modules[name] = copy
    test_case.addCleanup(sys.modules.pop, name, None)
    spec.loader.exec_module(copy)
    return copy


def setup_error(fixture):
    """The exception a fixture's setUp raised (fixtures wraps it)."""
    try:
        fixture.setUp()
    except testtools.MultipleExceptions as errors:
        return errors.args[0][1]
    except Exception as error:
        return error
    fixture.cleanUp()
    return None


class CompatTestBase(test.NoDBTestCase):

    def refused(self, overrides, symbol, feature_word):
        """Check every assumption against ``overrides``; exactly the
        assumptions about ``symbol`` that ``feature_word`` names fail,
        and verify() says so."""
        broken = [r for r in novacompat.check(overrides=overrides)
                  if not r.ok]
        self.assertTrue(broken, 'the altered Nova passed every check')
        self.assertEqual({symbol}, {r.assumption.symbol for r in broken},
                         [r.message() for r in broken])
        with self.assertRaises(exception.ConfigError) as caught:
            novacompat.verify(novacompat.GROUPS, overrides=overrides)
        message = str(caught.exception)
        self.assertIn(symbol, message)
        self.assertIn(feature_word, message)
        self.assertIn(VERSION, message)
        return message


class TestInstalledNova(CompatTestBase):

    def test_every_assumption_holds(self):
        results = novacompat.check()
        self.assertEqual([], [r.message() for r in results if not r.ok])
        self.assertEqual([], [r.message() for r in results if r.skipped])

    def test_the_installed_version_is_one_checked_against(self):
        self.assertIn(novacompat.nova_version(), novacompat.CHECKED_AGAINST)

    def test_requirements_declare_the_supported_range(self):
        import pathlib
        root = pathlib.Path(__file__).resolve().parents[2]
        lines = (root / 'requirements.txt').read_text().split()
        self.assertIn(novacompat.SUPPORTED, lines)


class TestAlteredResourceTracker(CompatTestBase):
    """nova.compute.resource_tracker with one change each."""

    def overrides(self, old, new):
        copy = altered_copy(self, resource_tracker, old, new)
        return {'nova.compute.resource_tracker': copy}

    def test_renamed_tracker_method_is_refused(self):
        message = self.refused(
            self.overrides('def drop_move_claim_at_source(',
                           'def drop_move_claim_on_source('),
            declared.TRACKER + '.drop_move_claim_at_source',
            'tracker point tracker.drop_move_claim_at_source')
        self.assertIn('is missing', message)

    def test_tracker_method_no_longer_under_the_lock_is_refused(self):
        copy = altered_copy(
            self, resource_tracker,
            '    @utils.synchronized(COMPUTE_RESOURCE_SEMAPHORE, fair=True)\n'
            '    def drop_move_claim_at_dest(',
            '    def drop_move_claim_at_dest(')
        message = self.refused({'nova.compute.resource_tracker': copy},
                               declared.TRACKER + '.drop_move_claim_at_dest',
                               'tracker.drop_move_claim_at_dest')
        self.assertIn('not @utils.synchronized', message)

    def test_status_filter_in_the_periodic_loop_is_refused(self):
        # The natural upstream fix: the loop skips error migrations.  The
        # periodic scope would then pair contexts with the wrong migration.
        message = self.refused(
            self.overrides('migration.instance_uuid in instance_by_uuid and',
                           "migration.status != 'error' and\n"
                           '                migration.instance_uuid in '
                           'instance_by_uuid and'),
            declared.PERIODIC, 'which migration a context is applied for')
        self.assertIn("migration.status != 'error'", message)

    def test_periodic_calls_in_another_order_are_refused(self):
        message = self.refused(
            self.overrides('instance_by_uuid = self._update_usage_from_'
                           'instances(\n            context, instances, '
                           'nodename)',
                           'instance_by_uuid = self._count_usage(\n'
                           '            context, instances, nodename)'),
            declared.PERIODIC, 'periodic_scope')
        self.assertIn('self._update_usage_from_instances(', message)

    def test_reworded_migration_status_line_is_refused(self):
        message = self.refused(
            self.overrides("'Migration status is %s'",
                           "'Migration is in status %s'"),
            declared.PERIODIC, 'log expectations')
        self.assertIn("no longer logs 'Migration status is %s'", message)


class TestAlteredComputeManager(CompatTestBase):

    def test_reworded_periodic_error_line_is_refused(self):
        copy = altered_copy(
            self, compute_manager,
            '"Error updating resources for node %(node)s."',
            '"Failed to update the resources of node %(node)s."')
        # The other line still logs the old text; reword it too, as a
        # release would.
        text = inspect.getsource(copy)
        self.assertIn('"Error updating resources for node %s: %s"', text)
        copy = altered_copy(
            self, copy, '"Error updating resources for node %s: %s"',
            '"Failed to update the resources of node %s: %s"')
        message = self.refused(
            {'nova.compute.manager': copy},
            declared.MANAGER + '._update_available_resource_for_node',
            'periodic-errors')
        self.assertIn('count: 0 pass', message)

    def test_manager_with_the_resource_timer_disabled_passes(self):
        # update_resources_interval = -1 (every sweep case on processes):
        # oslo.service leaves the task out of _periodic_tasks.
        copy = altered_copy(
            self, compute_manager,
            '@periodic_task.periodic_task(spacing=CONF.update_resources_'
            'interval)',
            '@periodic_task.periodic_task(spacing=-1)')
        self.assertNotIn('update_available_resource',
                         [name for name, _task in
                          copy.ComputeManager._periodic_tasks])
        results = novacompat.check(
            overrides={'nova.compute.manager': copy})
        self.assertEqual([], [r.message() for r in results if not r.ok])

    def test_back_reference_under_another_name_is_refused(self):
        class KeepsItAsManager(compute_manager.ComputeVirtAPI):
            def __init__(self, compute):
                super().__init__(compute)
                self._manager = vars(self).pop('_compute')

        message = self.refused(
            {'nova.compute.manager.ComputeVirtAPI': KeepsItAsManager},
            'nova.compute.manager.ComputeVirtAPI', 'virtapi._compute')
        self.assertIn('does not keep its argument as ._compute', message)

    def test_manager_without_a_tracker_attribute_is_refused(self):
        copy = altered_copy(self, compute_manager,
                            '        self.rt = resource_tracker.',
                            '        self.tracker = resource_tracker.')
        self.refused({'nova.compute.manager': copy},
                     declared.MANAGER + '.__init__', 'manager.rt')


class TestAlteredStartAndSettings(CompatTestBase):
    """What ``ctl status`` reports: rpc_started's hook and the options."""

    def test_compute_manager_overriding_post_start_hook_is_refused(self):
        class OwnHook(compute_manager.ComputeManager):
            def post_start_hook(self):
                pass
        message = self.refused(
            {declared.MANAGER: OwnHook}, declared.MANAGER + '.post_start_hook',
            'rpc_started')
        self.assertIn('is overridden by', message)

    def test_hook_called_before_the_rpc_servers_start_is_refused(self):
        from nova import service
        copy = altered_copy(self, service,
                            '        self.manager.post_start_hook()\n', '')
        copy = altered_copy(self, copy, '        self.rpcserver.start()\n',
                            '        self.manager.post_start_hook()\n'
                            '        self.rpcserver.start()\n')
        message = self.refused({'nova.service': copy}, 'nova.service.'
                               'Service.start', 'rpc_started')
        self.assertIn('in another order', message)

    def test_a_renamed_option_is_refused(self):
        from nova.conf import base
        copy = altered_copy(self, base, "'manager_shutdown_timeout',",
                            "'manager_stop_timeout',")
        message = self.refused({'nova.conf.base': copy},
                               'nova.conf.base.base_options', 'ctl status')
        self.assertIn('no longer defines manager_shutdown_timeout', message)


class TestStartRefusesAlteredNova(CompatTestBase):
    """FaultDriver checks on every start, not only with a fix enabled."""

    def setUp(self):
        super().setUp()
        conf.register_opts(nova_driver.CONF)
        self.flags(host='hostA')
        self.flags(inner_driver='fake_small', group='fault_injection')
        novacompat._verified.cache_clear()
        self.addCleanup(novacompat._verified.cache_clear)

    def test_driver_start_without_fixes_refuses_a_renamed_tracker_method(self):
        self.useFixture(fixtures.MonkeyPatch(
            declared.TRACKER + '.drop_move_claim_at_dest',
            fixtures.MonkeyPatch.delete))
        with self.assertRaises(exception.ConfigError) as caught:
            driver.FaultDriver(fake.FakeVirtAPI())
        self.assertIn(declared.TRACKER + '.drop_move_claim_at_dest',
                      str(caught.exception))
        self.assertIn(VERSION, str(caught.exception))

    def test_driver_starts_on_the_installed_nova(self):
        self.assertIsInstance(driver.FaultDriver(fake.FakeVirtAPI()),
                              driver.FaultDriver)


class TestTrackerHookFailsLoudly(test.NoDBTestCase):
    """No tracker to hook is fine unless a fix or tracker rule needs it."""

    def setUp(self):
        super().setUp()
        conf.register_opts(nova_driver.CONF)
        self.flags(host='hostA')
        self.flags(inner_driver='fake_small', enabled=True,
                   group='fault_injection')

    def start(self, virtapi, rules=(), fixes=()):
        self.flags(rules=list(rules), tracker_patches=list(fixes),
                   group='fault_injection')
        faults = driver.FaultDriver(virtapi)
        self.addCleanup(faults.close)
        return faults

    def test_fix_without_a_compute_manager_is_refused(self):
        faults = self.start(fake.FakeVirtAPI(),
                            fixes=['stale_migration_context'])
        with self.assertRaises(exception.ConfigError) as caught:
            faults.init_host('hostA')
        self.assertIn('nova.compute.manager.ComputeVirtAPI._compute',
                      str(caught.exception))
        self.assertIn('fix stale_migration_context', str(caught.exception))

    def test_tracker_rule_without_a_tracker_is_refused(self):
        manager = types.SimpleNamespace(reportclient=None)   # no .rt
        faults = self.start(compute_manager.ComputeVirtAPI(manager),
                            rules=['tracker.instance_claim: log(x)'])
        with self.assertRaises(exception.ConfigError) as caught:
            faults.init_host('hostA')
        self.assertIn('nova.compute.manager.ComputeManager.rt',
                      str(caught.exception))
        self.assertIn('tracker.instance_claim', str(caught.exception))

    def test_driver_rules_outside_a_compute_manager_are_fine(self):
        faults = self.start(fake.FakeVirtAPI(), rules=['spawn: log(x)'])
        faults.init_host('hostA')
        self.assertIsNone(faults._fault_tracker)


class TestFixLoading(test.NoDBTestCase):
    """patches.load: any failure is a ConfigError naming fix and symbol."""

    def assertRefused(self, symbol):
        with self.assertRaises(exception.ConfigError) as caught:
            patches.load(['stale_migration_context'])
        message = str(caught.exception)
        self.assertIn("fix 'stale_migration_context'", message)
        self.assertIn(symbol, message)
        return message

    def test_missing_nova_method(self):
        self.useFixture(fixtures.MonkeyPatch(
            'nova.objects.Instance.apply_migration_context',
            fixtures.MonkeyPatch.delete))
        self.assertIn('is missing', self.assertRefused(
            'nova.objects.Instance.apply_migration_context'))

    def test_periodic_without_source(self):
        namespace = {}
        exec('def _update_available_resource(self, context, resources, '
             'startup=False):\n    pass\n', namespace)
        # mock.patch sets the function as is (fixtures.MonkeyPatch would
        # wrap it with functools.wraps, which shows Nova's source again).
        self.useFixture(fixtures.MockPatchObject(
            resource_tracker.ResourceTracker, '_update_available_resource',
            new=namespace['_update_available_resource']))
        self.assertIn('source code is not available',
                      self.assertRefused(declared.PERIODIC))

    def test_loads_on_the_installed_nova(self):
        [fix] = patches.load(['stale_migration_context'])
        self.assertEqual('stale_migration_context', fix.name)

    def test_loads_while_another_host_has_the_scope_installed(self):
        # The second compute of one process starts while the first one's
        # hooks replace Nova's methods: the check must see Nova's shape.
        original = objects.Instance.apply_migration_context
        self.addCleanup(periodic_scope.install(tracker=object()))
        self.assertIsNot(original, objects.Instance.apply_migration_context)
        [fix] = patches.load(['stale_migration_context'])
        self.assertEqual('stale_migration_context', fix.name)


class TestPatchHelper(test.NoDBTestCase):
    """The patch helper never creates what is not there."""

    def test_renamed_symbol_is_refused_and_not_created(self):
        symbol = 'nova.servicegroup.api.INITIAL_REPORTING_DELAY'
        self.useFixture(fixtures.MonkeyPatch(symbol,
                                             fixtures.MonkeyPatch.delete))
        from nova.servicegroup import api
        error = setup_error(patchfixtures.Patch(symbol, 0))
        self.assertIsInstance(error, exception.ConfigError)
        self.assertIn(symbol, str(error))
        self.assertIn('is missing', str(error))
        self.assertFalse(hasattr(api, 'INITIAL_REPORTING_DELAY'))

    def test_changed_signature_is_refused(self):
        symbol = 'oslo_messaging._drivers.impl_fake.FakeDriver.send'

        def send(self, target, message, wait_for_reply=None):
            """A send without ctxt, as a changed library might have."""
        from oslo_messaging._drivers import impl_fake
        self.useFixture(fixtures.MockPatchObject(impl_fake.FakeDriver, 'send',
                                                 new=send))
        error = setup_error(patchfixtures.Patch(symbol, lambda *a: None))
        self.assertIsInstance(error, exception.ConfigError)
        self.assertIn('takes (self, target, message, wait_for_reply)',
                      str(error))
        self.assertIs(send, impl_fake.FakeDriver.send)

    def test_undeclared_symbol_is_refused(self):
        error = setup_error(patchfixtures.Patch(
            'nova.compute.manager.ComputeManager._sync_power_states', None))
        self.assertIsInstance(error, exception.ConfigError)
        self.assertIn('does not declare', str(error))

    def test_declared_symbol_is_patched_and_restored(self):
        from nova.servicegroup import api
        before = api.INITIAL_REPORTING_DELAY
        with patchfixtures.Patch(
                'nova.servicegroup.api.INITIAL_REPORTING_DELAY', 0):
            self.assertEqual(0, api.INITIAL_REPORTING_DELAY)
        self.assertEqual(before, api.INITIAL_REPORTING_DELAY)


class TestPeriodicScopeCondition(test.NoDBTestCase):
    """The scope decides with Nova's own (declared, checked) condition."""

    def migration(self, **fields):
        values = dict(instance_uuid=uuids.i1, dest_compute='dest',
                      dest_node='dest')
        values.update(fields)
        return objects.Migration(**values)

    def test_condition(self):
        scope = periodic_scope._Scope(types.SimpleNamespace(host='dest'),
                                      'dest', decide=None)
        instance = objects.Instance(uuid=uuids.i1)
        self.assertTrue(scope.applies(self.migration(), instance))
        self.assertFalse(scope.applies(self.migration(dest_compute='src'),
                                       instance))
        self.assertFalse(scope.applies(self.migration(dest_node='other'),
                                       instance))
        self.assertFalse(scope.applies(
            self.migration(instance_uuid=uuids.i2), instance))


class TestScenarioLogTexts(test.NoDBTestCase):

    def test_every_counted_text_has_a_known_origin(self):
        texts = logtexts.counted_texts(logtexts.bundled_paths())
        self.assertIn('Migration status is error', texts)
        unknown = {t: s for t, s in texts.items()
                   if logtexts.origin(t)[1] is None}
        self.assertEqual({}, unknown, 'log texts counted by bundled '
                         'scenarios that neither a declared Nova assumption '
                         'nor faultdriver logs')

    def test_undeclared_text_has_no_origin(self):
        self.assertEqual((None, None),
                         logtexts.origin('Nova never logs this sentence'))

    def test_periodic_marker_is_the_declared_one(self):
        from faultdriver.scenario import steps
        self.assertEqual(declared.PERIODIC_ERROR, steps.PERIODIC_ERROR)


class TestDoctor(test.NoDBTestCase):
    """faultdriver doctor: the check's table, exit 1 naming what broke."""

    def doctor(self, *args):
        from faultdriver.cmd import main
        app = main.FaultDriverApp()
        out = self.useFixture(fixtures.StringStream('stdout')).stream
        err = self.useFixture(fixtures.StringStream('stderr')).stream
        app.stdout, app.stderr = out, err
        code = app.run(['doctor', '-f', 'json'] + list(args))
        out.seek(0)
        err.seek(0)
        return code, json.loads(out.read()), err.read()

    def test_every_row_ok_on_the_installed_nova(self):
        code, rows, err = self.doctor()
        self.assertEqual(0, code, err)
        statuses = {r['Assumption']: r['Status'] for r in rows
                    if r['Checked by'] != 'prerequisite'}
        self.assertTrue(all(s.startswith('OK') for s in statuses.values()),
                        statuses)
        self.assertIn("log text 'Migration status is error'", statuses)
        self.assertIn("log text 'not applying the migration context'",
                      statuses)
        self.assertEqual(len(novacompat.assumptions()) + 1 + len(
            logtexts.counted_texts(logtexts.bundled_paths())), len(statuses))

    def test_a_missing_prerequisite_is_listed_not_broken(self):
        """One row per need of the process tiers; a missing one says how
        to install it, and only refuses its tier (exit 0 here)."""
        from faultdriver.scenario import prereqs
        folder = self.useFixture(fixtures.TempDir()).path
        with open(folder + '/pymysql.py', 'w') as stream:
            stream.write('raise ImportError("blocked by the test")\n')
        # The check imports the modules in a fresh interpreter.
        self.useFixture(fixtures.EnvironmentVariable('PYTHONPATH', folder))
        code, rows, err = self.doctor()
        self.assertEqual(0, code, err)
        needs = [r for r in rows if r['Checked by'] == 'prerequisite']
        self.assertEqual(len(prereqs.needs('libvirt')), len(needs))
        [row] = [r for r in needs
                 if r['Assumption'] == 'process tier: module pymysql']
        self.assertEqual("MISSING: pip install 'faultdriver[process]'",
                         row['Status'])

    def test_broken_lists_a_missing_prerequisite(self):
        """--broken lists every row that is not OK: a prerequisite
        MISSING refuses its tier, so it is listed (it printed nothing)."""
        folder = self.useFixture(fixtures.TempDir()).path
        with open(folder + '/pymysql.py', 'w') as stream:
            stream.write('raise ImportError("blocked by the test")\n')
        self.useFixture(fixtures.EnvironmentVariable('PYTHONPATH', folder))
        code, rows, err = self.doctor('--broken')
        self.assertEqual(0, code, err)
        self.assertIn('process tier: module pymysql',
                      [r['Assumption'] for r in rows])
        self.assertTrue(all(not r['Status'].startswith('OK') for r in rows),
                        rows)

    def test_exit_1_naming_the_broken_symbol(self):
        symbol = declared.TRACKER + '.drop_move_claim_at_dest'
        self.useFixture(fixtures.MonkeyPatch(symbol,
                                             fixtures.MonkeyPatch.delete))
        code, rows, err = self.doctor()
        self.assertEqual(1, code)
        self.assertIn(symbol, err)
        [broken] = [r for r in rows if r['Status'].startswith('BROKEN')]
        self.assertIn('is missing', broken['Status'])
        self.assertIn('tracker.drop_move_claim_at_dest', broken['Feature'])


class TestWithoutTheHarnessExtras(test.NoDBTestCase):
    """Without faultdriver[scenarios], harness assumptions are skipped
    (nothing to check), not reported broken."""

    def test_module_needing_an_absent_library_is_skipped(self):
        folder = self.useFixture(fixtures.TempDir()).path
        with open(folder + '/needs_absent_library.py', 'w') as stream:
            stream.write('import faultdriver_absent_library  # noqa\n')
        self.useFixture(fixtures.MonkeyPatch('sys.path',
                                             [folder] + sys.path))
        self.addCleanup(sys.modules.pop, 'needs_absent_library', None)
        assumption = novacompat.Assumption(
            'needs_absent_library.Thing.method', novacompat.shapes.Exists(),
            'a harness feature', 'harness')
        [result] = novacompat.check(declared=[assumption])
        self.assertTrue(result.skipped)
        self.assertTrue(result.ok)
        self.assertIn('faultdriver_absent_library', result.problem)

    def test_missing_nova_module_is_broken(self):
        assumption = novacompat.Assumption(
            'nova.compute.no_such_module.Thing', novacompat.shapes.Exists(),
            'a feature')
        [result] = novacompat.check(declared=[assumption])
        self.assertFalse(result.ok)
        self.assertIn('is missing', result.problem)


class TestOnlyTheLibvirtDriverReadsCpuSets(test.NoDBTestCase):
    """The per-host CPU sets of the embedded Nova rely on LibvirtDriver's
    methods being the only readers; the check reads a Nova tree made
    here (its answers are cached per tree and per function)."""

    DRIVER = ('class LibvirtDriver:\n'
              '    def reads(self):\n'
              '        return hardware.get_cpu_shared_set()\n'
              '    def %s(self):\n'
              '        return 1\n')

    def tree(self, other_module=None):
        """A LibvirtDriver class from a fake tree ``<tmp>/nova/...``."""
        root = self.useFixture(fixtures.TempDir()).path + '/nova'
        os.makedirs(root + '/virt/libvirt')
        os.makedirs(root + '/compute')
        name = 'fake_libvirt_driver_%d' % next(_copies)
        path = root + '/virt/libvirt/driver.py'
        with open(path, 'w', encoding='utf-8') as stream:
            stream.write(self.DRIVER % 'other')
        if other_module:
            with open(root + '/compute/' + other_module, 'w',
                      encoding='utf-8') as stream:
                stream.write('x = hardware.get_cpu_dedicated_set()\n')
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        self.addCleanup(sys.modules.pop, name, None)
        spec.loader.exec_module(module)
        return module.LibvirtDriver

    def test_the_installed_driver_is_the_only_reader(self):
        novacompat.shapes.ReadsCpuSets().check(
            importlib.import_module(
                'nova.virt.libvirt.driver').LibvirtDriver)

    def test_a_driver_reading_in_its_methods_passes(self):
        cls = self.tree()
        novacompat.shapes.ReadsCpuSets().check(cls)
        self.assertEqual(['reads'], novacompat.shapes.cpu_set_readers(cls))

    def test_another_module_calling_a_reader_is_refused(self):
        cls = self.tree(other_module='claims.py')
        with self.assertRaises(novacompat.Broken) as caught:
            novacompat.shapes.ReadsCpuSets().check(cls)
        self.assertIn('nova/compute/claims.py', str(caught.exception))

    def test_a_driver_without_reading_methods_is_refused(self):
        cls = self.tree()
        del cls.reads
        with self.assertRaises(novacompat.Broken) as caught:
            novacompat.shapes.ReadsCpuSets().check(cls)
        self.assertIn('has no method that reads', str(caught.exception))


class TestChangedNovaUnderTest(CompatTestBase):
    """On a changed Nova under test (a diff run with --nova-patch), a
    broken assumption of an optional feature makes only that feature
    unavailable; one faultdriver cannot run without still refuses."""

    def changed(self):
        from faultdriver import novaundertest
        self.useFixture(fixtures.EnvironmentVariable(
            novaundertest.ENV, json.dumps({'root': None, 'record': {
                'base': 'nova', 'tree': None,
                'patches': [{'file': 'fix.diff', 'sha256': '0' * 64}]}})))

    def test_a_changed_periodic_loop_disables_the_context_step(self):
        overrides = {'nova.compute.resource_tracker': altered_copy(
            self, resource_tracker,
            'migration.instance_uuid in instance_by_uuid and',
            "migration.status != 'error' and\n"
            '                migration.instance_uuid in instance_by_uuid and')}
        # Stock Nova: refused (test_status_filter_in_the_periodic_loop...).
        self.changed()
        novacompat.verify(novacompat.GROUPS, overrides=overrides)
        broken = [r for r in novacompat.check(overrides=overrides)
                  if not r.ok]
        self.assertEqual({declared.CONTEXT_STEP},
                         {r.assumption.optional for r in broken})

    def test_what_faultdriver_cannot_run_without_still_refuses(self):
        overrides = {'nova.compute.resource_tracker': altered_copy(
            self, resource_tracker, 'def drop_move_claim_at_source(',
            'def drop_move_claim_on_source(')}
        self.changed()
        with self.assertRaises(exception.ConfigError):
            novacompat.verify(novacompat.GROUPS, overrides=overrides)
