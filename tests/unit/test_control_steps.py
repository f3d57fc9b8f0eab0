"""``stop-service`` and ``start-service`` (faultdriver.scenario.
controlsteps): what a scenario may name, where it loads, and what the
step asks of its tier.  Their run on real processes is
tests/process/test_control_plane.py's."""

import types

import pytest

from faultdriver import exception
from faultdriver.scenario import controlsteps
from faultdriver.scenario import model
from faultdriver.scenario import stepkinds

HEAD = '''\
name: plane
description: d
backends: [process]
variants: {stock: {description: d}}
steps:
  - boot: {server: s1}
'''


def write(tmp_path, step):
    path = tmp_path / 'plane.yaml'
    path.write_text(HEAD + '  - %s\n' % step)
    return str(path)


def test_both_kinds_are_registered_with_the_process_tiers_services():
    from faultdriver.process import stack
    assert stepkinds.get('stop-service').run is not None
    assert stepkinds.get('start-service').run is not None
    assert stack.CONTROL_SERVICES == controlsteps.SERVICES


def test_an_unknown_service_is_refused_at_load_naming_the_key(tmp_path):
    path = write(tmp_path, 'stop-service: {service: nova-api}')
    with pytest.raises(exception.ScenarioError) as refused:
        model.read(path)
    assert 'steps[1].stop-service.service' in str(refused.value)
    assert 'rabbitmq' in str(refused.value)


class _Plane:
    def __init__(self):
        self.done = []

    def stop_service(self, name):
        self.done.append(('stop', name))

    def start_service(self, name):
        self.done.append(('start', name))


def test_the_steps_ask_the_tiers_control_plane():
    plane = _Plane()
    steps = types.SimpleNamespace(nova=plane)
    assert stepkinds.get('stop-service').run(
        steps, service='rabbitmq') == 'rabbitmq stopped'
    assert stepkinds.get('start-service').run(
        steps, service='rabbitmq') == 'rabbitmq serving again'
    assert plane.done == [('stop', 'rabbitmq'), ('start', 'rabbitmq')]


def test_a_backend_without_a_control_plane_is_named():
    steps = types.SimpleNamespace(nova=object())
    with pytest.raises(RuntimeError) as caught:
        stepkinds.get('stop-service').run(steps, service='rabbitmq')
    assert 'object cannot stop or start the control plane' in str(
        caught.value)
