"""What a sweep knows of the bugs it shows: one recogniser per finding of
doc/findings.rst that a sweep can show, matching a broken invariant of a
case precisely (the invariant and what it saw, at a documented step and
action of a documented move), so that a sweep labels a broken case
"known (F5)" only where it is that bug.  Labelling a new bug known hides
it: a recogniser names the steps and actions its finding was recorded
at, never "anywhere"; a case it was not recorded at stays unrecognised
until the finding (and this table) says otherwise.

``tests/unit/test_sweep_recognisers.py`` holds the recorded cases of
each finding and checks that its recogniser takes every one and every
other recogniser rejects them.

``second-call`` cases are recognised by their call (the action class's
label, ``second-call(delete)``): F20, F21; service-call classes by
their class: F22 and F26 (``connfail``).

F23 is recognised where the sweep sees it: the shelve workflow's
``recover`` resets the task state it leaves, so ``outcome-after-failure``
(which judges what Nova left) shows it, not ``servers-settled``; F24
likewise by the allocation its crash leaves.

Not here: F2, F3, F7 (real libvirt only), F12-F14 (no sweep case shows
them), F18 (no sweep reaches its window; doc/findings.rst, F18 "Sweeps");
and the groups doc/findings.rst names without a number (bug 1836369, the
``get_info`` power-state window, the evacuation left ``done``, ...):
they stay unrecognised.
"""

import dataclasses
import re
import typing

BOTH = ('before', 'after')
CRASH = ('crash',)
RAISE = ('raise',)
FAILS = ('crash', 'raise')
LIVE = ('live-migration',)
COLD = ('migration', 'resize')
EVACUATION = ('evacuation',)
#: The shelve workflow's operations (shelve, offload, unshelve).
SHELVE = ('shelve',)
#: A service's connection failing once (``connfail`` cases).
CONNFAIL = ('connfail',)
#: The user's delete while a step is held (``second-call`` cases).
DELETE = ('second-call(delete)',)


@dataclasses.dataclass(frozen=True)
class Seen:
    """One invariant a sweep case broke, as a recogniser reads it: the
    case's move (its workflow's ``operation``), step and action, the
    invariant and the actual value it reported (the failed step's error
    for ``step-failed``); a workflow may name no ``operation``."""
    operation: typing.Optional[str]
    point: str
    host: str
    phase: str
    action: str
    invariant: str
    actual: typing.Any


@dataclasses.dataclass(frozen=True)
class Sign:
    """An invariant and a regular expression searched in what it saw."""
    invariant: str
    evidence: str

    def shown_by(self, seen: Seen) -> bool:
        return seen.invariant == self.invariant and re.search(
            self.evidence, str(seen.actual)) is not None


@dataclasses.dataclass(frozen=True)
class Where:
    """Steps a finding was recorded at: these points of ``host`` in
    these phases, under these actions, in a sweep of these moves."""
    operations: typing.Tuple[str, ...]
    points: typing.Tuple[str, ...]
    host: str
    actions: typing.Tuple[str, ...]
    phases: typing.Tuple[str, ...] = BOTH

    def holds(self, seen: Seen) -> bool:
        return (seen.operation in self.operations and
                seen.point in self.points and seen.host == self.host and
                seen.phase in self.phases and seen.action in self.actions)


@dataclasses.dataclass(frozen=True)
class Recogniser:
    finding: str
    title: str
    signs: typing.Tuple[Sign, ...]
    where: typing.Tuple[Where, ...]

    def recognises(self, seen: Seen) -> bool:
        return any(w.holds(seen) for w in self.where) and any(
            s.shown_by(seen) for s in self.signs)


def charged_for_nothing(host: str) -> str:
    """``accounting-matches-placement``: ``host`` charged PCPU with
    nothing pinned (a leaked allocation)."""
    return r"'%s': '0 pinned / [1-9]\d* PCPU'" % host


def overcharged(host: str) -> str:
    """``accounting-matches-placement``: ``host`` charged more PCPU in
    placement than it pins (``N pinned / M PCPU``, M > N not checked as
    a number: M differs from N)."""
    return r"'%s': '(\d+) pinned / (?!\1 PCPU)\d+ PCPU'" % host


def migration_holds(host: str, statuses: typing.Iterable[str]) -> str:
    """``allocations-consistent``: the migration consumer still holds
    ``host`` after its migration ended in one of ``statuses``."""
    return r"%s holds [^']* for migration \S+ \((?:%s)\)" % (
        host, '|'.join(statuses))


#: Dest's pre-checks and its claim (check_can_live_migrate_destination).
DEST_CHECKS = ('tracker.live_migration_claim',
               'check_source_migrate_data_at_dest', 'post_claim_migrate_data',
               'cleanup_live_migration_destination_check')
#: The resource update a claim runs on its host.
CLAIM_UPDATE = ('node_is_available', 'get_host_ip_addr',
                'update_provider_tree', 'capabilities_as_traits')
#: The source's driver steps of _post_live_migration.
SOURCE_POST_STEPS = ('post_live_migration', 'post_live_migration_at_source',
                     'cleanup')
#: Dest's last step of a live migration, and its power-state read.
DEST_POST_STEPS = ('post_live_migration_at_destination', 'get_info')

RECOGNISERS = (
    Recogniser(
        'F1', 'a stale error migration\'s context keeps being applied',
        (Sign('periodics-clean', r"migration in status 'error'"),),
        (Where(LIVE, ('pre_live_migration',), 'dest', CRASH),
         Where(LIVE, DEST_CHECKS, 'dest', FAILS),
         Where(LIVE, ('update_provider_tree', 'capabilities_as_traits'),
               'dest', CRASH),
         Where(COLD, ('migrate_disk_and_power_off',), 'src', RAISE))),
    Recogniser(
        'F3', 'a destination crash after pre_live_migration leaves the '
        'server MIGRATING',
        (Sign('outcome-after-failure', r'task state migrating'),),
        (Where(LIVE, ('pre_live_migration',), 'dest', CRASH),)),
    Recogniser(
        'F4', 'a failed live_migration on the source leaks the move\'s '
        'allocation on dest',
        (Sign('accounting-matches-placement', overcharged('dest')),
         Sign('allocations-consistent', r"dest holds [^']* for \S+, which "
              r'is on src'),
         Sign('moves-again', r'\(away\)'),
         Sign('volume-attachments', r'has 2 attachments'),
         Sign('port-bindings', r'dest INACTIVE, src ACTIVE')),
        (Where(LIVE, ('live_migration',), 'src', FAILS, ('before',)),)),
    Recogniser(
        'F5', 'a failed post_live_migration_at_destination (or source '
        'step after it) leaks the source allocation',
        (Sign('accounting-matches-placement', charged_for_nothing('src')),
         Sign('allocations-consistent', migration_holds('src', ('error',))),
         # Not for the binding the step left (F15's).
         Sign('moves-again', r'\(away\)(?!.*[Bb]inding)')),
        (Where(LIVE, DEST_POST_STEPS[:1], 'dest', FAILS),
         Where(LIVE, DEST_POST_STEPS[1:], 'dest', CRASH),
         Where(LIVE, SOURCE_POST_STEPS, 'src', FAILS))),
    Recogniser(
        'F6', 'a source failure in _post_live_migration\'s resource update '
        'leaves the migration unfinished',
        (Sign('migrations-terminal', r'#\d+ running'),
         Sign('accounting-matches-placement', charged_for_nothing('src')),
         Sign('periodics-clean', r'dest: \d+ periodic error\(s\) '
              r'\(CPUPinningInvalid\)')),
        (Where(LIVE, ('get_available_resource', 'get_available_nodes',
                      'node_is_available', 'update_provider_tree',
                      'capabilities_as_traits',
                      'tracker.update_available_resource'), 'src', CRASH),
         Where(LIVE, ('update_provider_tree',), 'src', RAISE))),
    Recogniser(
        'F8', 'a destination crash in finish_resize leaves the migration '
        'post-migrating',
        (Sign('migrations-terminal', r'post-migrating'),
         Sign('accounting-matches-placement', charged_for_nothing('src')),
         Sign('periodics-clean', r'dest: \d+ periodic error\(s\) '
              r'\(CPUPinningInvalid\)'),
         Sign('moves-again', r'\(away\)')),
        (Where(COLD, ('finish_migration',), 'dest', CRASH),)),
    Recogniser(
        'F9', 'a destination crash in prep_resize leaves the migration '
        'pre-migrating and dest charged',
        (Sign('migrations-terminal', r'pre-migrating'),
         Sign('accounting-matches-placement', overcharged('dest')),
         Sign('periodics-clean', r'dest: \d+ periodic error\(s\) '
              r'\(CPUPinningInvalid\)')),
        (Where(COLD, ('tracker.resize_claim',) + CLAIM_UPDATE, 'dest',
               CRASH),)),
    Recogniser(
        'F10', 'a destination crash during an evacuation: the returning '
        'source destroys the only guest',
        (Sign('accounting-matches-placement',
              r"'src': '(\d+) pinned / (?!\1 PCPU)\d+ PCPU'|" +
              overcharged('dest')),
         Sign('moves-again', r'\(away\)')),
        (Where(EVACUATION, ('tracker.rebuild_claim', 'instance_exists',
                            'instance_on_disk', 'rebuild', 'spawn',
                            'get_info') + CLAIM_UPDATE, 'dest', CRASH),)),
    Recogniser(
        'F11', 'a task that outlives the graceful shutdown\'s wait fails '
        'half-way',
        (Sign('allocations-consistent', migration_holds('src', ('error',))),
         Sign('accounting-matches-placement', charged_for_nothing('src'))),
        (Where(LIVE, ('live_migration',), 'src', ('shutdown-hold',),
               ('before',)),
         Where(LIVE, SOURCE_POST_STEPS + ('get_available_nodes',), 'src',
               ('shutdown-hold',)))),
    Recogniser(
        'F15', 'a failed step after the port moved leaves the source\'s '
        'binding',
        (Sign('port-bindings', r'dest ACTIVE, src INACTIVE'),
         Sign('moves-again', r'\(away\).*[Bb]inding')),
        (Where(LIVE, SOURCE_POST_STEPS, 'src', RAISE),
         Where(LIVE, DEST_POST_STEPS[:1], 'dest', FAILS),
         Where(LIVE, DEST_POST_STEPS[1:], 'dest', CRASH))),
    Recogniser(
        'F16', 'a graceful stop during a move\'s pre-check runs its next '
        'step without waiting for it',
        (Sign('outcome-after-shutdown', r'.'),
         Sign('allocations-consistent', r'holds'),
         Sign('accounting-matches-placement',
              r"'(?:src|dest)': '(\d+) pinned / (?!\1 PCPU)\d+ PCPU'"),
         Sign('moves-again', r'.'),
         Sign('port-bindings', r'INACTIVE')),
        (Where(LIVE, ('check_can_live_migrate_source',), 'src',
               ('shutdown',)),
         Where(LIVE, ('check_can_live_migrate_destination',
                      'get_available_nodes') + DEST_CHECKS +
               CLAIM_UPDATE[:2], 'dest', ('shutdown',)))),
    Recogniser(
        'F17', 'a source crash during a resize\'s confirm leaves it '
        'confirming',
        (Sign('migrations-terminal', r'confirming'),
         Sign('servers-settled', r'VERIFY_RESIZE'),
         Sign('step-failed', r'has not been resized'),
         Sign('allocations-consistent',
              migration_holds('src', ('confirmed',)))),
        (Where(COLD, ('confirm_migration',
                      'tracker.drop_move_claim_at_source'), 'src', CRASH),)),
    Recogniser(
        'F20', 'a delete during a live migration leaks the source\'s '
        'allocation',
        (Sign('allocations-consistent',
              r"src holds [^']* no server or migration of the scenario"),
         Sign('accounting-matches-placement', charged_for_nothing('src')),
         Sign('tasks-ended', r'live_migration_at_dest')),
        (Where(LIVE, ('live_migration',), 'src', DELETE, ('before',)),
         # _post_live_migration and its driver step on src.
         Where(LIVE, ('post_live_migration', 'post_live_migration_at_source'),
               'src', DELETE),
         Where(LIVE, ('capabilities_as_traits', 'pre_live_migration',
                      'post_live_migration_at_destination'), 'dest',
               DELETE))),
    Recogniser(
        'F21', 'a delete during a resize\'s confirm fails with 500 and '
        'leaves the server ERROR',
        (Sign('second-call', r"'call': 'delete'.*'answer': None.*"
              r"(?:code.: 500|MessagingTimeout)"),),
        (Where(COLD, ('confirm_migration',), 'src', DELETE),)),
    Recogniser(
        'F22', 'a placement failure at a resize revert leaves both '
        "flavors' allocations on the wrong consumers",
        (Sign('allocations-consistent', r'for s1, which is on src'),
         Sign('accounting-matches-placement', overcharged('dest')),
         Sign('allocations-consistent', r'src holds [^\']* for migration '
              r's1#\d+ \(reverted\)')),
        (Where(COLD, ('placement.move_allocations',), 'src', CONNFAIL),)),
    Recogniser(
        'F26', 'a placement failure at a move\'s end leaves the finished '
        'migration holding the source',
        # A live migration's (completed) and a confirmed resize's or
        # cold migration's (confirmed): the same call in
        # _delete_allocation_after_move.
        (Sign('allocations-consistent', migration_holds(
            'src', ['completed', 'confirmed'])),
         Sign('accounting-matches-placement', charged_for_nothing('src'))),
        (Where(LIVE + COLD, ('placement.delete_allocation_for_instance',),
               'src', CONNFAIL),)),
    Recogniser(
        'F23', 'a compute crash during a shelve\'s snapshot leaves its '
        'task state set for good',
        # A shelve's task states: shelving, shelving_image_pending_upload,
        # shelving_image_uploading (what recover's reset-state found, or,
        # without it, what servers-settled sees).
        (Sign('outcome-after-failure', r'task state shelving'),
         Sign('servers-settled', r'/shelving')),
        (Where(SHELVE, ('snapshot',), 'src', CRASH),)),
    Recogniser(
        'F24', 'a compute crash before an unshelve\'s claim leaves the '
        'server unshelving for good and its host charged',
        # The scheduler's allocation on a host the server never reached
        # (its host is None), and the unshelve's task state (a sweep's
        # recover resets it: then the allocation alone shows it).
        (Sign('allocations-consistent', r'for s1, which is on None'),
         Sign('accounting-matches-placement', overcharged('src')),
         Sign('servers-settled', r'SHELVED_OFFLOADED/spawning'),
         Sign('outcome-after-failure', r'task state spawning')),
        (Where(SHELVE, ('tracker.instance_claim',), 'src', CRASH,
               ('unlocked', 'before')),)),
    Recogniser(
        'F19', 'a move that ends without dest being told leaves dest '
        'tracking it',
        (Sign('tasks-ended', r'live_migration_at_dest'),),
        (Where(LIVE, ('live_migration',), 'src', FAILS, ('before',)),
         Where(LIVE, SOURCE_POST_STEPS, 'src', FAILS))),
    Recogniser(
        'F19', 'a resize whose source died leaves dest tracking it',
        (Sign('tasks-ended', r'prep_resize_at_dest'),),
        (Where(COLD, ('migrate_disk_and_power_off',), 'src', CRASH),
         # The user's delete while dest's claim is held (2026-12-07).
         Where(COLD, ('tracker.resize_claim',), 'dest', DELETE,
               ('unlocked', 'before', 'after')))),
)


def recognise(seen: Seen,
              recognisers: typing.Iterable[Recogniser] = RECOGNISERS
              ) -> typing.List[str]:
    """The findings (``['F5']``, sorted, no repeats) whose recogniser
    takes ``seen``; [] where none does (a new bug, or a known one at a
    step its finding does not record yet)."""
    return sorted({r.finding for r in recognisers if r.recognises(seen)},
                  key=finding_order)


def finding_order(name: str) -> int:
    """F2 before F10."""
    return int(name[1:]) if name[1:].isdigit() else 0
