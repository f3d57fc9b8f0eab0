"""How a run names what ran and says what it showed: one wording for the
progress lines, the text report and the HTML page.

* The Nova under test has one name
  (:func:`faultdriver.novaundertest.describe`), beside the candidate
  *tracker* fixes (faultdriver's own, :mod:`faultdriver.tracker`), which
  are not changes to Nova: "fixes: none (stock)" beside a Nova diff read
  as if stock Nova ran.
* A variant that expects the bug shows it: the met expectations that
  show the bug read "shows the bug: 'CPUPinningInvalid' logged 2 times",
  never "met", which reads as "Nova behaved".  Which those are is the
  caller's to say: the variant's own expectations (the progress lines,
  :func:`faultdriver.scenario.play._own`), or those no variant without
  the bug meets too (the reports, :func:`faultdriver.scenario.report.
  shared`); a fact of the setup every variant meets reads "met".
"""

import ast
import typing

#: The verdict words of one expectation: (expects the bug, met) -> words.
VERDICT = {(False, True): 'met', (False, False): 'NOT MET',
           (True, True): 'shows the bug', (True, False): 'bug not shown'}


def tracker_fixes(patches: typing.Optional[typing.Iterable[str]]) -> str:
    """The candidate tracker fixes a variant ran with, in words."""
    return ', '.join(patches or ()) or 'none'


def variant_facts(mode: str,
                  patches: typing.Optional[typing.Iterable[str]],
                  nova: typing.Optional[typing.Mapping[str, typing.Any]]
                  ) -> str:
    """``threading mode, tracker fixes: none, Nova under test: nova
    34.0.0 (stock)``: how every announcement of a variant names what it
    runs (``nova``: the record of :mod:`faultdriver.novaundertest`)."""
    from faultdriver import novaundertest
    return '%s mode, tracker fixes: %s, Nova under test: %s' % (
        mode, tracker_fixes(patches), novaundertest.describe(nova))


def _times(count: int) -> str:
    if count == 1:
        return 'once'
    return '%s times' % count


def _logged_text(expectation: str) -> typing.Optional[str]:
    """The text of a ``log`` expectation's words (``log 'TEXT' count
    ...``, as :mod:`faultdriver.scenario.expect` writes them), or None."""
    head, found, _bounds = expectation.rpartition(' count ')
    if not found or not head.startswith('log '):
        return None
    try:
        text = ast.literal_eval(head[len('log '):])
    except (ValueError, SyntaxError):
        return None
    return text if isinstance(text, str) else None


def seen(kind: typing.Optional[str], expectation: str,
         actual: typing.Any) -> str:
    """What an expectation saw, as a finding: ``'X' logged 2 times``
    for the counted kinds, else the expectation and its actual value."""
    if kind == 'log' and isinstance(actual, int):
        text = _logged_text(expectation)
        if text is not None:
            return '%r logged %s' % (text, _times(actual))
    if kind == 'periodic-errors' and isinstance(actual, int):
        host = expectation.split(' ')[3] if expectation.startswith(
            'periodic errors on ') else '?'
        return '%d periodic error%s on %s' % (actual, 's' * (actual != 1),
                                              host)
    return '%s (actual: %s)' % (expectation, actual)


def verdict(expects_bug: object, met: object) -> str:
    """``met``/``NOT MET``, or for a variant that expects the bug
    ``shows the bug``/``bug not shown``."""
    return VERDICT[bool(expects_bug), bool(met)]


def shown(expects_bug: object, kind: typing.Optional[str],
          expectation: str, met: object, actual: typing.Any) -> str:
    """An expectation's verdict, and what it saw where that is the bug:
    ``shows the bug: 'X' logged 2 times`` in a variant that expects the
    bug and saw it, else :func:`verdict`'s words."""
    words = verdict(expects_bug, met)
    if expects_bug and met:
        return '%s: %s' % (words, seen(kind, expectation, actual))
    return words


def result(expects_bug: object, kind: typing.Optional[str],
           expectation: str, met: object, actual: typing.Any) -> str:
    """One expectation's result in one line: :func:`shown`, with the
    actual value where it does not say it already (``met (0)``)."""
    if expects_bug and met:
        return shown(expects_bug, kind, expectation, met, actual)
    return '%s (%s)' % (verdict(expects_bug, met), actual)
