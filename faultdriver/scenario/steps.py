"""The step interpreter: one method per step kind of ``schema.yaml``.

It runs on any backend that keeps the contract of
:mod:`faultdriver.scenario.backend` (the embedded Nova, the process and
libvirt tiers) and knows none of them: a tier differs in its primitives,
never in what a step does.
"""

import time
import typing

from faultdriver import exception
from faultdriver.novacompat import texts
from faultdriver.scenario import backend
from faultdriver.scenario import backend_records as records
from faultdriver.scenario import recovery
from faultdriver.scenario import secondcall
from faultdriver.scenario import specs
from faultdriver.scenario import statuses
from faultdriver.scenario import stepkinds
from faultdriver.scenario import tiers

if typing.TYPE_CHECKING:
    from faultdriver.scenario import backend_base

Provision = tiers.Provision

PERIODIC_ERROR = texts.PERIODIC_ERROR
#: The resource tracker's line when its periodic applies an instance's
#: migration context for a migration to this host
#: (``ResourceTracker._update_available_resource``).
APPLIED_CONTEXT = texts.APPLIED_CONTEXT
#: The instance actions of a user's decision on a resize, and the compute
#: events that end each (a revert ends on the source).
DECISION_ACTIONS = tuple(action for action, _method
                         in texts.DECISIONS.values())
DECISION_EVENTS = tuple('compute_' + method for _action, method
                        in texts.DECISIONS.values())


class Steps(recovery.Recovery):
    """Carries out a scenario's steps on a running Nova (``nova``: a
    backend keeping :mod:`faultdriver.scenario.backend`'s contract)."""

    def __init__(self, nova: 'backend_base.BackendBase',
                 scenario: typing.Any, variant: str) -> None:
        self.nova = nova
        self.scenario = scenario
        self.variant = variant
        self.servers = {}           # alias -> server (API view)
        self.moves = {}             # alias -> moves started
        #: Servers an operation that is no move was asked of
        #: (faultdriver.scenario.serverops): ``settle`` waits for them.
        self.operated: typing.Set[str] = set()
        self.flavors: typing.Dict[str, str] = {}    # name -> flavor id
        #: alias -> volume id (attach-volume)
        self.volumes: typing.Dict[str, str] = {}
        #: (host, error logged)
        self.periodics: typing.List[typing.Tuple[str, bool]] = []
        #: What the API answered each ``confirm``/``revert`` step:
        #: (alias, action, 'accepted' or the refusal's HTTP status).
        self.decisions: typing.List[
            typing.Tuple[str, str, typing.Union[str, int]]] = []
        #: The ``second-call`` steps' other users: (what each made, its
        #: thread).
        self.second_calls: typing.List[
            typing.Tuple[secondcall.Made, typing.Any]] = []
        #: Servers whose delete another user's call had accepted.
        self.gone: typing.Set[str] = set()
        #: Log counts when ``recover`` began (see :meth:`log_counts`):
        #: the periodics-clean invariant looks at what came after.
        self.recovery_marks = None
        #: Each running host's accounting when ``recover`` found the moves
        #: settled, before its periodics (``collect.accounting``); None
        #: where a held thread made recover run periodics first.
        self.move_end = None
        #: alias -> the task state Nova left that ``recover`` reset (what
        #: outcome-after-failure judges, not the operator's repair).
        self.task_states_reset = {}

    def log_counts(self) -> typing.Dict[typing.Tuple[str, str], int]:
        """How often the log has each host's periodic error line and
        the tracker's line for each status of a migration whose context
        it applied (counts, not positions: the process tier's log is
        several files)."""
        text = self.log_text()
        counts = {('error', host): text.count(PERIODIC_ERROR % host)
                  for host in self.scenario.hosts}
        for status in statuses.TERMINAL:
            counts[('applied', status)] = text.count(
                APPLIED_CONTEXT % status)
        return counts

    def log_text(self) -> str:
        return self.nova.log_text()

    def server(self, alias: str) -> records.Server:
        return self.servers[alias]

    def flavor(self, name: str) -> str:
        if name not in self.flavors:
            spec = self.scenario.data['flavors'][name]
            self.flavors[name] = self.nova.create_flavor(
                spec['vcpus'], spec.get('extra_specs'))
        return self.flavors[name]

    def run(self, step: specs.StepSpec) -> typing.Optional[str]:
        """Carry out one StepSpec; returns what it did (text) or None."""
        args = {k.replace('-', '_'): v for k, v in step.args.items()}
        registered = stepkinds.get(step.kind)
        if registered is not None:
            return registered.run(self, **args)
        done: typing.Optional[str] = getattr(
            self, 'do_' + step.kind.replace('-', '_'))(**args)
        return done

    # -- the steps, one method each (see schema.yaml) -----------------------
    # A step that needs what only some tiers provide declares it
    # (tiers.needs): a scenario is refused where it would lack it, when
    # it loads (faultdriver.scenario.provisions).

    @tiers.needs(volume=Provision.BLOCK_STORAGE, port=Provision.NETWORK)
    def do_boot(self, server: str, host: typing.Optional[str] = None,
                flavor: typing.Optional[str] = None,
                pin_as: typing.Optional[str] = None, status: str = 'ACTIVE',
                volume: bool = False, port: bool = False) -> str:
        host = host or self.scenario.hosts[0]

        def boot() -> records.Server:
            if flavor:
                return self.nova.create_server(
                    host, self.flavor(flavor), status=status, volume=volume,
                    port=port)
            return self.nova.boot(host=host, status=status, volume=volume,
                                  port=port)
        created = boot()
        if created['status'] == 'ERROR':
            self.servers[server] = created
            return 'ERROR: %s' % created.get('fault', {}).get('message')
        if pin_as:
            wanted = self.nova.instance_pinning(self.server(pin_as))
            misses: typing.List[records.Server] = []
            while self.nova.instance_pinning(created) != wanted:
                if len(misses) >= 3:
                    raise AssertionError(
                        'no server on %s got the pCPUs %s of %s'
                        % (host, wanted, pin_as))
                misses.append(created)
                created = boot()
            for miss in misses:
                self.nova.delete_server(miss)
        self.servers[server] = created
        return 'on %s, pCPUs %s' % (host, self.nova.instance_pinning(created)
                                    if self.scenario.dedicated_cpus else '-')

    @tiers.needs(Provision.BLOCK_STORAGE)
    def do_attach_volume(self, server: str, volume: str) -> str:
        self.volumes[volume] = self.nova.attach_volume(self.server(server))
        return 'volume %s' % self.volumes[volume]

    @tiers.needs(Provision.BLOCK_STORAGE)
    def do_detach_volume(self, server: str, volume: str) -> None:
        self.nova.detach_volume(self.server(server), self.volumes[volume])

    def do_delete(self, server: str) -> None:
        self.nova.delete_server(self.servers.pop(server))

    def _move(self, server: str, body: typing.Dict[str, object],
              api: typing.Optional[backend.ComputeAPI] = None) -> None:
        (api or self.nova.api).post_server_action(self.server(server)['id'],
                                                  body)
        self.moves[server] = self.moves.get(server, 0) + 1

    def do_live_migrate(self, server: str,
                        host: typing.Optional[str] = None) -> None:
        self._move(server, {'os-migrateLive': {
            'host': host, 'block_migration': 'auto'}})

    def do_migrate(self, server: str,
                   host: typing.Optional[str] = None) -> None:
        self._move(server, {'migrate': {'host': host} if host else None})

    def do_resize(self, server: str, flavor: str) -> None:
        self._move(server, {'resize': {'flavorRef': self.flavor(flavor)}})

    def do_evacuate(self, server: str,
                    host: typing.Optional[str] = None) -> None:
        self._move(server, {'evacuate': {'host': host} if host else {}},
                   api=self.nova.admin_api)

    def do_abort(self, server: str, index: typing.Optional[int] = None,
                 timeout: float = backend.WAIT_TIMEOUT) -> str:
        index = index or self.moves.get(server, 1)
        migrations = sorted(self.nova.migrations(self.server(server)),
                            key=lambda m: m['id'])
        if len(migrations) < index:
            raise AssertionError('%s has %d migrations, no migration %d'
                                 % (server, len(migrations), index))
        migration = migrations[index - 1]
        self.nova.admin_api.delete_migration(self.server(server)['id'],
                                             migration['id'])
        # The API casts the abort to the source: wait until it was handled.
        event = self.nova.wait_action_event(
            self.server(server), 'live_migration_cancel',
            'compute_live_migration_abort', timeout)
        return 'migration %d (%s) was %s; source: %s' % (
            index, migration['uuid'][:8], migration['status'],
            event['result'])

    def do_confirm(self, server: str,
                   may_be_refused: bool = False) -> typing.Optional[str]:
        return self._post_decision(server, 'confirmResize', may_be_refused)

    def do_revert(self, server: str,
                  may_be_refused: bool = False) -> typing.Optional[str]:
        return self._post_decision(server, 'revertResize', may_be_refused)

    def _post_decision(self, server: str, action: str,
                       may_be_refused: bool) -> typing.Optional[str]:
        """Post the user's decision; with ``may_be_refused`` an API
        refusal (4xx) is the step's outcome, not its failure (what each
        variant shows is for its expectations to say)."""
        try:
            self.nova.api.post_server_action(self.server(server)['id'],
                                             {action: None})
        except Exception as exc:
            status = self.nova.refusal_status(exc)
            if not may_be_refused or status is None:
                raise
            self.decisions.append((server, action, status))
            return 'refused (%d): %s' % (status, str(exc)[:200])
        self.decisions.append((server, action, 'accepted'))
        return 'accepted' if may_be_refused else None

    def do_wait_decisions(self, server: str,
                          timeout: float = backend.WAIT_TIMEOUT) -> str:
        """See schema.yaml's ``wait-decisions``: until the computes
        handled every confirm and revert of the server the API took (a
        second one a user made while the first ran, too: its end is
        what a scenario of concurrent calls is about, and it may come
        after the migration ended)."""
        uuid = self.server(server)['id']
        api = self.nova.admin_api

        def pending() -> typing.List[str]:
            left = []
            for action in api.get_instance_actions(uuid):
                if action['action'] not in DECISION_ACTIONS:
                    continue
                events = api.get_instance_action_details(
                    uuid, action['request_id']).get('events', [])
                if not any(event['finish_time'] and (
                        event['event'] in DECISION_EVENTS
                        or event['result'] == 'Error')
                        for event in events):
                    left.append(action['action'])
            return left
        self.nova.wait(lambda: not pending(),
                       'the confirms and reverts of %s handled' % server,
                       timeout)
        taken = [a for a in api.get_instance_actions(uuid)
                 if a['action'] in DECISION_ACTIONS]
        return '%d handled' % len(taken)

    def do_second_call(self, server: str, call: str, host: str,
                       point: str, phase: str = 'before', count: int = 1,
                       barrier: str = secondcall.BARRIER,
                       to: typing.Optional[str] = None,
                       flavor: typing.Optional[str] = None,
                       timeout: float = secondcall.HIT_TIMEOUT) -> str:
        """See schema.yaml's ``second-call`` (faultdriver.scenario.
        secondcall): another user's call while a step is held."""
        return secondcall.start(self, server, call, host, point, phase,
                                count, barrier, to, flavor, timeout)

    def do_wait_second_call(
            self, timeout: float = secondcall.HIT_TIMEOUT +
            backend.WAIT_TIMEOUT) -> str:
        return secondcall.join(self, timeout)

    def do_reset_state(self, server: str, state: str = 'active') -> None:
        self.nova.admin_api.post_server_action(
            self.server(server)['id'], {'os-resetState': {'state': state}})

    def do_wait_migration(self, server: str, status: str,
                          index: typing.Optional[int] = None,
                          timeout: float = backend.WAIT_TIMEOUT) -> str:
        index = index or self.moves.get(server, 1)
        migration = self.nova.wait_newest_migration(
            self.server(server), status, index, timeout=timeout)
        return 'migration %d (%s) %s' % (index, migration['uuid'][:8],
                                         status)

    def do_wait_server(self, server: str,
                       timeout: float = backend.WAIT_TIMEOUT,
                       **fields: typing.Any) -> None:
        self.servers[server] = self.nova.wait_for_server(
            self.server(server), timeout=timeout, **fields)

    def do_wait_service(self, host: str, state: str,
                        timeout: float = backend.WAIT_TIMEOUT) -> None:
        self.nova.wait_service_state(host, state, timeout=timeout)

    def do_wait_point(self, host: str, point: str, count: int = 1,
                      phase: str = 'before',
                      timeout: float = backend.WAIT_TIMEOUT) -> None:
        self.nova.faults.wait_for_hit(host, point, count, timeout, phase)

    def do_wait_queued(self, host: str, method: str, expired: bool = True,
                       timeout: float = backend.WAIT_TIMEOUT) -> None:
        self.nova.faults.wait_for_queued(host, method, expired, timeout)

    def do_crash(self, host: str) -> None:
        self.nova.faults.crash_host(host)

    def do_stop(self, host: str) -> None:
        self.nova.stop_compute(host)

    def do_force_down(self, host: str, down: bool = True) -> None:
        self.nova.force_down(host, down)

    def do_restart(self, host: str,
                   rules: typing.Sequence[str] = ()) -> typing.Optional[str]:
        try:
            self.nova.faults.restart(host, rules=list(rules))
        except exception.StartFailed as exc:
            # nova-compute exits when its start fails; it is started
            # again (systemd's Restart=on-failure, or the operator),
            # without the rules: the fault happened.
            self.nova.faults.restart(host)
            return '%s; started again without rules' % exc
        return None

    def do_periodic(self, host: str) -> str:
        marker = PERIODIC_ERROR % host
        before = self.log_text().count(marker)
        if not self.nova.run_periodic(host):
            return '%s died during it' % host
        error = self.log_text().count(marker) > before
        self.periodics.append((host, error))
        return 'ERROR logged' if error else 'no error'

    def do_add_rule(self, host: str, rule: str) -> None:
        self.nova.faults.add_rule(host, rule)

    def do_clear_rules(self, host: str) -> None:
        self.nova.faults.set_rules(host, [])

    def do_release(self, host: str,
                   barrier: typing.Optional[str] = None) -> str:
        return 'released %s' % self.nova.faults.release(host, barrier)

    @tiers.needs(Provision.REAL_HYPERVISOR)
    def do_wait_guest(self, server: str, host: str, state: str,
                      timeout: float = 60) -> str:
        """Until ``host``'s hypervisor has the server's guest in ``state``
        (``absent``: has none)."""
        uuid = self.server(server)['id']

        def seen() -> bool:
            # Never None here: a tier without a real hypervisor (None)
            # is refused when the scenario loads (tiers.needs above).
            guests = self.nova.guests(host)
            return guests.get(  # type: ignore[union-attr]
                uuid, 'absent') == state
        self.nova.wait(seen, 'guest of %s %s on %s' % (server, state, host),
                       timeout)
        return 'guest of %s %s on %s' % (server, state, host)

    def do_sleep(self, seconds: float) -> None:
        time.sleep(seconds)
