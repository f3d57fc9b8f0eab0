"""The invariant that no resource-tracker periodic failed once the
operator's recovery began."""

import re
import typing

from faultdriver.actions import error as error_action
from faultdriver.novacompat import texts
from faultdriver.scenario.invariants import base
from faultdriver.scenario import statuses

PERIODIC_ERROR = texts.PERIODIC_ERROR
#: The last line of a logged traceback, ``nova.exception.Name: message``
#: (oslo.log prefixes each traceback line with time, pid and logger).
EXCEPTION_LINE = re.compile(
    r'(?:^|\s)(?:[a-z_]\w*\.)*([A-Z]\w*(?:Error|Exception|Invalid|'
    r'NotFound|Failed|Timeout|Conflict)): ', re.M)


def periodics_clean(steps: base.Steps, state: base.State) -> base.Checked:
    """No periodic failed since ``recover`` began (its own periodics, the
    accounting check's and those moves-again runs inside each follow-up
    move).  The actual value names the exceptions and, as evidence, the
    context of a migration in a terminal status the tracker applied
    (Nova's line ``Migration status is error``)."""
    marks = steps.recovery_marks or {}
    now = steps.log_counts()
    text = steps.log_text()
    actual = []
    for host in steps.scenario.hosts:
        new = now[('error', host)] - marks.get(('error', host), 0)
        if not new:
            continue
        # A periodic that failed with the injected exception is the fault
        # itself (a raise at a periodic's step that fired after recover
        # began, as when a change reorders the calls), not a consequence.
        caused = [name for name, injected in logged_periodic_errors(
            text, PERIODIC_ERROR % host, new) if not injected]
        if caused:
            names = list(dict.fromkeys(filter(None, caused)))
            actual.append('%s: %d periodic error(s) (%s)' % (
                host, len(caused), ', '.join(names) or
                'exception not logged'))
    if actual:
        actual += ["the tracker applied the migration context of a "
                   "migration in status '%s'" % status
                   for status in statuses.TERMINAL
                   if now[('applied', status)] >
                   marks.get(('applied', status), 0)]
    return not actual, 'no periodic failed after recovery began', \
        actual or 'none failed'


def logged_periodic_errors(
        text: str, marker: str, last: int
) -> typing.List[typing.Tuple[typing.Optional[str], bool]]:
    """``(exception class name or None, injected)`` for each of the
    ``last`` occurrences of ``marker`` (a periodic's error line): the
    exception its traceback ends in, and whether that is faultdriver's
    injected one (its message starts with the raise action's prefix)."""
    starts = [m.start() for m in re.finditer(re.escape(marker), text)]
    errors: typing.List[typing.Tuple[typing.Optional[str], bool]] = []
    for start in starts[-last:]:
        found = EXCEPTION_LINE.search(text, start, start + 20000)
        if not found:
            errors.append((None, False))
            continue
        line = text[found.end():text.find('\n', found.end())]
        errors.append((found.group(1),
                       line.startswith(error_action.INJECTED_PREFIX)))
    return errors


def _export(writer: base.Writer) -> base.NovaForm:
    if 'recover' not in [s.kind for s in writer.scenario.steps]:
        raise base.NotExportable(
            'counts the periodics that failed since recover began; the '
            'scenario has no recover step')
    return base.NovaForm(('failed_periodics_since',),
                         'self._failed_periodics_since('
                         'self.recovery_began)', '{}')


PERIODICS_CLEAN = base.Invariant(
    'periodics-clean',
    'no resource tracker periodic should fail after the recovery began',
    periodics_clean, _export, after=3,
    details='Checked last.  The periodics counted ("Error updating '
            'resources for node HOST") are recover\'s, the accounting '
            'check\'s and the ones moves-again runs inside each follow-up '
            'move (after a `recover` with `rules`, since its end: an error '
            'its faults made a periodic log is the fault).  The actual '
            'value names the exceptions and whether the tracker applied '
            'the migration context of a migration in a terminal status.')
