"""FaultDriver: a ComputeDriver that wraps another and injects faults.

Every public method of ``ComputeDriver`` is generated here from the class
itself (:mod:`faultdriver.surface`), so none of the base class's default
bodies (many are ``pass``) can shadow the wrapped driver, and a method a
later Nova adds is wrapped too.  A call at a point without rules costs a
set lookup; at an armed point the engine sees it before and after the
real call.  ``capabilities`` is the wrapped driver's live dict (libvirt
mutates it in ``init_host``); any other attribute reads through.
"""

import functools
import inspect
import logging
import typing

from nova import conf as nova_conf
from oslo_config import cfg

from faultdriver import actions
from faultdriver.actions import periodic as periodic_action
from faultdriver import conf
from faultdriver import confcheck
from faultdriver.control import ops as control_ops
from faultdriver.control import server as control_server
from faultdriver import engine as engine_module
from faultdriver import exception
from faultdriver import hitcontext
from faultdriver import hostfacts
from faultdriver import inner
from faultdriver import journal as journal_module
from faultdriver import manager_tasks
from faultdriver import novacompat
from faultdriver import pinning
from faultdriver import points
from faultdriver import rpcmessage
from faultdriver import rpcstarted
from faultdriver import rules as rules_module
from faultdriver import servicecall
from faultdriver import start_rules
from faultdriver import surface
from faultdriver.tracker import install as tracker_install
from faultdriver.tracker import patches as tracker_patches
from faultdriver.tracker import timer as timer_module

LOG = logging.getLogger(__name__)
CONF = nova_conf.CONF


def _delegate(name, raw):
    """A method that passes ``name`` through the engine to the inner driver.

    ``raw`` is the class attribute on ComputeDriver; its signature and
    docstring are kept so introspection shows the base contract.
    """
    func = raw.__func__ if isinstance(raw, (classmethod, staticmethod)) \
        else raw

    def method(self, *args, **kwargs):
        # The hot path: one attribute lookup, one truth test.
        inner_driver, armed = self._fault_fast
        if armed and name in armed:
            return self._call_armed(name, args, kwargs)
        return getattr(inner_driver, name)(*args, **kwargs)

    method.__name__ = name
    method.__qualname__ = 'FaultDriver.' + name
    method.__doc__ = func.__doc__
    method.__signature__ = inspect.signature(func)
    method.__wrapped_base__ = raw
    return method


def _extends(name):
    """Mark a FaultDriver method that adds to the delegate of ``name``:
    same arguments passed through, same signature shown."""
    def decorate(method):
        base = getattr(surface.BASE, name)
        method.__doc__ = base.__doc__
        method.__signature__ = inspect.signature(base)
        return method
    return decorate


def generated_class(base=surface.BASE):
    """``base`` with every public method turned into a delegate."""
    return type('Delegating' + base.__name__, (base,), {
        name: _delegate(name, raw)
        for name, raw in surface.public_methods(base).items()})


def _refuse_unavailable_points(rules):
    """A rule at a point this (changed) Nova under test made unavailable
    would never fire: refused at start, naming both."""
    gone = novacompat.unavailable(novacompat.DRIVER_GROUPS)
    for rule in rules:
        if rule.point in gone:
            raise exception.ConfigError(
                'rule [%s]: point %s is unavailable on this Nova under test '
                '(%s)' % (rule, rule.point, gone[rule.point]))
        why = servicecall.unreachable(rule.point)
        if why is not None:
            raise exception.ConfigError('rule [%s] would never fire: %s'
                                        % (rule, why))


#: ComputeDriver with every public method a delegate (built from Nova's
#: class, which has no stubs: Any, by name, so mypy takes it as a base).
_Delegating: typing.Any = generated_class()


class FaultDriver(_Delegating):
    """The compute driver to set as ``compute_driver``."""

    #: Marks the wrapper so it refuses to wrap itself.
    wraps_inner_driver = True

    def __init__(self, virtapi: typing.Any,
                 crash_handler: typing.Optional[
                     typing.Callable[..., typing.Any]] = None,
                 shutdown_handler: typing.Optional[
                     typing.Callable[..., typing.Any]] = None,
                 peer_periodic: typing.Optional[
                     typing.Callable[[str, float], None]] = None) -> None:
        """``crash_handler`` / ``shutdown_handler``: what the ``crash`` /
        ``shutdown`` actions call instead of ending or signalling the
        process (the embedded harness passes its own, since every host
        shares its process); Nova's loader passes none, so a real
        nova-compute dies or gets SIGTERM.  ``peer_periodic``: how
        ``periodic(host=...)`` runs another host's periodic (the embedded
        harness runs that host's manager); by default through the other
        host's control socket (``peer_control_sockets``)."""
        super().__init__(virtapi)
        conf.register_opts(CONF)
        # Every start, fix or no fix: a tracker point, a fix or the
        # delegation that silently misses Nova is worse than no start.
        novacompat.verify(novacompat.DRIVER_GROUPS)
        group = CONF.fault_injection
        try:
            rules = list(group.rules or ())
        except (ValueError, cfg.Error) as exc:
            raise exception.ConfigError(
                'invalid [fault_injection] rules: %s'
                % confcheck.oslo_message(exc)) from exc
        # The checks `faultdriver validate` makes: every option's value,
        # journal and control socket paths.
        confcheck.check(group, host=CONF.host)
        _refuse_unavailable_points(rules)
        if peer_periodic is None:
            peer_periodic = functools.partial(
                periodic_action.by_control_socket,
                dict(group.peer_control_sockets or {}))
        patch_names = list(group.tracker_patches or ())
        enabled = group.enabled
        #: The one-shot start rules this start took (None: none).
        self._fault_start = _take_start_rules(group, patch_names)
        if self._fault_start is not None:
            rules += self._fault_start.rules
            patch_names += [name for name in
                            self._fault_start.tracker_patches
                            if name not in patch_names]
            if self._fault_start.enabled is not None:
                enabled = self._fault_start.enabled
        self._fault_patches = tracker_patches.load(patch_names)
        self._fault_tracker = None
        inner_class = inner.load_class(group.inner_driver)
        self._inner = inner_class(virtapi)
        self._fault_host = CONF.host
        self._fault_catalogue = points.catalogue()
        self._fault_engine = engine_module.Engine(
            self._fault_host, actions.load_all(), rules, enabled=enabled,
            seed=group.seed, journal=journal_module.Journal(
                group.journal_path), crash_handler=crash_handler,
            shutdown_handler=shutdown_handler, peer_periodic=peer_periodic)
        self._fault_fast = (self._inner, self._fault_engine.armed)
        # Service-call points fire beneath Nova's clients, process-wide.
        servicecall.install(self._fault_engine)
        self._fault_control_path = group.control_socket
        self._fault_control = None
        self._fault_timer = None
        self._fault_rpc = None
        self._fault_messages = None
        self._report(rules, enabled, inner_class)

    def _report(self, rules, enabled, inner_class):
        LOG.info('faultdriver on %s wraps %s.%s with %d rule(s); injection '
                 'is %s; journal: %s', self._fault_host,
                 inner_class.__module__, inner_class.__name__, len(rules),
                 'ENABLED' if enabled else 'disabled',
                 self._fault_engine.journal.path or 'memory only')
        version = novacompat.nova_version()
        if version not in novacompat.CHECKED_AGAINST:
            LOG.warning('faultdriver: Nova %s is not one faultdriver was '
                        'tested with (%s); its assumptions about Nova '
                        'checked out', version,
                        ', '.join(novacompat.CHECKED_AGAINST))
        if rules and not enabled:
            LOG.warning('faultdriver: %d rule(s) configured but '
                        '[fault_injection] enabled is false; none will fire',
                        len(rules))
        for rule in rules:
            point = self._fault_catalogue[rule.point]
            stalls = {'hang', 'delay'} & {t.action for t in rule.terms}
            if point.tracker_lock and stalls and \
                    rule.phase != rules_module.UNLOCKED:
                LOG.warning('faultdriver rule [%s] will %s while the resource'
                            ' tracker lock is held: every claim and the '
                            'periodic on %s stall meanwhile', rule,
                            '/'.join(sorted(stalls)), self._fault_host)

    @_extends('init_host')
    def init_host(self, *args, **kwargs):
        # Before the manager's first periodic and before RPC starts: the
        # place to put the fault-aware tracker on this service.
        self._fault_tracker = tracker_install.install(
            self, self._fault_patches)
        if self._fault_tracker is not None:
            # On the manager FaultDriver runs under, as the tracker hooks:
            # ``ctl timer`` and status's ``rpc_started``.
            manager = periodic_action.manager_of(self)
            self._fault_timer = timer_module.TimerSwitch(manager)
            self._fault_rpc = rpcstarted.RpcStarted(manager)
            # Service.start builds the RPC servers after init_host.
            self._fault_messages = rpcmessage.RpcMessages(
                manager, self._fault_engine)
        # Control first, so a rule on init_host itself can be controlled.
        self._start_control()
        try:
            return super().init_host(*args, **kwargs)
        except BaseException:
            self._stop_control()
            raise

    @_extends('cleanup_host')
    def cleanup_host(self, *args, **kwargs):
        try:
            return super().cleanup_host(*args, **kwargs)
        finally:
            self.close()

    def close(self) -> None:
        """Stop the control socket, release held threads, stop firing,
        unhook the tracker."""
        self._stop_control()
        self._fault_engine.close()
        servicecall.uninstall(self._fault_engine)
        # The timer's list first: the tracker's hooks put in the list it
        # gives back.
        for hook in (self._fault_timer, self._fault_rpc,
                     self._fault_messages):
            if hook is not None:
                hook.close()
        self._fault_timer = self._fault_rpc = self._fault_messages = None
        tracker_install.uninstall(self._fault_tracker)
        self._fault_tracker = None

    def _start_control(self):
        if self._fault_control_path and self._fault_control is None:
            managed = self._fault_tracker is not None
            self._fault_control = control_server.ControlServer(
                self._fault_control_path, self._fault_engine,
                self._fault_catalogue, self._control_rule,
                compute=control_ops.ComputeHooks(
                    # ``ctl periodic``: the process tier's ``periodic``
                    # step runs exactly one, where a timer's comes
                    # whenever.
                    periodic=(functools.partial(periodic_action.run_now,
                                                self) if managed else None),
                    # ``ctl tasks``: the tasks-ended invariant on
                    # processes.
                    tasks=(functools.partial(_tasks_of, self)
                           if managed else None),
                    # ``ctl pinning``: Nova's objects, wherever it runs.
                    pinning=pinning.read,
                    timer=self._switch_timer if managed else None,
                    facts=self._facts)
            ).start()

    def _switch_timer(self, on):
        """``ctl timer``: ``{on, interval}`` after switching ``on``."""
        if on is not None:
            self._fault_timer.switch(on)
        return {'on': self._fault_timer.on,
                'interval': self._fault_timer.interval}

    def _facts(self):
        """What ``ctl status`` adds about this nova-compute (its
        ``host`` is CONF.host as this driver read it at start)."""
        tracker = self._fault_tracker
        return {
            # A copy first (one C call): the periodic may add a node.
            'nodenames': (sorted(dict(tracker.compute_nodes))
                          if tracker is not None else None),
            'nova_version': novacompat.nova_version(),
            'faultdriver_version': hostfacts.faultdriver_version(),
            # The driver it wraps, as a class path: a runner tells
            # libvirt (whose guests it can ask with virsh) from a fake.
            'inner_driver': '%s.%s' % (type(self._inner).__module__,
                                       type(self._inner).__qualname__),
            'settings': hostfacts.settings(),
            'tracker_fixes': [patch.name for patch in self._fault_patches],
            # None: outside a compute manager, nothing to know.
            'rpc_started': (self._fault_rpc.started
                            if self._fault_rpc is not None else None),
            'timer': (self._fault_timer.on
                      if self._fault_timer is not None else None),
            'start_rules': (self._fault_start.describe()
                            if self._fault_start is not None else None)}

    def _control_rule(self, text):
        """A rule from ``faultdriver ctl add``, parsed as nova.conf's;
        a tracker point is refused where no tracker is hooked (the driver
        runs outside a compute manager): it would never fire."""
        rule = conf.RuleType(self._fault_catalogue, actions.load_all())(text)
        why = servicecall.unreachable(rule.point)
        if why is not None:
            raise ValueError('rule %r would never fire: %s' % (text, why))
        if rule.point.startswith(rpcmessage.PREFIX) and \
                self._fault_messages is None:
            raise ValueError(
                'rule %r: %s is an RPC point and this service has no RPC '
                'server hooked (FaultDriver runs outside a compute '
                'manager), so it would never fire' % (text, rule.point))
        if rule.point.startswith('tracker.') and self._fault_tracker is None:
            raise ValueError(
                'rule %r: %s is a resource-tracker point and this service '
                'has no resource tracker hooked (FaultDriver runs outside a '
                'compute manager), so it would never fire' % (text,
                                                              rule.point))
        return rule

    def _stop_control(self):
        if self._fault_control is not None:
            self._fault_control.stop()
            self._fault_control = None

    @property
    def control_socket(self):
        """Path of this host's control socket while it serves, or None."""
        control = self._fault_control
        return control.path if control is not None else None

    @property
    def engine(self) -> engine_module.Engine:
        """The fault engine of this host (rules, counters, barriers)."""
        return self._fault_engine

    @property
    def inner(self):
        """The wrapped driver."""
        return self._inner

    @property
    def capabilities(self):
        return self._inner.capabilities

    @capabilities.setter
    def capabilities(self, value):
        self._inner.capabilities = value

    @property
    def rebalances_nodes(self):
        return self._inner.rebalances_nodes

    @rebalances_nodes.setter
    def rebalances_nodes(self, value):
        self._inner.rebalances_nodes = value

    def _call_armed(self, name, args, kwargs):
        ctx = hitcontext.build(self._fault_catalogue[name], self._fault_host,
                               args, kwargs)
        self._fault_engine.hit(name, 'before', ctx, target=self)
        result = getattr(self._inner, name)(*args, **kwargs)
        self._fault_engine.hit(name, 'after', ctx, target=self)
        return result

    # Attributes that are not the wrapper's own live on the wrapped driver,
    # so code that reads, sets or patches e.g. libvirt's ``_host`` through
    # ``compute.driver`` reaches the object the driver itself uses.

    def _is_own(self, name):
        return (name in _OWN_ATTRIBUTES or name.startswith('_fault_')
                or '_inner' not in self.__dict__)

    def __getattr__(self, name):
        inner_driver = self.__dict__.get('_inner')
        if inner_driver is None or name.startswith('__'):
            raise AttributeError(name)
        return getattr(inner_driver, name)

    def __setattr__(self, name, value):
        if name == '_inner' and '_fault_engine' in self.__dict__:
            # Keep the hot path's copy in step with the wrapped driver.
            object.__setattr__(self, '_fault_fast',
                               (value, self._fault_engine.armed))
        if self._is_own(name) or name in vars(type(self)):
            object.__setattr__(self, name, value)
        else:
            setattr(self._inner, name, value)

    def __delattr__(self, name):
        if self._is_own(name) or name in self.__dict__:
            object.__delattr__(self, name)
        else:
            delattr(self._inner, name)


def _take_start_rules(group, patch_names):
    """The one-shot start rules of ``[fault_injection] start_rules_path``,
    checked as nova.conf's rules and fixes are, then consumed; None if
    there are none to take."""
    if not group.start_rules_path:
        return None

    def check(found):
        _refuse_unavailable_points(found.rules)
        confcheck.refuse_unreachable_peers(
            found.rules, group.peer_control_sockets or {}, CONF.host)
        tracker_patches.load([name for name in found.tracker_patches
                              if name not in patch_names])
    return start_rules.read(
        group.start_rules_path,
        conf.RuleType(points.catalogue(), actions.load_all()), CONF.host,
        check)


def _tasks_of(driver):
    """What ``driver``'s compute manager tracks for a graceful stop."""
    return manager_tasks.in_progress(periodic_action.manager_of(driver))


_OWN_ATTRIBUTES = frozenset(('_inner', 'virtapi', '_compute_event_callback'))
