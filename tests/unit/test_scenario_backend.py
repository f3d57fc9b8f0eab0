"""Both scenario backends keep the one contract scenario steps and
expectations use (faultdriver.scenario.backend): their primitives, their
fault control and their compute API; the shared members are not
overridden; the check names what a backend lacks."""

from nova.tests.functional.api import client as nova_api_client

from faultdriver.harness import embedded
from faultdriver.harness import injection
from faultdriver.process import nova as process_nova
from faultdriver.scenario import backend


def test_embedded_nova_keeps_the_contract():
    assert backend.problems(embedded.EmbeddedNova) == []


def test_process_nova_keeps_the_contract():
    assert backend.problems(process_nova.ProcessNova) == []


def test_both_fault_controls_keep_the_contract():
    assert backend.fault_control_problems(injection.FaultInjection) == []
    assert backend.fault_control_problems(process_nova.Faults) == []


def test_both_compute_apis_keep_the_contract():
    assert backend.api_problems(nova_api_client.TestOpenStackClient) == []
    assert backend.api_problems(process_nova._AdminAPI) == []


def test_a_backend_missing_a_member_is_refused_by_name():
    class Partial(process_nova.ProcessNova):
        guests = None

        def create_flavor(self, vcpus):        # no extra_specs
            return 'flavor'

    found = backend.problems(Partial)
    assert found == ['create_flavor: takes no \'extra_specs\'',
                     'guests: missing method']


def test_a_backend_overriding_a_shared_wait_is_refused():
    class Drifted(process_nova.ProcessNova):
        def wait_for_server(self, server, timeout=30, **fields):
            return server

    assert backend.problems(Drifted) == [
        'wait_for_server: overrides the shared member']


def test_fault_control_missing_a_member_is_named():
    class Faults(process_nova.Faults):
        remove_rule = None

    assert backend.fault_control_problems(Faults) == [
        'remove_rule: missing method']


def test_check_on_an_instance_names_missing_attributes():
    class Bare:
        pass
    try:
        backend.check(Bare())
    except TypeError as exc:
        message = str(exc)
    else:
        raise AssertionError('a bare object passed the backend check')
    assert message.startswith('Bare is not a scenario backend: ')
    assert 'not a backend_base.BackendBase' in message
    assert 'api: missing attribute' in message
    assert 'run_periodic: missing method' in message
