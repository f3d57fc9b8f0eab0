"""Both scenario backends keep the one contract scenario steps and
expectations use (faultdriver.scenario.backend): their primitives, their
fault control and their compute API; the shared members are not
overridden; the check (faultdriver.scenario.conformance) names what a
backend lacks, a default it drops and an annotation it changes."""

import pytest

from nova.tests.functional.api import client as nova_api_client

from faultdriver.harness import embedded
from faultdriver.harness import injection
from faultdriver.process import nova as process_nova
from faultdriver.scenario import backend
from faultdriver.scenario import backend_base
from faultdriver.scenario import conformance


def test_embedded_nova_keeps_the_contract():
    assert conformance.problems(embedded.EmbeddedNova) == []


def test_process_nova_keeps_the_contract():
    assert conformance.problems(process_nova.ProcessNova) == []


def test_both_fault_controls_keep_the_contract():
    assert conformance.fault_control_problems(injection.FaultInjection) == []
    assert conformance.fault_control_problems(process_nova.Faults) == []


def test_both_compute_apis_keep_the_contract():
    assert conformance.api_problems(nova_api_client.TestOpenStackClient) == []
    assert conformance.api_problems(process_nova._AdminAPI) == []


def test_a_backend_missing_a_member_is_refused_by_name():
    class Partial(process_nova.ProcessNova):
        guests = None

        def create_flavor(self, vcpus):        # no extra_specs
            return 'flavor'

    found = conformance.problems(Partial)
    assert found == ['create_flavor: takes no \'extra_specs\'',
                     'guests: missing method']


def test_a_backend_overriding_a_shared_wait_is_refused():
    class Drifted(process_nova.ProcessNova):
        def wait_for_server(self, server, timeout=30, **fields):
            return server

    assert conformance.problems(Drifted) == [
        'wait_for_server: overrides the shared member']


def test_fault_control_missing_a_member_is_named():
    class Faults(process_nova.Faults):
        remove_rule = None

    assert conformance.fault_control_problems(Faults) == [
        'remove_rule: missing method']


def test_check_on_an_instance_names_missing_attributes():
    class Bare:
        pass
    try:
        conformance.check(Bare())
    except TypeError as exc:
        message = str(exc)
    else:
        raise AssertionError('a bare object passed the backend check')
    assert message.startswith('Bare is not a scenario backend: ')
    assert 'not a backend_base.BackendBase' in message
    assert 'api: missing attribute' in message
    assert 'run_periodic: missing method' in message


def test_a_member_annotated_otherwise_is_named():
    class Retyped(process_nova.ProcessNova):
        def server_exists(self, server) -> str:
            return 'yes'

        def pinned_cpus(self, host: int) -> list[int]:
            return []

    assert conformance.problems(Retyped) == [
        'server_exists: returns is str, not bool',
        "pinned_cpus: 'host' is int, not str"]


def test_a_default_of_the_contract_dropped_is_named():
    class Faults(process_nova.Faults):
        def wait_for_hit(self, host, point, count, timeout=1,
                         phase='before'):
            return None

    assert conformance.fault_control_problems(Faults) == [
        "wait_for_hit: 'count' has no default"]


def test_the_shared_half_is_derived_from_the_base_class():
    # Every public method BackendBase defines is shared (action_events
    # was missing from the hand-kept list), and nothing else is.
    defined = {name for name, value in vars(backend_base.BackendBase).items()
               if callable(value) and not name.startswith('_')}
    assert set(backend_base.SHARED) == defined
    assert {'action_events', 'attach_volume', 'detach_volume',
            'wait_for_server'} <= defined

    class Drifted(process_nova.ProcessNova):
        def action_events(self, server, action):
            return []

    assert conformance.problems(Drifted) == [
        'action_events: overrides the shared member']


def test_conformance_imports_both_halves_and_they_not_it():
    # The cycle backend <-> backend_base (hidden by a lazy import) is
    # gone: the check is its own module above both.
    import ast
    import inspect

    from faultdriver.scenario import backend
    for module in (backend, backend_base):
        tree = ast.parse(inspect.getsource(module))
        names = {alias.name for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom)
                 for alias in node.names}
        assert 'conformance' not in names, module.__name__
    tree = ast.parse(inspect.getsource(backend))
    assert 'backend_base' not in {
        alias.name for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) for alias in node.names}


def test_the_exported_helpers_wait_as_long_as_the_contract():
    # export/novahelpers.py writes the wait default out (its text runs in
    # Nova's tree, importing nothing of faultdriver): it must stay the
    # contract's.
    import re

    from faultdriver.export import helpers
    from faultdriver.export import novafixture
    from faultdriver.scenario import backend
    waits = r'def _(?:wait_\w+|settle|decide_resizes)\(.*timeout=(\d+)\)'
    defaults = [int(value) for helper in helpers.HELPERS.values()
                for value in re.findall(waits, helper.source)]
    # (_wait_for_nth_migration, _settle, _decide_resizes; a wait-service
    # step writes Nova's _wait_for_service_parameter from the step's
    # timeout, whose default is the contract's.)
    assert len(defaults) == 3
    # And the proposed Nova fixture's waits (a fault, a restarted host).
    fixture = [int(value) for value in re.findall(
        r'def (?:wait_for|restart_dead)\([^)]*timeout=(\d+)\)',
        novafixture.text())]
    assert len(fixture) == 2
    assert set(defaults + fixture) == {backend.WAIT_TIMEOUT}


def test_every_tier_annotates_the_contract_as_it_is_declared():
    # The tiers' faces carry the contract's annotations (the process
    # tier's are type-checked by tox -e mypy): a member left unannotated
    # would escape the check's comparison.
    import typing

    from faultdriver.scenario import backend
    faces = [(embedded.EmbeddedNova, backend.NovaBackend,
              conformance.MEMBERS),
             (process_nova.ProcessNova, backend.NovaBackend,
              conformance.MEMBERS),
             (injection.FaultInjection, backend.FaultControl,
              conformance.FAULT_MEMBERS),
             (process_nova.Faults, backend.FaultControl,
              conformance.FAULT_MEMBERS),
             (process_nova._AdminAPI, backend.ComputeAPI,
              conformance.API_MEMBERS)]
    for cls, protocol, names in faces:
        for name in names:
            wanted = typing.get_type_hints(vars(protocol)[name])
            have = typing.get_type_hints(getattr(cls, name))
            assert {key: have.get(key) for key in wanted} == wanted, (
                cls.__name__, name)


class _Statuses(backend_base.BackendBase):
    """A server whose API status goes through ``statuses``, one a read
    (the last one stays)."""

    POLL = 0

    def __init__(self, *statuses):
        self.statuses = list(statuses)
        self.api = self

    def server_fields(self, server):
        status = self.statuses.pop(0) if len(self.statuses) > 1 \
            else self.statuses[0]
        return {'status': status, 'host': 'dest', 'task_state': None}

    def get_server(self, server_id):
        return {'id': server_id, 'status': self.statuses[0],
                'fault': {'message': 'No valid host was found.'}}


def test_active_or_error_waits_for_either_outcome_of_a_boot():
    """A boot whose outcome a variant's fix decides: BUILD is waited
    through, ACTIVE and ERROR both end the wait; a plain ACTIVE wait
    still fails at once on ERROR, and ACTIVE-OR-ERROR still times out
    on a server that never leaves BUILD."""
    either = backend.ACTIVE_OR_ERROR
    for outcome in ('ACTIVE', 'ERROR'):
        found = _Statuses('BUILD', 'BUILD', outcome).wait_for_server(
            {'id': 's2'}, timeout=5, status=either)
        assert found['status'] == outcome
    with pytest.raises(AssertionError, match='went to ERROR'):
        _Statuses('BUILD', 'ERROR').wait_for_server(
            {'id': 's2'}, timeout=5, status='ACTIVE')
    with pytest.raises(AssertionError, match='s2'):
        _Statuses('BUILD').wait_for_server({'id': 's2'}, timeout=0.2,
                                           status=either)
