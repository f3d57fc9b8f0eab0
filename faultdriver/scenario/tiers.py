"""The tiers: where a scenario's or a sweep's Nova runs.

The one list of them.  The command line's choices and help, the
reports' and the progress lines' names, the scenario schema's
``backends`` values, the runner each variant starts, the sweep's
defaults and the prerequisites checked before a run all read it, so a
tier is added (or a default changed) here only.  Imports nothing: the
command line reads it before it knows whether Nova will be imported.
"""

import dataclasses


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
    runner: tuple
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
    prerequisites: tuple = ()
    #: The pip extra that installs its own Python packages.
    extra: str = 'scenarios'
    #: Whether its runner takes ``--fork MODE FILE VARIANT=OUT...``:
    #: variants side by side forked from one process that imported Nova.
    forks: bool = False
    #: Whether its runner takes ``--serve MODE``: one process runs a
    #: sweep's cases one after another (a tier whose case needs a whole
    #: stack of processes of its own runs each case as a scenario run).
    serves: bool = False

    @property
    def delay(self):
        """Seconds of a sweep's ``delay`` fault: longer than the RPC
        timeout, so the caller gives up while the step goes on."""
        return self.rpc_timeout + 1

    @property
    def side_by_side(self):
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
         rpc_timeout=2, forks=True, serves=True),
    Tier('process', 'Nova as processes',
         "as real processes on faultdriver's fake hypervisor (needs the "
         'Debian packages mariadb-server and rabbitmq-server)',
         runner=(PROCESS_RUNNER,), hypervisor='fake_numa',
         workers=1,                     # a whole stack per case
         rpc_timeout=PROCESSES_RPC_TIMEOUT, prerequisites=('process',),
         extra='process'),
    Tier('libvirt', 'Nova as processes on real libvirt + QEMU',
         'as real processes on real libvirtd + QEMU per host (also '
         'libvirt-daemon-system, qemu-system-x86, qemu-utils, root and '
         'faultdriver[libvirt])',
         runner=(PROCESS_RUNNER, '--hypervisor', 'libvirt'),
         hypervisor='libvirt', workers=1,
         rpc_timeout=PROCESSES_RPC_TIMEOUT,
         prerequisites=('process', 'libvirt'), extra='libvirt'),
)}
NAMES = tuple(TIERS)
DEFAULT = 'embedded'
#: ``--backend`` values that run every variant on several tiers, in
#: order, and compare them.
COMPARED = {'both': ('embedded', 'process'), 'all': NAMES}

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


def of_hypervisor(hypervisor):
    """The tier whose Nova runs as processes on ``hypervisor``."""
    for tier in TIERS.values():
        if tier.hypervisor is not None and tier.hypervisor == hypervisor:
            return tier
    raise ValueError('hypervisor %r: expected one of %s' % (
        hypervisor, ', '.join(HYPERVISORS)))


def compared(backend):
    """The tiers a ``--backend`` value runs on, in order."""
    return COMPARED.get(backend, (backend,))


def with_processes():
    """Tiers whose Nova runs as real processes (``sweep --confirm``)."""
    return tuple(tier.name for tier in TIERS.values() if tier.hypervisor)


def backend_choices():
    """Every ``scenario run --backend`` value: each tier, then each
    comparison."""
    return NAMES + tuple(COMPARED)


def backend_help(comparisons=True):
    """``--backend`` help, from the registry."""
    parts = ['%s: %s' % (tier.name, tier.help) for tier in TIERS.values()]
    if comparisons:
        parts += ['%s: %s and %s, compared' % (
            name, ', '.join(names[:-1]), names[-1])
            for name, names in COMPARED.items()]
    return 'where Nova runs: ' + '; '.join(parts)
