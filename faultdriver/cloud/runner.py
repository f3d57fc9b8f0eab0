"""Run one variant of a scenario on a cloud faultdriver did not build.

``python -m faultdriver.cloud.runner --profile PATH FILE VARIANT MODE
OUT``: the worker protocol of every tier (:mod:`faultdriver.scenario.
worker`) and the same steps and expectations
(:mod:`faultdriver.scenario.play`); it starts no Nova.  Before the
first step each of the scenario's hosts is reached and checked
(:mod:`.checks`: FaultDriver the compute_driver, Nova 34.x, the
profile's host and nodename, nothing left armed or booted there), the
variant's fixes and the scenario's start rules are put in by restarting
the computes with a one-shot start-rules file, and after the last
expectation the cloud is put back (:meth:`CloudNova.end`).  What it
cannot impose -- the topology's CPUs and cells, Nova under test -- is
refused or checked and recorded, never pretended.
"""

import os
import sys
import time
import traceback
import typing
import uuid

from faultdriver.cloud import api as api_module
from faultdriver.cloud import audit as audit_module
from faultdriver.cloud import backend as cloud_backend
from faultdriver.cloud import checks
from faultdriver.cloud import computes as computes_module
from faultdriver.cloud import errors
from faultdriver.cloud import profile as profile_module
from faultdriver.cloud import provides
from faultdriver import exception
from faultdriver import points as points_module
from faultdriver.scenario import model
from faultdriver.scenario import play
from faultdriver.scenario import tiers
from faultdriver.scenario import variant_report
from faultdriver.scenario import worker


def runs_dir(profile: profile_module.Profile) -> str:
    """Where the runs on a cloud keep their audit logs (beside its
    profile): ``cloud restore`` replays them."""
    return os.path.splitext(profile.path)[0] + '.runs'


def new_run_id() -> str:
    return 'r%s-%s' % (time.strftime('%Y%m%d%H%M%S'), uuid.uuid4().hex[:6])


def audit_log(profile: profile_module.Profile,
              run_id: str) -> audit_module.AuditLog:
    directory = runs_dir(profile)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    return audit_module.AuditLog(os.path.join(directory,
                                              run_id + '.jsonl'))


def refuse_unrunnable(scenario: model.Scenario, variant: str,
                      profile: profile_module.Profile) -> None:
    """What a cloud cannot do for ``scenario``: its own Nova, several
    cells, hosts the profile does not map."""
    if scenario.nova_patches(variant) or scenario.nova_tree(variant):
        raise exception.ScenarioError(
            '%s: variant %s changes the Nova under test (nova-patches or '
            'nova-tree): refused on a cloud, which runs its own Nova'
            % (scenario.path, variant))
    cells = scenario.data.get('topology', {}).get('cells')
    if isinstance(cells, int) and cells > 1:
        raise exception.ScenarioError(
            '%s: topology.cells %d: the cloud tier runs on one cell only'
            % (scenario.path, cells))
    missing = [h for h in scenario.hosts if h not in profile.hosts]
    if missing:
        raise exception.ScenarioError(
            '%s: key hosts: the scenario %s has hosts %s; the profile maps '
            '%s' % (profile.path, scenario.name, ', '.join(missing),
                    ', '.join(profile.hosts) or 'none'))


def preflight(profile: profile_module.Profile,
              computes: computes_module.Computes,
              hosts: typing.Sequence[str]
              ) -> typing.Dict[str, checks.Reading]:
    """Each host reached and checked (HostRefused on the first that
    fails); their readings."""
    readings = {}
    for alias in hosts:
        host = profile.hosts[alias]
        reading = checks.read_status(computes.control(alias))
        found = checks.refusals(host, reading.status)
        if found:
            raise found[0]
        differs = checks.catalogue_refusal(
            host, reading.status, computes.control(alias).points(),
            points_module.catalogue())
        if differs is not None:
            raise differs
        dirty = checks.dirty(host, checks.dirt(
            host, reading.status, computes.exists(alias, host.start_rules)))
        if dirty is not None:
            raise dirty
        readings[alias] = reading
    return readings


def api_refusals(profile: profile_module.Profile, cloud: api_module.CloudAPI,
                 hosts: typing.Sequence[str]) -> None:
    """The API's view of each host: its service known and up, its node
    a hypervisor, nothing of anyone's booted on it or allocated there."""
    for alias in hosts:
        host = profile.hosts[alias]
        services = cloud.get('/os-services?binary=nova-compute&host=%s'
                             % host.host, translate=False)['services']
        if not services:
            raise errors.HostRefused(
                host.ssh, checks.HOST_MISMATCH, 'the compute API has no '
                'nova-compute on host %r (hosts.%s.host)' % (host.host,
                                                           alias))
        nodes = cloud.get('/os-hypervisors?hypervisor_hostname_pattern=%s'
                          % host.nodename, translate=False,
                          ok=(200, 404))
        if not nodes or not any(
                n.get('hypervisor_hostname') == host.nodename
                for n in nodes.get('hypervisors', ())):
            raise errors.HostRefused(
                host.ssh, checks.NODENAME_MISMATCH, 'the compute API has '
                'no hypervisor %r (hosts.%s.nodename)' % (host.nodename,
                                                         alias))
        servers = cloud.get('/servers/detail?all_tenants=1&host=%s'
                            % host.host, translate=False)['servers']
        if servers:
            raise errors.HostRefused(
                host.ssh, checks.DIRTY, 'servers %s are on %s; a run needs '
                'hosts of its own' % (', '.join(s['id'] for s in servers),
                                      host.host))


def run(path: str, variant: str, mode: str,
        profile_path: str) -> variant_report.VariantReport:
    scenario = model.load(path)
    profile = profile_module.load(path=profile_path)
    provides.use(profile, scenario.hosts)
    model.check_tier(scenario, tiers.CLOUD)
    refuse_unrunnable(scenario, variant, profile)
    report = variant_report.VariantReport.begin(scenario, variant, mode,
                                                tiers.CLOUD)
    run_id = new_run_id()
    play.progress(variant, 'reaching cloud %s (profile %s, run %s)' % (
        profile.cloud, profile.path, run_id))
    audit = audit_log(profile, run_id)
    with computes_module.Computes(profile, audit) as computes:
        readings = preflight(profile, computes, scenario.hosts)
        cloud = api_module.connect(profile)
        api_refusals(profile, cloud, scenario.hosts)
        # Not imposed: recorded as the cloud has it.
        report.topology = {alias: {
            'host': profile.hosts[alias].host,
            'nodename': profile.hosts[alias].nodename,
            'cpu_dedicated_set': (r.status.get('settings') or {}).get(
                'compute.cpu_dedicated_set'),
            'cpu_shared_set': (r.status.get('settings') or {}).get(
                'compute.cpu_shared_set'),
            'nova_version': r.status.get('nova_version'),
            'clock_offset': round(r.offset, 3)}
            for alias, r in readings.items()}
        nova = cloud_backend.CloudNova(
            profile, cloud, computes, scenario.hosts, run_id, readings,
            pinned=scenario.pinned,
            periodic_timer=scenario.periodic_timer)
        if scenario.pinned:
            nova.default_vcpus = pinned_vcpus(nova, scenario)
        try:
            nova.begin()
            start(nova, scenario, variant)
            play.play(nova, scenario, variant, report)
            others = nova.foreign_activity()
            if others:
                # Not the run's doing: never a finding, never ok.
                report.internal_error = CLOUD_DIRTY % (
                    profile.cloud, '; '.join(others))
        except Exception:
            report.internal_error = traceback.format_exc()
        try:
            for line in nova.end():
                play.progress(variant, line)
        except Exception:
            # What the steps showed stands; the cloud is not clean.
            report.internal_error = '%sputting cloud %s back failed (run ' \
                '`faultdriver cloud restore`):\n%s' % (
                    report.internal_error + '\n' if report.internal_error
                    else '', profile.cloud, traceback.format_exc())
    report.ended()
    return report


#: A run during which someone else used its hosts.
CLOUD_DIRTY = ('cloud dirty: cloud %s: while the run ran, others used its '
               'hosts (%s); what its invariants counted is not the run\'s '
               'alone, so it is no finding: run it again on hosts nobody '
               'else uses')


#: vCPUs of a pinned server booted without a flavor, at most (the
#: process tier's on fake_numa).
MAX_VCPUS = 2


def pinned_vcpus(nova: cloud_backend.CloudNova,
                 scenario: model.Scenario) -> int:
    """vCPUs of a pinned server booted without a flavor: two of them fit
    the smallest host's PCPU inventory (at most MAX_VCPUS); a host
    without two PCPUs is refused."""
    totals = {alias: nova.pcpu_total(alias) for alias in nova.hosts}
    smallest = min(totals, key=lambda alias: totals[alias])
    if totals[smallest] < 2:
        host = nova.profile.hosts[smallest]
        raise errors.HostRefused(
            host.ssh, 'too few dedicated CPUs', 'scenario %s boots two '
            'pinned servers on a host; placement has %d PCPU on %s (set '
            '[compute] cpu_dedicated_set)' % (scenario.name,
                                              totals[smallest],
                                              host.nodename))
    return min(MAX_VCPUS, totals[smallest] // 2)


def start(nova: cloud_backend.CloudNova, scenario: model.Scenario,
          variant: str) -> None:
    """The variant's fixes and the scenario's rules in place: computes
    restarted with them in a start-rules file where the variant has
    fixes (a fix loads at driver init), else rules set through the
    sockets."""
    rules = scenario.data.get('rules', {})
    patches = list(scenario.patches(variant))
    nova.faults.start_patches = patches
    for alias in nova.hosts:
        wanted = list(rules.get('*', ())) + list(rules.get(alias, ()))
        if patches:
            play.progress(variant, 'restarting %s with fixes %s' % (
                alias, ', '.join(patches)))
            nova.faults.restart(alias, wanted)
        elif wanted:
            nova.faults.set_rules(alias, wanted)
    if patches:
        # Each host's resource periodic once after its restart (which
        # returned once the API showed the new process's own heartbeat:
        # a compute the API shows up only on its killed process's last
        # one is taken for dead by the scheduler's ComputeFilter; seen on
        # a real devstack and in CI, NoValidHost).
        for alias in nova.hosts:
            nova.run_periodic(alias)


def main(argv: typing.Optional[typing.Sequence[str]] = None) -> int:
    """``--profile PATH FILE VARIANT MODE OUT``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] != ['--profile'] or len(args) < 2:
        sys.stderr.write('usage: python -m faultdriver.cloud.runner '
                         '--profile PATH FILE VARIANT MODE OUT\n')
        return 2
    profile_path = args[1]

    def refused_is_bad_input(path: str, variant: str,
                             mode: str) -> variant_report.VariantReport:
        # A host that refuses is the user's to fix (exit 2), as the
        # command line's own check before the run says it.
        try:
            return run(path, variant, mode, profile_path)
        except errors.HostRefused as exc:
            raise exception.ScenarioError(str(exc)) from None
    return worker.main(args[2:], refused_is_bad_input, tiers.CLOUD)


if __name__ == '__main__':
    sys.exit(main())
