"""Configuration options of faultdriver, in nova.conf's [fault_injection].

Rules are an oslo.config value type, so reading the option parses and
validates them: a bad rule stops nova-compute at start-up with a message
that names the rule, where it is wrong and what was expected.
"""

import re

from oslo_config import cfg
from oslo_config import types

from faultdriver import rules as rules_module

GROUP = cfg.OptGroup(
    'fault_injection',
    title='Fault injection options',
    help="""
Options of faultdriver, the fault-injecting compute driver.

Set ``[DEFAULT] compute_driver = faultdriver.FaultDriver`` to use it. It
wraps the driver named by ``inner_driver`` and passes every call through
unchanged unless an enabled rule matches.
""")


class RuleType:
    """oslo.config type of one fault rule: returns a parsed ``Rule``."""

    type_name = 'fault rule'

    def __init__(self, catalogue: object = None,
                 actions: object = None) -> None:
        self._catalogue = catalogue
        self._actions = actions

    def __call__(self, value: object) -> 'rules_module.Rule':
        if isinstance(value, rules_module.Rule):
            return value
        rule = rules_module.parse(value)
        catalogue, actions = self._catalogue, self._actions
        if catalogue is None:
            from faultdriver import points
            catalogue = points.catalogue()
        if actions is None:
            from faultdriver import actions as actions_module
            actions = actions_module.load_all()
        return rules_module.validate(rule, catalogue, actions)

    def __repr__(self):
        return 'RuleType'

    def __eq__(self, other):
        return self.__class__ == other.__class__

    def _formatter(self, value):
        return str(value)


class SeedType(types.Integer):
    """An integer written in ASCII digits (``int()`` also reads other
    scripts' digits and 5000-digit numbers)."""

    def __call__(self, value):
        if isinstance(value, str) and not re.fullmatch(r'\s*[0-9]{1,20}\s*',
                                                       value):
            raise ValueError('expected a whole number from %d to %d in '
                             'ASCII digits' % (self.min, self.max))
        return super().__call__(value)


fault_opts = [
    cfg.BoolOpt('enabled',
        default=False,
        help="""
Master switch for fault injection.

While false, rules are parsed and validated but none of them fires, and
the driver is a plain pass-through to ``inner_driver``.

Related options:

* ``rules``
"""),
    cfg.StrOpt('inner_driver',
        help="""
The compute driver that faultdriver wraps.

Possible values:

* A name registered in the ``faultdriver.inner_drivers`` entry-point
  namespace, for example ``libvirt`` or ``fake_live_migration``
  (``faultdriver drivers`` lists them).
* A driver in Nova's own ``compute_driver`` syntax, relative to
  ``nova.virt``, for example ``libvirt.LibvirtDriver`` or
  ``fake.MediumFakeDriver``.

Related options:

* ``[DEFAULT] compute_driver`` must be ``faultdriver.FaultDriver``.
"""),
    # RuleType is an oslo.config type by its members (it parses, formats
    # and compares), not by class: ConfigType's own members would change
    # how the sample configuration prints it.
    cfg.MultiOpt('rules',
        item_type=RuleType(),  # type: ignore[arg-type]
        help="""
Fault rules; repeat the option for more than one.

Syntax: ``point[.before|.after][@source|@dest][filters]: chain`` where the
chain is one or more ``[P%][N*]action(args)`` joined by ``->``.  Each hit
is taken by the first term with firings left (``N*``) that wins its roll
(``P%``); a hit that loses a roll falls through to the next term, as in
FreeBSD fail(9) and fail-rs, and one no term takes passes through.

Possible values:

* ``pre_live_migration@dest: crash``
* ``live_migration.after[operation=live-migration]: 2*off -> delay(5)``
* ``migrate_disk_and_power_off: 1*raise(InstanceFaultRollback)``
* ``tracker.drop_move_claim_at_dest: periodic``
* ``live_migration: 25%delay(3) -> log(slow)`` (a quarter of the hits
  delayed, the others logged)

Related options:

* ``enabled``: rules fire only when it is true.
"""),
    cfg.Opt('seed',
        type=SeedType(min=0, max=rules_module.MAX_SEED),
        help="""
Seed of the random numbers behind probability terms (``P%``).

Possible values:

* Unset: a fresh seed per start.
* An integer: the same rules fire on the same hits every run (each rule
  uses ``seed + its index``, or its own ``[seed=N]`` filter).
"""),
    cfg.ListOpt('tracker_patches',
        default=[],
        help="""
Candidate fixes to install on this host's resource tracker.

Each is a plugin of the ``faultdriver.tracker_patches`` namespace that
overrides one decision of Nova's tracker, so the same scenario can run
with the stock tracker on one host (or run) and the fix on another.  They
do not depend on ``enabled``: a fix is not a fault.

Possible values:

* Empty: the stock tracker (default).
* ``stale_migration_context``: apply an incoming migration's context in
  the periodic only if the instance's migration context belongs to it.
"""),
    cfg.StrOpt('journal_path',
        help="""
File to which every fired fault is appended as a JSON line.

The line is flushed to disk before a ``crash`` action kills the service,
so the journal says why the service died.  A path that is a directory,
not a regular file or not writable stops the service at start.  A write
that fails later (disk full) does not change the fault: it fires as
written, and an ERROR line starting with ``FAULTDRIVER-JOURNAL-ERROR``
names the path.

Possible values:

* Unset: the journal is kept in memory only (and in the log).
* A path, for example ``/var/lib/nova/faultdriver-journal.jsonl``.
"""),
    cfg.StrOpt('control_socket',
        help="""
Local socket through which ``faultdriver ctl`` controls this nova-compute
while it runs: list points, rules and counters, add and remove rules,
enable or disable injection, release threads held by ``hang``, wait
until a point is hit and read the journal, all without a restart.

The socket is an AF_UNIX socket file created with mode 0600, never a
network port: only its owner (the user nova-compute runs as) and root
can connect.  It is created when the driver's ``init_host`` runs and
removed when the service stops; a file left by a crashed process is
replaced, while a socket another running process answers on stops the
service at start with an error naming it.

Possible values:

* Unset or empty: no run-time control (default).
* A path, one per nova-compute, in a directory only nova's user can
  write, for example ``/run/nova/faultdriver.sock``.

Related options:

* ``enabled``: rules fire only while injection is enabled, which
  ``faultdriver ctl enable`` and ``disable`` also switch.
"""),
    cfg.StrOpt('start_rules_path',
        help="""
A file of rules and tracker fixes for the next start of this
nova-compute only, written by a runner that restarts it (the process is
down then, so the control socket cannot take them).

The file is a JSON object with ``run_id`` (the run that wrote it) and
``deadline`` (Unix time in seconds), and optionally ``rules`` (a list in
the grammar of ``rules``), ``tracker_patches`` (a list, as the option),
``enabled`` (true or false, for this start) and ``host`` (this
nova-compute's, else the start is refused).  It is read once, when the
driver starts, and renamed to ``PATH.consumed``, so a later restart by
an operator never arms it again; a file past its deadline, or a copy of
the one a start consumed, is ignored with a WARNING naming it and
removed.  A malformed file stops the service at start, naming the file
and the key, and is left in place.

Possible values:

* Unset or empty: no start rules (default).
* A path in a directory nova-compute's user can write, for example
  ``/var/lib/nova/faultdriver-start-rules.json``.

Related options:

* ``rules``, ``tracker_patches``: the file's come after these.
* ``enabled``: the file's ``enabled`` overrides it for one start.
"""),
    cfg.DictOpt('peer_control_sockets',
        default={},
        help="""
The control sockets of the other nova-computes of this cloud, by host
name, for rules whose ``periodic`` action runs another host's resource
periodic (``periodic(host=NAME)``): a window that one host's step opens
and another host's periodic can fall into (bug 1879878's revert half:
the source's periodic while the destination reverts).  The other host
must serve its ``control_socket`` on this machine.

A rule naming a host that is neither this one nor listed here stops the
service at start (and ``faultdriver validate`` refuses it), naming the
rule and this option.

Possible values:

* Empty (default): ``periodic`` runs this host's periodic only.
* ``host:path`` pairs, for example
  ``src:/run/nova/src.sock,dest:/run/nova/dest.sock``.

Related options:

* ``control_socket``: this host's own socket, which the other hosts list.
"""),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_group(GROUP)
    conf.register_opts(fault_opts, group=GROUP)


def list_opts():
    """For the oslo.config.opts entry point (sample generator)."""
    return [(GROUP, fault_opts)]
