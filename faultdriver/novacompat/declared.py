"""The declarations: what faultdriver assumes about Nova, and why.

One entry per assumption: the dotted symbol, how it is checked (a shape
from :mod:`faultdriver.novacompat.shapes`), the faultdriver feature that
needs it, and when it is checked (its group).  A new reach into Nova's
internals gets its line here; :func:`faultdriver.novacompat.patching.patch`
refuses symbols that have none.

Groups: ``driver`` (every FaultDriver start), ``fake_numa`` (the
``fake_numa`` inner driver), ``harness`` (the in-process test harness:
Nova's functional-test fixtures), ``scenario`` (log lines that scenario
expectations count).
"""

import types

from faultdriver import novacompat
from faultdriver.novacompat import shapes as s
from faultdriver.novacompat import texts
from faultdriver import points

A = novacompat.Assumption

RT = 'nova.compute.resource_tracker'
TRACKER = RT + '.ResourceTracker'
PERIODIC = TRACKER + '._update_available_resource'
MANAGER = 'nova.compute.manager.ComputeManager'
ENDPOINT_WRAPPER = 'nova.service._TrackingEndpointWrapper'
FAKE_RPC = 'oslo_messaging._drivers.impl_fake'
FAKELIBVIRT = 'nova.tests.fixtures.libvirt'
TRACKER_LOCK = 'utils.synchronized(COMPUTE_RESOURCE_SEMAPHORE, fair=True)'
COMPUTE_EVENT = "wrap_instance_event(prefix='compute')"

PERIODIC_ERROR = texts.PERIODIC_ERROR
APPLIED_CONTEXT = texts.APPLIED_CONTEXT

#: The three calls of the periodic that faultdriver.tracker.periodic_scope
#: hooks between, in Nova's order.
PERIODIC_CALLS = ('objects.MigrationList.get_in_progress_and_error(',
                  'instance.apply_migration_context()',
                  'self._update_usage_from_instances(')


def periodic_loop_condition(migration, instance_by_uuid, self, nodename):
    """Nova's condition for applying an incoming migration's context in
    the periodic, written as Nova writes it (``self``: the tracker): the
    LoopCondition assumption below compares Nova's ``if`` with this return
    expression as syntax trees, and periodic_scope.migration_for pairs
    contexts with migrations by calling it."""
    return (
        migration.instance_uuid in instance_by_uuid and
        migration.dest_compute == self.host and
        migration.dest_node == nodename
    )


_HOOKS = 'tracker points and candidate fixes (faultdriver.tracker)'
_MARK = "a hit's in_periodic (faultdriver.tracker.periodic_mark)"
_SCOPE = ('tracker.apply_migration_context and the stale_migration_context '
          'fix (faultdriver.tracker.periodic_scope)')
#: The feature those assumptions are for: on a changed Nova under test
#: (a fix of the periodic may change that very code) it is unavailable,
#: loudly, and the rest of faultdriver runs.
CONTEXT_STEP = 'tracker.apply_migration_context'
_CRASH = 'faithful in-process crash (faultdriver.harness.crash)'
_STOP = ('graceful stop in the embedded Nova (faultdriver.harness.shutdown): '
         "the stopping host's executor drain")
_SHAPES = 'per-host CPU topology (faultdriver.harness.topology)'
_JOBS = ('live-migration jobs fakelibvirt reports once ended '
         '(faultdriver.harness.migrationjob)')
_WAKE = ('fake-RPC listeners woken by deliveries in the embedded Nova '
         '(faultdriver.harness.rpcwake)')


def _tracker_points():
    """One assumption per tracker point that wraps a Nova method."""
    found = []
    for name, facts in points.facts()['tracker'].items():
        if not facts.get('method'):
            continue
        shape = [s.Params('self', 'context'),
                 s.Named(*facts.get('binds', ()))]
        if facts.get('tracker_lock'):
            shape.append(s.Decorated(TRACKER_LOCK))
        found.append(A(TRACKER + '.' + facts['method'], s.All(*shape),
                       'tracker point tracker.%s' % name))
    return found


_SERVICE = ('service-call points fire at the HTTP request beneath Nova\'s '
            'client (faultdriver.servicecall)')
#: What each service's step calls beneath it, checked in its body.
_STEP_CALLS = {'network': (), 'volume': ('cinderclient(',),
               'placement': ()}


def _service_points():
    """One assumption per service-call point: Nova's class still defines
    the method the point is named after."""
    found = []
    for name, facts in points.facts().get('service', {}).items():
        owner, _, method = facts['method'].rpartition('.')
        found.append(A(owner, s.DefinesMethod(
            method, *_STEP_CALLS[name.partition('.')[0]]),
            'service-call point %s (faultdriver.servicecall)' % name))
    return found


_RPC = ('RPC points fire where this compute\'s RPC server hands a message '
        'to its manager (faultdriver.rpcmessage)')


def _rpc_points():
    """One assumption per RPC point: the compute manager still has the
    method the incoming message runs."""
    return [A(MANAGER + '.' + name, s.Exists(), 'RPC point rpc.%s '
              '(faultdriver.rpcmessage)' % name)
            for name in points.facts().get('rpc', {})]


def _raised():
    """Every exception points.yaml lets ``raise`` inject."""
    names = set(points.facts()['defaults']['raises'])
    for section in ('driver', 'tracker'):
        for facts in points.facts()[section].values():
            names.update(facts.get('raises', ()))
    return [A('nova.exception', s.HasNames(*sorted(names)),
              'raise(ExceptionName) at the points data/points.yaml lists')]


ASSUMPTIONS = [
    # -- the driver surface ------------------------------------------------
    A('nova.virt.driver.ComputeDriver', s.Exists(type),
      'generated delegation and the driver points (faultdriver.surface)'),
    A('nova.virt.driver.ComputeDriver.capabilities', s.Exists(dict),
      "capabilities read through to the wrapped driver's live dict"),
    A('nova.virt.driver.ComputeDriver.rebalances_nodes', s.Exists(bool),
      'rebalances_nodes read through to the wrapped driver'),
    A('nova.virt.driver.load_compute_driver',
      s.Params('virtapi', 'compute_driver'),
      'loading FaultDriver in tests (fixture, transparency plugin)',
      'harness'),
    # -- how FaultDriver finds its compute manager and tracker -------------
    A('nova.compute.manager.ComputeVirtAPI',
      s.BackReference('_compute', reportclient=None),
      'FaultDriver reaches its compute manager (virtapi._compute): ' +
      _HOOKS + ', the periodic action'),
    A(MANAGER + '.__init__', s.Assigns('self.rt'),
      'FaultDriver reaches the resource tracker (manager.rt): ' + _HOOKS),
    A('nova.manager.Manager.periodic_tasks',
      s.All(s.Params('self', 'context'),
            s.CallsInOrder('self._shutdown_in_progress.is_set()',
                           'self.run_periodic_tasks(')),
      'the periodic action skips a periodic once its host is shutting '
      "down (manager._shutdown_in_progress), as Nova's timer does"),
    A(MANAGER + '.update_available_resource',
      s.All(s.Params('self', 'context'),
            s.CallsInOrder('self._update_available_resource_for_node')),
      'the periodic action and the periodic scenario step; ' + _MARK +
      ': it marks its thread, and reaches the per-node update through the '
      "manager's attribute, which marks the per-node thread"),
    A(MANAGER + '._update_available_resource_for_node',
      s.Params('self', 'context', 'nodename'),
      _MARK + ": it marks the per-node update's thread"),
    A(MANAGER + '._periodic_tasks', s.PeriodicTaskList(),
      _MARK + ": the timer's periodic task, when the timer runs it "
      '(update_resources_interval >= 0), marks its thread'),
    A('oslo_service.periodic_task.PeriodicTasks.run_periodic_tasks',
      s.CallsInOrder('in self._periodic_tasks', 'task(self, context)'),
      _MARK + ": the timer runs the manager's own _periodic_tasks, so the "
      "manager's copy with the marking task is the one it runs"),
    A(TRACKER, s.Exists(type), _HOOKS),
    A(RT + '.COMPUTE_RESOURCE_SEMAPHORE', s.Exists(str),
      'tracker points fire under the tracker lock; the periodic action '
      'times its wait for it'),
    A('nova.utils', s.Assigns('synchronized',
                              "lockutils.synchronized_with_prefix('nova-')"),
      "faultdriver takes Nova's tracker lock by the same name ('nova-' "
      'prefix)'),
    A('oslo_concurrency.lockutils.internal_fair_lock', s.Params('name'),
      'the periodic action tells whether the tracker lock was held when it '
      'asked (waited_for_lock)'),
    A('fasteners.ReaderWriterLock.owner', s.Exists(property),
      'the periodic action tells whether the tracker lock was held when it '
      'asked (waited_for_lock)'),
    *[A('fasteners.ReaderWriterLock.' + name, s.Params('self'),
        _CRASH + ': a crashed thread lets go of the tracker lock the '
        'other hosts in the process share', 'harness')
      for name in ('is_writer', 'release_write_lock', 'acquire_write_lock')],
    *_tracker_points(),
    # -- the control ops a runner elsewhere reads (faultdriver ctl) ---------
    A('nova.manager.Manager.post_start_hook', s.Params('self'),
      "status's rpc_started: FaultDriver wraps the hook on its manager "
      '(faultdriver.rpcstarted)'),
    A(MANAGER + '.post_start_hook',
      s.Inherited('nova.manager', 'Manager.post_start_hook'),
      "status's rpc_started: the compute manager runs the base hook "
      '(faultdriver.rpcstarted)'),
    A('nova.service.Service.start',
      s.CallsInOrder('self.rpcserver.start()', 'self.rpcserver_alt.start()',
                     'self.manager.post_start_hook()',
                     'self.servicegroup_api.join('),
      "status's rpc_started: the hook runs once both RPC servers started, "
      'before the service joins its group (faultdriver.rpcstarted)'),
    A('oslo_service.periodic_task.PeriodicTasks.run_periodic_tasks',
      s.CallsInOrder('in self._periodic_tasks',
                     'self._periodic_spacing[task_name]'),
      "ctl timer: the timer reads the manager's task list at each tick, "
      'and its spacing per task (faultdriver.tracker.timer)'),
    A(TRACKER + '.__init__', s.Assigns('self.compute_nodes'),
      "status's nodenames: the tracker's compute nodes by nodename"),
    A('nova.objects.ComputeNode.get_by_host_and_nodename',
      s.Params('cls', 'context', 'host', 'nodename'),
      'ctl pinning of one node (faultdriver.pinning)'),
    A('nova.objects.ComputeNodeList.get_all_by_host',
      s.Params('cls', 'context', 'host', 'use_slave'),
      "ctl pinning of a host's nodes (faultdriver.pinning)"),
    A('nova.objects.ComputeNode',
      s.Fields('host', 'hypervisor_hostname', 'numa_topology'),
      'ctl pinning (faultdriver.pinning)'),
    A('nova.objects.NUMATopology.obj_from_db_obj', s.Params('cls', 'db_obj'),
      'ctl pinning: a node record\'s NUMA topology (faultdriver.pinning)'),
    A('nova.objects.NUMACell', s.Fields('pinned_cpus'),
      'ctl pinning: the pinned pCPUs of a node\'s cell '
      '(faultdriver.pinning)'),
    A('nova.exception.ComputeHostNotFound', s.Exists(type),
      'ctl pinning of a host without a compute node record'),
    *[A(symbol, s.Options(*names),
        "ctl status's settings (faultdriver.hostfacts)")
      for symbol, names in (
          ('nova.conf.base.base_options', ('manager_shutdown_timeout',)),
          ('nova.conf.service.service_opts', ('report_interval',)),
          ('nova.conf.compute.interval_opts',
           ('update_resources_interval',)),
          ('nova.conf.compute.compute_group_opts',
           ('cpu_shared_set', 'cpu_dedicated_set')),
          ('nova.conf.libvirt.libvirt_general_opts', ('connection_uri',)),
          ('nova.conf.rpc.rpc_opts', ('long_rpc_timeout',)),
          ('oslo_messaging.rpc.client._client_opts',
           ('rpc_response_timeout',)),
          ('oslo_service._options.service_opts',
           ('graceful_shutdown_timeout',)),
          ('oslo_log._options.common_cli_opts', ('debug',)))],
    # -- the migration-context step of the periodic ------------------------
    A(PERIODIC, s.Params('self', 'context', 'resources', 'startup'),
      _SCOPE + ' (FaultTracker overrides it)', optional=CONTEXT_STEP),
    A(PERIODIC, s.Decorated(TRACKER_LOCK),
      'tracker.apply_migration_context runs under the tracker lock'),
    A(PERIODIC, s.CallsInOrder(*PERIODIC_CALLS), _SCOPE,
      optional=CONTEXT_STEP),
    A(PERIODIC, s.LoopCondition('migrations',
                                'instance.apply_migration_context()',
                                periodic_loop_condition),
      _SCOPE + ': which migration a context is applied for',
      optional=CONTEXT_STEP),
    A(TRACKER + '._update_usage_from_instances',
      s.Params('self', 'context', 'instances', 'nodename'),
      _SCOPE + ' (closes the scope)', optional=CONTEXT_STEP),
    A('nova.objects.MigrationList.get_in_progress_and_error',
      s.Params('cls', 'context', 'host', 'node'), _SCOPE,
      optional=CONTEXT_STEP),
    A('nova.objects.Instance.apply_migration_context', s.Params('self'),
      _SCOPE, optional=CONTEXT_STEP),
    # -- what a hit's context reads ----------------------------------------
    A('nova.objects.Instance',
      s.Fields('uuid', 'task_state', 'migration_context'),
      'rule filters instance= and operation= (faultdriver.hitcontext)'),
    A('nova.objects.Migration',
      s.Fields('id', 'uuid', 'instance_uuid', 'status', 'migration_type',
               'source_compute', 'dest_compute', 'dest_node'),
      'rule filters migration=, operation= and @role'),
    A('nova.objects.MigrationContext', s.Fields('migration_id'),
      'the stale_migration_context fix'),
    A('nova.objects.MigrationList.get_by_filters',
      s.Params('cls', 'context', 'filters'),
      "the role of a point called without its migration"),
    A('nova.compute.task_states.MIGRATING', s.Exists(str),
      'operation=live-migration of a hit without a migration'),
    A('nova.compute.task_states.REBUILDING', s.Exists(str),
      'operation=evacuation of a hit without a migration'),
    *_raised(),
    # -- service-call points (faultdriver.servicecall) ---------------------
    *_service_points(),
    A('requests.Session.request', s.Params('self', 'method', 'url'),
      _SERVICE + ': the hook wraps the request every client makes'),
    A('keystoneauth1.session.Session._send_request',
      s.CallsInOrder('self.session.request(method, url',
                     'except requests.exceptions.ConnectionError',
                     'raise exceptions.ConnectFailure(',
                     'if connect_retries <= 0:'),
      _SERVICE + ': keystoneauth sends through requests, turns a refused '
      'connection into ConnectFailure and retries it (connfail)'),
    *[A('nova.scheduler.client.report.SchedulerReportClient.' + verb,
        s.CallsInOrder('self._client.%s(' % verb),
        _SERVICE + ': placement requests go through the keystoneauth '
        'adapter') for verb in ('get', 'post', 'put', 'delete')],
    A('nova.volume.cinder.cinderclient',
      s.CallsInOrder('cinder_client.Client(', 'session=session'),
      _SERVICE + ': cinderclient sends through a keystoneauth session'),
    A('nova.network.neutron.get_client',
      s.CallsInOrder('client_args = dict(session=session',
                     'ClientWrapper(clientv20.Client(**client_args)'),
      _SERVICE + ': neutronclient sends through a keystoneauth session'),
    # -- RPC points (faultdriver.rpcmessage) -------------------------------
    *_rpc_points(),
    A('oslo_messaging.get_rpc_server',
      s.Params('transport', 'target', 'endpoints'),
      _RPC + ': the compute\'s servers are hooked as they are built'),
    A('nova.rpc.get_server', s.CallsInOrder('messaging.get_rpc_server('),
      _RPC + ': Nova builds its servers with oslo_messaging.get_rpc_server'),
    A('nova.rpc.messaging', s.Exists(types.ModuleType),
      _RPC + ': nova.rpc reaches oslo_messaging as messaging'),
    A('nova.service.Service.start',
      s.CallsInOrder('self.manager.init_host(',
                     'manager_endpoint = _TrackingEndpointWrapper('
                     'self.manager)', 'endpoints = [', 'manager_endpoint,',
                     'self.rpcserver = rpc.get_server(target, endpoints',
                     'self.rpcserver.start()',
                     'target_alt, endpoints, serializer)',
                     'self.rpcserver_alt.start()'),
      _RPC + ': both servers are built after init_host (where FaultDriver '
      "waits for them), the manager's wrapper their first endpoint, and "
      'hooked before they start'),
    A(ENDPOINT_WRAPPER + '.__init__', s.Assigns('self._endpoint'),
      _RPC + ": a server is this compute's when its first endpoint wraps "
      'this manager'),
    A('oslo_messaging.server.MessageHandlingServer.__init__',
      s.Assigns('self.dispatcher'), _RPC + ": the server's dispatcher"),
    A('oslo_messaging.rpc.server.RPCServer._process_incoming',
      s.All(s.Params('self', 'incoming'),
            s.CallsInOrder('message = incoming[0]', 'message.acknowledge()',
                           'res = self.dispatcher.dispatch(message)',
                           'message.reply(res)',
                           'message.reply(failure=failure)')),
      _RPC + ': the message acknowledged, dispatched, then replied to '
      '(drop and lostreply keep the reply)'),
    A('oslo_messaging.rpc.dispatcher.RPCDispatcher.dispatch',
      s.CallsInOrder('watchdog_thread.start()',
                     'return self._do_dispatch(endpoint, method, ctxt, args)',
                     'completion_event.set()'),
      _RPC + ': call-monitor heartbeats go on while _do_dispatch runs '
      '(a delay there keeps a monitored caller waiting)'),
    A('oslo_messaging.rpc.dispatcher.RPCDispatcher._do_dispatch',
      s.All(s.Params('self', 'endpoint', 'method', 'ctxt', 'args'),
            s.CallsInOrder('self.serializer.deserialize_entity(ctxt, arg)',
                           'func = getattr(endpoint, method)',
                           'result = func(ctxt, **new_args)')),
      _RPC + ': the point fires with the deserialized arguments, before '
      "Nova's endpoint method"),
    A('nova.tests.fixtures.nova.CellDatabases._wrap_get_server',
      s.CallsInOrder('messaging.get_rpc_server('),
      _RPC + ": the functional tests' servers are built the same way",
      'harness'),
    # -- fake_numa ---------------------------------------------------------
    A('nova.virt.fake.FakeDriverWithoutFakeNodes', s.Exists(type),
      'the fake_numa inner driver (its base class)', 'fake_numa'),
    A('nova.virt.node.get_local_node_uuid', s.Params(),
      "fake_numa's persistent node identity", 'fake_numa'),
    A('nova.virt.driver.ComputeDriver._get_allocation_ratios',
      s.Params('inventory'), "fake_numa's inventory", 'fake_numa'),
    A('nova.virt.driver.ComputeDriver._get_reserved_host_disk_gb_from_config',
      s.Params(), "fake_numa's inventory", 'fake_numa'),
    A('nova.objects.LibvirtLiveMigrateNUMAInfo',
      s.Fields('cpu_pins', 'cell_pins', 'emulator_pins'),
      "fake_numa's NUMA-aware live migration", 'fake_numa'),
    A('nova.objects.LibvirtLiveMigrateData',
      s.Fields('dst_supports_numa_live_migration',
               'src_supports_numa_live_migration', 'dst_numa_info'),
      "fake_numa's NUMA-aware live migration", 'fake_numa'),
    # -- the in-process harness --------------------------------------------
    A('nova.servicegroup.api.INITIAL_REPORTING_DELAY', s.Exists(int),
      _CRASH + ': services report at once, so a crash shows as down',
      'harness'),
    A(FAKE_RPC + '.FakeDriver.send',
      s.Params('self', 'target', 'ctxt', 'message', 'wait_for_reply',
               'timeout', 'call_monitor_timeout'),
      _CRASH + ': calls expire like RabbitMQ messages', 'harness'),
    A(FAKE_RPC + '.FakeExchange.deliver_message',
      s.Params('self', 'topic', 'ctxt', 'message', 'server', 'fanout',
               'reply_q'),
      _CRASH + ': long calls lose their heartbeat', 'harness'),
    A(FAKE_RPC + '.FakeExchangeManager._exchanges', s.Exists(dict),
      _CRASH + ': messages queued for a crashed host', 'harness'),
    A(FAKE_RPC + '.FakeExchange.__init__',
      s.All(s.Assigns('self._queues_lock'), s.Assigns('self._server_queues')),
      _CRASH + ': messages queued for a crashed host', 'harness'),
    # The listener's poll is batch_poll_helper's wrapper around one
    # message's poll; faultdriver wraps its own poll the same way.
    A(FAKE_RPC + '.FakeListener.poll',
      s.Params('in_self', 'timeout', 'batch_size', 'batch_timeout'),
      _WAKE, 'harness'),
    A('oslo_messaging._drivers.base.batch_poll_helper', s.Params('func'),
      _WAKE, 'harness'),
    A(FAKE_RPC + '.FakeListener.stop', s.Params('self'), _WAKE, 'harness'),
    A(FAKE_RPC + '.FakeListener.__init__',
      s.All(s.Assigns('self._targets'), s.Assigns('self._exchange_manager'),
            s.Assigns('self._pool'), s.Assigns('self._stopped')),
      _WAKE, 'harness'),
    A(FAKE_RPC + '.FakeExchange.poll', s.Params('self', 'target', 'pool'),
      _WAKE, 'harness'),
    A(FAKE_RPC + '.FakeExchangeManager.get_exchange',
      s.Params('self', 'name'), _WAKE, 'harness'),
    A(FAKE_RPC + '.FakeIncomingMessage.__init__',
      s.Params('self', 'ctxt', 'message', 'reply_q', 'requeue'), _WAKE,
      'harness'),
    A('oslo_messaging.rpc.client._client_opts', s.Exists(list),
      _CRASH + ': short RPC timeouts before the transport exists',
      'harness'),
    A('oslo_messaging.rpc.client._BaseCallContext.cast',
      s.Params('self', 'ctxt', 'method'),
      _CRASH + ': a crashed thread sends nothing', 'harness'),
    A('oslo_messaging.rpc.client._BaseCallContext.call',
      s.Params('self', 'ctxt', 'method'),
      _CRASH + ': a crashed thread sends nothing', 'harness'),
    *[A('nova.scheduler.client.report.SchedulerReportClient.' + verb,
        s.Params('self', 'url'),
        _CRASH + ': a crashed thread changes nothing in placement',
        'harness') for verb in ('get', 'post', 'put', 'delete')],
    A('nova.compute.utils.EventReporter.__exit__', s.Params('self'),
      _CRASH + ': no instance-action event from a crashed thread',
      'harness'),
    A('nova.compute.claims.NopClaim.__exit__', s.Params('self'),
      _CRASH + ': no claim abort from a crashed thread', 'harness'),
    A('nova.service.Service.stop', s.Params('self'),
      _CRASH + ': a crashed service is only reaped', 'harness'),
    A('nova.service.Service.kill', s.Params('self'),
      _CRASH + ': a crashed service is only reaped', 'harness'),
    A('nova.virt.libvirt.driver.LibvirtDriver.get_volume_connector',
      s.All(s.Params('self', 'instance'), s.CallsInOrder('host=CONF.host')),
      'volumes on the embedded Nova: each compute\'s connector names its '
      'own host, not CONF.host (the host started last)', 'harness'),
    A('nova.tests.fixtures.cinder.CinderFixture.__init__',
      s.Assigns('self.volume_to_attachment'),
      'volume attachments per volume and connector (server_volumes)',
      'harness'),
    A('nova.tests.fixtures.neutron.NeutronFixture.__init__',
      s.All(s.Assigns('self._ports'), s.Assigns('self._port_bindings')),
      'port bindings per port and host (server_ports)', 'harness'),
    A('nova.tests.fixtures.neutron.NeutronFixture.update_port',
      s.Params('self', 'port_id', 'body'),
      'a port rebound by update moves its binding, as ML2 does (the '
      'fixture keeps the old host\'s inactive)', 'harness'),
    A('nova.tests.fixtures.neutron.NeutronFixture.create_port_binding',
      s.Params('self', 'port_id', 'body'),
      'a second binding for a host is refused (409), as in Neutron (the '
      'fixture overwrites it)', 'harness'),
    A('nova.tests.fixtures.neutron.NeutronFixture._get_active_binding',
      s.Params('self', 'port_id'),
      'the host a port was bound on before an update', 'harness'),
    A('nova.tests.fixtures.neutron.NeutronFixture.network_1', s.Exists(dict),
      'servers booted on the network (boot port: true)', 'harness'),
    A('nova.thread_pool_factory.ThreadPoolFactory.get_executor',
      s.Params('self', 'executor_type'),
      _STOP + ': executors refuse new work once shutdown began',
      'harness'),
    A('nova.thread_pool_factory.shutdown_all_executors', s.Params(),
      _STOP + " (Nova's ServiceFixture makes it a no-op)", 'harness'),
    A('nova.thread_pool_factory.spawn_on',
      s.Params('executor_type', 'func'),
      _STOP + ': a spawned call works for the host of the thread that '
      'spawned it', 'harness'),
    A('nova.manager.Manager._record_task_start',
      s.Params('self', 'task_name'),
      _STOP + ': a thread in which a manager records a task works for its '
      'host', 'harness'),
    A(MANAGER + '.__init__',
      s.All(s.Assigns('self._pending_dest_live_migrations'),
            s.Assigns('self._pending_dest_resizes')),
      "a destination's per-move tasks: the embedded stop's drain waits "
      "for the other tasks only, the embedded Nova's teardown ends them "
      '(faultdriver.manager_tasks)', 'harness'),
    A(MANAGER + '._end_pending_dest_live_migration_task',
      s.Params('self', 'instance_uuid'),
      "the embedded Nova's teardown ends a destination's per-move tasks",
      'harness'),
    A(MANAGER + '._end_pending_dest_resize_task',
      s.Params('self', 'instance_uuid'),
      "the embedded Nova's teardown ends a destination's per-move tasks",
      'harness'),
    # 'driver': a compute's control socket reads them (``ctl tasks``).
    A('nova.manager.Manager.__init__',
      s.All(s.Assigns('self._in_progress_tasks'),
            s.Assigns('self._in_progress_task_cond')),
      _STOP + ': waits for the tasks the manager tracks; the tasks-ended '
      'invariant reads them (faultdriver.manager_tasks, '
      '``faultdriver ctl tasks``)', 'driver'),
    A('nova.service.Service.__init__',
      s.All(s.Assigns('self.topic_alt'), s.Assigns('self.rpcserver_alt')),
      _CRASH + ": stopping a host's RPC servers and timers", 'harness'),
    A('nova.virt.node.LOCAL_NODE_UUID', s.Exists(),
      'one node UUID per host of an embedded fake_numa Nova', 'harness'),
    A(FAKELIBVIRT + '.Domain.migrateToURI3',
      s.Params('self', 'dconnuri', 'params', 'flags'),
      'live migrations that complete in fakelibvirt (scenario steps)',
      'harness'),
    A(FAKELIBVIRT + '.Domain.jobStats', s.Params('self', 'flags'),
      _JOBS, 'harness'),
    A(FAKELIBVIRT + '.Domain.complete_job', s.Params('self'), _JOBS,
      'harness'),
    A(FAKELIBVIRT + '.Domain.fail_job', s.Params('self'), _JOBS, 'harness'),
    A(FAKELIBVIRT + '.VIR_DOMAIN_JOB_NONE', s.Exists(int), _JOBS,
      'harness'),
    A(FAKELIBVIRT + '.Connection.getInfo', s.Params('self'),
      _SHAPES + ': memory reported in MiB', 'harness'),
    A(FAKELIBVIRT + '.HostInfo',
      s.Params('cpu_nodes', 'cpu_sockets', 'cpu_cores', 'cpu_threads',
               'kB_mem'), _SHAPES, 'harness'),
    A('nova.virt.libvirt.host.Host.get_online_cpus', s.Params('self'),
      _SHAPES + ': online CPUs per host', 'harness'),
    A('nova.virt.hardware.get_cpu_dedicated_set', s.Params(),
      _SHAPES + ': [compute] cpu_dedicated_set per host', 'harness'),
    A('nova.virt.hardware.get_cpu_shared_set', s.Params(),
      _SHAPES + ': [compute] cpu_shared_set per host', 'harness'),
    A('nova.virt.hardware.parse_cpu_spec', s.Params('spec'), _SHAPES,
      'harness'),
    A('nova.virt.libvirt.driver.LibvirtDriver', s.ReadsCpuSets(),
      _SHAPES + ': the LibvirtDriver methods that read the CPU sets',
      'harness'),
    A('nova.virt.libvirt.driver.LibvirtDriver.migrate_disk_and_power_off',
      s.Params('self', 'context', 'instance', 'dest'),
      'cold migration and resize on fakelibvirt (scenario runner)',
      'harness'),
    A('nova.tests.fixtures.conf.ConfFixture.setUp', s.Params('self'),
      "Nova's functional tests on FaultDriver (tests/transparency): the "
      "installed api-paste.ini", 'harness'),
    A('nova.tests.functional.libvirt.base.ServersTestBase.start_compute',
      s.Params('self', 'hostname', 'host_info', 'pci_info', 'mdev_info',
               'vdpa_info', 'libvirt_version', 'qemu_version', 'cell_name',
               'connection'),
      'a host whose start a fault ended is started again on its fake '
      'hypervisor (faultdriver.harness.injection.restart)', 'harness'),
    A('nova.virt.libvirt.driver.LibvirtDriver._get_connection',
      s.Params('self'),
      'a host whose start a fault ended keeps its fake hypervisor '
      '(faultdriver.harness.injection.restart)', 'harness'),
    A('futurist._thread.ThreadWorker.MAX_IDLE_FOR', s.Exists((int, float)),
      'EmbeddedNova.IDLE_WAKEUP (idle pool threads)', 'harness'),
    A('oslo_db.sqlalchemy.engines._init_connection_args', s.Exists(),
      'pooled SQLite connections in the embedded Nova '
      '(faultdriver.harness.dbpool)', 'harness'),
    A('oslo_db.sqlalchemy.engines.create_engine',
      s.CallsInOrder('_init_connection_args(', '_engine_target('),
      'pooled SQLite connections in the embedded Nova: oslo.db picks the '
      'pool class before it creates the engine '
      '(faultdriver.harness.dbpool)', 'harness'),
    # -- what scenario steps wait for ---------------------------------------
    *[A(MANAGER + '.' + method, s.Decorated(COMPUTE_EVENT),
        'the decide-resize step waits for its compute_%s event (the '
        'compute handled the decision, not only saved the migration '
        'terminal)' % method, 'scenario')
      for method in texts.DECISION_METHODS],
    A('nova.compute.instance_actions',
      s.All(s.Assigns('CONFIRM_RESIZE', repr(texts.CONFIRM_ACTION)),
            s.Assigns('REVERT_RESIZE', repr(texts.REVERT_ACTION))),
      'the decide-resize step finds its confirm or revert action',
      'scenario'),
    # -- what the process tiers' stand-ins answer as Neutron ----------------
    A('nova.network.neutron.API._build_vif_model',
      s.CallsInOrder('devname = "tap" + current_neutron_port[\'id\']',
                     'devname[:network_model.NIC_NAME_LEN]'),
      "the libvirt tier's tap agent: a port's tap is named so on the host "
      '(faultdriver.process.network_standin.tap_name)', 'scenario'),
    A('nova.network.model.NIC_NAME_LEN', s.Exists(int),
      "the libvirt tier's tap agent: where Nova cuts a tap's name "
      '(faultdriver.process.network_standin.tap_name)', 'scenario'),
    # -- log lines scenario expectations count -----------------------------
    A(MANAGER + '._update_available_resource_for_node',
      s.LogText(PERIODIC_ERROR.split('%')[0]),
      'the periodic step and the periodic-errors expectation '
      '(a reworded line would let count: 0 pass)', 'scenario',
      counted=(PERIODIC_ERROR,)),
    A(PERIODIC, s.LogText(APPLIED_CONTEXT),
      'log expectations on the stale migration-context line', 'scenario',
      counted=('Migration status is error',)),
    A(MANAGER + '._do_live_migration',
      s.LogText('aborted by another process'),
      'log expectations on an aborted live migration', 'scenario',
      counted=('aborted by another process',)),
    A(MANAGER + '._destroy_evacuated_instances',
      s.LogText('Destroying instance as it has been evacuated from'),
      'log expectations on an evacuated host', 'scenario',
      counted=('Destroying instance as it has been evacuated from',)),
    A(MANAGER + '._is_instance_storage_shared',
      s.LogText('Failed to check if instance shared'),
      'log expectations on a storage check that could not reach the other '
      'host (dest-crash-in-evacuation-libvirt)', 'scenario',
      counted=('Failed to check if instance shared',)),
    A('nova.virt.libvirt.driver.LibvirtDriver.delete_instance_files',
      s.LogText('Deleting instance files'),
      "log expectations on a guest's disks deleted "
      '(dest-crash-in-evacuation-libvirt)', 'scenario',
      counted=('Deleting instance files',)),
    A('nova.service.Service._run_manager_graceful_shutdown',
      s.LogText('manager graceful shutdown did not complete within'),
      "log expectations on a graceful stop whose manager part timed out "
      '(graceful-stop-libvirt)', 'scenario',
      counted=('manager graceful shutdown did not complete within',)),
    A('nova.manager.Manager._wait_for_in_progress_tasks',
      s.LogText('Graceful shutdown initiated with'),
      "log expectations on a graceful stop that found tasks in progress "
      '(graceful-stop-during-transfer-libvirt)', 'scenario',
      counted=('Graceful shutdown initiated with',)),
    A('nova.manager.Manager._wait_for_in_progress_tasks',
      s.LogText('Graceful shutdown timed out with'),
      "log expectations on a graceful stop whose wait for its tasks timed "
      'out (graceful-stop-during-transfer-libvirt)', 'scenario',
      counted=('Graceful shutdown timed out with',)),
    A('nova.virt.libvirt.driver.LibvirtDriver._live_migration_monitor',
      s.LogText('Migration running for'),
      "log expectations on a QEMU transfer's progress records "
      '(graceful-stop-during-transfer-libvirt)', 'scenario',
      counted=('Migration running for',)),
    A('nova.manager.Manager._record_task_start',
      s.LogText('new task started after shutdown'),
      "log expectations on a task a stopping compute began after its wait "
      '(graceful-stop-between-move-steps)', 'scenario',
      counted=('new task started after shutdown',)),
    A(MANAGER + '.confirm_resize', s.LogText('is already confirmed'),
      'log expectations on a second confirm the source serialised behind '
      'the first (second-confirm-during-confirm)', 'scenario',
      counted=('is already confirmed',)),
    A('nova.exception.CPUPinningInvalid', s.Exists(type),
      'log expectations on the pinning error in a periodic traceback',
      'scenario', counted=('CPUPinningInvalid',)),
    A('nova.exception.CPUUnpinningInvalid', s.Exists(type),
      'log expectations on the unpinning error of a claim dropped twice '
      '(bug-1879878-pre-fix-shape)', 'scenario',
      counted=('CPUUnpinningInvalid',)),
]
