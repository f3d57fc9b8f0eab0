"""A cloud compute's guests, asked of its libvirt with ``virsh`` on the
host over SSH (a REAL key-only sshd, :mod:`tests.sshd`), as the cloud
tier asks where the profile names the host's libvirt: here libvirt's
own test driver (``test:///default``, one running domain, no daemon).

In the process tier's line (tools/install-process-deps.sh installs
OpenSSH and libvirt's clients); skipped only where either is missing,
and never in CI, where a missing one fails the test instead.
"""

import os
import shutil

import pytest

from faultdriver.cloud import backend
from faultdriver.cloud import helper
from faultdriver.cloud import transport
from tests import sshd

pytestmark = pytest.mark.skipif(
    not (sshd.available() and shutil.which('virsh'))
    and not os.environ.get('CI'), reason='needs OpenSSH and virsh')

#: The one domain libvirt's test driver defines, running.
TEST_DOMAIN = '6695eb01-f6a4-8304-79aa-97f2502e193f'


@pytest.fixture(scope='module')
def server_sshd():
    running = sshd.Sshd().start()
    yield running
    running.stop()


def test_guests_of_a_host_s_libvirt_over_ssh(server_sshd):
    with transport.Transport(transport.SshTarget(
            'fd-a', server_sshd.path('ssh_config'),
            relay_command=sshd.RELAY)) as reached:
        found = helper.HostHelper(reached).guests('test:///default')
    assert found == [{'uuid': TEST_DOMAIN, 'state': 'running', 'disks': [
        {'type': 'file', 'device': 'disk', 'target': 'vda',
         'source': '/guest/diskimage1'}]}]
    assert backend.guest_states(found) == {TEST_DOMAIN: 'running'}


@pytest.mark.parametrize('said, state', [
    ('shut off', 'shutoff'), ('in shutdown', 'shutdown'),
    ('idle', 'blocked'), ('no state', 'nostate'), ('paused', 'paused'),
    ('something new', '?')])
def test_virsh_words_are_the_libvirt_tier_s_states(said, state):
    assert backend.guest_states([{'uuid': 'u', 'state': said}]) == {
        'u': state}
