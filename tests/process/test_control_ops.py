"""The control ops a runner on another machine reads (issue 42), on real
nova-compute processes, against what the process tier reads today.

Invariants: ``pinning`` through a compute's socket equals the SQL read
of its compute node record (``ProcessNova.pinned_cpus``), and another
compute reads the same record through the conductor (nova-compute has
no database access), also while the first is down; ``status`` reports
the settings the tier wrote into nova.conf (``process/config.TIMINGS``,
whose ``rpc_response_timeout`` the tier's ``rpc_timeout`` assumes), the
host's node, and ``rpc_started`` once the compute consumes its queue;
``timer`` reflects ``update_resources_interval`` as the tier sets it for
``periodic-timer: false`` (never on the timer: cannot go on) and, on a
compute whose timer runs the periodic, keeps it off until switched on.

In the process tier's tests line.
"""

import time

from oslo_service import periodic_task

from faultdriver.control import protocol
from faultdriver import hostshape
from faultdriver.process import config
from faultdriver.process import nova as process_nova
from faultdriver.process import runner
from faultdriver.process import stack as stack_module
from faultdriver.scenario import tiers
from tests import stacks

POINT = 'tracker.update_available_resource'


def stack():
    """A pinned fake_numa stack whose ``dest`` runs without the timer's
    resource periodic, as a ``periodic-timer: false`` scenario's."""
    faults = {host: {'inner_driver': 'fake_numa', 'enabled': True,
                     'extra': runner.host_settings(hostshape.PINNED_HOST)}
              for host in ('src', 'dest')}
    faults['dest']['extra']['DEFAULT'] = {'update_resources_interval': -1}
    return stack_module.Stack(faults=faults, mode=stacks.MODE,
                              progress=print)


def test_pinning_status_and_timer_agree_with_the_tier():
    with stack() as running:
        nova = process_nova.ProcessNova(running, pinned=True)
        src, dest = nova.faults.control('src'), nova.faults.control('dest')

        # status: what the tier wrote, and a compute ready for work.  The
        # stack is up once each compute's RPC server consumes, a moment
        # before Nova's Service.start calls post_start_hook (which sets
        # rpc_started): wait for that, bounded, then read it.
        for host, control in (('src', src), ('dest', dest)):
            nova.wait(lambda: control.status()['rpc_started'],
                      'rpc_started on %s' % host, 30)
            status = control.status()
            assert (status['host'], status['nodenames'],
                    status['rpc_started']) == (host, [host], True)
            settings = status['settings']
            assert settings['rpc_response_timeout'] == \
                tiers.PROCESSES_RPC_TIMEOUT == \
                config.TIMINGS['rpc_response_timeout']
            assert (settings['long_rpc_timeout'],
                    settings['report_interval']) == (
                config.TIMINGS['long_rpc_timeout'],
                config.TIMINGS['report_interval'])
            assert settings['debug'] is True
            assert abs(status['time'] - time.time()) < 5
        assert src.status()['settings']['update_resources_interval'] == \
            config.PERIODIC_INTERVAL
        assert dest.status()['settings']['update_resources_interval'] == -1

        # pinning: the SQL read, through either compute.
        nova.boot(host='src')
        pinned = nova.pinned_cpus('src')
        assert len(pinned) == nova.default_vcpus
        assert src.pinning()['pinned_cpus'] == pinned
        assert dest.pinning(host='src')['pinned_cpus'] == pinned
        assert dest.pinning()['pinned_cpus'] == nova.pinned_cpus('dest')

        # timer: dest's periodic was never on its timer.
        assert dest.timer() == {'host': 'dest', 'on': False,
                                'interval': None}
        try:
            dest.timer(True)
        except protocol.RequestRejected as exc:
            assert 'update_resources_interval was negative' in str(exc)
        else:
            raise AssertionError('dest put a periodic on its timer that '
                                 'was never there')
        # src's runs every PERIODIC_INTERVAL seconds until switched off.
        src.add(POINT + ': log(timer)')
        seen = src.wait(POINT, count=1, timeout=30)
        assert src.timer(False)['on'] is False
        # A tick that began before the switch may still end: let it.
        time.sleep(3 * config.PERIODIC_INTERVAL)
        off = src.counters().get(POINT + '.before', seen)
        time.sleep(3 * config.PERIODIC_INTERVAL)
        assert src.counters().get(POINT + '.before', seen) == off
        assert src.timer(True)['on'] is True
        # oslo.service's timer sleeps as long as its tasks let it, at most
        # periodic_task.DEFAULT_INTERVAL (60 s): a tick computed while the
        # periodic was off may be that far away.
        assert src.wait(POINT, count=off + 1, timeout=(
            periodic_task.DEFAULT_INTERVAL + 3 * config.PERIODIC_INTERVAL)
        ) > off

        # A down compute's record, read through the other.
        nova.faults.crash_host('src')
        assert dest.pinning(host='src')['pinned_cpus'] == pinned
