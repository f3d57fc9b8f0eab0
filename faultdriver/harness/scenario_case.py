"""A scenario variant as the one test of an embedded Nova test case.

The embedded tier's ``run_variant``: builds a TestCase on
:class:`faultdriver.harness.embedded.EmbeddedNova` for the scenario's
hosts, shapes, rules and fixes, and runs it through unittest, outside
any test discovery, playing the scenario
(:func:`faultdriver.scenario.play.play`) as its test.  Import it only
once ``OS_NOVA_DISABLE_EVENTLET_PATCHING`` is set
(:func:`faultdriver.harness.runner.run` does).
"""

import logging
import unittest

from faultdriver.harness import embedded
from faultdriver.harness import heap
from faultdriver import novaundertest
from faultdriver.scenario import model
from faultdriver.scenario import play
from faultdriver.scenario import tiers
from faultdriver.scenario import variant_report
from faultdriver.scenario import wording

#: Loggers whose records log expectations count, and their levels.
#: Loggers whose records the scenario reads: Nova's compute, its service
#: and manager base (what a graceful stop says), faultdriver's own.
CAPTURED = (('nova.compute', logging.DEBUG), ('nova.service', logging.INFO),
            ('nova.manager', logging.INFO), ('faultdriver', logging.INFO))


def run(path: str, variant: str, mode: str) -> variant_report.VariantReport:
    """Run ``variant`` of the scenario at ``path``; returns the report."""
    scenario = model.load(path)
    # Also when started on a tier its "backends" key does not list.
    model.check_tier(scenario, tiers.DEFAULT)
    report = variant_report.VariantReport.begin(
        scenario, variant, mode, tiers.DEFAULT, topology={
            host: shape.as_dict()
            for host, shape in scenario.host_shapes().items()}, cpu=True)
    play.progress(variant, 'starting embedded Nova (%s)' % (
        wording.variant_facts(mode, report.patches,
                              novaundertest.recorded())))

    class ScenarioCase(embedded.EmbeddedNova):
        PINNED = scenario.pinned
        HOSTS = tuple(scenario.hosts)
        TOPOLOGY = scenario.host_shapes()
        IDLE_WAKEUP = 0.2       # restarts and teardown wait <= 0.2 s
        RULES = scenario.data.get('rules', {})
        PATCHES = tuple(scenario.patches(variant))
        CAPTURED_LOGS = CAPTURED

        def setUp(self) -> None:
            super().setUp()
            if scenario.shelved_offload_time is not None:
                # Read by the compute manager at each shelve.
                self.flags(shelved_offload_time=scenario.shelved_offload_time)
            self.stub_live_migration()
            self.stub_disk_copy()
            # Registered last, runs first: Nova's thread pools log their
            # shutdown once the test's logging fixtures are gone.
            self.addCleanup(logging.disable, logging.CRITICAL)

        def test_scenario(self) -> None:
            try:
                play.play(self, scenario, variant, report)
            finally:
                # The report is written: the teardown's stops need not
                # wait for a move's task no thread works on (F19).
                self.end_pending_moves()

    result = unittest.TestResult()
    heap.ready_for_case()
    ScenarioCase('test_scenario').run(result)
    report.ended()
    play.mark_cpu(report, 'teardown')
    problems = result.errors + result.failures
    report.internal_error = (
        ''.join(text for _case, text in problems) or None)
    if report.internal_error:
        play.progress_internal_error(variant, report.internal_error)
    return report
