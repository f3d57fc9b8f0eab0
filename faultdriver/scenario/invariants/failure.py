"""``outcome-after-failure``: a move a fault made fail ends as Nova's
own rollback for that step promises (the check and its table:
:mod:`faultdriver.scenario.rollback`)."""

from faultdriver.scenario.invariants import base
from faultdriver.scenario import rollback

#: The case's fault as the rollback table is keyed, and where each
#: server was booted (sweep.cases.failure_args writes them): the
#: arguments of ``outcome-after-failure`` but its clean outcome, and
#: ``servers-settled``'s ``failure``.
FAULT = {'operation': {'type': ['string', 'null'], 'maxLength': 40},
         'point': {'type': 'string', 'maxLength': 100},
         'host': {'type': 'string', 'maxLength': 255},
         'phase': {'enum': ['before', 'after', 'unlocked']},
         'action': {'enum': sorted(rollback.ACTIONS)},
         'exception': {'type': 'string', 'maxLength': 100},
         'origin': {'type': 'object', 'maxProperties': 64,
                    'additionalProperties': {'type': 'string',
                                             'maxLength': 255}}}
FAULT_REQUIRED = ('operation', 'point', 'host', 'phase', 'action', 'origin')

OUTCOME_AFTER_FAILURE = base.Invariant(
    'outcome-after-failure',
    'a move a fault made fail should end as Nova\'s rollback for that '
    'step promises',
    rollback.after_failure, swept=False,
    details='Added by the sweep to cases whose fault makes a step fail '
            '(`raise`, `raise-generic`, `crash`; `http-error` and '
            "`connfail`, unless Nova's own code retries the answer): each "
            'server the clean '
            'run moved ends as in the clean run (`outcome`, written by the '
            "sweep) or as Nova's rollback table "
            '(faultdriver/data/rollback.yaml, shown in the sweeps page) '
            "promises for the fault (`operation`, `point`, the fault's "
            '`host`, `phase`, `action`, `exception`): rolled back (ACTIVE '
            'on its `origin` host) or errored by design, no task state, '
            "its newest migration in the row's statuses.  A fault without "
            'a row is reported as one Nova promises nothing for.',
    args=dict({'outcome': {'$ref': '#/$defs/moves-ended'}}, **FAULT),
    required=FAULT_REQUIRED)
