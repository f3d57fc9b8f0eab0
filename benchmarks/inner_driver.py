"""Which inner driver for real nova-compute processes: fake_numa or
libvirt on fakelibvirt?

Both give pinned-CPU NUMA accounting and a NUMA-aware live migration at
the compute-manager level.  This measures what each costs, each variant
in fresh interpreters (threading mode), alternating, ``--runs`` times:

* ``functional``: in Nova's functional framework (faultdriver's embedded
  Nova, 4 dedicated pCPUs per host), the seconds to start each of two
  compute services, to boot a pinned server and to live-migrate it, and
  the process's peak RSS;
* ``process``: what one nova-compute process would load: seconds and RSS
  after importing the compute manager, then the driver (for libvirt, with
  fakelibvirt as the ``libvirt`` module, as a process would need), then
  constructing it.

Run: ``python benchmarks/inner_driver.py [--runs N] [--json]``.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings

VARIANTS = ('fake_numa', 'libvirt')


def rss_mb():
    """Current resident set size in MiB."""
    with open('/proc/self/statm') as f:
        return int(f.read().split()[1]) * os.sysconf('SC_PAGE_SIZE') / 2**20


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def process(variant):
    """Seconds and RSS after each step of loading the driver."""
    steps = {}
    start = time.monotonic()

    def step(name):
        steps[name] = {'s': round(time.monotonic() - start, 2),
                       'rss_mb': round(rss_mb(), 1)}

    step('interpreter')
    import nova.cmd.compute  # noqa: F401  (nova-compute's own start)
    import nova.compute.manager  # noqa: F401
    from nova import conf as nova_conf
    from nova import objects
    from nova.virt import fake
    objects.register_all()
    nova_conf.CONF([], project='nova', default_config_files=[])
    step('compute manager')
    if variant == 'fake_numa':
        from faultdriver.virt import numa_fake
        step('driver imported')
        numa_fake.NumaFakeDriver(fake.FakeVirtAPI())
    else:
        from nova.tests.fixtures import libvirt as fakelibvirt
        sys.modules['libvirt'] = fakelibvirt
        from nova.virt.libvirt import driver
        step('driver imported')
        driver.LibvirtDriver(fake.FakeVirtAPI(), False)
    step('driver constructed')
    return steps


def functional(variant):
    """Timings of compute starts, a pinned boot and a live migration in
    the embedded Nova; peak RSS."""
    import unittest

    from faultdriver.harness import embedded
    from faultdriver.harness import fake_numa
    from nova.tests.fixtures import libvirt as fakelibvirt

    base = {'fake_numa': fake_numa.FakeNumaNova,
            'libvirt': embedded.EmbeddedNova}[variant]
    result = {}

    class Bench(base):
        PINNED = True
        HOSTS = ()

        def test_measure(self):
            self.stub_live_migration()
            info = fakelibvirt.HostInfo(cpu_nodes=1, cpu_sockets=1,
                                        cpu_cores=embedded.PINNED_CPUS,
                                        cpu_threads=1)
            for host in ('src', 'dest'):
                start = time.monotonic()
                self.start_compute(hostname=host, host_info=info)
                result['start_%s_s' % host] = round(
                    time.monotonic() - start, 2)
            start = time.monotonic()
            server = self.boot()
            result['boot_s'] = round(time.monotonic() - start, 2)
            start = time.monotonic()
            self.live_migrate(server)
            self.wait_for_migration(server, ['completed'], timeout=60)
            result['live_migration_s'] = round(time.monotonic() - start, 2)
            self.assertEqual([0, 1], self.pinned_cpus('dest'))

    outcome = unittest.TextTestRunner(stream=open(os.devnull, 'w')).run(
        unittest.TestSuite([Bench('test_measure')]))
    if not outcome.wasSuccessful():
        raise SystemExit('%s run failed: %s' % (
            variant, (outcome.errors + outcome.failures)[0][1]))
    result['peak_rss_mb'] = round(peak_rss_mb(), 1)
    return result


def child(kind, variant):
    out = subprocess.run(
        [sys.executable, __file__, '--child', kind, variant],
        check=True, capture_output=True, text=True,
        env=dict(os.environ, OS_NOVA_DISABLE_EVENTLET_PATCHING='True'))
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--runs', type=int, default=3)
    parser.add_argument('--json', action='store_true')
    parser.add_argument('--child', nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        os.environ['OS_NOVA_DISABLE_EVENTLET_PATCHING'] = 'True'
        warnings.simplefilter('ignore')
        kind, variant = args.child
        data = process(variant) if kind == 'process' else functional(variant)
        print(json.dumps(data))
        return 0
    results = {kind: {v: [] for v in VARIANTS}
               for kind in ('process', 'functional')}
    for _ in range(args.runs):
        for kind in results:
            for variant in VARIANTS:
                results[kind][variant].append(child(kind, variant))
    if args.json:
        print(json.dumps(results, indent=1))
        return 0
    for variant in VARIANTS:
        print('%s:' % variant)
        for run in results['functional'][variant]:
            print('  functional %s' % ', '.join(
                '%s %s' % item for item in run.items()))
        for run in results['process'][variant]:
            print('  process    %s' % ', '.join(
                '%s %ss %s MiB' % (name, s['s'], s['rss_mb'])
                for name, s in run.items()))
    return 0


if __name__ == '__main__':
    sys.exit(main())
