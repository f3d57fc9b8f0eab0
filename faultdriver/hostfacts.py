"""What ``ctl status`` tells a runner on another machine about this
nova-compute, which no API shows: its Nova settings, versions and clock.

A runner that reaches computes over SSH must know how long a call to a
dead host takes (``rpc_response_timeout``, ``long_rpc_timeout``), when a
stopped service shows as down (``report_interval``), how long a graceful
stop may take (``graceful_shutdown_timeout`` and Nova 34's
``manager_shutdown_timeout``, of which the manager waits for its tasks
at most all but ``min(20, it)`` seconds), how often the timer runs the
resource periodic (``update_resources_interval``), which CPUs the host
pins (``[compute] cpu_shared_set``, ``cpu_dedicated_set``), where its
libvirt answers (``[libvirt] connection_uri``) and whether its log has
the DEBUG texts expectations count (``debug``).  Values are
nova.conf's as this process read them.  Where each option is defined is
declared in :mod:`faultdriver.novacompat.declared`.
"""

from importlib import metadata
import typing

from nova import conf as nova_conf

from faultdriver import novacompat

CONF = nova_conf.CONF

#: ``[DEFAULT]`` options status reports, as nova.conf names them.
DEFAULT_OPTIONS = ('rpc_response_timeout', 'long_rpc_timeout',
                   'report_interval', 'graceful_shutdown_timeout',
                   'manager_shutdown_timeout', 'update_resources_interval',
                   'debug')
#: ``[compute]`` options status reports.
COMPUTE_OPTIONS = ('cpu_shared_set', 'cpu_dedicated_set')
#: ``[libvirt]`` options status reports: where a runner's ``virsh``
#: reaches the host's libvirt (empty: libvirt's default for the
#: virt_type, ``qemu:///system``).
LIBVIRT_OPTIONS = ('connection_uri',)


def faultdriver_version() -> typing.Optional[str]:
    try:
        return metadata.version('faultdriver')
    except metadata.PackageNotFoundError:
        return None


def settings():
    """``{option: value}`` of the options above (``[compute]`` ones as
    ``compute.NAME``)."""
    found = {name: CONF[name] for name in DEFAULT_OPTIONS}
    found.update({'compute.' + name: CONF.compute[name]
                  for name in COMPUTE_OPTIONS})
    found.update({'libvirt.' + name: CONF.libvirt[name]
                  for name in LIBVIRT_OPTIONS})
    return found


def versions():
    return {'nova': novacompat.nova_version(),
            'faultdriver': faultdriver_version()}
