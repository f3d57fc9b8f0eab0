"""The Zuul job (.zuul.yaml) a gate can take: what it names exists here.

Zuul does not run in this project's CI, so nothing else would notice a
renamed playbook, role or scenario, or a plugin setting the job sets
that devstack/settings no longer reads.
"""

import os
import re

import yaml

from faultdriver.scenario import model

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def load(path):
    with open(os.path.join(ROOT, path)) as f:
        return yaml.safe_load(f)


def job():
    jobs = [entry['job'] for entry in load('.zuul.yaml') if 'job' in entry]
    assert [j['name'] for j in jobs] == ['faultdriver-devstack-seed']
    return jobs[0]


def test_playbooks_and_roles_exist():
    seed = job()
    for key in ('run', 'post-run'):
        assert os.path.isfile(os.path.join(ROOT, seed[key])), seed[key]
    run = load(seed['run'])
    roles = [role for play in run for role in play.get('roles', ())]
    assert roles == ['orchestrate-devstack', 'run-faultdriver-cloud']
    assert os.path.isfile(os.path.join(
        ROOT, 'roles/run-faultdriver-cloud/tasks/main.yaml'))


def test_scenarios_are_bundled_and_run_with_cloud():
    defaults = load('roles/run-faultdriver-cloud/defaults/main.yaml')
    assert defaults['faultdriver_scenarios']
    for name in defaults['faultdriver_scenarios']:
        assert name in model.bundled(), name
    with open(os.path.join(
            ROOT, 'roles/run-faultdriver-cloud/tasks/main.yaml')) as f:
        tasks = f.read()
    assert '--cloud {{ faultdriver_cloud }}' in tasks
    assert 'cloud check {{ faultdriver_cloud }}' in tasks


def test_plugin_settings_the_job_sets_exist():
    """Every FAULTDRIVER_* the job sets is one devstack/settings reads,
    on the controller and on the subnode."""
    with open(os.path.join(ROOT, 'devstack/settings')) as f:
        known = set(re.findall(r'^(FAULTDRIVER_[A-Z_]+)=', f.read(), re.M))
    seed = job()
    for localrc in (seed['vars']['devstack_localrc'],
                    seed['group-vars']['subnode']['devstack_localrc']):
        names = {key for key in localrc if key.startswith('FAULTDRIVER_')}
        assert names and names <= known, names - known
        assert localrc['FAULTDRIVER_ENABLED'] is True
