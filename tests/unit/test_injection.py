"""FaultInjection without a crash (``crash=False``) refuses what needs
one, naming the host: crashing a host, and reading or waiting for what
is queued for a crashed one (once an AttributeError on None).

No Nova starts: the refusals come before anything reaches a service.
"""

import nova.tests.unit  # noqa: F401  (Nova's patching and objects first)

import pytest

from faultdriver.harness import injection


def without_crash():
    return injection.FaultInjection(object(), crash=False)


@pytest.mark.parametrize('call', [
    lambda faults: faults.crash_host('dest'),
    lambda faults: faults.queued('dest'),
    lambda faults: faults.wait_callers_gave_up('dest', timeout=1),
    lambda faults: faults.wait_for_queued('dest', 'pre_live_migration',
                                          timeout=1),
], ids=['crash_host', 'queued', 'wait_callers_gave_up', 'wait_for_queued'])
def test_without_a_crash_what_needs_one_is_refused(call):
    with pytest.raises(RuntimeError,
                       match=r'crash=False\) cannot crash host dest'):
        call(without_crash())
