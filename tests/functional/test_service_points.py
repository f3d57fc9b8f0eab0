"""Service-call points on the embedded Nova: placement beneath Nova's
report client.

The embedded Nova's placement is Nova's own ``PlacementFixture``: the
real placement WSGI application, reached through a keystoneauth session,
so a ``placement.*`` rule fires at the HTTP request beneath the report
client as on a cloud, and Nova's ``@safe_connect`` handles it.  (Nova's
``CinderFixture`` and ``NeutronFixture`` replace the HTTP layer, so
``volume.*`` and ``network.*`` rules are refused here; see
tests/unit/test_servicecall.py for those clients.)
"""

from faultdriver import exception
from faultdriver import points
from faultdriver.scenario import tiers
from faultdriver import servicecall
from tests.functional import base
from tests.functional.move_steps import MoveStepsMixin
from tests.functional.move_steps import NEW
from tests.functional.move_steps import OLD


class TestPlacementAtRevert(MoveStepsMixin, base.FaultTestBase):
    """A resize reverted while the source's placement connection fails
    once, at the step that gives the old allocation back to the instance
    (``ComputeManager._revert_allocation``, in ``finish_revert_resize``)."""

    OPERATION = 'resize'

    def test_a_refused_connection_is_swallowed_by_safe_connect(self):
        server = self.boot()
        self.start_move(server)
        self.wait_server(server, ('VERIFY_RESIZE', None, 'dest'))
        migration = self.migration(server)
        self.faults.set_rules(
            'src', ['placement.move_allocations@source: 1*connfail'])
        self.finish_move(server, 'revert')
        # Nova carries on: @safe_connect made the move return None, and
        # _revert_allocation ignores what it returns.
        self.wait_server(server, ('ACTIVE', None, 'src'))
        self.wait_migration(server, 'reverted')
        [fired] = self.faults.journal('src')
        self.assertEqual(
            ('placement.move_allocations', 'connfail', 'source',
             server['id'], migration['uuid']),
            (fired['point'], fired['action'], fired['role'],
             fired['instance'], fired['migration']))
        self.assertEqual([], self.faults.journal('dest'))
        # What the failed move left, on stock Nova: the server runs on
        # src with the old flavor, but the old flavor's allocation is
        # still held by the migration consumer and the instance still
        # holds the new flavor on dest (a candidate finding for issue 43
        # item 5, not analysed further here).
        self.assertEqual({'src': self.resources(OLD)},
                         self.held_by(migration['uuid']))
        self.assertEqual({'dest': self.resources(NEW)},
                         self.held_by(server['id']))


class TestRefusedWhereTheFixtureReplacesHttp(MoveStepsMixin,
                                             base.FaultTestBase):
    """Nova's CinderFixture replaces nova.volume.cinder.API: a volume.*
    rule would never fire, so it is refused, naming the fixture."""

    def test_the_tier_declares_what_the_fixtures_leave(self):
        """The embedded tier's declaration (what a scenario is refused
        by, what a sweep traces) is what this Nova's fixtures really
        leave to fire: checked for every service-call point against the
        running fixtures."""
        embedded = tiers.get('embedded')
        service = [name for name, point in points.catalogue().items()
                   if point.kind == 'service']
        self.assertTrue(service)
        for name in service:
            self.assertEqual(
                embedded.fires(name, 'service'),
                servicecall.unreachable(name) is None, name)

    def test_volume_rule_refused(self):
        self.assertIn('CinderFixture',
                      servicecall.unreachable('volume.attachment_update'))
        self.assertIsNone(servicecall.unreachable(
            'placement.move_allocations'))
        with self.assertRaisesRegex(exception.ConfigError, 'CinderFixture'):
            self.faults.add_rule('src', 'volume.attachment_update: '
                                        '1*http(500)')
