"""How a run words what ran and what it showed (no Nova needed).

Invariants: a variant that expects the bug never reads "met": each met
expectation says what it showed ("shows the bug: 'X' logged 2 times"),
each unmet one "bug not shown"; a variant that expects none keeps
met/NOT MET; every announcement of a variant names the candidate
*tracker* fixes and the Nova under test by one name (a Nova diff is
never "stock").  The words are read from what
:mod:`faultdriver.scenario.expect` really writes, so a rewording there
fails here.
"""

import pytest

from faultdriver.scenario import expect
from faultdriver.scenario import model
from faultdriver.scenario import play
from faultdriver.scenario import report
from faultdriver.scenario import runstate
from faultdriver.scenario import variant_report
from faultdriver.scenario import wording
from tests import runstates


class Steps:
    """What the log expectation reads of a run."""

    def __init__(self, log):
        self.log = log

    def log_text(self):
        return self.log


def log_verdict(text, log, **count):
    met, expectation, actual = expect.KINDS['log'](
        Steps(log), {}, text, **count)
    return {'kind': 'log', 'expectation': expectation, 'met': met,
            'actual': actual}


def test_a_variant_that_expects_the_bug_says_what_it_shows():
    e = log_verdict('CPUPinningInvalid',
                    'x CPUPinningInvalid y CPUPinningInvalid', min=1)
    assert wording.result(True, **e) == \
        "shows the bug: 'CPUPinningInvalid' logged 2 times"
    assert wording.shown(True, **e) == wording.result(True, **e)
    once = log_verdict("it's", "it's", min=1)
    assert wording.result(True, **once) == \
        "shows the bug: \"it's\" logged once"


@pytest.mark.parametrize('expects_bug, met, words', [
    (False, True, 'met (0)'), (False, False, 'NOT MET (0)'),
    (True, False, 'bug not shown (0)')])
def test_other_verdicts_keep_their_actual_value(expects_bug, met, words):
    e = log_verdict('CPUPinningInvalid', '', count=0)
    e['met'] = met
    assert wording.result(expects_bug, **e) == words
    assert wording.shown(expects_bug, **e) == words.split(' (')[0]


def test_other_kinds_say_the_expectation_and_what_it_found():
    assert wording.seen('periodic-errors', 'periodic errors on dest >= 1',
                        3) == '3 periodic errors on dest'
    assert wording.seen('server', "s1 {'status': 'ACTIVE'}",
                        {'status': 'ACTIVE'}) == \
        "s1 {'status': 'ACTIVE'} (actual: {'status': 'ACTIVE'})"


@pytest.mark.parametrize('nova, named', [
    ({'base': 'nova 34.0.0', 'tree': None, 'patches': []},
     'nova 34.0.0 (stock)'),
    ({'base': 'nova 34.0.0', 'tree': None,
      'patches': [{'file': 'fix.diff', 'sha256': 'ab' * 32}]},
     'nova 34.0.0 + fix.diff (sha256 abababababab)')])
def test_a_variant_is_announced_with_one_name_for_its_nova(nova, named):
    facts = wording.variant_facts('threading', [], nova)
    assert facts == ('threading mode, tracker fixes: none, Nova under '
                     'test: %s' % named)
    headline = report.headline(variant_report.VariantReport(
        variant='stock', mode='threading', backend='embedded', patches=[],
        nova=nova, expectations=[]))
    assert headline == 'Variant stock (%s): OK' % facts
    assert 'fixes: none (stock)' not in headline


def test_progress_words_a_variants_own_expectations_as_the_bug():
    """The progress lines know which verdict is the variant's own (what
    shows its bug) in expect.evaluate's order: the LAST kinds last."""
    seed = model.load('stale-error-migration-context')
    assert play._own(seed, 'stock') == [False] * 4 + [True] * 4
    fix = seed.expectations('fix')
    assert fix[-1].kind == 'accounting-matches-placement'
    data = dict(seed.data, expectations=seed.data['expectations'] + [
        {'accounting-matches-placement': {}}])
    reordered = model.Scenario(seed.path, data)
    # The common LAST kind goes after the variant's own.
    assert play._own(reordered, 'stock') == [False] * 4 + [True] * 4 + [
        False]


def test_a_fact_every_variant_meets_is_not_the_bug():
    e = runstate.ExpectationResult(kind='faults',
                                   expectation='faults {} == 1', met=True,
                                   actual=1)
    reports = {variant: variant_report.VariantReport(
        variant=variant, mode='threading', backend='embedded',
        expect=expect, expectations=[e], state=runstates.state())
        for variant, expect in (('stock', 'bug'), ('fix', 'ok'))}
    assert report.shared(reports) == {'faults {} == 1'}
    rows = dict((row[0], row[1:]) for row in report.comparison(reports)[1]
                if row[0] == 'faults {} == 1')
    assert rows == {'faults {} == 1': ['met (1)', 'met (1)']}
