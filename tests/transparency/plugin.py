"""Run Nova's own functional tests with every compute driver wrapped.

A pytest plugin.  Nova's tests are run unchanged; the only differences are

* ``nova.virt.driver.load_compute_driver`` is wrapped: whatever driver a
  compute service asks for (its ``compute_driver`` argument or
  ``CONF.compute_driver``) becomes ``[fault_injection] inner_driver`` and
  the ORIGINAL loader is called with ``faultdriver.FaultDriver``, so the
  installed ``nova.virt.faultdriver`` shim and Nova's loader path are the
  ones exercised.  No rules are configured.
* ``[wsgi] api_paste_config`` defaults to ``<sys.prefix>/etc/nova/
  api-paste.ini``, where the nova wheel installs it (Nova's ConfFixture
  points at the source-tree location).
* In threading mode the two tests Nova itself excludes
  (``threading_functional_test_excludes.txt`` in Nova's tree) are
  deselected.

Each test is checked afterwards: every driver loaded during it must be a
FaultDriver wrapping exactly the class the test asked for, with nothing
armed, every ComputeManager created during it must hold a FaultDriver, and
the Nova attributes FaultDriver hooks process-wide while a compute runs
must be Nova's own again.
A test that breaks either is failed, and the session fails if no
FaultDriver was created at all.

Use: ``tests/transparency/run.sh`` (see there), or from the repository
root ``python -m pytest -p tests.transparency.plugin --pyargs MODULE``.
"""

# Nova's functional package applies (or not) eventlet patching according to
# OS_NOVA_DISABLE_EVENTLET_PATCHING; it must be imported before anything
# else that imports eventlet.
import nova.tests.functional  # noqa: F401  isort:skip

import collections
import functools
import os
import sys

from oslo_utils import importutils
import pytest

from nova.compute import manager as compute_manager
from nova.compute import resource_tracker
from nova import conf as nova_conf
from nova import objects
from nova.tests.fixtures import conf as conf_fixture
from nova import utils as nova_utils
from nova.virt import driver as virt_driver

import faultdriver
from faultdriver import conf as fd_conf
from faultdriver import driver as fd_driver
from faultdriver import exception as fd_exception
from faultdriver import novacompat
from faultdriver.novacompat import patching

#: pytest's unittest runner and Nova's TestCase._clear_attrs disagree;
#: this keeps Nova's tests runnable under pytest at all (stock or wrapped).
pytest_plugins = ['tests.pytest_nova_compat']

CONF = nova_conf.CONF
SHIM = 'faultdriver.FaultDriver'
API_PASTE = os.path.join(sys.prefix, 'etc', 'nova', 'api-paste.ini')

#: Nova's own threading-mode exclusions (they hang worker cleanup there).
THREADING_EXCLUDES = (
    'compute.test_init_host.ComputeManagerInitHostTestCase.'
    'test_migrate_disk_and_power_off_crash_finish_revert_migration',
    'regressions.test_bug_1825034.FillVirtualInterfaceListMigration.'
    'test_fill_vifs_migration',
)


#: Nova attributes FaultDriver may hook while a compute service runs; each
#: must be Nova's own again once the test's services are gone.
def _watched():
    return {
        'Instance.apply_migration_context':
            objects.Instance.__dict__['apply_migration_context'],
        'MigrationList.get_in_progress_and_error':
            objects.MigrationList.__dict__['get_in_progress_and_error'],
        'ResourceTracker': resource_tracker.ResourceTracker,
    }


_pristine = {}


def _unwrap(attribute):
    # A restored classmethod is a new wrapper around the same function.
    return getattr(attribute, '__func__', attribute)


class _Record:
    """What one test (or the whole session) loaded and started."""

    def __init__(self):
        self.loads = []      # (requested driver name, driver object)
        self.managers = []   # ComputeManager instances

    def problems(self):
        found = []
        for requested, drv in self.loads:
            if not isinstance(drv, fd_driver.FaultDriver):
                found.append('compute driver for %r is %s, not a FaultDriver'
                             % (requested, type(drv).__name__))
                continue
            if requested == SHIM:
                continue
            expected = importutils.import_class('nova.virt.' + requested)
            if type(drv.inner) is not expected:
                found.append('FaultDriver wraps %s.%s, the test asked for %r'
                             % (type(drv.inner).__module__,
                                type(drv.inner).__name__, requested))
            if drv.engine.armed:
                found.append('FaultDriver for %r has armed points %s'
                             % (requested, sorted(drv.engine.armed)))
            fixes = [p.name for p in drv._fault_patches]
            if fixes != _patches:
                found.append('FaultDriver for %r runs tracker fixes %s, '
                             'not %s' % (requested, fixes, _patches))
        now = _watched()
        for name, original in _pristine.items():
            if _unwrap(now[name]) is not _unwrap(original):
                found.append('%s is still %r after the test: a process-wide '
                             'hook leaked' % (name, now[name]))
        for mgr in self.managers:
            drv = getattr(mgr, 'driver', None)
            if not isinstance(drv, fd_driver.FaultDriver):
                found.append('compute manager on %s runs %s, not a '
                             'FaultDriver' % (getattr(mgr, 'host', '?'),
                                              type(drv).__name__))
        return found


_current = _Record()
_totals = collections.Counter()     # inner class name -> drivers wrapped
_stats = {'tests_with_compute': 0, 'managers': 0, 'failed_checks': 0}
_undo = []


def _requested_name(compute_driver):
    return compute_driver or CONF.compute_driver


def _wrapping_loader(original):
    @functools.wraps(original)
    def load_compute_driver(virtapi, compute_driver=None):
        requested = _requested_name(compute_driver)
        if requested == SHIM:
            drv = original(virtapi, compute_driver)
        else:
            CONF.set_override('inner_driver', requested,
                              group='fault_injection')
            CONF.set_override('tracker_patches', _patches,
                              group='fault_injection')
            try:
                drv = original(virtapi, SHIM)
            finally:
                CONF.clear_override('inner_driver', group='fault_injection')
                CONF.clear_override('tracker_patches',
                                    group='fault_injection')
        _current.loads.append((requested, drv))
        return drv
    load_compute_driver.transparency_original = original
    return load_compute_driver


def _recording_manager_init(original):
    @functools.wraps(original)
    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        _current.managers.append(self)
    return __init__


def _conf_fixture_setup(original):
    @functools.wraps(original)
    def setUp(self):
        original(self)
        # After Nova's default (the source-tree path), before any service.
        self.conf.set_default('api_paste_config', API_PASTE, group='wsgi')
    return setUp


def pytest_addoption(parser):
    parser.addoption(
        '--transparency-stock', action='store_true',
        help='baseline: do not wrap, run each test on the driver it asked '
             'for (api-paste.ini and the threading excludes still apply)')
    parser.addoption(
        '--transparency-patches', default='',
        help='comma-separated candidate tracker fixes to enable on every '
             'compute (no regressions from a fix: Nova\'s tests still pass)')


#: Candidate tracker fixes enabled on every wrapped compute.
_patches = []


def _stock(config):
    return config.getoption('transparency_stock')


def pytest_configure(config):
    fd_conf.register_opts(CONF)
    _patches[:] = [name for name in
                   config.getoption('transparency_patches').split(',')
                   if name]
    if not os.path.exists(API_PASTE):
        raise pytest.UsageError('api-paste.ini not found at %s' % API_PASTE)
    objects.register_all()      # as nova.test does; idempotent
    _pristine.update(_watched())
    patches = [('nova.tests.fixtures.conf.ConfFixture.setUp',
                conf_fixture.ConfFixture.setUp, _conf_fixture_setup)]
    if not _stock(config):
        patches += [
            ('nova.virt.driver.load_compute_driver',
             virt_driver.load_compute_driver, _wrapping_loader),
            ('nova.compute.manager.ComputeManager.__init__',
             compute_manager.ComputeManager.__init__,
             _recording_manager_init)]
    try:
        novacompat.verify(novacompat.HARNESS_GROUPS)
    except fd_exception.ConfigError as exc:
        raise pytest.UsageError(str(exc))
    for symbol, original, wrap in patches:
        _undo.append(patching.replace(symbol, wrap(original)))


def pytest_unconfigure(config):
    while _undo:
        _undo.pop()()


def pytest_report_header(config):
    if _stock(config):
        return ['faultdriver transparency: STOCK baseline, nothing wrapped']
    return ['faultdriver transparency: compute_driver=%s wrapping each '
            "test's driver, no rules, tracker fixes: %s; faultdriver from "
            '%s; concurrency: %s'
            % (SHIM, ','.join(_patches) or 'none (stock)',
               os.path.dirname(faultdriver.__file__),
               'threading' if nova_utils.concurrency_mode_threading()
               else 'eventlet')]


def _dotted(item):
    cls = getattr(item, 'cls', None)
    parts = [item.module.__name__] if getattr(item, 'module', None) else []
    if cls is not None:
        parts.append(cls.__name__)
    parts.append(item.name)
    return '.'.join(parts)


def pytest_collection_modifyitems(session, config, items):
    if not nova_utils.concurrency_mode_threading():
        return
    prefix = 'nova.tests.functional.'
    excluded = {prefix + name for name in THREADING_EXCLUDES}
    keep, drop = [], []
    for item in items:
        (drop if _dotted(item) in excluded else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    global _current
    _current = _Record()
    try:
        return (yield)
    finally:
        record, _current = _current, _Record()
        problems = record.problems()
        if record.loads or record.managers:
            _stats['tests_with_compute'] += 1
        _stats['managers'] += len(record.managers)
        for requested, drv in record.loads:
            inner = getattr(drv, 'inner', drv)
            _totals[type(inner).__name__] += 1
        if problems:
            _stats['failed_checks'] += 1
            raise AssertionError('faultdriver transparency check failed:\n  '
                                 + '\n  '.join(problems))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if _stock(config):
        return
    wrapped = ', '.join('%s x%d' % kv for kv in sorted(_totals.items()))
    terminalreporter.write_sep('-', 'faultdriver transparency')
    terminalreporter.write_line(
        '%d test(s) started compute services: %d compute manager(s), '
        'FaultDriver wrapped: %s; tests failing the wrap check: %d'
        % (_stats['tests_with_compute'], _stats['managers'],
           wrapped or 'NOTHING', _stats['failed_checks']))


def pytest_sessionfinish(session, exitstatus):
    if _stock(session.config):
        return
    if session.testscollected and not sum(_totals.values()) \
            and not session.config.option.collectonly:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        sys.stderr.write('faultdriver transparency: no FaultDriver was '
                         'created; the wrapping did not happen\n')
