"""A hit says whether it runs in its host's resource periodic.

Invariant: the hits the periodic makes (``get_available_nodes`` on the
thread that runs it, ``get_available_resource`` and
``tracker.update_available_resource`` in the per-node update, which Nova
34 runs on its executor's thread) are journaled ``in_periodic``; a hit of
the same service outside it (``spawn``) is not; and the ``periodic``
action at a point inside the periodic runs no second one.  Run in both
concurrency modes.
"""

from tests.functional import base

INSIDE = ('get_available_nodes', 'get_available_resource',
          'tracker.update_available_resource')


class TestInPeriodic(base.FaultTestBase):

    RULES = {'src': ['%s: log' % point for point in INSIDE + ('spawn',)]}

    def test_periodic_hits_are_marked_and_others_are_not(self):
        self.boot()
        [spawn] = [e for e in self.faults.journal('src')
                   if e.get('point') == 'spawn']
        self.assertFalse(spawn['in_periodic'], spawn)

        before = len(self.faults.journal('src'))
        self.run_periodic('src')
        made = self.faults.journal('src')[before:]
        self.assertEqual(sorted(INSIDE),
                         sorted({e['point'] for e in made}), made)
        self.assertEqual([], [e for e in made if not e['in_periodic']])

    def test_periodic_action_inside_the_periodic_runs_none(self):
        self.faults.add_rule('src', 'get_available_resource: 1*periodic')
        before = len(self.faults.journal('src'))
        self.run_periodic('src')
        [entry] = [e for e in self.faults.journal('src')[before:]
                   if e['kind'] == 'periodic']
        self.assertEqual("the hit is in src's own resource periodic",
                         entry['skipped'])
