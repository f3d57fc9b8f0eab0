"""Pieces of the libvirt tier that need no daemon: the scenario topology
mapped onto this machine's CPUs, a compute's libvirt settings, loopback
address blocks, the scenario backends key, and the expectations that read
libvirt's view of the guests.
"""

import os
import socket
import subprocess
import sys
import types

import pytest

from faultdriver import exception
from faultdriver import hostshape
from faultdriver.process import config
from faultdriver.process import guest_image
from faultdriver.process import libvirt_host
from faultdriver.process import runner
from faultdriver.process import standins
from faultdriver.scenario import expect
from faultdriver.scenario import model
from faultdriver.scenario import specs
from tests import runstates


def _evaluate(steps, expectations, state):
    """expect.evaluate on expectations written as in a scenario file."""
    return [result.to_json() for result in expect.evaluate(
        steps, [specs.ExpectationSpec.from_json(e) for e in expectations],
        runstates.state(state))]


SHAPE = hostshape.PINNED_HOST.replace(memory_mb=16384)


def test_cpu_sets_the_machine_lacks_become_every_cpu():
    settings, shape = runner.libvirt_host_settings(SHAPE, [0, 1])
    assert settings == {'compute': {'cpu_dedicated_set': '0-1'}}
    assert (shape.cpu_nodes, shape.cpu_cores,
            shape.cpu_dedicated_set) == (1, 2, '0-1')


def test_cpu_sets_that_fit_are_kept_as_written():
    shape = SHAPE.replace(cpu_dedicated_set='1', cpu_shared_set='0')
    settings, _ = runner.libvirt_host_settings(shape, [0, 1])
    assert settings == {'compute': {'cpu_dedicated_set': '1',
                                    'cpu_shared_set': '0'}}


def test_no_cpu_sets_leave_nova_defaults():
    shape = SHAPE.replace(cpu_dedicated_set=None)
    assert runner.libvirt_host_settings(shape, [0, 1])[0] == {}


def test_seed_scenario_faults_on_libvirt():
    scenario = model.load('stale-error-migration-context')
    faults = runner.host_faults(scenario, 'fix', 'dest', 'libvirt')
    assert faults['inner_driver'] == 'libvirt'
    assert faults['tracker_patches'] == ['stale_migration_context']
    assert 'fake_numa' not in faults['extra']


def _libvirt_stack(tmp_path, name):
    """What config.compute reads of a stack whose host ``name`` runs on
    real libvirt (no daemon started)."""
    host = libvirt_host.LibvirtHost(str(tmp_path), name, '127.0.9.3',
                                    str(tmp_path / 'instances'))
    return types.SimpleNamespace(
        dir=str(tmp_path), libvirt={name: host},
        instances_path=str(tmp_path / 'instances'),
        compute_common_conf=str(tmp_path / 'nova-cpu.conf'),
        compute_conf=lambda h: str(tmp_path / ('nova-compute-%s.conf' % h)),
        hosts=['src', name],
        control_socket=lambda h: str(tmp_path / h / 'control.sock'))


def test_compute_conf_of_a_libvirt_host(tmp_path):
    stack = _libvirt_stack(tmp_path, 'dest')
    sections = config.compute(stack, 'dest', {'inner_driver': 'libvirt'})
    assert ('instances_path', stack.instances_path) in sections['DEFAULT']
    # periodic(host=src) at dest reaches src through its socket.
    assert ('peer_control_sockets', 'src:%s' % (
        tmp_path / 'src' / 'control.sock')) in sections['fault_injection']
    libvirt = dict(sections['libvirt'])
    assert libvirt['virt_type'] == 'qemu'
    assert libvirt['live_migration_inbound_addr'] == '127.0.9.3'
    helper = dict(sections['nova_sys_admin'])['helper_command']
    assert helper.split()[0].endswith('privsep-helper')
    # The compute's own files, without database connections.
    assert helper.split()[1:] == [
        '--config-file', stack.compute_common_conf,
        '--config-file', stack.compute_conf('dest')]
    assert ('inner_driver', 'libvirt') in sections['fault_injection']


@pytest.mark.parametrize('name, interval', [
    ('stale-error-migration-context', -1),      # periodic-timer: false
    ('numa-live-migration-per-host-cpus', 0)])  # the timer, Nova's default
def test_periodic_timer_reaches_the_compute_conf(tmp_path, name, interval):
    # What nova-compute reads (real oslo.config, Nova's own option) from
    # the compute conf the process tier writes for the scenario.
    from nova.conf import compute as nova_compute_conf
    from oslo_config import cfg
    scenario = model.load(name)
    from faultdriver import conf as fault_conf
    stack = types.SimpleNamespace(
        dir=str(tmp_path), libvirt={},
        neutron=types.SimpleNamespace(url='http://127.0.0.1:9696'),
        hosts=['src', 'dest'],
        control_socket=lambda h: '/run/fd/%s.sock' % h)
    sections = config.compute(stack, 'dest', runner.host_faults(
        scenario, next(iter(scenario.variants)), 'dest'))
    # fake_numa reports its plugs to the network stand-in.
    assert dict(sections['fake_numa'])['network_agent_url'] == \
        'http://127.0.0.1:9696/faultdriver/plugged'
    path = config.write(str(tmp_path / 'compute.conf'), sections)
    conf = cfg.ConfigOpts()
    nova_compute_conf.register_opts(conf)
    fault_conf.register_opts(conf)
    conf([], project='nova', default_config_files=[path])
    assert conf.update_resources_interval == interval
    # periodic(host=src) on dest: src's socket, as oslo.config reads it.
    assert conf.fault_injection.peer_control_sockets == {
        'src': '/run/fd/src.sock'}


def test_live_migration_bandwidth_reaches_the_libvirt_conf(tmp_path):
    # Nova's own [libvirt] option, read by real oslo.config from the
    # compute conf the libvirt tier writes for the scenario.
    from nova.conf import libvirt as nova_libvirt_conf
    from oslo_config import cfg
    scenario = model.load('graceful-stop-during-transfer-libvirt')
    stack = _libvirt_stack(tmp_path, 'src')
    sections = config.compute(stack, 'src', runner.host_faults(
        scenario, 'stock', 'src', 'libvirt', cpus=[0, 1]))
    path = config.write(str(tmp_path / 'compute.conf'), sections)
    conf = cfg.ConfigOpts()
    nova_libvirt_conf.register_opts(conf)
    conf([], project='nova', default_config_files=[path])
    assert conf.libvirt.live_migration_bandwidth == \
        scenario.live_migration_bandwidth > 0
    # Real libvirt's own settings are still there beside it.
    assert conf.libvirt.virt_type == 'qemu'


def test_a_bandwidth_on_a_fake_driver_tier_is_refused(tmp_path):
    with open(model.load('graceful-stop-during-transfer-libvirt').path) as f:
        text = f.read()
    path = tmp_path / 'bandwidth.yaml'
    path.write_text(text.replace('backends: [libvirt]',
                                 'backends: [libvirt, process]'))
    with pytest.raises(exception.ScenarioError) as raised:
        model.load(str(path))
    assert 'topology.live-migration-bandwidth' in str(raised.value)
    assert 'backends: [libvirt]' in str(raised.value)


def test_nova_accepts_the_guest_image(tmp_path):
    # Nova's own deep inspection of a downloaded image (oslo.utils'
    # format inspector and its safety checks): a boot sector without a
    # partition table is "Image does not pass safety check".
    from nova import exception as nova_exception
    from nova.virt import images
    path = tmp_path / 'image'
    path.write_bytes(guest_image.disk(standins.IMAGE_SIZE))
    images.do_image_deep_inspection(standins.IMAGE, standins.IMAGE_ID,
                                    str(path))
    path.write_bytes(guest_image._CODE.ljust(510, b'\0') + b'\x55\xaa' +
                     bytes(standins.IMAGE_SIZE - 512))
    with pytest.raises(nova_exception.ImageUnacceptable,
                       match='safety check'):
        images.do_image_deep_inspection(standins.IMAGE, standins.IMAGE_ID,
                                        str(path))


def test_address_blocks_skip_one_in_use():
    first = libvirt_host.free_addresses(2)
    with socket.socket() as busy:
        busy.bind((first[0], libvirt_host.LIBVIRT_PORT))
        busy.listen()
        second = libvirt_host.free_addresses(2)
    assert first[0] not in second and len(set(second)) == 2


def test_libvirt_only_scenario_refuses_other_backends():
    done = subprocess.run(
        [sys.executable, '-m', 'faultdriver.cmd.main', 'scenario', 'run',
         'source-crash-after-live-migration', '--backend', 'embedded'],
        capture_output=True, text=True, timeout=120,
        env=dict(os.environ, PYTHONWARNINGS='ignore'))
    assert done.returncode == 2
    assert 'runs on backends libvirt' in done.stderr
    assert 'Traceback' not in done.stderr


def test_bundled_libvirt_scenarios_say_so():
    only = {name for name in model.bundled()
            if model.load(name).backends == ('libvirt',)}
    assert only == {'source-crash-after-live-migration',
                    'dest-crash-after-pre-live-migration',
                    'compute-crash-running-guest',
                    'dest-crash-in-evacuation-libvirt',
                    'graceful-stop-libvirt',
                    'graceful-stop-during-transfer-libvirt',
                    'graceful-stop-between-move-steps-libvirt',
                    'live-migration-bfv-libvirt'}
    assert 'libvirt' in model.load(
        'stale-error-migration-context').backends


STATE = {'servers': {'s1': {'pinned_cpus': [1], 'guests': {'dest':
                                                           'running'}},
                     's2': {'pinned_cpus': [1, 0]},
                     's3': {'pinned_cpus': [0]}},
         'hosts': {'dest': {'pinned_cpus': [], 'placement_pcpu': 1}}}


@pytest.mark.parametrize('args, met', [
    ({'server': 's1', 'host': 'dest', 'state': 'running'}, True),
    ({'server': 's1', 'host': 'src', 'state': 'absent'}, True),
    ({'server': 's1', 'host': 'dest', 'state': 'paused'}, False),
    ({'server': 's1', 'host': 'src', 'state': 'running'}, False),
])
def test_guest_expectation(args, met):
    [verdict] = _evaluate(None, [{'guest': args}], STATE)
    assert verdict['met'] is met


def test_guest_expectation_without_the_guests_is_never_met():
    """A scenario with it is refused where no real hypervisor is
    (tests/unit/test_provisions.py); a state without the guests is
    still not met, even for ``absent``."""
    [verdict] = _evaluate(None, [{'guest': {
        'server': 's2', 'host': 'dest', 'state': 'absent'}}], STATE)
    assert verdict['met'] is False
    assert 'could not check' in verdict['actual']


@pytest.mark.parametrize('args, met', [
    ({'host': 'dest', 'pinned': 0, 'placement': 1}, True),
    ({'host': 'dest', 'pinned': 0, 'placement': 0}, False),
    ({'host': 'dest', 'pinned': 1}, False),
])
def test_host_usage_expectation(args, met):
    [verdict] = _evaluate(None, [{'host-usage': args}], STATE)
    assert verdict['met'] is met


@pytest.mark.parametrize('servers, met', [
    (['s1', 's2'], True), (['s3', 's2'], True), (['s2', 's1'], False),
    (['s1', 's3'], False)])
def test_share_all_means_every_pcpu_of_the_first(servers, met):
    [verdict] = _evaluate(None, [{'servers-share-pcpus': {
        'servers': servers, 'count': 'all'}}], STATE)
    assert verdict['met'] is met
