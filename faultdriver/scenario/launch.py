"""Run variants of a scenario, each in a process of its own (the
concurrency mode must be chosen before Nova is imported), and collect
their reports.  Variants side by side on one Nova under test, on a tier
whose runner forks, are forked from one runner that imported Nova once
(:func:`faultdriver.scenario.worker.fork_each`)."""

import os
import subprocess
import sys
import tempfile
import time
import typing

from faultdriver import exception
from faultdriver import novaundertest
from faultdriver.scenario import prereqs
from faultdriver.scenario import tiers
from faultdriver.scenario import variant_report
from faultdriver.scenario import worker

Report = variant_report.VariantReport
#: What the launcher waits on: a runner process (subprocess.Popen) or
#: a ForkedVariant.
Process = typing.Any
#: A started variant: its process, its report's path, when it began.
Started = typing.Tuple[Process, str, float]


def _collect(variant: str, mode: str, backend: str, process: Process,
             out: str, began: float,
             stream: typing.Optional[typing.TextIO] = None) -> Report:
    code = process.wait()
    report = worker.read(out, variant, mode, backend,
                         'runner exited %d without a report' % code)
    if report.scenario_error:
        return report               # bad input: _refuse_if_bad
    (stream or sys.stderr).write('[%s] done in %.1fs: %s\n' % (
        variant, time.monotonic() - began, report.verdict.upper()))
    return report


#: Key of a variant's report on another tier when tiers are compared.
TIER_KEY = '%s@%s'


def _refuse_if_bad(report: Report,
                   started: typing.Mapping[str, Started]) -> Report:
    """A variant found the scenario bad (its runner does the checks that
    import Nova, model.check): stop the others, raise ScenarioError."""
    if report.scenario_error:
        for process, _out, _began in started.values():
            if process.poll() is None:
                process.kill()
                process.wait()
        raise exception.ScenarioError(report.scenario_error)
    return report


def refuse_missing(*backends: str) -> None:
    """Raise MissingPrerequisite if a process tier among ``backends``
    (or compared by them) lacks what it needs here."""
    for backend in backends:
        for name in tiers.compared(backend):
            if tiers.get(name).prerequisites:
                prereqs.refuse(name)


#: The cloud profile a remote tier's runners reach (``--cloud NAME``
#: or ``--profile PATH`` set it; a sweep's cases inherit it).
CLOUD_PROFILE = 'FAULTDRIVER_CLOUD_PROFILE'


def remote_args(tier: tiers.Tier) -> typing.Tuple[str, ...]:
    """``--profile PATH`` before a remote tier's runner's arguments."""
    if not tier.remote:
        return ()
    path = os.environ.get(CLOUD_PROFILE)
    if not path:
        raise exception.ScenarioError(
            'backend %s: expected --cloud NAME (or --profile PATH)'
            % tier.name)
    return ('--profile', path)


def _tree(scenario: typing.Any, variant: str,
          given: typing.Optional[str]) -> typing.Optional[str]:
    """The Nova source tree ``variant`` runs on: its own ``nova-tree``
    or the one ``given`` to the run; two different ones are refused (a
    run on one tree must never pass for a run on the other)."""
    own = scenario.nova_tree(variant)
    if own and given and os.path.abspath(given) != own:
        raise exception.ScenarioError(
            '--nova-tree %s: variant %s of %s names its own nova-tree %s'
            % (given, variant, scenario.path, own))
    return own or given


def run(scenario: typing.Any, variants: typing.Sequence[str], mode: str,
        parallel: bool = True, backend: str = tiers.DEFAULT,
        stream: typing.Optional[typing.TextIO] = None,
        nova_patches: typing.Sequence[str] = (),
        nova_tree: typing.Optional[str] = None
        ) -> typing.Dict[str, Report]:
    """Reports by variant, in the order asked, each with its verdict.
    Progress (one line per step and expectation, prefixed with the
    variant) goes to stderr.

    ``scenario`` needs only to be read (model.read): each variant checks
    it in full, and a failed check raises ScenarioError here.

    ``stream``: where progress goes (default stderr).

    ``backend`` 'both' runs every variant on the embedded Nova, then on
    processes ('all': then on real libvirt too); the other tiers' reports
    are keyed ``VARIANT@process`` and ``VARIANT@libvirt``.

    ``nova_patches`` (diff files) and ``nova_tree`` (a Nova source tree)
    make the Nova under test of every variant, before each variant's own
    ``nova-patches`` (a variant's own ``nova-tree`` is its tree); one that
    does not apply raises ScenarioError before any variant starts.

    A tier that lacks a prerequisite on this machine is refused
    (MissingPrerequisite) before any variant starts.
    """
    refuse_missing(backend)
    if backend in tiers.COMPARED:
        first, *others = tiers.COMPARED[backend]
        compared = run(scenario, variants, mode, parallel, first, stream,
                       nova_patches, nova_tree)
        for other in others:
            on_other = run(scenario, variants, mode, parallel, other,
                           stream, nova_patches, nova_tree)
            compared.update((TIER_KEY % (v, other), report)
                            for v, report in on_other.items())
        return compared
    tier = tiers.get(backend)
    # Stacks of processes are heavy: one at a time.
    parallel = parallel and tier.side_by_side
    env = dict(os.environ, PYTHONWARNINGS='ignore',
               OS_NOVA_DISABLE_EVENTLET_PATCHING=worker.MODES[mode])
    novas = {variant: novaundertest.prepare(
        list(nova_patches) + scenario.nova_patches(variant),
        _tree(scenario, variant, nova_tree))
        for variant in variants}
    stream = stream or sys.stderr
    stream.write('scenario %s: %s, %s mode, %s, %d steps each%s\n' % (
        scenario.name, ', '.join(variants), mode,
        tier.description,
        len(scenario.steps),
        ' (variants run side by side)' if parallel and len(variants) > 1
        else ''))
    stream.flush()
    with tempfile.TemporaryDirectory(prefix='faultdriver-') as tmp:
        started: typing.Dict[str, Started] = {}
        reports: typing.Dict[str, Report] = {}
        outs = {variant: os.path.join(tmp, variant + '.json')
                for variant in variants}
        environs = {variant: novas[variant].environ(env)
                    for variant in variants}
        if _forked(tier, parallel, environs):
            started = _start_forked(scenario, mode, tier, outs, environs,
                                    stream)
        for variant in variants:
            if variant in started:
                continue
            out = outs[variant]
            process = subprocess.Popen(
                [sys.executable, '-m', *tier.runner, *remote_args(tier),
                 scenario.path, variant, mode, out],
                env=environs[variant], stdout=stream, stderr=stream,
                stdin=subprocess.DEVNULL)
            started[variant] = (process, out, time.monotonic())
            if not parallel:
                reports[variant] = _refuse_if_bad(_collect(
                    variant, mode, backend, *started[variant],
                    stream=stream), started)
        while len(reports) < len(started):
            for variant, (process, out, began) in started.items():
                if variant not in reports and process.poll() is not None:
                    reports[variant] = _refuse_if_bad(_collect(
                        variant, mode, backend, process, out, began,
                        stream=stream), started)
            time.sleep(0.1)
    return {variant: reports[variant] for variant in variants}


def _forked(tier: tiers.Tier, parallel: bool,
            environs: typing.Mapping[str, typing.Mapping[str, str]]
            ) -> bool:
    """Whether the variants run forked from one runner: side by side, on
    a tier whose runner forks, all on the same Nova under test."""
    return (parallel and tier.forks and len(environs) > 1
            and len({tuple(sorted(e.items()))
                     for e in environs.values()}) == 1)


def _start_forked(scenario: typing.Any, mode: str, tier: tiers.Tier,
                  outs: typing.Mapping[str, str],
                  environs: typing.Mapping[str, typing.Mapping[str, str]],
                  stream: typing.TextIO) -> typing.Dict[str, Started]:
    """One runner that imports Nova once and forks a child per variant
    (``--fork``); each variant is tracked by its report's arrival."""
    runner = subprocess.Popen(
        [sys.executable, '-m', *tier.runner, '--fork', mode, scenario.path,
         *('%s=%s' % pair for pair in outs.items())],
        env=next(iter(environs.values())), stdout=stream, stderr=stream,
        stdin=subprocess.DEVNULL)
    began = time.monotonic()
    return {variant: (ForkedVariant(runner, out), out, began)
            for variant, out in outs.items()}


class ForkedVariant:
    """A variant forked by a ``--fork`` runner, seen as the launcher sees
    a runner process of its own: it has ended once its report is written
    (the worker writes it whole, then renames it) or once the runner has
    ended without it."""

    def __init__(self, runner: 'subprocess.Popen[bytes]', out: str) -> None:
        self.runner = runner
        self.out = out

    def poll(self) -> typing.Optional[int]:
        if os.path.exists(self.out):
            return 0
        return self.runner.poll()

    def wait(self) -> int:
        if os.path.exists(self.out):
            return 0
        return self.runner.wait()

    def kill(self) -> None:
        """Kill the runner; its children die with it (they asked the
        kernel to: ``lifeline.die_with_parent``)."""
        if self.runner.poll() is None:
            self.runner.kill()
