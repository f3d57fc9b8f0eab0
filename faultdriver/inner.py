"""Loading the driver that faultdriver wraps.

Named drivers live in the ``faultdriver.inner_drivers`` stevedore
namespace; Nova's own ``module.Class`` syntax (relative to ``nova.virt``)
is accepted too, so any ``compute_driver`` value can be wrapped.
"""

from importlib import metadata

from oslo_utils import importutils
import stevedore

from faultdriver import exception
from faultdriver import rules

NAMESPACE = 'faultdriver.inner_drivers'


def registered():
    """Names of the registered inner drivers, sorted."""
    return sorted({ep.name for ep in metadata.entry_points(group=NAMESPACE)})


def load_class(name):
    """The driver class for ``[fault_injection] inner_driver = name``."""
    from nova.virt import driver as nova_driver

    names = registered()
    expected = ('expected one of %s, or a driver in compute_driver syntax '
                'such as libvirt.LibvirtDriver' % ', '.join(names))
    if not name:
        raise exception.ConfigError(
            '[fault_injection] inner_driver is not set; ' + expected)
    if name in names:
        klass = stevedore.DriverManager(
            NAMESPACE, name, invoke_on_load=False).driver
    elif '.' in name:
        try:
            klass = importutils.import_class('nova.virt.' + name)
        except (ImportError, AttributeError, ValueError) as exc:
            raise exception.ConfigError(
                '[fault_injection] inner_driver %r cannot be imported as '
                'nova.virt.%s: %s' % (name, name, exc)) from exc
    else:
        raise exception.ConfigError(
            '[fault_injection] inner_driver %r is unknown%s; %s'
            % (name, rules.suggest(name, names), expected))
    if not (isinstance(klass, type)
            and issubclass(klass, nova_driver.ComputeDriver)):
        raise exception.ConfigError(
            '[fault_injection] inner_driver %r is not a ComputeDriver' % name)
    if getattr(klass, 'wraps_inner_driver', False):
        raise exception.ConfigError(
            '[fault_injection] inner_driver %r is faultdriver itself; name '
            'the driver to wrap' % name)
    return klass
