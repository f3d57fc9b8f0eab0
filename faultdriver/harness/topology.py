"""Per-host CPU topology and CPU sets for the computes of an embedded Nova.

The hardware of each host is its fakelibvirt ``HostInfo`` (NUMA cells,
sockets, cores, threads, memory), as in Nova's NUMA functional tests.

``[compute] cpu_dedicated_set`` and ``cpu_shared_set`` are harder: every
service of an embedded Nova shares one ``CONF``, and Nova's own tests set
them globally (``self.flags`` before ``start_compute``), so every host
reads the last value, in its periodics too.  Here the libvirt driver reads
its own host's value: every ``LibvirtDriver`` method that reads the sets
(found in Nova's source, :func:`faultdriver.novacompat.shapes.
cpu_set_readers`) says, while it runs, which driver is asking (a context
variable), and ``nova.virt.hardware``'s two readers answer from that
host's shape (parsed by Nova's ``parse_cpu_spec``).  novacompat checks
that nothing else in Nova calls the readers.  Nova reads the options
directly only to test whether they are set, so the global values are
those of the first host, and the scenario model refuses a topology in
which only some hosts set an option.
"""

import contextvars
import functools
import typing

import fixtures
from nova.tests.fixtures import libvirt as fakelibvirt
from nova.virt import hardware
from nova.virt.libvirt import driver as libvirt_driver

from faultdriver import hostshape
from faultdriver.novacompat import patchfixtures
from faultdriver.novacompat import shapes as compat_shapes

#: The LibvirtDriver whose method is running (and reading the CPU sets).
_asking: 'contextvars.ContextVar[typing.Any]' = contextvars.ContextVar(
    'faultdriver_cpu_set_reader', default=None)


#: The host shape type (faultdriver.hostshape), and the pinned host
#: (4 dedicated pCPUs in one NUMA cell: EmbeddedNova.PINNED).
HostShape = hostshape.HostShape
PINNED = hostshape.PINNED_HOST


def host_info(shape: hostshape.HostShape) -> typing.Any:
    """fakelibvirt's HostInfo of ``shape``."""
    memory = {} if shape.memory_mb is None else {
        'kB_mem': shape.memory_mb * 1024}
    return fakelibvirt.HostInfo(
        cpu_nodes=shape.cpu_nodes, cpu_sockets=shape.cpu_sockets,
        cpu_cores=shape.cpu_cores, cpu_threads=shape.cpu_threads, **memory)


def calling_host() -> typing.Optional[str]:
    """The host whose LibvirtDriver is reading the CPU sets, or None."""
    driver = _asking.get()
    if driver is None:
        return None
    name: str = driver._host.get_connection().getHostname()
    return name


def _telling_host(method: typing.Callable[..., typing.Any]
                  ) -> typing.Callable[..., typing.Any]:
    """``method`` of LibvirtDriver, marking its driver as the asker."""
    @functools.wraps(method)
    def marked(self: typing.Any, *args: typing.Any,
               **kwargs: typing.Any) -> typing.Any:
        token = _asking.set(self)
        try:
            return method(self, *args, **kwargs)
        finally:
            _asking.reset(token)
    return marked


class PerHostShapes(fixtures.Fixture):
    """Each host's CPU sets, online CPUs and memory as that host reports
    them.

    Set up after the libvirt test base's ``setUp`` (which mocks every
    host's online CPUs as 0-15) and before the computes start.  Also
    reports the host's memory in MiB, as libvirt's ``getInfo`` does
    (fakelibvirt reports its KiB figure as MiB: placement would see 1024
    times the memory the NUMA cells have).
    """

    def __init__(self, test: typing.Any,
                 shapes: typing.Mapping[str, hostshape.HostShape]) -> None:
        super().__init__()
        self.test = test
        self.shapes = dict(shapes)

    def _setUp(self) -> None:
        first = next(iter(self.shapes.values()))
        self.test.flags(cpu_dedicated_set=first.cpu_dedicated_set,
                        cpu_shared_set=first.cpu_shared_set, group='compute')
        self.test.flags(vcpu_pin_set=None)
        for option in ('cpu_dedicated_set', 'cpu_shared_set'):
            self.useFixture(patchfixtures.Patch(
                'nova.virt.hardware.get_' + option,
                self._reader(option, getattr(hardware, 'get_' + option))))
        self.useFixture(patchfixtures.PatchMethods(
            'nova.virt.libvirt.driver.LibvirtDriver',
            compat_shapes.cpu_set_readers(libvirt_driver.LibvirtDriver),
            _telling_host))
        shapes = self.shapes

        def get_online_cpus(host: typing.Any) -> typing.Set[int]:
            return set(range(shapes[host.get_connection().getHostname()]
                             .cpus))
        self.useFixture(patchfixtures.Patch(
            'nova.virt.libvirt.host.Host.get_online_cpus', get_online_cpus))
        get_info = fakelibvirt.Connection.getInfo

        def get_info_in_mib(connection: typing.Any) -> typing.List[typing.Any]:
            info = list(get_info(connection))
            info[1] = connection.host_info.kB_mem // 1024
            return info
        self.useFixture(patchfixtures.Patch(
            'nova.tests.fixtures.libvirt.Connection.getInfo',
            get_info_in_mib))

    def _reader(self, option: str, nova_reader: typing.Callable[[], typing.Any]
                ) -> typing.Callable[[], typing.Any]:
        def read() -> typing.Any:
            host = calling_host()
            shape = None if host is None else self.shapes.get(host)
            if shape is None:           # not from a compute's driver
                return nova_reader()
            value = getattr(shape, option)
            return hardware.parse_cpu_spec(value) if value else None
        read.__doc__ = 'The calling host\'s [compute] %s.' % option
        return read
