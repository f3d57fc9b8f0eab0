"""moves-again says why a follow-up move failed, from Nova's own
instance action events (a move that fails once in many runs must be
diagnosable from the report alone)."""

import types
import unittest

from faultdriver.scenario.invariants import usable


class EventsNova:
    """The contract's action_events, answering recorded events."""

    def __init__(self, events=None, error=None):
        self.events = events or []
        self.error = error

    def action_events(self, server, action):
        if self.error:
            raise self.error
        assert action == 'live-migration'
        return self.events


def steps(nova):
    return types.SimpleNamespace(nova=nova)


class TestWhy(unittest.TestCase):

    def test_details_of_the_failed_event(self):
        nova = EventsNova([
            {'event': 'conductor_live_migrate_instance', 'result': 'Error',
             'details': 'No valid host was found.', 'traceback': 'x'}])
        self.assertEqual(
            '; conductor_live_migrate_instance failed: '
            'No valid host was found.', usable._why(steps(nova), {'id': 1}))

    def test_traceback_last_line_without_details(self):
        nova = EventsNova([
            {'event': 'compute_check_can_live_migrate_destination',
             'result': 'Success'},
            {'event': 'conductor_live_migrate_instance', 'result': 'Error',
             'traceback': 'Traceback\n  File x\nMigrationPreCheckError: y\n'}])
        self.assertEqual(
            '; conductor_live_migrate_instance failed: '
            'MigrationPreCheckError: y', usable._why(steps(nova), {'id': 1}))

    def test_no_failed_event(self):
        nova = EventsNova([{'event': 'e', 'result': 'Success'}])
        self.assertEqual('; no failed event recorded',
                         usable._why(steps(nova), {'id': 1}))

    def test_events_not_readable(self):
        nova = EventsNova(error=RuntimeError('api down'))
        self.assertIn('not read: api down',
                      usable._why(steps(nova), {'id': 1}))
