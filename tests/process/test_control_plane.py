"""The control plane stopped and started by a scenario's steps
(``stop-service``, ``start-service``: faultdriver.scenario.controlsteps)
on the process tier: each service ends, starts as a new process and
serves again -- Nova's own services reconnected to a restarted broker
carry a live migration's calls and casts, a restarted conductor,
scheduler and placement schedule a boot.

In the process tier's tests line.
"""

from faultdriver.process import nova as process_nova
from faultdriver.process import procs
from tests import stacks


def test_each_control_service_stops_starts_and_serves_again():
    with stacks.unpinned_stack() as stack:
        stack.wait_schedulable()
        nova = process_nova.ProcessNova(stack, pinned=False)
        server = nova.boot('src')
        for name in ('nova-conductor', 'nova-scheduler', 'placement'):
            old = stack.processes[name]
            nova.stop_service(name)
            assert not old.alive(), name
            nova.start_service(name)
            assert stack.processes[name].alive(), name
            assert stack.processes[name].pid != old.pid, name

        broker = stack.rabbit.process
        nova.stop_service('rabbitmq')
        assert not procs.port_open(stack.rabbit.port)
        nova.start_service('rabbitmq')
        assert stack.rabbit.process.pid != broker.pid
        # The step returned once every service consumed its queue again.
        assert all(nova.consumers(host) == 1 for host in ('src', 'dest'))

        # RPC through the new broker: the conductor's calls, the
        # computes' calls and casts of a live migration.
        nova.api.post_server_action(server['id'], {'os-migrateLive': {
            'host': 'dest', 'block_migration': 'auto'}})
        nova.wait_newest_migration(server, 'completed', 1, timeout=90)
        nova.wait_for_server(server, status='ACTIVE', host='dest',
                             task_state=None)
        # The restarted scheduler, conductor and placement place a boot.
        assert nova.boot('src')['status'] == 'ACTIVE'
