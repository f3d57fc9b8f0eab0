"""Both scenario backends keep the one contract scenario steps and
expectations use (faultdriver.scenario.backend), and the check names what
a backend lacks."""

from faultdriver.harness import embedded
from faultdriver.process import nova as process_nova
from faultdriver.scenario import backend


def test_embedded_nova_keeps_the_contract():
    assert backend.problems(embedded.EmbeddedNova) == []


def test_process_nova_keeps_the_contract():
    assert backend.problems(process_nova.ProcessNova) == []


def test_a_backend_missing_a_member_is_refused_by_name():
    class Partial(process_nova.ProcessNova):
        guests = None

        def create_flavor(self, vcpus):        # no extra_specs
            return 'flavor'

    found = backend.problems(Partial)
    assert found == ['create_flavor: takes no \'extra_specs\'',
                     'guests: missing method']


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
    assert 'api: missing attribute' in message
    assert 'run_periodic: missing method' in message
