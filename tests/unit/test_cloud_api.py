"""The cloud tier's API layer: keystoneauth adapters answering the API's
JSON, with the scenario's host names (src, dest) turned into the cloud's
in requests and back in responses -- through a real keystoneauth
session against a small HTTP server on 127.0.0.1 standing in for
nova-api (Keystone itself is the CI cloud's: tests/process)."""

import http.server
import json
import threading

from keystoneauth1 import adapter
from keystoneauth1 import session
import pytest

from faultdriver.cloud import api
from faultdriver.cloud import profile

HOSTS = {alias: profile.HostProfile(
    alias=alias, ssh='fd-' + alias, host='compute-' + alias,
    nodename='node-' + alias, manager='systemd', unit='u',
    socket='/s', journal='/j', log=('file', '/l'), start_rules='/r')
    for alias in ('src', 'dest')}


def test_responses_name_hosts_as_the_scenario_does():
    aliases = api.Aliases(HOSTS)
    found = aliases.response({'migrations': [{
        'source_compute': 'compute-src', 'dest_compute': 'compute-dest',
        'source_node': 'node-src', 'dest_node': 'node-dest',
        'status': 'error'}], 'server': {
            'OS-EXT-SRV-ATTR:host': 'compute-dest',
            'OS-EXT-SRV-ATTR:hypervisor_hostname': 'node-dest',
            'name': 'compute-src'}})
    assert found['migrations'][0] == {
        'source_compute': 'src', 'dest_compute': 'dest',
        'source_node': 'src', 'dest_node': 'dest', 'status': 'error'}
    # Only host keys are names: a server's own name is left alone.
    assert found['server'] == {'OS-EXT-SRV-ATTR:host': 'dest',
                               'OS-EXT-SRV-ATTR:hypervisor_hostname': 'dest',
                               'name': 'compute-src'}


def test_requests_name_the_real_host_and_others_pass():
    aliases = api.Aliases(HOSTS)
    assert aliases.request({'os-migrateLive': {
        'host': 'dest', 'block_migration': 'auto'}}) == {
        'os-migrateLive': {'host': 'compute-dest',
                           'block_migration': 'auto'}}
    # A host outside the profile is not the scenario's: unchanged.
    assert aliases.request({'host': 'elsewhere'}) == {'host': 'elsewhere'}
    assert aliases.alias('elsewhere') == 'elsewhere'


class _Nova(http.server.BaseHTTPRequestHandler):
    seen = []

    def _answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        length = int(self.headers['Content-Length'])
        self.seen.append((self.path, json.loads(self.rfile.read(length)),
                          self.headers.get('OpenStack-API-Version')))
        self._answer(202, {'server': {'id': 'x1'}})

    def do_GET(self):
        if self.path == '/servers/missing':
            return self._answer(404, {'itemNotFound': {'code': 404}})
        self._answer(200, {'server': {'id': 'x1',
                                      'OS-EXT-SRV-ATTR:host': 'compute-src'}})

    def log_message(self, *args):
        pass


@pytest.fixture
def nova_api():
    server = http.server.HTTPServer(('127.0.0.1', 0), _Nova)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield 'http://127.0.0.1:%d' % server.server_address[1]
    server.shutdown()
    server.server_close()


def test_a_keystoneauth_adapter_carries_translated_json(nova_api):
    _Nova.seen = []
    compute = adapter.Adapter(session.Session(), endpoint_override=nova_api)
    cloud = api.CloudAPI({'compute': compute}, api.Aliases(HOSTS), {
        'compute': {'OpenStack-API-Version': 'compute 2.96'}})
    assert cloud.post('/servers', {'server': {'host': 'src'}}) == {
        'server': {'id': 'x1'}}
    assert _Nova.seen == [('/servers', {'server': {'host': 'compute-src'}},
                           'compute 2.96')]
    assert cloud.get('/servers/x1')['server']['OS-EXT-SRV-ATTR:host'] == \
        'src'
    with pytest.raises(api.APIError) as caught:
        cloud.get('/servers/missing')
    assert caught.value.status == 404
