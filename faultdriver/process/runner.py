"""Run one variant of a scenario on real processes (the process tier).

Same command line and report as :mod:`faultdriver.scenario.runner`
(``python -m faultdriver.process.runner FILE VARIANT MODE OUT``) and the
same steps and expectations; only the Nova underneath differs: a
:class:`~faultdriver.process.stack.Stack` of real services, its computes
on ``fake_numa`` behind FaultDriver, faults driven through each
compute's control socket, crashes that end the process.
"""

import sys
import time
import traceback

from faultdriver.process import nova as process_nova
from faultdriver.process import stack as stack_module
from faultdriver.scenario import model
from faultdriver.scenario import runner

#: fakelibvirt's host memory when a scenario names none (MiB).
DEFAULT_MEMORY_MB = 16384


class Steps(runner.Steps):
    """The scenario steps; logs come from the computes' log files."""

    def log_text(self):
        return self.test.log_text()


def host_settings(shape):
    """nova.conf sections giving ``fake_numa`` the host the scenario's
    topology describes for the embedded Nova's fakelibvirt."""
    memory = shape['memory_mb'] or DEFAULT_MEMORY_MB
    settings = {'fake_numa': {
        'cells': shape['cpu_nodes'],
        'cores_per_cell': shape['cpu_sockets'] * shape['cpu_cores'],
        'threads_per_core': shape['cpu_threads'],
        'memory_mb_per_cell': memory // shape['cpu_nodes']}}
    compute = {key: shape[key] for key in ('cpu_dedicated_set',
                                           'cpu_shared_set') if shape[key]}
    if compute:
        settings['compute'] = compute
    return settings


def host_faults(scenario, variant, host):
    rules = scenario.data.get('rules', {})
    return {
        'inner_driver': 'fake_numa',
        'enabled': True,
        'rules': list(rules.get('*', ())) + list(rules.get(host, ())),
        'tracker_patches': scenario.patches(variant),
        'extra': host_settings(scenario.host_shapes()[host]),
    }


def run(path, variant, mode, keep=False):
    scenario = model.load(path)
    report = {'scenario': scenario.name, 'variant': variant, 'mode': mode,
              'backend': 'process',
              'expect': scenario.variants[variant].get('expect', 'ok'),
              'patches': scenario.patches(variant), 'timeline': [],
              'step_failed': None, '_t0': time.monotonic()}
    runner.progress(variant, 'starting Nova as processes (%s mode, fixes: '
                    '%s)' % (mode, ', '.join(report['patches']) or
                             'none (stock)'))
    faults = {host: host_faults(scenario, variant, host)
              for host in scenario.hosts}
    stack = stack_module.Stack(
        hosts=scenario.hosts, faults=faults, mode=mode, keep=keep,
        progress=lambda text: runner.progress(variant, text))
    with stack:
        report['stack_seconds'] = stack.timings
        nova = process_nova.ProcessNova(stack, pinned=scenario.pinned)
        test = runner.scenario_test(scenario, variant, report,
                                    steps_class=Steps)
        try:
            test(nova)
        except Exception:
            report['internal_error'] = traceback.format_exc()
        report['logs'] = stack.dir if keep else None
    report['wall_seconds'] = round(time.monotonic() - report.pop('_t0'), 2)
    report.setdefault('internal_error', None)
    return report


def main(argv=None):
    return runner.main(argv, run, 'process')


if __name__ == '__main__':
    sys.exit(main())
