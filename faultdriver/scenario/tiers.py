"""The tiers: where a scenario's or a sweep's Nova runs.

The one list of them.  The command line's choices and help, the
reports' and the progress lines' names, the scenario schema's
``backends`` values, the runner each variant starts, the sweep's
defaults and the prerequisites checked before a run all read it, so a
tier is added (or a default changed) here only.  Imports nothing: the
command line reads it before it knows whether Nova will be imported.

What each tier provides (:class:`Provision`) is declared here too, and
what needs a provision declares it where it is defined (:func:`needs`
on a step's method, an expectation's check or a scenario key's reader;
``needs`` on an action class): :mod:`faultdriver.scenario.provisions`
checks a scenario against the tiers it runs on when it loads.
"""

import dataclasses
import enum
import typing


class Provision(enum.Enum):
    """What a tier provides that only some scenarios need.  Not Nova's
    ``ComputeDriver.capabilities`` (which FaultDriver forwards): these
    are what the place Nova runs in can do or show."""

    def __init__(self, text: str, why: str,
                 points: typing.Tuple[str, ...] = ()) -> None:
        #: How a refusal names it: "needs a real hypervisor".
        self.text = text
        #: What it means, for the docs.
        self.why = why
        #: The point families only a tier providing it can fire: a
        #: point's kind (``service``, ``rpc``) or the part of its name
        #: before the dot (``network`` of ``network.setup_networks_on_
        #: host``).  A new kind of point some tiers cannot fire is one
        #: such member, named by the tiers that can (:func:`point_needs`).
        self.points = points

    REAL_HYPERVISOR = (
        'a real hypervisor',
        "a host's guests are asked of the hypervisor itself (libvirt), "
        'not of Nova; fakelibvirt and fake_numa are not hypervisors to '
        'ask')
    TRANSFERS_GUEST = (
        'a live migration that transfers the guest',
        "a live migration copies the guest's memory (real QEMU), so a "
        'transfer takes time and a bandwidth limit changes it; the fake '
        'drivers move nothing')
    PROCESS_PER_HOST = (
        'a nova-compute process per host',
        "each host's nova-compute is a process of its own: "
        '``shutdown(kill_after=...)`` kills one host, and '
        "``periodic(host=...)`` runs the other host's periodic while the "
        "hit thread holds its own host's resource-tracker lock (the "
        "embedded Nova's hosts share one process and one lock; its "
        '``unlocked`` phase holds none)')
    BLOCK_STORAGE = (
        'block storage',
        'volumes a server boots from or attaches (a Cinder, or a stand-in '
        'that keeps its attachments per host)')
    CALL_HEARTBEATS = (
        'call-monitor heartbeats',
        'an RPC call made with call_monitor_timeout gets heartbeats while '
        'the server works, so a dropped message or a lost reply times it '
        'out after call_monitor_timeout, a slow handler only after '
        'long_rpc_timeout (a real broker; the embedded Nova\'s fake '
        'transport sends none and waits the whole timeout)')
    NETWORK = (
        'a network',
        'ports and their bindings per host (a Neutron, or a stand-in '
        'that refuses a second binding for a host as Neutron does)')
    NOVA_OPTIONS = (
        "Nova's options set by the scenario",
        'the tier writes the Nova options a scenario sets (e.g. '
        '``shelved-offload-time``) into its services\' configuration; a '
        'cloud faultdriver did not build keeps its own')
    NEUTRON_REQUESTS = (
        "Neutron requests over HTTP",
        "Nova's Neutron client's HTTP requests, where network.* points "
        "fire; the embedded Nova's NeutronFixture sends none",
        ('network',))
    CINDER_REQUESTS = (
        "Cinder requests over HTTP",
        "Nova's Cinder client's HTTP requests, where volume.* points "
        "fire; the embedded Nova's CinderFixture sends none",
        ('volume',))

    CONTROL_PLANE = (
        'a control plane it may stop and start',
        "the broker (RabbitMQ), nova-conductor, nova-scheduler and "
        'placement are processes the tier started, which a scenario may '
        'stop and start again (``stop-service``, ``start-service``); the '
        "embedded Nova's share the runner's process and its fake "
        "transport, a cloud's are its operator's")

    SERVICE_SIDE = (
        'stand-ins that fail requests service-side',
        "rules for a stand-in's pseudo-host (neutron, cinder) fail the "
        'requests it serves, the conductor\'s too (faultdriver/process/'
        'servicefaults.py); the embedded Nova has no stand-in, a cloud\'s '
        'services are its own')

    @property
    def id(self) -> str:
        """Its name in the docs and tests: ``real-hypervisor``."""
        return self.name.lower().replace('_', '-')


#: The process tiers' stand-in services a scenario's ``rules`` may name
#: as pseudo-hosts, and the point family (service) of each: their rules
#: fail the requests the stand-in serves (Provision.SERVICE_SIDE).
STAND_INS = {'neutron': 'network', 'cinder': 'volume'}

#: A step's, an expectation's or a key's arguments, as the scenario file
#: writes them.
_Args = typing.Optional[typing.Mapping[typing.Any, typing.Any]]

#: Every provision (real libvirt provides them all).
EVERY_PROVISION = frozenset(Provision)


@dataclasses.dataclass(frozen=True)
class Needs:
    """What a step, an expectation or a scenario key needs of a tier:
    ``always``, and ``given`` ``(argument, provision)`` pairs, needed
    when that argument is given (neither absent, None nor false)."""

    always: typing.FrozenSet[Provision] = frozenset()
    given: typing.Tuple[typing.Tuple[str, Provision], ...] = ()

    def of(self, args: _Args = None) -> typing.FrozenSet[Provision]:
        """The provisions needed with ``args`` (its arguments, as the
        scenario file writes them: ``pin-as`` or ``pin_as``)."""
        args = {str(k).replace('-', '_'): v for k, v in (args or {}).items()}
        return self.always | frozenset(
            provision for argument, provision in self.given
            if args.get(argument) is not None
            and args.get(argument) is not False)


#: What needs nothing of a tier.
NOTHING = Needs()


def point_needs(name: str, kind: str) -> typing.FrozenSet[Provision]:
    """What a tier must provide to fire the point ``name`` of ``kind``:
    the provisions naming its kind or its family (``Provision.points``).
    A point none names fires wherever FaultDriver runs (driver and
    tracker points, placement's service-call points: Nova's
    PlacementFixture sends real HTTP requests through keystoneauth)."""
    families = {kind, name.partition('.')[0]}
    return frozenset(provision for provision in Provision
                     if families.intersection(provision.points))


_Declared = typing.TypeVar('_Declared')


def needs(*always: Provision, **given: Provision
          ) -> typing.Callable[[_Declared], _Declared]:
    """Declare what the decorated function (a step's ``do_`` method, an
    expectation's check, a scenario key's reader) needs of a tier:
    ``always``, and ``given`` ``argument=provision`` when that argument
    is given."""
    for provision in always + tuple(given.values()):
        if not isinstance(provision, Provision):
            raise TypeError('%r is not a tiers.Provision' % (provision,))

    def declare(function: _Declared) -> _Declared:
        setattr(function, 'needs', Needs(frozenset(always), tuple(sorted(
            given.items(), key=lambda item: item[0]))))
        return function
    return declare


def needs_of(function: object,
             args: _Args = None) -> typing.FrozenSet[Provision]:
    """What ``function`` declared with :func:`needs`, for ``args``."""
    declared: Needs = getattr(function, 'needs', NOTHING)
    return declared.of(args)


@dataclasses.dataclass(frozen=True)
class Tier:
    """One ``--backend``."""

    name: str
    #: How a report and the progress lines name its Nova.
    description: str
    #: ``--backend`` help: where Nova runs, and what the tier needs.
    help: str
    #: ``python -m`` arguments of the runner of one variant, before the
    #: common ``FILE VARIANT MODE OUT``.
    runner: typing.Tuple[str, ...]
    #: What its computes run on when Nova runs as real processes
    #: (``faultdriver.process.stack.Stack``'s ``hypervisor``); None: Nova
    #: runs in the runner's process, on fakelibvirt.
    hypervisor: str | None
    #: Sweep cases run at once by default (``sweep --workers``).
    workers: int
    #: Seconds a Nova RPC caller waits for a reply there
    #: (``rpc_response_timeout``).
    rpc_timeout: int
    #: The groups of ``faultdriver.scenario.prereqs.NEEDS`` it needs on
    #: this machine, checked before it starts.
    prerequisites: typing.Tuple[str, ...] = ()
    #: The pip extra that installs its own Python packages.
    extra: str = 'scenarios'
    #: Whether its runner takes ``--fork MODE FILE VARIANT=OUT...``:
    #: variants side by side forked from one process that imported Nova.
    forks: bool = False
    #: What it provides (:class:`Provision`; none unless it says): a
    #: scenario that needs what it lacks is refused when it loads,
    #: naming what needs it.
    provides: typing.FrozenSet[Provision] = frozenset()

    def lacks(self, wanted: typing.Iterable[Provision]
              ) -> typing.FrozenSet[Provision]:
        """The provisions of ``wanted`` it does not provide."""
        return frozenset(wanted) - self.provides

    def fires(self, name: str, kind: str) -> bool:
        """Whether a rule at the point ``name`` of ``kind`` can fire
        here (the sweep traces only those; a scenario's rule at one it
        cannot fire is refused when it loads)."""
        return not self.lacks(point_needs(name, kind))

    #: Whether it reaches a cloud it did not build (``--cloud NAME``,
    #: never ``--backend``): its runner takes ``--profile PATH`` first,
    #: and no comparison runs it.
    remote: bool = False

    #: Whether its runner takes ``--serve MODE``: one process runs a
    #: sweep's cases one after another (a tier whose case needs a whole
    #: stack of processes of its own runs each case as a scenario run).
    serves: bool = False

    @property
    def delay(self) -> int:
        """Seconds of a sweep's ``delay`` fault: longer than the RPC
        timeout, so the caller gives up while the step goes on."""
        return self.rpc_timeout + 1

    @property
    def side_by_side(self) -> bool:
        """Whether several of its runs (a scenario's variants) go at
        once: not a whole stack of processes each."""
        return self.workers > 1


#: Seconds an RPC caller waits on Nova as processes
#: (faultdriver.process.config sets it in every service's nova.conf).
PROCESSES_RPC_TIMEOUT = 8

#: Nova's graceful-shutdown timeouts on every tier: Nova's own (160 s and
#: 180 s) scaled down, so a case whose operation outlives the manager's
#: wait ends in seconds, yet above the 20 s ``graceful_shutdown`` keeps
#: for ``cleanup_host``, so the manager still waits for its tasks
#: (``manager_shutdown_timeout - min(20, it)``: 10 s here; 20 s or less
#: would wait 0 s).  The wait ends as soon as the tasks do.
SHUTDOWN_TIMEOUTS = {'manager_shutdown_timeout': 30,
                     'graceful_shutdown_timeout': 40}
#: Seconds a graceful stop may take before it counts as stuck: oslo.service
#: ends the process at graceful_shutdown_timeout, and a little more.
SHUTDOWN_BOUND = SHUTDOWN_TIMEOUTS['graceful_shutdown_timeout'] + 20
#: Seconds the sweep's ``shutdown-hold`` holds the call that hit the
#: rule: past the manager's wait for its tasks (30 - 20 = 10 s).
SHUTDOWN_HOLD = 15
PROCESS_RUNNER = 'faultdriver.process.runner'
CLOUD = 'cloud'

TIERS = {tier.name: tier for tier in (
    Tier('embedded', 'embedded Nova',
         "in one process, Nova's functional-test services on fakelibvirt "
         '(the default)',
         runner=('faultdriver.harness.runner',), hypervisor=None,
         # On 2 cores the whole live-migration sweep took 1107 s with 2
         # workers, 836 s with 4; once the runners' idle burn fell
         # (harness/rpcwake.py), 617 s with 4 and 554 s with 5 (the
         # same outcome in every case; benchmarks/RESULTS.rst).  Its
         # cases wait on RPC timeouts and polls part of the time.
         workers=5,
         # faultdriver.harness.embedded.EmbeddedNova.RPC_TIMEOUT
         rpc_timeout=2, forks=True, serves=True,
         # Nova's CinderFixture and NeutronFixture (harness/embedded.py
         # corrects them), every host in this one process; the fixtures
         # make no Neutron or Cinder request, so network.* and volume.*
         # service-call points cannot fire here (placement.* can).
         provides=frozenset({Provision.BLOCK_STORAGE, Provision.NETWORK,
                             Provision.NOVA_OPTIONS})),
    Tier('process', 'Nova as processes',
         "as real processes on faultdriver's fake hypervisor (needs the "
         'Debian packages mariadb-server and rabbitmq-server)',
         runner=(PROCESS_RUNNER,), hypervisor='fake_numa',
         workers=1,                     # a whole stack per case
         rpc_timeout=PROCESSES_RPC_TIMEOUT, prerequisites=('process',),
         extra='process',
         # The block-storage and network stand-ins (process/*_standin.py),
         # which the computes' Nova clients reach over HTTP.
         provides=frozenset({Provision.BLOCK_STORAGE, Provision.NETWORK,
                             Provision.PROCESS_PER_HOST,
                             Provision.CALL_HEARTBEATS,
                             Provision.NOVA_OPTIONS,
                             Provision.NEUTRON_REQUESTS,
                             Provision.CINDER_REQUESTS,
                             Provision.SERVICE_SIDE,
                             Provision.CONTROL_PLANE})),
    Tier('libvirt', 'Nova as processes on real libvirt + QEMU',
         'as real processes on real libvirtd + QEMU per host (also '
         'libvirt-daemon-system, qemu-system-x86, qemu-utils, root and '
         'faultdriver[libvirt])',
         runner=(PROCESS_RUNNER, '--hypervisor', 'libvirt'),
         hypervisor='libvirt', workers=1,
         rpc_timeout=PROCESSES_RPC_TIMEOUT,
         prerequisites=('process', 'libvirt'), extra='libvirt',
         provides=EVERY_PROVISION),
    Tier(CLOUD, 'a cloud reached over SSH',
         'a deployment faultdriver did not build (--cloud NAME): Nova 34 '
         'with FaultDriver as every compute\'s compute_driver, its APIs '
         'through Keystone, its computes over SSH (doc/source/tiers.rst)',
         runner=('faultdriver.cloud.runner',), hypervisor=None,
         workers=1,                     # one cloud: cases one at a time
         # What the CI cloud sets; the run reads each compute's own
         # rpc_response_timeout from its status and uses that.
         rpc_timeout=PROCESSES_RPC_TIMEOUT, extra='cloud', remote=True,
         # Each host's nova-compute is a process (a unit) of its own,
         # its Nova clients reach the cloud's Neutron and Cinder over
         # HTTP, the run reads volumes and their attachments from
         # Cinder; a network and a real hypervisor come with the profile
         # (faultdriver/cloud/provides.py).
         provides=frozenset({Provision.PROCESS_PER_HOST,
                             Provision.NEUTRON_REQUESTS,
                             Provision.CINDER_REQUESTS,
                             Provision.BLOCK_STORAGE,
                             Provision.CALL_HEARTBEATS})),
)}
NAMES = tuple(TIERS)
#: The tiers ``--backend`` names: those this machine runs itself.
LOCAL = tuple(name for name, tier in TIERS.items() if not tier.remote)
DEFAULT = 'embedded'
#: ``--backend`` values that run every variant on several tiers, in
#: order, and compare them.
COMPARED: typing.Dict[str, typing.Tuple[str, ...]] = {
    'both': ('embedded', 'process'), 'all': LOCAL}

#: What a stack of Nova processes can run its computes on.
HYPERVISORS = tuple(tier.hypervisor for tier in TIERS.values()
                    if tier.hypervisor is not None)


def get(name: str) -> Tier:
    """The tier ``name``; ValueError naming the choices."""
    try:
        return TIERS[name]
    except KeyError:
        raise ValueError('tier %r: expected one of %s'
                         % (name, ', '.join(NAMES))) from None


def of_hypervisor(hypervisor: typing.Optional[str]) -> Tier:
    """The tier whose Nova runs as processes on ``hypervisor``."""
    for tier in TIERS.values():
        if tier.hypervisor is not None and tier.hypervisor == hypervisor:
            return tier
    raise ValueError('hypervisor %r: expected one of %s' % (
        hypervisor, ', '.join(HYPERVISORS)))


def providing(wanted: typing.Iterable[Provision]
              ) -> typing.Tuple[str, ...]:
    """The names of the tiers that provide all of ``wanted``."""
    return tuple(tier.name for tier in TIERS.values()
                 if not tier.lacks(wanted))


def compared(backend: str) -> typing.Tuple[str, ...]:
    """The tiers a ``--backend`` value runs on, in order."""
    return COMPARED.get(backend, (backend,))


def with_processes() -> typing.Tuple[str, ...]:
    """Tiers whose Nova runs as real processes they start."""
    return tuple(tier.name for tier in TIERS.values() if tier.hypervisor)


def confirming() -> typing.Tuple[str, ...]:
    """Tiers ``sweep --confirm`` replays findings on: real processes,
    started or a cloud's."""
    return tuple(tier.name for tier in TIERS.values()
                 if tier.hypervisor or tier.remote)


def backend_choices() -> typing.Tuple[str, ...]:
    """Every ``scenario run --backend`` value: each tier, then each
    comparison."""
    return LOCAL + tuple(COMPARED)


def backend_help(comparisons: bool = True) -> str:
    """``--backend`` help, from the registry."""
    parts = ['%s: %s' % (tier.name, tier.help) for tier in TIERS.values()
             if not tier.remote]
    if comparisons:
        parts += ['%s: %s and %s, compared' % (
            name, ', '.join(names[:-1]), names[-1])
            for name, names in COMPARED.items()]
    return 'where Nova runs: ' + '; '.join(parts)
