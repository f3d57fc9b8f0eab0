"""Putting the fault-aware tracker on a compute service.

``FaultDriver.init_host`` runs before the compute manager's first periodic
and before its RPC servers start; there the manager's existing
``ResourceTracker`` has its class switched to :class:`FaultTracker`, a
subclass generated for the tracker points.  Switching the class keeps
every attribute Nova and its claims hold (``compute_nodes``,
``pci_tracker``, ``provider_tree``, ``tracked_*``); per service, so one
host can run stock and another patched.

The manager is found through ``virtapi._compute`` and the tracker as
``manager.rt`` (both checked by :mod:`faultdriver.novacompat`).  A driver
used outside a compute manager has neither: that is fine while nothing
needs the tracker, and a ConfigError when a fix or a ``tracker.*`` rule
is configured, since they would silently do nothing.  The same install
marks the manager's resource periodic for the hits' ``in_periodic``
(:mod:`faultdriver.tracker.periodic_mark`); every hook it puts on Nova
is kept with its undo on the tracker and taken off at the driver's close.
"""

import functools
import inspect
import logging
import typing

from nova.compute import resource_tracker
from oslo_concurrency import lockutils

from faultdriver import exception
from faultdriver import hitcontext
from faultdriver import novacompat
from faultdriver.novacompat import declared
from faultdriver import points as points_module
from faultdriver import rules
from faultdriver import tracker
from faultdriver.tracker import periodic_mark
from faultdriver.tracker import periodic_scope

LOG = logging.getLogger(__name__)
# Nova's class (Nova has no stubs: Any, by name, so mypy takes it as a base).
BASE: typing.Any = resource_tracker.ResourceTracker


def _tracker_lock():
    return lockutils.lock(resource_tracker.COMPUTE_RESOURCE_SEMAPHORE,
                          'nova-', fair=True)


def _hooked(point_name, method_name):
    """``method_name`` of ResourceTracker with ``point_name`` around it.

    Nova's method is looked up (and bound, as ``rt.method`` would be) on
    ResourceTracker at each call, not captured once here: a test that
    patches ``ResourceTracker.<method>`` (Nova's own reproducers do, e.g.
    bugs 1879878 and 1894095) must reach hooked trackers too.
    """
    signature = inspect.signature(getattr(BASE, method_name))
    facts = tracker.points()[point_name]

    @functools.wraps(getattr(BASE, method_name))
    def method(self, *args, **kwargs):
        base = getattr(BASE, method_name).__get__(self, type(self))
        engine = self._fault_engine
        if not engine.armed or point_name not in engine.armed:
            return base(*args, **kwargs)
        try:
            bound = signature.bind_partial(self, *args, **kwargs).arguments
        except TypeError:
            bound = {}
        ctx = hitcontext.describe(
            points_module.catalogue()[point_name], self.host,
            bound.get('instance'), bound.get('migration'))
        if facts['tracker_lock']:
            # Before the lock: the window between the manager's last step
            # and the tracker's (a periodic there runs unblocked).
            engine.hit(point_name, rules.UNLOCKED, ctx, target=self)
            with _tracker_lock():     # re-entrant: Nova's lock semantics hold
                return _around(engine, point_name, ctx, self, base, args,
                               kwargs)
        return _around(engine, point_name, ctx, self, base, args, kwargs)
    return method


def _around(engine, point_name, ctx, target, base, args, kwargs):
    engine.hit(point_name, 'before', ctx, target=target)
    result = base(*args, **kwargs)
    engine.hit(point_name, 'after', ctx, target=target)
    return result


class _PeriodicHooks(BASE):
    """The migration-context step of the periodic, as a point and a
    decision that candidate fixes can take."""

    def _update_available_resource(self, context, resources, startup=False):
        nodename = resources['hypervisor_hostname']
        with periodic_scope.scope(self, nodename,
                                  self._fault_decide_context):
            return super()._update_available_resource(
                context, resources, startup=startup)

    def _update_usage_from_instances(self, context, instances, nodename):
        periodic_scope.close()
        return super()._update_usage_from_instances(context, instances,
                                                    nodename)

    def _fault_decide_context(self, instance, migration):
        point = 'tracker.apply_migration_context'
        engine = self._fault_engine
        if engine.armed and point in engine.armed:
            ctx = hitcontext.describe(
                points_module.catalogue()[point], self.host, instance,
                migration)
            engine.hit(point, 'before', ctx, target=self)
        for patch in self._fault_patches:
            if not patch.should_apply_migration_context(self, instance,
                                                        migration):
                return False
        return True


@functools.lru_cache(maxsize=None)
def fault_tracker_class():
    """ResourceTracker with every tracker point hooked.

    Built on first use, after FaultDriver checked Nova's tracker
    (novacompat), so a renamed method is a ConfigError at start rather
    than an AttributeError at import.
    """
    return type('FaultTracker', (_PeriodicHooks if _context_step() else BASE,),
                {facts['method']: _hooked(name, facts['method'])
                 for name, facts in tracker.points().items()
                 if facts['method']})


def _context_step():
    """Whether the periodic's migration-context step can be hooked (a
    changed Nova under test may have changed it: then the point and the
    fixes that decide there are unavailable, the rest is hooked)."""
    return declared.CONTEXT_STEP not in novacompat.unavailable(
        novacompat.DRIVER_GROUPS)


def _needs_tracker(driver, patches):
    """What is configured on ``driver`` that needs its tracker hooked."""
    wanted = ['fix %s' % p.name for p in patches]
    wanted += ['rule [%s]' % r['rule'] for r in driver.engine.rules()
               if r['rule'].startswith(tracker.PREFIX)]
    return wanted


def _missing(driver, patches, symbol):
    wanted = _needs_tracker(driver, patches)
    if not wanted:
        LOG.info('faultdriver on %s runs outside a compute manager (no %s): '
                 'tracker points are not hooked', driver.engine.host, symbol)
        return None
    raise exception.ConfigError(
        'faultdriver on %s cannot hook the resource tracker: %s is missing '
        '(%s), so %s would do nothing' % (
            driver.engine.host, symbol, novacompat.nova_version_text(),
            ', '.join(wanted)))


def install(driver, patches):
    """Switch the tracker of ``driver``'s compute manager to FaultTracker.

    Returns the tracker, or None when the driver runs outside a compute
    manager and nothing configured needs the tracker; ConfigError when
    something does.
    """
    manager = getattr(driver.virtapi, '_compute', None)
    if manager is None:
        return _missing(driver, patches,
                        'nova.compute.manager.ComputeVirtAPI._compute')
    rt = getattr(manager, 'rt', None)
    if rt is None:
        return _missing(driver, patches,
                        'nova.compute.manager.ComputeManager.rt')
    if not isinstance(rt, BASE):
        raise exception.ConfigError(
            'faultdriver: the tracker of %s is a %s, not a nova '
            'ResourceTracker' % (driver.engine.host, type(rt).__name__))
    rt._fault_engine = driver.engine
    rt._fault_patches = list(patches)
    # Every hook this service puts on Nova, each with its undo at once.
    rt._fault_undo = [periodic_mark.install(manager)]
    if _context_step():
        rt._fault_undo.append(periodic_scope.install(rt))
    if type(rt) is BASE:
        rt.__class__ = fault_tracker_class()
    LOG.info('faultdriver: tracker of %s hooked; candidate tracker '
             'fixes: %s', driver.engine.host,
             ', '.join(p.name for p in patches) or 'none')
    return rt


def uninstall(rt):
    """Give the tracker back its stock class and take this service's hooks
    off Nova (the driver's close)."""
    if rt is not None and isinstance(rt, fault_tracker_class()):
        rt.__class__ = BASE
        for undo in reversed(rt.__dict__.pop('_fault_undo', ())):
            undo()
