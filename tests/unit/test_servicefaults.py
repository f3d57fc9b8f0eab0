"""The process tier's stand-ins fail requests service-side on a rule.

The real stand-ins (:mod:`faultdriver.process.network_standin`,
:mod:`~faultdriver.process.volume_standin`), served over loopback HTTP
as the process tier serves them, answer Nova's real client
(``nova.volume.cinder.API``, ``nova.network.neutron.API`` through
cinderclient/neutronclient and a keystoneauth session) called from no
compute manager, as the conductor calls them: only the service can fail
those calls.  Asserted: what the service holds afterwards, what Nova
returned or raised, and the service's journal.
"""

import unittest

from nova import conf as nova_conf
from nova import context as nova_context
from nova import exception as nova_exception
from nova import objects
from nova import service_auth
from nova.volume import cinder
import requests

from faultdriver import exception
from faultdriver import journal as journal_module
from faultdriver.process import client
from faultdriver.process import network_standin
from faultdriver.process import procs
from faultdriver.process import servicefaults
from faultdriver.process import standins
from faultdriver.process import volume_standin

CONF = nova_conf.CONF
INSTANCE = '1d0f3a4b-5c6d-4e7f-8a9b-0c1d2e3f4a5b'


class StandInTest(unittest.TestCase):
    """One stand-in behind its ServiceSide, on a free loopback port."""

    HOST = ''

    def serve(self, route):
        self.journal = journal_module.Journal(None)
        self.side = servicefaults.ServiceSide(self.HOST, route, self.journal)
        server = standins.StandIn(self.HOST, self.side.route,
                                  procs.free_port()).start()
        self.addCleanup(server.stop)
        self.context = nova_context.RequestContext(
            'user', client.PROJECT, auth_token='token', is_admin=False)
        service_auth.reset_globals()
        self.addCleanup(service_auth.reset_globals)
        return server.url

    def override(self, name, value, group):
        CONF.set_override(name, value, group=group)
        self.addCleanup(CONF.clear_override, name, group=group)

    def faults(self):
        return [(e['point'], e['phase'], e['action'])
                for e in self.journal.entries() if e['kind'] == 'fault']


class CinderSideTest(StandInTest):

    HOST = 'cinder'

    def setUp(self):
        super().setUp()
        import tempfile
        storage = volume_standin.BlockStorage(tempfile.mkdtemp())
        url = self.serve(storage.route)
        self.storage = storage
        self.override('endpoint_template', url + '/v3/%(project_id)s',
                      'cinder')
        self.volume = storage.create_volume()
        self.attachment = cinder.API().attachment_create(
            self.context, self.volume, INSTANCE)['id']

    def attachment_record(self):
        return [a for a in self.storage.route({
            'REQUEST_METHOD': 'GET', 'PATH_INFO': '/v3/p/attachments',
            'QUERY_STRING': ''})[1]['attachments']
            if a['id'] == self.attachment]

    def update(self):
        return cinder.API().attachment_update(
            self.context, self.attachment, {'host': 'dest'}, '/dev/vdb')

    def test_one_500_at_the_service_is_retried_by_nova(self):
        self.side.set_rules(['volume.attachment_update: 1*http(500)'])
        self.update()
        [attachment] = self.attachment_record()
        self.assertEqual('dest', attachment['connector']['host'])
        self.assertEqual([('volume.attachment_update', 'before', 'http')],
                         self.faults())

    def test_a_504_after_the_delete_is_retried_into_the_404_nova_ignores(
            self):
        # LP 1978444's shape, service-side: the attachment is gone.
        self.side.set_rules(['volume.attachment_delete.after: 1*http(504)'])
        cinder.API().attachment_delete(self.context, self.attachment)
        self.assertEqual([], self.attachment_record())
        self.assertEqual([('volume.attachment_delete', 'after', 'http')],
                         self.faults())

    def test_a_dropped_connection_is_translated_by_nova(self):
        self.override('http_retries', 0, 'cinder')
        self.side.set_rules(['volume.attachment_update: 1*connfail'])
        with self.assertRaises(nova_exception.CinderConnectionFailed):
            self.update()
        [attachment] = self.attachment_record()
        self.assertIsNone(attachment['connector'])
        # Used up: the next update goes through.
        self.update()
        [attachment] = self.attachment_record()
        self.assertEqual('dest', attachment['connector']['host'])

    def test_a_slow_service_times_out_a_client_with_a_timeout(self):
        # The stand-in really takes its time: past [cinder] timeout the
        # client's socket gives up (requests' own timeout), after the
        # work was done; Nova translates keystoneauth's ConnectTimeout.
        self.override('timeout', 0.3, 'cinder')
        self.override('http_retries', 0, 'cinder')
        service_auth.reset_globals()    # a session with the timeout
        self.side.set_rules(['volume.attachment_update.after: 1*slow(1)'])
        with self.assertRaises(nova_exception.CinderConnectionFailed):
            self.update()
        [attachment] = self.attachment_record()
        self.assertEqual('dest', attachment['connector']['host'])
        self.assertEqual([('volume.attachment_update', 'after', 'slow')],
                         self.faults())

    def test_rules_the_service_cannot_take_are_refused(self):
        for text in ('placement.move_allocations: http(500)',
                     'network.bind_ports_to_host: http(500)',
                     'volume.attachment_update@dest: http(500)'):
            with self.assertRaises(exception.ConfigError, msg=text):
                self.side.set_rules([text])


class NeutronSideTest(StandInTest):

    HOST = 'neutron'

    def setUp(self):
        super().setUp()
        objects.register_all()
        network = network_standin.Network(client.PROJECT)
        self.url = self.serve(network.route)
        self.network = network
        self.override('endpoint_override', self.url, 'neutron')
        self.override('auth_type', 'none', 'neutron')
        self.override('http_retries', 0, 'neutron')
        port = requests.post(self.url + '/v2.0/ports', json={'port': {
            'network_id': network_standin.NETWORK_ID,
            'device_id': INSTANCE, 'binding:host_id': 'src'}},
            timeout=10).json()['port']
        self.port = port['id']
        self.instance = objects.Instance(uuid=INSTANCE,
                                         project_id=client.PROJECT)

    def bind(self):
        from nova.network import model
        from nova.network import neutron
        vif = model.VIF(id=self.port, vnic_type='normal', profile={})
        self.instance.info_cache = objects.InstanceInfoCache(
            network_info=model.NetworkInfo([vif]))
        return neutron.API().bind_ports_to_host(self.context, self.instance,
                                                'dest')

    def test_a_500_at_the_conductors_binding_is_port_binding_failed(self):
        self.side.set_rules(['network.bind_ports_to_host: 1*http(500)'])
        with self.assertRaises(nova_exception.PortBindingFailed):
            self.bind()
        # Only src's binding: the service made none for dest.
        self.assertEqual({'src': 'ACTIVE'},
                         self.network.bindings(INSTANCE)[self.port])
        self.assertEqual([('network.bind_ports_to_host', 'before', 'http')],
                         self.faults())
        # Used up: the binding is made, inactive beside src's.
        self.bind()
        self.assertEqual('INACTIVE',
                         self.network.bindings(INSTANCE)[self.port]['dest'])

    def test_a_second_binding_for_a_host_is_a_409_as_neutron_answers(self):
        self.bind()
        with self.assertRaises(nova_exception.PortBindingFailed):
            self.bind()
        self.assertEqual([], self.faults())
