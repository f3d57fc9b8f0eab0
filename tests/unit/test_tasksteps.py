"""``wait-tasks``: the step a sweep's clean, traced run takes before
``recover``, so that the trace ends once the move's threads are done
(the source's ``live_migration`` 'after' hit comes after the migration
is saved ``completed``; the trace stops at ``recover``).

Imports no Nova: the backend is a stand-in that answers
``tasks_in_progress`` as a compute whose task ends after a few reads
(the functional sweep tests run it on Nova).
"""

import pytest

from faultdriver import export
from faultdriver.export import Unsupported
from faultdriver.scenario import model
from faultdriver.scenario import stepkinds
from faultdriver.scenario import tasksteps
from faultdriver.sweep import trace


class _Nova:
    """``tasks_in_progress``: src tracks its live migration for
    ``reads`` reads, dest tracks nothing, a stopped host answers None."""

    def __init__(self, reads):
        self.reads = reads

    def tasks_in_progress(self, host):
        if host == 'stopped':
            return None
        if host != 'src' or self.reads <= 0:
            return []
        self.reads -= 1
        return [{'name': 'live_migration', 'instance_uuid': 'u1'}]


class _Steps:
    def __init__(self, reads, hosts=('src', 'dest', 'stopped')):
        self.nova = _Nova(reads)
        self.scenario = type('Scenario', (), {'hosts': list(hosts)})


def test_it_is_a_registered_kind_that_starts_no_operation():
    kind = stepkinds.get('wait-tasks')
    assert kind is not None and kind.export is None
    assert not model.starts_operation('wait-tasks')


def test_it_waits_until_no_running_compute_tracks_a_task():
    steps = _Steps(reads=3)
    assert stepkinds.get('wait-tasks').run(steps, timeout=10) is None
    assert steps.nova.reads == 0


def test_it_goes_on_at_its_timeout_naming_what_is_still_tracked():
    done = tasksteps._run(_Steps(reads=10 ** 6), timeout=0.3)
    assert done == 'still tracked after 0.3s: src: live_migration'


def test_the_trace_waits_for_the_moves_threads_before_recover():
    workflow = model.load('live-migration')
    data = trace.trace_scenario(workflow)
    kinds = [next(iter(step)) for step in data['steps']]
    assert kinds[-3:] == ['settle', 'wait-tasks', 'recover']
    assert [next(iter(step)) for step in workflow.data['steps']] == \
        [kind for kind in kinds if kind != 'wait-tasks']
    model.validate(data, 'trace.yaml')


def test_export_refuses_it(tmp_path):
    path = tmp_path / 't.yaml'
    path.write_text('''\
name: t
description: a scenario that waits for the computes' tasks.
topology: {hosts: [src, dest]}
variants:
  stock: {description: stock}
steps:
  - boot: {server: s1, host: src}
  - wait-tasks: {timeout: 5}
expectations:
  - servers-settled: {}
''')
    with pytest.raises(Unsupported, match='wait-tasks'):
        export.export(str(path))
