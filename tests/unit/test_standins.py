"""The network and block-storage stand-ins over real HTTP: what Nova's
calls do to their state (bindings per host, attachments per connector),
and the refusals Neutron and Cinder answer with."""

import threading
import wsgiref.simple_server

import pytest
import requests

from faultdriver.process import network_standin
from faultdriver.process import procs
from faultdriver.process import standins
from faultdriver.process import volume_standin

PROJECT = 'p1'


@pytest.fixture
def network():
    state = network_standin.Network(PROJECT)
    served = standins.StandIn('neutron', state.route, procs.free_port())
    served.start()
    yield state, served.url + '/v2.0'
    served.stop()


@pytest.fixture
def storage(tmp_path):
    state = volume_standin.BlockStorage(str(tmp_path / 'volumes'))
    served = standins.StandIn('cinder', state.route, procs.free_port())
    served.start()
    yield state, served.url + '/v3/' + PROJECT
    served.stop()


def _port(url, server='s1', host=None):
    body = {'port': {'network_id': network_standin.NETWORK_ID,
                     'device_id': server}}
    if host:
        body['port']['binding:host_id'] = host
    response = requests.post(url + '/ports', json=body)
    assert response.status_code == 201
    return response.json()['port']['id']


def test_a_port_update_binds_it_on_one_host(network):
    state, url = network
    port = _port(url, host='src')
    assert state.bindings('s1') == {port: {'src': 'ACTIVE'}}
    shown = requests.get(url + '/ports/%s' % port).json()['port']
    assert shown['binding:host_id'] == 'src'
    assert shown['binding:vif_type'] == network_standin.VIF_TYPE
    # A resize's plain update (no bindings extension call) moves the
    # active binding: the old host's is gone, as with ML2.
    requests.put(url + '/ports/%s' % port,
                 json={'port': {'binding:host_id': 'dest'}})
    assert state.bindings('s1') == {port: {'dest': 'ACTIVE'}}


def test_a_live_migrations_bindings_are_created_activated_deleted(network):
    state, url = network
    port = _port(url, host='src')
    created = requests.post(url + '/ports/%s/bindings' % port,
                            json={'binding': {'host': 'dest'}})
    assert created.status_code == 201
    assert created.json()['binding']['status'] == 'INACTIVE'
    # A second binding for the same host is a conflict, as in Neutron:
    # what an orphaned inactive binding does to the next move.
    again = requests.post(url + '/ports/%s/bindings' % port,
                          json={'binding': {'host': 'dest'}})
    assert again.status_code == 409
    assert 'PortBindingAlreadyExists' in again.text
    requests.put(url + '/ports/%s/bindings/dest/activate' % port)
    assert state.bindings('s1') == {port: {'src': 'INACTIVE',
                                           'dest': 'ACTIVE'}}
    assert requests.put(url + '/ports/%s/bindings/dest/activate'
                        % port).status_code == 409
    assert requests.delete(url + '/ports/%s/bindings/src'
                           % port).status_code == 204
    assert requests.delete(url + '/ports/%s/bindings/src'
                           % port).status_code == 404
    assert state.bindings('s1') == {port: {'dest': 'ACTIVE'}}
    shown = requests.get(url + '/ports?device_id=s1').json()['ports']
    assert [p['binding:host_id'] for p in shown] == ['dest']


def test_unbinding_and_deleting_a_port(network):
    state, url = network
    port = _port(url, host='src')
    requests.put(url + '/ports/%s' % port,
                 json={'port': {'binding:host_id': None}})
    assert state.bindings('s1') == {port: {}}
    assert requests.delete(url + '/ports/%s' % port).status_code == 204
    assert state.bindings('s1') == {}
    assert requests.get(url + '/ports/%s' % port).status_code == 404


def test_lists_filter_as_neutrons(network):
    _state, url = network
    _port(url, server='s1')
    _port(url, server='s2')
    assert len(requests.get(url + '/ports.json').json()['ports']) == 2
    assert len(requests.get(url + '/ports?device_id=s2').json()[
        'ports']) == 1
    networks = requests.get(url + '/networks?id=%s&shared=False' %
                            network_standin.NETWORK_ID).json()['networks']
    assert [n['id'] for n in networks] == [network_standin.NETWORK_ID]
    assert requests.get(url + '/networks?shared=True').json()[
        'networks'] == []
    aliases = [e['alias'] for e in
               requests.get(url + '/extensions').json()['extensions']]
    assert 'binding-extended' in aliases
    [version] = requests.get(url[:-len('/v2.0')] + '/').json()['versions']
    assert version['links'][0]['href'] == url + '/'


class _EventSink:
    """A compute API that records the external events it is sent."""

    def __init__(self):
        self.events = []
        self.server = wsgiref.simple_server.make_server(
            '127.0.0.1', procs.free_port(), self.app)
        threading.Thread(target=self.server.serve_forever,
                         daemon=True).start()
        self.url = 'http://127.0.0.1:%d/v2.1' % self.server.server_port

    def app(self, environ, start_response):
        self.events.extend(standins.request_body(environ)['events'])
        start_response('200 OK', [('Content-Type', 'application/json')])
        return [b'{}']


def test_a_plug_report_becomes_network_vif_plugged_for_bound_ports(network):
    state, url = network
    sink = _EventSink()
    state.api_url = sink.url
    try:
        port = _port(url, host='src')
        base = url[:-len('/v2.0')]
        # Not bound on dest yet: the agent there has nothing to report.
        sent = requests.post(base + '/faultdriver/plugged', json={
            'host': 'dest', 'server': 's1', 'ports': [port]}).json()
        assert sent == {'sent': []} and sink.events == []
        requests.post(url + '/ports/%s/bindings' % port,
                      json={'binding': {'host': 'dest'}})
        requests.post(base + '/faultdriver/plugged', json={
            'host': 'dest', 'server': 's1', 'ports': [port]})
        assert sink.events == [{'name': 'network-vif-plugged', 'tag': port,
                                'server_uuid': 's1',
                                'status': 'completed'}]
    finally:
        sink.server.shutdown()


def test_an_attachment_moves_through_reserved_attaching_attached(storage):
    state, url = storage
    volume = state.create_volume()
    assert requests.get(url + '/volumes/%s' % volume).json()['volume'][
        'status'] == 'available'
    created = requests.post(url + '/attachments', json={'attachment': {
        'volume_uuid': volume, 'instance_uuid': 's1', 'connector': None}})
    attachment = created.json()['attachment']['id']
    assert state.volume_status(volume) == 'reserved'
    assert state.attachments('s1') == {volume: [
        {'id': attachment, 'host': None, 'status': 'reserved'}]}
    updated = requests.put(url + '/attachments/%s' % attachment, json={
        'attachment': {'connector': {'host': 'src', 'initiator': 'x'}}})
    info = updated.json()['attachment']['connection_info']
    # Flat, as Cinder answers (Nova adds the 'data' level itself).
    assert info['driver_volume_type'] == 'local'
    assert info['device_path'].endswith(volume)
    assert state.volume_status(volume) == 'attaching'
    assert requests.post(url + '/attachments/%s/action' % attachment,
                         json={'os-complete': None}).status_code == 204
    shown = requests.get(url + '/volumes/%s' % volume).json()['volume']
    assert shown['status'] == 'in-use'
    assert [(a['server_id'], a['host_name']) for a in
            shown['attachments']] == [('s1', 'src')]
    requests.delete(url + '/attachments/%s' % attachment)
    assert state.volume_status(volume) == 'available'
    assert state.attachments('s1') == {}


def test_a_live_migration_holds_two_attachments_of_one_server(storage):
    state, url = storage
    volume = state.create_volume()
    for host in ('src', 'dest'):
        requests.post(url + '/attachments', json={'attachment': {
            'volume_uuid': volume, 'instance_uuid': 's1',
            'connector': {'host': host}}})
    assert sorted(a['host'] for a in state.attachments('s1')[volume]) == [
        'dest', 'src']
    # Another server's is refused: the volume does not allow multiattach.
    refused = requests.post(url + '/attachments', json={'attachment': {
        'volume_uuid': volume, 'instance_uuid': 's2', 'connector': None}})
    assert refused.status_code == 400
    assert 'multiattach' in refused.text


def test_unknown_volumes_and_attachments_are_404(storage):
    _state, url = storage
    assert requests.get(url + '/volumes/nope').status_code == 404
    assert requests.put(url + '/attachments/nope', json={
        'attachment': {'connector': {}}}).status_code == 404
    assert requests.post(url + '/attachments', json={'attachment': {
        'volume_uuid': 'nope', 'instance_uuid': 's1'}}).status_code == 404


def test_a_detach_marks_the_volume_detaching_until_deleted(storage):
    state, url = storage
    volume = state.create_volume()
    attachment = requests.post(url + '/attachments', json={'attachment': {
        'volume_uuid': volume, 'instance_uuid': 's1',
        'connector': {'host': 'src'}}}).json()['attachment']['id']
    requests.post(url + '/attachments/%s/action' % attachment,
                  json={'os-complete': None})
    action = url + '/volumes/%s/action' % volume
    assert requests.post(action, json={'os-begin_detaching': None}
                         ).status_code == 202
    assert state.volume_status(volume) == 'detaching'
    requests.post(action, json={'os-roll_detaching': None})
    assert state.volume_status(volume) == 'in-use'
    requests.post(action, json={'os-begin_detaching': None})
    requests.delete(url + '/attachments/%s' % attachment)
    assert state.volume_status(volume) == 'available'
    assert requests.post(action, json={'os-extend': {}}).status_code == 400


def test_teardown_without_losetup_detaches_nothing(monkeypatch, tmp_path):
    """The guardian cleans every stack: a process-tier machine may lack
    losetup, and its stack had no loop device."""
    from faultdriver.process import volume_standin
    monkeypatch.setenv('PATH', str(tmp_path))
    assert volume_standin.detach_loops(str(tmp_path)) == []
