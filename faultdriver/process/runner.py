"""Run one variant of a scenario on real processes (the process tier).

Same command line and report as :mod:`faultdriver.harness.runner`
(``python -m faultdriver.process.runner [--hypervisor libvirt] FILE
VARIANT MODE OUT``, :mod:`faultdriver.scenario.worker`'s protocol) and
the same steps and expectations (:mod:`faultdriver.scenario.play`);
only the Nova
underneath differs: a :class:`~faultdriver.process.stack.Stack` of real
services, its computes on ``fake_numa`` (or on real libvirtd + QEMU per
host) behind FaultDriver, faults driven through each compute's control
socket, crashes that end the process.
"""

import functools
import os
import sys
import traceback
import typing

from faultdriver import hostshape
from faultdriver import novacompat
from faultdriver import novaundertest
from faultdriver.process import config
from faultdriver.process import nova as process_nova
from faultdriver.process import stack as stack_module
from faultdriver.scenario import model
from faultdriver.scenario import play
from faultdriver.scenario import tiers
from faultdriver.scenario import variant_report
from faultdriver.scenario import wording
from faultdriver.scenario import worker


#: More nova.conf settings of a compute: ``{section: {key: value}}``
#: (:attr:`config.ComputeFaults.extra`).
Settings = dict[str, dict[str, object]]


def host_settings(shape: hostshape.HostShape) -> Settings:
    """nova.conf sections giving ``fake_numa`` the host the scenario's
    topology describes for the embedded Nova's fakelibvirt (the driver
    reads it back with ``HostShape.from_nova_conf``)."""
    settings: Settings = {'fake_numa': {**shape.fake_numa_options()}}
    compute = shape.cpu_sets()
    if compute:
        settings['compute'] = {**compute}
    return settings


def libvirt_host_settings(
        shape: hostshape.HostShape, cpus: typing.Sequence[int]
) -> tuple[Settings, hostshape.HostShape]:
    """nova.conf sections giving real libvirt the scenario's CPU sets,
    and the shape as it is: the machine's CPUs (``cpus``, one NUMA node)
    cannot be changed, so CPU sets that name CPUs the machine lacks
    become every CPU, and cells, cores and memory are the machine's."""
    sets: dict[str, str] = {}
    for key, spec in shape.cpu_sets().items():
        sets[key] = spec if cpu_set(spec) <= set(cpus) else \
            '%d-%d' % (min(cpus), max(cpus))
    if len(sets) == 2 and sets['cpu_dedicated_set'] == sets['cpu_shared_set']:
        del sets['cpu_shared_set']      # pinned servers need them all
    settings: Settings = {'compute': {**sets}} if sets else {}
    actual = shape.replace(cpu_nodes=1, cpu_sockets=1, cpu_cores=len(cpus),
                           cpu_threads=1, memory_mb=None,
                           cpu_dedicated_set=sets.get('cpu_dedicated_set'),
                           cpu_shared_set=sets.get('cpu_shared_set'))
    return settings, actual


def cpu_set(spec: str) -> set[int]:
    """CPU numbers of a Nova CPU set string ('0-3,^2')."""
    from nova.virt import hardware
    return set(hardware.parse_cpu_spec(spec))


def machine_cpus() -> list[int]:
    """The CPUs this machine gives the runner (real libvirt's hosts)."""
    return sorted(os.sched_getaffinity(0))


def host_faults(scenario: model.Scenario, variant: str, host: str,
                hypervisor: str = 'fake_numa',
                cpus: typing.Optional[typing.Sequence[int]] = None
                ) -> config.ComputeFaults:
    rules = scenario.data.get('rules', {})
    shape = scenario.host_shapes()[host]
    if hypervisor == 'libvirt':
        extra, _shape = libvirt_host_settings(shape, cpus or machine_cpus())
        if scenario.live_migration_bandwidth:
            extra['libvirt'] = {'live_migration_bandwidth':
                                scenario.live_migration_bandwidth}
    else:
        extra = host_settings(shape)
    if not scenario.periodic_timer:
        extra['DEFAULT'] = {'update_resources_interval': -1}
    if scenario.shelved_offload_time is not None:
        extra.setdefault('DEFAULT', {})['shelved_offload_time'] = \
            scenario.shelved_offload_time
    return {
        'inner_driver': hypervisor,
        'enabled': True,
        'rules': list(rules.get('*', ())) + list(rules.get(host, ())),
        'tracker_patches': scenario.patches(variant),
        'extra': extra,
    }


#: Verdicts whose stack logs outlive the run: a bundled scenario that
#: did not reproduce its bug, a run faultdriver could not finish.  Not a
#: broken expectation: a sweep's findings are many, and its own logs say
#: what each case did.
KEEP_LOGS_OF = (variant_report.BUG_NOT_REPRODUCED,
                variant_report.INTERNAL_ERROR)


def run(path: str, variant: str, mode: str, keep: bool = False,
        hypervisor: str = 'fake_numa') -> variant_report.VariantReport:
    scenario = model.load(path)
    # Also when started on a tier its "backends" key does not list.
    model.check_tier(scenario, tiers.of_hypervisor(hypervisor).name)
    # What the process tier reads of Nova (its log lines, the tracker
    # FaultDriver hooks in the computes) is checked before anything
    # starts; a broken assumption is an error naming the Nova symbol.
    novacompat.verify(novacompat.PROCESS_GROUPS)
    report = variant_report.VariantReport.begin(
        scenario, variant, mode,
        tiers.of_hypervisor(hypervisor).name)
    play.progress(variant, 'starting Nova as processes on %s (%s)' % (
        hypervisor, wording.variant_facts(mode, report.patches,
                                          novaundertest.recorded())))
    cpus = machine_cpus()
    faults = {host: host_faults(scenario, variant, host, hypervisor, cpus)
              for host in scenario.hosts}
    if hypervisor == 'libvirt':
        report.topology = {
            host: libvirt_host_settings(shape, cpus)[1].as_dict()
            for host, shape in scenario.host_shapes().items()}
        play.progress(variant, 'real libvirt: every host has this '
                      "machine's CPUs %s in one NUMA node; CPU sets: %s" % (
                          ','.join(map(str, cpus)), '; '.join(
                              '%s %s' % (h, faults[h]['extra'].get(
                                  'compute', {}))
                              for h in scenario.hosts)))
    stack = stack_module.Stack(
        hosts=scenario.hosts, faults=faults, mode=mode, keep=keep,
        progress=lambda text: play.progress(variant, text),
        hypervisor=hypervisor)
    # The stand-ins' pseudo-hosts' rules (tiers.STAND_INS), from the
    # first request they serve.
    for name, side in stack.service_sides.items():
        side.set_rules(scenario.data.get('rules', {}).get(name, ()))
    with stack:
        report.stack_seconds = stack.timings
        nova = process_nova.ProcessNova(stack, pinned=scenario.pinned)
        try:
            play.play(nova, scenario, variant, report)
        except Exception:
            report.internal_error = traceback.format_exc()
        report.logs = stack.dir if keep else None
        if not keep and report.verdict in KEEP_LOGS_OF:
            # Before the stack's directory goes: read after the run.
            report.logs = stack.keep_logs('faultdriver-failed-run-')
            play.progress(variant, '%s: the stack\'s logs are kept in %s'
                          % (report.verdict, report.logs))
    report.ended()
    return report


def main(argv: typing.Optional[typing.Sequence[str]] = None) -> int:
    """``[--hypervisor fake_numa|libvirt] FILE VARIANT MODE OUT``."""
    args = list(sys.argv[1:] if argv is None else argv)
    hypervisor = 'fake_numa'
    if args[:1] == ['--hypervisor']:
        hypervisor = args[1]
        args = args[2:]
    return worker.main(args, functools.partial(run, hypervisor=hypervisor),
                       tiers.of_hypervisor(hypervisor).name)


if __name__ == '__main__':
    sys.exit(main())
