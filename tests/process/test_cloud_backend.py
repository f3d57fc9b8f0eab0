"""The cloud tier's backend against real Nova processes reached as a
cloud is: the process tier's stack, its computes' control sockets,
journals and logs reached over a REAL key-only sshd (tests/sshd.py), its
compute and placement APIs through keystoneauth Adapters -- with the
scenario's hosts named ``a`` and ``b`` while Nova calls them ``src`` and
``dest``, so every answer crossing the alias layer is seen translated.

The stack has no Keystone (``faultdriver stack up`` brings one, and the
end-to-end scenario run goes there): the adapters carry the identity
headers the stack's nova-api takes instead of a token.  Crashes and
restarts need a service manager, which this stack's computes do not
have; they are left to the run on ``stack up``.
"""

import os
import shutil
import tempfile

from keystoneauth1 import adapter
from keystoneauth1 import session
import pytest

from faultdriver.cloud import api
from faultdriver.cloud import audit
from faultdriver.cloud import backend
from faultdriver.cloud import checks
from faultdriver.cloud import computes as computes_module
from faultdriver.cloud import profile as profile_module
from faultdriver.cloud import survey
from faultdriver.process import client as process_client
from faultdriver.process import standins
from faultdriver.scenario import conformance
from faultdriver.scenario.invariants import attachments
from faultdriver.scenario import runstate
from tests import sshd
from tests import stacks

pytestmark = pytest.mark.skipif(
    not sshd.available() and not os.environ.get('CI'), reason=sshd.MISSING)

#: The scenario's names of the stack's hosts.
ALIASES = {'a': 'src', 'b': 'dest'}


def cloud_profile(stack, running, directory):
    hosts = {alias: profile_module.HostProfile(
        alias=alias, ssh='fd-a', host=real, nodename=real,
        manager='systemd', unit='nova-compute-%s' % real,
        socket=stack.control_socket(real),
        journal=stack.journal_path(real),
        log=('file', stack.compute_log(real)),
        start_rules=os.path.join(directory, real + '.start.json'))
        for alias, real in ALIASES.items()}
    return profile_module.Profile(
        path=os.path.join(directory, 'lab.yaml'), cloud='stack',
        fault_injection_allowed=True, hosts=hosts,
        ssh_config=running.path('ssh_config'), image=standins.IMAGE_ID)


def headerless_api(stack, profile):
    """keystoneauth Adapters on the stack's endpoints, its identity
    headers in place of Keystone's token."""
    plain = session.Session()
    return api.CloudAPI(
        {'compute': adapter.Adapter(plain, endpoint_override=stack.api_url),
         'placement': adapter.Adapter(
             plain, endpoint_override=stack.placement_url),
         'block-storage': adapter.Adapter(
             plain, endpoint_override='%s/v3/%s' % (
                 stack.cinder.url, process_client.PROJECT))},
        api.Aliases(profile.hosts),
        {'compute': process_client.HEADERS,
         'placement': process_client.PLACEMENT_HEADERS})


def test_the_backend_reads_real_nova_through_the_alias_layer():
    running = sshd.Sshd().start()
    directory = tempfile.mkdtemp(prefix='fdcb', dir='/tmp')
    try:
        with stacks.pinned_stack() as stack:
            profile = cloud_profile(stack, running, directory)
            cloud = headerless_api(stack, profile)
            with computes_module.Computes(profile) as computes:
                readings = {alias: checks.read_status(
                    computes.control(alias)) for alias in ALIASES}
                for alias, reading in readings.items():
                    assert checks.refusals(profile.hosts[alias],
                                           reading.status) == []
                nova = backend.CloudNova(profile, cloud, computes,
                                         list(ALIASES), 'r-test', readings,
                                         default_vcpus=2)
                conformance.check(nova)
                assert nova.faults.rpc_timeout == 8
                nova.begin()
                exercise(nova)
    finally:
        running.stop()
        shutil.rmtree(directory, ignore_errors=True)


def exercise(nova):
    server = nova.boot('a')
    assert nova.server_fields(server) == {
        'status': 'ACTIVE', 'host': 'a', 'task_state': None}
    assert nova.service_state('a') == 'up'

    # A fault on b, seen in b's journal as b's.
    nova.faults.add_rule('b', 'pre_live_migration: 1*log')
    nova.admin_api.post_server_action(server['id'], {'os-migrateLive': {
        'host': 'b', 'block_migration': 'auto'}})
    nova.faults.wait_for_hit('b', 'pre_live_migration')
    done = nova.wait_newest_migration(server, 'completed', 1, timeout=90)
    assert (done['source_compute'], done['dest_compute']) == ('a', 'b')
    nova.wait_for_server(server, host='b', task_state=None)
    fired = [e for e in nova.faults.history()
             if e.get('point') == 'pre_live_migration']
    assert [e['host'] for e in fired] == ['b']

    # Accounting through the pinning op (over SSH) and placement.
    assert nova.run_periodic('b') is True
    pinned = nova.instance_pinning(server)
    assert pinned and set(pinned) == set(nova.pinned_cpus('b'))
    assert nova.placement_pcpus('b') == len(pinned)
    assert nova.pinned_cpus('a') == [] and nova.placement_pcpus('a') == 0
    assert set(nova.provider_allocations('b')) == {server['id']}
    assert nova.tracked_tasks('a') == []
    assert 'Final resource view' in nova.log_text()
    assert nova.foreign_activity() == []
    others_on_the_hosts_make_the_run_cloud_dirty(nova)
    restore_deletes_a_killed_runs_server_and_its_leak(nova, server, done)
    leaked_allocations_are_deleted_only_for_the_run(nova, server['id'])
    volumes_are_read_from_cinder_and_deleted_with_the_run(nova)


def plant(nova, host, consumer):
    """An allocation of 64 MB on ``host``'s provider held by
    ``consumer`` (what a leak looks like to placement)."""
    held = nova.cloud.get('/allocations/%s' % consumer, service='placement',
                          translate=False)
    nova.cloud.request('PUT', '/allocations/%s' % consumer, {
        'allocations': {nova._provider(host): {
            'resources': {'MEMORY_MB': 64}}},
        'project_id': 'p', 'user_id': 'u',
        'consumer_generation': held.get('consumer_generation'),
        'consumer_type': 'INSTANCE'}, service='placement', translate=False)


#: A consumer no run of faultdriver's made (another user's).
FOREIGN = '0c2d4f6e-8a1b-4c3d-9e5f-a7b9c1d3e5f7'


def others_on_the_hosts_make_the_run_cloud_dirty(nova):
    """A server someone else boots on a run's host, and an allocation
    someone else makes there, while the run runs: named as foreign
    activity (the runner's "cloud dirty"), the run's own server and
    migration never."""
    other = nova.boot('a')
    nova.servers.remove(other['id'])     # booted, as far as the run knows,
    plant(nova, 'b', FOREIGN)            # by someone else
    assert set(nova.foreign_activity()) == {
        'server %s on a' % other['id'], 'allocation of %s on a' % other['id'],
        'allocation of %s on b' % FOREIGN}
    nova.cloud.request('DELETE', '/servers/%s' % other['id'])
    nova.wait(lambda: not nova.server_exists(other), 'other deleted', 60)


def restore_deletes_a_killed_runs_server_and_its_leak(nova, server,
                                                      migration):
    """``cloud restore`` after a runner killed mid-run: the server its
    audit log names is deleted, then what placement still holds for that
    server's migration on the profile's hosts (a leak: Nova deletes only
    the server's own allocations with it); another consumer's stays."""
    directory = tempfile.mkdtemp(prefix='fdaudit', dir='/tmp')
    try:
        log = audit.AuditLog(os.path.join(directory, 'killed.jsonl'))
        [name] = [s['name'] for s in nova.cloud.get(
            '/servers/detail?all_tenants=1')['servers']
            if s['id'] == server['id']]
        log.record('fd-a', 'server:' + name, 'create server ' + name,
                   (backend.API_UNDO, 'server', name))
        plant(nova, 'b', migration['uuid'])
        plant(nova, 'b', FOREIGN)
        said = survey.delete_created(nova.profile, [log], nova.cloud)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    assert said == [
        'fd-a: deleted server ' + name,
        'fd-a: deleted 64 MEMORY_MB left in placement on dest for %s '
        'after its server was deleted' % migration['uuid']]
    assert not nova.server_exists(server)
    assert set(nova.provider_allocations('b')) == {FOREIGN}


def leaked_allocations_are_deleted_only_for_the_run(nova, server_id):
    """What placement holds for the run's consumers once its servers are
    gone (a leak a case found) is deleted at the run's end, so a sweep's
    next case on the same cloud starts clean; another consumer's
    allocation stays."""
    plant(nova, 'b', server_id)
    assert set(nova.provider_allocations('b')) == {server_id, FOREIGN}
    said = nova._drop_leaked({server_id})
    assert set(nova.provider_allocations('b')) == {FOREIGN}
    assert said == ['deleted 64 MEMORY_MB left in placement on b for %s '
                    'after its server was deleted' % server_id]
    nova.cloud.request('DELETE', '/allocations/%s' % FOREIGN,
                       service='placement')


def volumes_are_read_from_cinder_and_deleted_with_the_run(nova):
    """A server from a volume and a volume attached to it, both made
    through the APIs as a user makes them: each volume's attachment is
    read from Cinder with the host its volume's view names (the alias),
    the block device mapping naming that attachment; a detached volume
    and a server's boot volume are gone after the run's end, and
    ``cloud restore`` deletes by name a volume a killed run left."""
    server = nova.boot('a', volume=True)
    [root] = nova.mapped_volumes(server)
    views = nova.server_volumes(server)
    assert list(views) == [root]
    [attachment] = views[root]['attachments']
    assert attachment['host'] == 'a'
    assert views[root]['bdm'] == attachment['id']
    assert attachments.misattached_volumes(
        {'vm': runstate.RunServer(server['id'], 'ACTIVE', 'a', None, [],
                                  volumes=views)}) == []

    extra = nova.request_volume_attach(server)
    nova.wait(lambda: len(nova.server_volumes(server).get(
        extra, {}).get('attachments', [])) == 1 and nova.server_volumes(
            server)[extra]['attachments'][0]['host'] == 'a',
        'volume attached on a', 60)
    nova.request_volume_detach(server, extra)
    nova.wait(lambda: extra not in nova.server_volumes(server),
              'volume detached', 60)
    assert nova.cloud.get('/volumes/%s' % extra, service='block-storage')[
        'volume']['status'] == 'available'

    # The run's end: the server's deletion takes its root volume, the
    # run deletes the detached one.
    nova.api.delete_server(server['id'])
    nova.wait(lambda: not nova.server_exists(server), 'server deleted', 60)
    nova.servers.remove(server['id'])
    assert nova._delete_volumes() == []
    for volume_id in (root, extra):
        with pytest.raises(api.APIError) as error:
            nova.cloud.get('/volumes/%s' % volume_id,
                           service='block-storage')
        assert error.value.status == 404

    directory = tempfile.mkdtemp(prefix='fdaudit', dir='/tmp')
    try:
        left = nova._create_volume('a')
        [name] = [v['name'] for v in nova.cloud.get(
            '/volumes/detail', service='block-storage')['volumes']
            if v['id'] == left]
        log = audit.AuditLog(os.path.join(directory, 'killed.jsonl'))
        log.record('fd-a', 'volume:' + name, 'create volume ' + name,
                   (backend.API_UNDO, 'volume', name))
        assert survey.delete_created(nova.profile, [log], nova.cloud) == [
            'fd-a: deleted volume ' + name]
        assert log.open() == []
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    with pytest.raises(api.APIError):
        nova.cloud.get('/volumes/%s' % left, service='block-storage')
