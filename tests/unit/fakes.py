"""A Nova-free catalogue of points and registry of actions for unit tests.

The grammar and the engine take both as arguments, so these stand in for
``faultdriver.points.catalogue()`` and ``faultdriver.actions.load_all()``,
which need Nova and installed entry points.
"""

import collections

from faultdriver.actions import base
from faultdriver.actions import basic
from faultdriver.actions import timing
from faultdriver import rules

Point = collections.namedtuple(
    'Point', 'name roles operations raises kind tracker_lock')


def _point(name, roles=(), operations=(), raises=('InternalError',),
           kind='driver', tracker_lock=False):
    return Point(name, tuple(roles), tuple(operations), tuple(raises), kind,
                 tracker_lock)


CATALOGUE = {p.name: p for p in (
    _point('spawn'),
    _point('destroy'),
    _point('pre_live_migration', ['dest'], ['live-migration'],
           ['MigrationError']),
    _point('live_migration', ['source'], ['live-migration']),
    _point('migrate_disk_and_power_off', ['source'], ['migration', 'resize']),
    _point('tracker.instance_claim', kind='tracker', tracker_lock=True),
)}


class Record(base.Action):
    """record(tag): append (tag, rule index, hit, fired) to the hit target.

    Tests pass a list as ``target`` to :meth:`Engine.hit`, so what fired is
    kept by the test that made the hit, not in module state.
    """

    name = 'record'
    params = (('tag', str),)

    def __call__(self, hit):
        hit.target.append((self.args.get('tag'), hit.rule_index, hit.hit,
                           hit.fired))


ACTIONS = {cls.name: cls for cls in (
    basic.Off, basic.Log, timing.Delay, timing.Hang, Record)}


def rule(text):
    """Parse and validate ``text`` against the fake catalogue."""
    return rules.validate(rules.parse(text), CATALOGUE, ACTIONS)
