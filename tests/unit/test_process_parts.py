"""Pieces of the process tier that need no running stack: nova.conf
rendering, reading pinned CPUs from the database's serialized Nova
objects, the scenario topology given to fake_numa, the schema cache key.
"""

import json

from nova import objects

from faultdriver.process import config
from faultdriver.process import nova as process_nova
from faultdriver.process import runner
from faultdriver.scenario import model

objects.register_all()


def test_render_repeats_multi_valued_keys():
    text = config.render({'fault_injection': [
        ('enabled', True), ('rules', 'a: log'), ('rules', 'b: crash')]})
    assert text.splitlines() == ['[fault_injection]', 'enabled = true',
                                 'rules = a: log', 'rules = b: crash']


def test_host_pinned_cpus_reads_nova_serialized_topology():
    topology = objects.NUMATopology(cells=[
        objects.NUMACell(id=0, cpuset=set(), pcpuset={0, 1, 2, 3},
                         memory=1024, memory_usage=0, pinned_cpus={1, 3},
                         siblings=[], mempages=[]),
        objects.NUMACell(id=1, cpuset=set(), pcpuset={4, 5},
                         memory=1024, memory_usage=0, pinned_cpus={4},
                         siblings=[], mempages=[])])
    assert process_nova.host_pinned_cpus(topology._to_json()) == [1, 3, 4]
    assert process_nova.host_pinned_cpus(None) == []


def test_instance_pinned_cpus_reads_nova_serialized_topology():
    cell = objects.InstanceNUMACell(id=0, cpuset=set(), pcpuset={0, 1},
                                    memory=512, cpu_policy='dedicated')
    cell.pin_vcpus((0, 6), (1, 2))
    topology = objects.InstanceNUMATopology(cells=[cell])
    stored = json.dumps(topology.obj_to_primitive())
    assert process_nova.instance_pinned_cpus(stored) == [2, 6]


def test_seed_topology_becomes_fake_numa_settings():
    scenario = model.load('stale-error-migration-context')
    settings = runner.host_settings(scenario.host_shapes()['dest'])
    assert settings == {
        'fake_numa': {'cells': 1, 'cores_per_cell': 4,
                      'threads_per_core': 1,
                      # fakelibvirt's memory, as on the embedded Nova
                      'memory_mb_per_cell': 16386},
        'compute': {'cpu_dedicated_set': '0-3'}}


def test_computes_get_no_database_connection():
    """As devstack's nova-cpu.conf: with [api_database] connection a
    Nova 34 compute checks versions across cells from two threads at
    start and can die (doc/findings.rst F13)."""
    from faultdriver.process import config
    common = {'DEFAULT': [('debug', True)],
              'api_database': [('connection', 'mysql+pymysql://x/nova_api')],
              'database': [('connection', 'mysql+pymysql://x/nova_cell1')],
              'placement': [('auth_type', 'admin_token')]}
    assert config.compute_common(common) == {
        'DEFAULT': [('debug', True)],
        'placement': [('auth_type', 'admin_token')]}


def test_free_port_is_never_one_an_outgoing_connection_can_take():
    # CI saw RabbitMQ refuse its distribution port (dist_port_already_used,
    # not_erlang): bind(0) handed out an ephemeral port, which an outgoing
    # connection then took before the broker bound it.
    from faultdriver.process import procs
    low, high = procs._ephemeral_range()
    ports = [procs.free_port() for _ in range(50)]
    assert len(set(ports)) == 50
    if low > procs._LOWEST_PORT or high < 65535:
        assert not [port for port in ports if low <= port <= high]


def test_free_port_skips_a_port_someone_listens_on(monkeypatch):
    import socket

    from faultdriver.process import procs
    with socket.socket() as listener:
        listener.bind(('127.0.0.1', procs.free_port()))
        listener.listen()
        taken = listener.getsockname()[1]
        procs._handed_out.discard(taken)
        monkeypatch.setattr(procs, '_LOWEST_PORT', taken)
        monkeypatch.setattr(procs, '_ephemeral_range',
                            lambda: (taken + 2, 65535))
        # Only taken and taken + 1 are candidates; taken is listened on.
        assert procs.free_port() == taken + 1
