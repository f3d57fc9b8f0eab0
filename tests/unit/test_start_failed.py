"""StartFailed.by_fault: the one wording of a failed start on both tiers."""

from faultdriver import exception


def test_names_the_last_crash_or_raise_of_the_start():
    entries = [{'action': 'log', 'point': 'init_host'},
               {'action': 'raise', 'point': 'init_host'},
               {'action': 'crash', 'point': 'update_provider_tree'},
               {'action': 'delay', 'point': 'get_available_resource'}]
    failed = exception.StartFailed.by_fault('dest', entries)
    assert str(failed) == 'dest failed to start: crash at update_provider_tree'


def test_adds_the_cause_when_given():
    failed = exception.StartFailed.by_fault(
        'src', [{'action': 'raise', 'point': 'init_host'}],
        ValueError('boom'))
    assert str(failed) == ('src failed to start: raise at init_host '
                           '(ValueError: boom)')


def test_none_when_no_fault_ended_the_start():
    assert exception.StartFailed.by_fault(
        'dest', [{'action': 'delay', 'point': 'init_host'}]) is None
    assert exception.StartFailed.by_fault('dest', ()) is None
