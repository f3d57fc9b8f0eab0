"""Every exception the catalogue lists for a point can really be raised."""

import nova.tests.unit  # noqa: F401  (Nova's patching and objects first)

from nova import exception as nova_exception
from nova import test

from faultdriver.actions import error
from faultdriver import engine
from faultdriver import exception
from faultdriver import points
from faultdriver import rules


def _hit(point):
    return engine.Hit(point=point, phase='before', host='hostA', rule=None,
                      rule_index=0, hit=1, fired=1)


class TestRaise(test.NoDBTestCase):

    def raised(self, point, name):
        action = error.Raise(rules.Term(action='raise', args=(name,)))
        try:
            action(_hit(point))
        except nova_exception.NovaException as exc:
            return exc
        self.fail('raise(%s) at %s raised nothing' % (name, point))

    def test_every_listed_exception_is_raised_as_itself(self):
        for point in points.catalogue().values():
            for name in point.raises:
                exc = self.raised(point.name, name)
                self.assertEqual(name, type(exc).__name__)
                self.assertIsInstance(exc, exception.InjectedFault)

    def test_a_rollback_wraps_the_injected_error_nova_reraises(self):
        exc = self.raised('migrate_disk_and_power_off',
                          'InstanceFaultRollback')
        self.assertIsInstance(exc, nova_exception.InstanceFaultRollback)
        inner = exc.inner_exception
        self.assertIsInstance(inner, nova_exception.InternalError)
        self.assertIsInstance(inner, exception.InjectedFault)
        self.assertIn('[faultdriver] injected at '
                      'migrate_disk_and_power_off.before on hostA', str(inner))
