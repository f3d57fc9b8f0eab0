"""Service-call points fire beneath Nova's own client handling.

Each test runs Nova's real client method (``nova.volume.cinder.API``,
``nova.network.neutron.API``, ``SchedulerReportClient``) through the
real client library and keystoneauth session, over a real HTTP
connection to a small in-test stand-in of the service on loopback
(:class:`LocalService`), since no Cinder, Neutron or placement runs
here.  The request is made from inside a real ``ComputeManager``
method's frame (a manager built without its ``__init__``: only its
``host`` and ``driver`` are read), as in a nova-compute; a request made
from anywhere else (the conductor, here the test itself) never fires.
What is asserted is the outcome: what the service holds afterwards,
what Nova returned or raised, and the journal.
"""

import http.server
import json
import re
import threading
import types
import typing
import unittest
import urllib.parse

from keystoneauth1 import adapter as ka_adapter
from keystoneauth1 import session as ka_session
from nova.compute import manager as compute_manager
from nova import conf as nova_conf
from nova import context as nova_context
from nova import exception as nova_exception
from nova.scheduler.client import report
from nova import service_auth
from nova.volume import cinder

from faultdriver import actions
from faultdriver import engine as engine_module
from faultdriver import journal as journal_module
from faultdriver import points
from faultdriver import rules
from faultdriver import servicecall

CONF = nova_conf.CONF
ATTACHMENT = '6e4a3c1e-2f54-4d4c-9a56-3f0d1f4b7a10'
VOLUME = '0f3b7c6a-9b7e-4d44-a3c2-6d1f6c4e2b11'
SOURCE = '1d0f3a4b-5c6d-4e7f-8a9b-0c1d2e3f4a5b'
TARGET = '2e1f4b5c-6d7e-4f8a-9b0c-1d2e3f4a5b6c'
PROVIDER = '3f2a5c6d-7e8f-4a9b-8c1d-2e3f4a5b6c7d'


class _Compute(compute_manager.ComputeManager):
    """A compute manager with only what the hook reads: ``host`` and
    ``driver`` (the FaultDriver, here its engine)."""

    def __init__(self, host, engine):  # noqa: no super(): no Nova service
        self.host = host
        self.driver = types.SimpleNamespace(_fault_engine=engine)


def _on_compute(manager, func):
    """Run ``func`` inside a real ComputeManager method's frame, as the
    compute's own steps run (``_get_power_state`` asks its driver, which
    here runs ``func``)."""
    result = []

    def get_info(instance, use_cache=True):
        result.append(func())
        return types.SimpleNamespace(state=None)
    manager.driver.get_info = get_info
    compute_manager.ComputeManager._get_power_state(manager, None)
    return result[0]


class Request(typing.NamedTuple):
    """What the stand-in service received."""

    method: str
    path: str
    query: typing.Dict[str, typing.List[str]]
    body: typing.Any


class LocalService:
    """A service on 127.0.0.1 (a free port) answering from ``routes``:
    ``(method, path regex) -> handler(Request) -> (status, JSON body or
    None)``; 404 for anything else.  Nova's client reaches it through
    requests and a real socket, as it reaches a cloud's service."""

    def __init__(self):
        self.routes = []
        routes = self.routes

        class Handler(http.server.BaseHTTPRequestHandler):
            def answer(self):
                url = urllib.parse.urlsplit(self.path)
                length = int(self.headers.get('Content-Length') or 0)
                raw = self.rfile.read(length) if length else b''
                request = Request(self.command, url.path,
                                  urllib.parse.parse_qs(url.query),
                                  json.loads(raw) if raw else None)
                for method, pattern, handler in routes:
                    if method == self.command and \
                            re.fullmatch(pattern, url.path):
                        status, body = handler(request)
                        break
                else:
                    status, body = 404, {'error': 'no route'}
                data = b'' if body is None else json.dumps(body).encode()
                self.send_response(status)
                self.send_header('Content-Type', 'application/json')
                self.send_header('Content-Length', str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_DELETE = answer

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(('127.0.0.1', 0),
                                                      Handler)
        self.url = 'http://127.0.0.1:%d' % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever,
                                       daemon=True)
        self.thread.start()

    def route(self, method, pattern, handler):
        self.routes.append((method, pattern, handler))

    def stop(self):
        self.server.shutdown()
        self.thread.join()
        self.server.server_close()


class ServiceCallTest(unittest.TestCase):

    def setUp(self):
        self.journal = journal_module.Journal(None)
        self.engine = engine_module.Engine(
            'compute1', actions.load_all(), enabled=True,
            journal=self.journal)
        servicecall.install(self.engine)
        self.addCleanup(servicecall.uninstall, self.engine)
        self.manager = _Compute('compute1', self.engine)
        self.service = LocalService()
        self.addCleanup(self.service.stop)

    def rule(self, text):
        self.engine.add_rule(rules.validate(
            rules.parse(text), points.catalogue(), actions.load_all()))

    def faults(self):
        return [(e['point'], e['phase'], e['action'])
                for e in self.journal.entries() if e['kind'] == 'fault']


class CinderTest(ServiceCallTest):
    """``nova.volume.cinder.API`` through cinderclient and keystoneauth."""

    def setUp(self):
        super().setUp()
        CONF.set_override('endpoint_template',
                          self.service.url + '/v3/project', group='cinder')
        self.addCleanup(CONF.clear_override, 'endpoint_template',
                        group='cinder')
        service_auth.reset_globals()
        self.addCleanup(service_auth.reset_globals)
        self.context = nova_context.RequestContext(
            'user', 'project', auth_token='token', is_admin=False)
        #: The stand-in Cinder's one attachment.
        self.attachments = {ATTACHMENT: {
            'id': ATTACHMENT, 'volume_id': VOLUME, 'status': 'reserved',
            'attach_mode': 'rw', 'instance': SOURCE, 'connector': None,
            'connection_info': {}}}
        self.received = []
        self.service.route('PUT', '/v3/project/attachments/.*', self.update)
        self.service.route('DELETE', '/v3/project/attachments/.*',
                           self.delete)
        self.service.route('POST', '/v3/project/attachments', self.create)
        # Cinder's version document (attachment_create checks the
        # microversion first: its step's first request).
        self.service.route('GET', '/', lambda request: (300, {'versions': [{
            'id': 'v3.0', 'status': 'CURRENT', 'version': '3.70',
            'min_version': '3.0', 'updated': '2026-01-01T00:00:00Z',
            'links': [{'rel': 'self',
                       'href': self.service.url + '/v3/'}]}]}))
        self.service.route('POST', '/v3/project/attachments/[^/]+/action',
                           self.complete)

    def update(self, request):
        self.received.append(request.method)
        attachment = self.attachments[request.path.rsplit('/', 1)[1]]
        attachment.update(
            status='attached',
            connector=request.body['attachment']['connector'],
            connection_info={'driver_volume_type': 'iscsi',
                             'data': {'target_lun': 1}})
        return 200, {'attachment': dict(attachment)}

    def create(self, request):
        self.received.append(request.method)
        body = request.body['attachment']
        key = '%08d-0000-4000-8000-000000000000' % len(self.attachments)
        self.attachments[key] = {
            'id': key, 'volume_id': body['volume_uuid'],
            'status': 'attaching', 'attach_mode': 'rw',
            'instance': body['instance_uuid'],
            'connector': body['connector'],
            'connection_info': {'driver_volume_type': 'iscsi', 'data': {}}}
        return 200, {'attachment': dict(self.attachments[key])}

    def complete(self, request):
        self.received.append(request.method)
        key = request.path.rsplit('/', 2)[1]
        self.attachments[key]['status'] = 'attached'
        return 204, None

    def delete(self, request):
        self.received.append(request.method)
        key = request.path.rsplit('/', 1)[1]
        if key not in self.attachments:
            return 404, {'itemNotFound': {'code': 404,
                                          'message': 'not found'}}
        del self.attachments[key]
        return 200, {}

    def update_attachment(self):
        return cinder.API().attachment_update(
            self.context, ATTACHMENT, {'host': 'compute1'}, '/dev/vdb')

    def test_one_500_is_retried_by_nova_and_the_update_succeeds(self):
        self.rule('volume.attachment_update: 1*http(500)')
        result = _on_compute(self.manager, self.update_attachment)
        # Nova's retry reached Cinder, which attached the volume.
        self.assertEqual('attached', self.attachments[ATTACHMENT]['status'])
        self.assertEqual('compute1',
                         self.attachments[ATTACHMENT]['connector']['host'])
        self.assertEqual('iscsi',
                         result['connection_info']['driver_volume_type'])
        # The injected 500 never reached Cinder: one update arrived.
        self.assertEqual(['PUT'], self.received)
        self.assertEqual([('volume.attachment_update', 'before', 'http')],
                         self.faults())

    def test_a_500_until_cleared_exhausts_novas_five_tries(self):
        from cinderclient import exceptions as cinder_exception
        self.rule('volume.attachment_update: http(500)')
        with self.assertRaises(cinder_exception.ClientException) as caught:
            _on_compute(self.manager, self.update_attachment)
        self.assertEqual(500, caught.exception.code)
        self.assertEqual('reserved', self.attachments[ATTACHMENT]['status'])
        self.assertEqual([], self.received)
        self.assertEqual(5, len(self.faults()))

    def test_a_504_after_the_delete_is_retried_into_the_404_nova_ignores(
            self):
        # LP 1978444's shape: Cinder deleted the attachment, the proxy
        # answered 504; Nova's retry finds it gone and carries on.
        self.rule('volume.attachment_delete.after: 1*http(504)')
        _on_compute(self.manager, lambda: cinder.API().attachment_delete(
            self.context, ATTACHMENT))
        self.assertEqual({}, self.attachments)
        self.assertEqual(['DELETE', 'DELETE'], self.received)
        self.assertEqual([('volume.attachment_delete', 'after', 'http')],
                         self.faults())

    def test_a_refused_connection_is_translated_by_nova(self):
        CONF.set_override('http_retries', 0, group='cinder')
        self.addCleanup(CONF.clear_override, 'http_retries', group='cinder')
        self.rule('volume.attachment_update: connfail')
        with self.assertRaises(nova_exception.CinderConnectionFailed):
            _on_compute(self.manager, self.update_attachment)
        self.assertEqual([], self.received)

    def create_attachment(self):
        return cinder.API().attachment_create(
            self.context, VOLUME, SOURCE, {'host': 'compute1'}, '/dev/vdb')

    def test_a_500_creating_an_attachment_is_not_retried(self):
        # LP 1899835's step: dest's pre_live_migration creates the new
        # host's attachment; Nova does not retry a create.  The step's
        # first request is the microversion check: its 500 comes up as
        # keystoneauth's error, which Nova does not translate.
        from cinderclient import exceptions as cinder_exception
        from keystoneauth1 import exceptions as ka_exception
        self.rule('volume.attachment_create: 1*http(500)')
        with self.assertRaises(ka_exception.InternalServerError):
            _on_compute(self.manager, self.create_attachment)
        self.rule('volume.attachment_create: 1*off -> 1*http(500)')
        with self.assertRaises(cinder_exception.ClientException) as caught:
            _on_compute(self.manager, self.create_attachment)
        self.assertEqual(500, caught.exception.code)
        self.assertEqual([ATTACHMENT], list(self.attachments))
        self.assertEqual([], self.received)
        # Its hits used, the next create reaches Cinder.
        created = _on_compute(self.manager, self.create_attachment)
        self.assertEqual('compute1', created['connector']['host'])
        self.assertEqual(2, len(self.attachments))

    def test_a_504_after_the_complete_reaches_the_caller(self):
        # Cinder marked the attachment attached; the proxy's 504 still
        # fails Nova's call (no retry): the caller sees an error although
        # the work was done.
        from cinderclient import exceptions as cinder_exception
        self.rule('volume.attachment_complete.after: 1*http(504)')
        with self.assertRaises(cinder_exception.ClientException) as caught:
            _on_compute(self.manager, lambda: cinder.API().attachment_complete(
                self.context, ATTACHMENT))
        self.assertEqual(504, caught.exception.code)
        self.assertEqual('attached', self.attachments[ATTACHMENT]['status'])
        self.assertEqual(['POST'], self.received)

    def test_a_request_no_compute_makes_never_fires(self):
        # The conductor's call (no ComputeManager frame on its stack).
        self.rule('volume.attachment_update: http(500)')
        self.update_attachment()
        self.assertEqual('attached', self.attachments[ATTACHMENT]['status'])
        self.assertEqual([], self.faults())


class PlacementService(ServiceCallTest):
    """``SchedulerReportClient`` through a keystoneauth adapter that,
    like the openstacksdk proxy Nova builds (and Nova's PlacementFixture),
    does not raise on an error status (no tests of its own)."""

    def setUp(self):
        super().setUp()
        self.context = nova_context.RequestContext('user', 'project',
                                                   is_admin=False)
        self.client = report.SchedulerReportClient(
            adapter=ka_adapter.Adapter(
                ka_session.Session(auth=None), service_type='placement',
                raise_exc=False,
                endpoint_override=self.service.url))
        #: The stand-in placement's allocations per consumer.
        self.allocations = {
            SOURCE: {PROVIDER: {'generation': 1,
                                'resources': {'VCPU': 1}}},
            TARGET: {}}
        self.service.route('GET', '/allocations/.*', self.get)
        self.service.route('POST', '/allocations', self.post)

    def get(self, request):
        consumer = request.path.rsplit('/', 1)[1]
        return 200, {'allocations': self.allocations.get(consumer, {}),
                     'consumer_generation': 1, 'project_id': 'project',
                     'user_id': 'user'}

    def post(self, request):
        for consumer, body in request.body.items():
            self.allocations[consumer] = body['allocations']
        return 204, None


class PlacementTest(PlacementService):

    def move(self):
        return self.client.move_allocations(self.context, SOURCE, TARGET)

    def test_a_refused_connection_goes_through_safe_connect(self):
        self.rule('placement.move_allocations: 1*connfail')
        # @safe_connect: the connection failure becomes None, nothing moved.
        self.assertIsNone(_on_compute(self.manager, self.move))
        self.assertIn(PROVIDER, self.allocations[SOURCE])
        self.assertEqual({}, self.allocations[TARGET])
        self.assertEqual([('placement.move_allocations', 'before',
                           'connfail')], self.faults())
        # Cleared (its one hit used), the next move goes through.
        self.assertTrue(_on_compute(self.manager, self.move))
        self.assertIn(PROVIDER, self.allocations[TARGET])

    def test_a_500_at_the_move_itself_is_false_and_nothing_moves(self):
        # The step's third request (after reading both consumers): the
        # POST that moves.  Nova's report client answers False (F22's
        # other trigger: _revert_allocation ignores it).
        self.rule('placement.move_allocations: 2*off -> 1*http(500)')
        self.assertFalse(_on_compute(self.manager, self.move))
        self.assertIn(PROVIDER, self.allocations[SOURCE])
        self.assertEqual({}, self.allocations[TARGET])
        # The first request's 500 is another answer: the read fails.
        self.rule('placement.move_allocations: 1*http(500)')
        with self.assertRaises(
                nova_exception.ConsumerAllocationRetrievalFailed):
            _on_compute(self.manager, self.move)

    def test_a_500_on_put_allocations_is_false(self):
        self.rule('placement.put_allocations: http(503)')
        self.service.route('PUT', '/allocations/.*', lambda r: (204, None))
        self.assertFalse(_on_compute(
            self.manager, lambda: self.client.put_allocations(
                self.context, TARGET, {'allocations': {}})))
        self.assertEqual([('placement.put_allocations', 'before', 'http')],
                         self.faults())


class SlowPlacementTest(PlacementService):
    """``slow``: the service takes its time; past a timeout the
    deployment set (``[placement] timeout``: the session's), the client
    gives up as requests does, before or after the service's work."""

    def setUp(self):
        super().setUp()
        self.put_received = []
        self.service.route('PUT', '/allocations/.*', self.put)

    def put(self, request):
        self.put_received.append(request.path)
        consumer = request.path.rsplit('/', 1)[1]
        self.allocations[consumer] = request.body['allocations']
        return 204, None

    def client_with_timeout(self, seconds):
        return report.SchedulerReportClient(adapter=ka_adapter.Adapter(
            ka_session.Session(auth=None, timeout=seconds),
            service_type='placement', raise_exc=False,
            endpoint_override=self.service.url))

    def put_allocations(self, client):
        return client.put_allocations(self.context, TARGET, {
            'allocations': {PROVIDER: {'resources': {'VCPU': 1}}},
            'consumer_generation': None, 'project_id': 'project',
            'user_id': 'user'})

    def test_without_a_timeout_a_slow_answer_is_waited_out(self):
        self.rule('placement.put_allocations: 1*slow(0.2)')
        self.assertTrue(_on_compute(
            self.manager, lambda: self.put_allocations(self.client)))
        self.assertIn(PROVIDER, self.allocations[TARGET])
        self.assertEqual([('placement.put_allocations', 'before', 'slow')],
                         self.faults())

    def test_past_the_timeout_the_client_gives_up(self):
        # keystoneauth's ConnectTimeout, which put_allocations (no
        # @safe_connect) turns into PlacementAPIConnectFailure.
        client = self.client_with_timeout(0.2)
        # Before: the service never took the request.
        self.rule('placement.put_allocations: 1*slow(30)')
        with self.assertRaises(nova_exception.PlacementAPIConnectFailure):
            _on_compute(self.manager, lambda: self.put_allocations(client))
        self.assertEqual([], self.put_received)
        # After: the service did the work, its answer came too late.
        self.rule('placement.put_allocations.after: 1*slow(30)')
        with self.assertRaises(nova_exception.PlacementAPIConnectFailure):
            _on_compute(self.manager, lambda: self.put_allocations(client))
        self.assertEqual(1, len(self.put_received))
        self.assertIn(PROVIDER, self.allocations[TARGET])


class PlacementCleanupTest(PlacementService):
    """The report client's clean-up steps: an evacuated-from host's tree
    removed from the instance's allocation, a consumer's allocation
    deleted."""

    def setUp(self):
        super().setUp()
        self.service.route('GET', '/resource_providers', self.tree)
        self.service.route('PUT', '/allocations/.*', self.put)

    def tree(self, request):
        return 200, {'resource_providers': [{
            'uuid': PROVIDER, 'name': 'compute1', 'generation': 1,
            'parent_provider_uuid': None,
            'root_provider_uuid': PROVIDER}]}

    def put(self, request):
        consumer = request.path.rsplit('/', 1)[1]
        self.allocations[consumer] = request.body['allocations']
        return 204, None

    def test_the_tree_removal_fails_by_its_request(self):
        def remove():
            return self.client.remove_provider_tree_from_instance_allocation(
                self.context, SOURCE, PROVIDER)
        self.rule('placement.remove_provider_tree_from_instance_allocation:'
                  ' 1*http(500)')
        with self.assertRaises(
                nova_exception.ConsumerAllocationRetrievalFailed):
            _on_compute(self.manager, remove)
        self.rule('placement.remove_provider_tree_from_instance_allocation:'
                  ' 1*off -> 1*http(500)')
        with self.assertRaises(
                nova_exception.ResourceProviderRetrievalFailed):
            _on_compute(self.manager, remove)
        self.rule('placement.remove_provider_tree_from_instance_allocation:'
                  ' 2*off -> 1*http(500)')
        self.assertFalse(_on_compute(self.manager, remove))
        self.assertIn(PROVIDER, self.allocations[SOURCE])
        # Cleared, the removal goes through.
        self.assertTrue(_on_compute(self.manager, remove))
        self.assertEqual({}, self.allocations[SOURCE])

    def test_a_connection_failure_removing_the_tree_is_not_swallowed(self):
        from keystoneauth1 import exceptions as ka_exception
        self.rule('placement.remove_provider_tree_from_instance_allocation:'
                  ' 1*connfail')
        remove = self.client.remove_provider_tree_from_instance_allocation
        with self.assertRaises(ka_exception.ConnectFailure):
            _on_compute(self.manager,
                        lambda: remove(self.context, SOURCE, PROVIDER))
        self.assertIn(PROVIDER, self.allocations[SOURCE])

    def delete(self):
        return self.client.delete_allocation_for_instance(
            self.context, SOURCE, consumer_type='migration')

    def test_a_delete_fails_loudly_on_a_500_quietly_on_no_connection(self):
        self.rule('placement.delete_allocation_for_instance: 1*http(500)')
        with self.assertRaises(nova_exception.AllocationDeleteFailed):
            _on_compute(self.manager, self.delete)
        self.rule('placement.delete_allocation_for_instance: 1*connfail')
        self.assertIsNone(_on_compute(self.manager, self.delete))
        self.assertIn(PROVIDER, self.allocations[SOURCE])
        self.assertEqual(
            [('placement.delete_allocation_for_instance', 'before', 'http'),
             ('placement.delete_allocation_for_instance', 'before',
              'connfail')], self.faults())
        self.assertTrue(_on_compute(self.manager, self.delete))
        self.assertEqual({}, self.allocations[SOURCE])


class CatalogueTest(unittest.TestCase):

    def test_service_points_take_service_actions_only(self):
        for text in ('volume.attachment_update: raise(InternalError)',
                     'spawn: http(500)', 'spawn: connfail',
                     'placement.put_allocations: http(404)'):
            with self.assertRaises(rules.RuleError, msg=text):
                rules.validate(rules.parse(text), points.catalogue(),
                               actions.load_all())

    def test_each_step_is_found_in_novas_source(self):
        found = set(servicecall.steps().values())
        self.assertEqual({name for name, point in points.catalogue().items()
                          if point.kind == 'service'}, found)
        self.assertIn('placement.move_allocations', found)


class NeutronTest(ServiceCallTest):
    """``nova.network.neutron.API`` through neutronclient and keystoneauth
    (outside the embedded Nova, whose NeutronFixture replaces the
    client)."""

    def setUp(self):
        super().setUp()
        from nova import objects
        objects.register_all()
        CONF.set_override('endpoint_override', self.service.url,
                          group='neutron')
        self.addCleanup(CONF.clear_override, 'endpoint_override',
                        group='neutron')
        # Nova's admin client (port profiles) loads [neutron] auth: none.
        CONF.set_override('auth_type', 'none', group='neutron')
        self.addCleanup(CONF.clear_override, 'auth_type', group='neutron')
        CONF.set_override('http_retries', 1, group='neutron')
        self.addCleanup(CONF.clear_override, 'http_retries', group='neutron')
        service_auth.reset_globals()
        self.addCleanup(service_auth.reset_globals)
        self.context = nova_context.RequestContext(
            'user', 'project', auth_token='token', is_admin=False)
        self.instance = objects.Instance(uuid=SOURCE, project_id='project',
                                         host='compute1')
        self.listed = []
        self.service.route('GET', '/v2.0/ports(.json)?', self.ports)

    def ports(self, request):
        self.listed.append(request.query.get('device_id'))
        return 200, {'ports': []}

    def setup(self):
        from nova.network import neutron
        return neutron.API().setup_networks_on_host(
            self.context, self.instance, host='compute2')

    def test_a_500_reaches_the_caller_as_neutronclients_exception(self):
        from neutronclient.common import exceptions as neutron_exception
        self.rule('network.setup_networks_on_host: 1*http(500)')
        with self.assertRaises(neutron_exception.NeutronClientException) \
                as caught:
            _on_compute(self.manager, self.setup)
        self.assertEqual(500, caught.exception.status_code)
        self.assertEqual([], self.listed)
        self.assertEqual([('network.setup_networks_on_host', 'before',
                           'http')], self.faults())
        # Cleared: the next setup lists the instance's ports.
        _on_compute(self.manager, self.setup)
        self.assertEqual([[SOURCE]], self.listed)

    def test_a_refused_connection_after_the_retries(self):
        # Neither neutronclient's session client nor Nova translates it.
        from keystoneauth1 import exceptions as ks_exception
        self.rule('network.setup_networks_on_host: connfail')
        with self.assertRaises(ks_exception.ConnectFailure):
            _on_compute(self.manager, self.setup)
        self.assertEqual([], self.listed)
        # [neutron] http_retries (1 here) retries beneath Nova.
        self.assertEqual(1 + CONF.neutron.http_retries, len(self.faults()))

    # The steps that bind the ports to a host through Nova's
    # _update_port_binding_for_instance: its first request lists the
    # instance's ports, the one the fault fails.

    def test_unshelve_rebind_fails_before_any_port_is_listed(self):
        # LP 1862633's step: the unshelve host binds the ports to itself.
        from neutronclient.common import exceptions as neutron_exception
        from nova.network import neutron
        self.rule('network.setup_instance_network_on_host: 1*http(500)')

        def rebind():
            return neutron.API().setup_instance_network_on_host(
                self.context, self.instance, 'compute1')
        with self.assertRaises(neutron_exception.NeutronClientException) \
                as caught:
            _on_compute(self.manager, rebind)
        self.assertEqual(500, caught.exception.status_code)
        self.assertEqual([], self.listed)
        self.assertEqual([('network.setup_instance_network_on_host',
                           'before', 'http')], self.faults())
        # Not the other binding steps' rules: setup_networks_on_host's
        # request is the same, its rule does not fire here.
        self.rule('network.setup_networks_on_host: 1*http(500)')
        _on_compute(self.manager, rebind)
        self.assertEqual([[SOURCE]], self.listed)

    def test_move_finish_connfail_after_the_retries(self):
        from keystoneauth1 import exceptions as ks_exception
        from nova.network import neutron
        from nova import objects
        self.rule('network.migrate_instance_finish: connfail')
        migration = objects.Migration(dest_compute='compute1')
        with self.assertRaises(ks_exception.ConnectFailure):
            _on_compute(self.manager, lambda: neutron.API(
                ).migrate_instance_finish(self.context, self.instance,
                                          migration, None))
        self.assertEqual([], self.listed)
        self.assertEqual(1 + CONF.neutron.http_retries, len(self.faults()))

    def test_network_info_read_fails_at_its_first_request(self):
        # LP 1879787's step: a compute reads the network info from Neutron.
        from neutronclient.common import exceptions as neutron_exception
        from nova.network import neutron
        self.rule('network.get_instance_nw_info: 1*http(500)')
        self.instance.info_cache = None
        with self.assertRaises(neutron_exception.NeutronClientException):
            _on_compute(self.manager, lambda: neutron.API(
                ).get_instance_nw_info(self.context, self.instance))
        self.assertEqual([], self.listed)
        self.assertEqual([('network.get_instance_nw_info', 'before',
                           'http')], self.faults())
