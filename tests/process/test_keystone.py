"""A process-tier stack with real Keystone (``Stack(keystone=True)``):
nova-api behind keystonemiddleware's authtoken (the installed
api-paste) and placement on Keystone answer 401 to a request without a
token; with the admin's token a server boots (nova-api, the scheduler,
placement and the compute each authenticating with their own service
users through the catalog).

One compute is enough for authentication; the standing cloud of
``faultdriver stack up`` has two.
"""

import pytest
import requests

from faultdriver.process import keystone
from faultdriver.process import nova as process_nova
from faultdriver.process import stack as stack_module
from tests import stacks


@pytest.fixture(scope='module')
def stack():
    faults = {'src': {'inner_driver': 'fake_numa'}}
    with stack_module.Stack(hosts=('src',), faults=faults, mode=stacks.MODE,
                            progress=print, keystone=True) as running:
        running.wait_schedulable()
        yield running


def test_no_token_is_refused_by_nova_api_and_placement(stack):
    for url in (stack.api_url + '/servers',
                stack.placement_url + '/resource_providers'):
        answer = requests.get(url, timeout=30)
        assert answer.status_code == 401, (url, answer.text[:300])


def test_a_wrong_token_is_refused(stack):
    answer = requests.get(stack.api_url + '/servers', timeout=30,
                          headers={'X-Auth-Token': 'admin'})
    assert answer.status_code == 401


def test_the_catalog_has_every_service(stack):
    _token, body = keystone.token(stack.keystone_url, keystone.ADMIN,
                                  stack.password, keystone.ADMIN)
    assert {entry['type'] for entry in body['catalog']} >= {
        'identity', 'compute', 'placement', 'image', 'network', 'volumev3'}


def test_a_boot_with_a_token_works(stack):
    nova = process_nova.ProcessNova(stack, pinned=False)
    server = nova.boot('src', port=True)
    assert nova.client.server(server['id'])['status'] == 'ACTIVE'
    assert nova.client.usages('src')['VCPU'] >= 1
