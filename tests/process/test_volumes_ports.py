"""A volume and a port move with a live migration between real Nova
processes: the block-storage and network stand-ins see Nova's own calls.

Invariants: after the move the server's one attachment is connected on
dest and named by its block device mapping, the volume is ``in-use``,
its port has one binding, active, on dest (the conductor's inactive
binding activated, the source's deleted); the source waited for the
``network-vif-plugged`` event dest's plug sent (fake_numa plays the L2
agent) and did not time out waiting for it.
"""

from faultdriver.process import nova as process_nova
from tests import stacks


def test_a_live_migration_moves_the_attachment_and_the_binding():
    with stacks.pinned_stack() as stack:
        nova = process_nova.ProcessNova(stack, pinned=True)
        server = nova.boot('src', volume=True, port=True)
        [(volume, before)] = nova.server_volumes(server).items()
        [port] = nova.server_ports(server)
        nova.api.post_server_action(server['id'], {'os-migrateLive': {
            'host': 'dest', 'block_migration': 'auto'}})
        nova.wait_newest_migration(server, 'completed', 1)
        nova.wait_for_server(server, status='ACTIVE', host='dest')

        after = nova.server_volumes(server)[volume]
        assert [a['host'] for a in after['attachments']] == ['dest']
        assert after['bdm'] == after['attachments'][0]['id'] != \
            before['bdm']
        assert stack.block_storage.volume_status(volume) == 'in-use'
        assert nova.server_ports(server) == {port: {'dest': 'ACTIVE'}}
        assert ('reported ports %s plugged on dest' % port
                in nova.log_text('dest'))
        source_log = nova.log_text('src')
        assert 'Processing event network-vif-plugged-%s' % port in \
            source_log
        assert 'Timed out waiting for events' not in source_log
        assert 'Not waiting for events after pre_live_migration' \
            not in source_log
