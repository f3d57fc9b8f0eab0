"""faultdriver.harness.heap: survivors are frozen, later garbage is
collected, young collections are rarer."""

import gc
import weakref

import testtools

from faultdriver.harness import heap


class Node:
    """A cycle-capable object a weak reference can watch."""


def _cycle():
    node = Node()
    node.self = node
    return weakref.ref(node)


class ReadyForCaseTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.addCleanup(gc.unfreeze)
        self.addCleanup(gc.set_threshold, *gc.get_threshold())

    def test_survivors_frozen_and_earlier_garbage_freed(self):
        kept = Node()
        self.assertTrue(gc.is_tracked(kept))
        dropped = _cycle()
        heap.ready_for_case()
        self.assertIsNone(dropped())          # collected, not frozen
        self.assertGreater(gc.get_freeze_count(), 0)
        self.assertFalse(any(o is kept for o in gc.get_objects()))  # unwalked

    def test_garbage_made_after_the_freeze_is_collected(self):
        heap.ready_for_case()
        later = _cycle()
        self.assertIsNotNone(later())         # only a cycle keeps it
        gc.collect()
        self.assertIsNone(later())

    def test_young_collections_wait_for_ten_thousand_objects(self):
        heap.ready_for_case()
        self.assertEqual(heap.YOUNG_THRESHOLD, gc.get_threshold()[0])
