"""What an operator does once the fault happened: the ``recover``,
``settle`` and ``decide-resize`` steps (see schema.yaml), and the waits
they share -- moves settled or stuck, accounting at rest, held threads'
periodics, dead computes started again.

A mixin of :class:`faultdriver.scenario.steps.Steps`: it uses the
steps' ``nova`` (the backend contract), ``scenario``, ``servers`` and
``moves``, and the steps it takes as the operator would
(``do_periodic``, ``do_restart``, ``do_confirm``, ``do_revert``,
``do_reset_state``).
"""

import threading
import time
import typing

from faultdriver.novacompat import texts
from faultdriver.scenario import backend
from faultdriver.scenario import backend_records as records
from faultdriver.scenario import collect
from faultdriver.scenario import runstate
from faultdriver.scenario import statuses
from faultdriver import waiting

if typing.TYPE_CHECKING:
    from faultdriver.scenario import backend_base

#: A move that shows no change (migration statuses, server status, task
#: state, host) for this many RPC timeouts is stuck: by then every call
#: its hosts made timed out, and the caller's error handling (which may
#: call a dead host once more) timed out too.
QUIET_RPC_TIMEOUTS = 3
#: Seconds between two reads of a mismatched accounting when the moves
#: ended (``Recovery._accounting_at_rest``).
ACCOUNTING_QUIET = 1.0

#: Each running host's accounting (``collect.accounting``).
Accounting = typing.Dict[str, runstate.HostCount]
#: Per server: its migrations' statuses, (status, task state, host) and
#: the moves asked of it (``Recovery._move_state``).
MoveStates = typing.Dict[
    str, typing.Tuple[typing.Tuple[str, ...],
                      typing.Tuple[typing.Optional[str], ...], int]]


class Recovery:
    """The operator's steps after a fault (mixed into Steps)."""

    # What it uses of the Steps it is mixed into (declared for the type
    # checker only: Steps.__init__ sets them, and defines the steps).
    nova: 'backend_base.BackendBase'
    #: faultdriver.scenario.model.Scenario (not annotated yet).
    scenario: typing.Any
    servers: typing.Dict[str, records.Server]
    #: Servers another user's delete (``second-call``) took while the
    #: steps run: no longer waited for (``wait-second-call`` drops them).
    gone: typing.Set[str]
    moves: typing.Dict[str, int]
    #: Servers an operation that is no move was asked of (a shelve, a
    #: rebuild: faultdriver.scenario.serverops): settled once Nova
    #: cleared their task state.
    operated: typing.Set[str]
    recovery_marks: typing.Any
    move_end: typing.Optional[Accounting]
    task_states_reset: typing.Dict[str, str]
    #: The move state the last ``_settle`` saw and since when (``state``,
    #: ``since``): where a ``resume`` wait takes up its quiet time.
    _last_quiet: typing.Optional[typing.Dict[str, typing.Any]] = None
    log_counts: typing.Callable[[], typing.Any]
    do_periodic: typing.Callable[[str], typing.Any]
    do_restart: typing.Callable[[str, typing.Sequence[str]],
                                typing.Optional[str]]
    do_confirm: typing.Callable[[str], typing.Any]
    do_revert: typing.Callable[[str], typing.Any]
    do_reset_state: typing.Callable[[str, str], typing.Any]

    def do_recover(self, timeout: float = 60,
                   resize: typing.Optional[str] = None,
                   rules: typing.Optional[
                       typing.Mapping[str, typing.Sequence[str]]] = None
                   ) -> str:
        """See schema.yaml's ``recover``; returns what it did.

        ``rules``: ``{host: [rule, ...]}`` of the services recover starts
        (a fault during the recovery, a sweep's second fault)."""
        rules = rules or {}
        self.recovery_marks = self.log_counts()
        done = []
        faults = self.nova.faults
        live = self._up(self.scenario.hosts)
        waiting_periodics: typing.List[
            typing.Tuple[str, threading.Thread]] = []
        if any(faults.held(host) for host in live):
            # A hang lasts until the move stopped changing and every
            # host's periodic ran (or waits for a lock the held thread
            # has: it runs once released, as in nova-compute).  A move
            # the workflow's own settle saw stop changing, unchanged
            # since, is not watched for another quiet time (a hang case
            # cost two: issue 41, benchmarks/hang_cost.py).
            self._settle(timeout, resume=True)
            waiting_periodics = self._periodics_while_held(live)
            done.append('periodics while held: %s' % ', '.join(
                '%s %s' % (host, 'waited' if thread.is_alive() else 'ran')
                for host, thread in waiting_periodics))
        for host in live:
            released = faults.release(host)
            if released:
                done.append('released %s on %s' % (released, host))
        for _host, thread in waiting_periodics:
            thread.join(timeout)
        self._settle(timeout)
        if not waiting_periodics:
            # What the moves left the trackers with, before recover's
            # periodics repair it: a periodic that ran at the wrong time
            # (bug 1879878) shows only here (outcome-as-clean).
            self.move_end = self._accounting_at_rest(self._up(live),
                                                     timeout)
        unarmed = sorted(set(rules) & set(self._up(self.scenario.hosts)))
        if unarmed:
            # Rules arm with the service recover starts: for a host it
            # does not start they would never fire, and the run would
            # pass as if they had been tried.
            raise AssertionError(
                'recover: rules for %s, which recover does not start (it '
                'is not crashed or stopped): they would never arm'
                % ', '.join(unarmed))
        done += self._start_down_hosts(timeout, rules)
        stuck = self._settle(timeout)
        if stuck:
            done.append(stuck)
        if resize:
            done += self._decide_resizes(resize, timeout)
        for _ in range(2):
            for host in self._up(self.scenario.hosts):
                self.do_periodic(host)
        again = self._start_down_hosts(timeout)
        if again:
            # A fault of ``rules`` ended a started service after its start
            # (a call the restarted host took, a periodic): the operator
            # restarts it once more.
            done += again
            self._settle(timeout)
            for host in self.scenario.hosts:
                self.do_periodic(host)
        if rules:
            # An error a fault of ``rules`` made a periodic log (a raise in
            # the resource update) is that fault, not a periodic failing
            # after the recovery: periodics-clean counts from here.
            self.recovery_marks = self.log_counts()
        for alias, server in self._present():
            fields = self.nova.api.get_server(server['id'])
            if fields['OS-EXT-STS:task_state']:
                self.do_reset_state(alias, 'active' if fields['status'] !=
                                    'ERROR' else 'error')
                self.task_states_reset[alias] = \
                    fields['OS-EXT-STS:task_state']
                done.append('reset-state %s (was %s/%s)' % (
                    alias, fields['status'], fields['OS-EXT-STS:task_state']))
        return '; '.join(done) or 'nothing to do'

    def _present(self) -> typing.List[typing.Tuple[str, records.Server]]:
        """The scenario's servers but those another user deleted."""
        return [(alias, server) for alias, server in list(
            self.servers.items()) if alias not in self.gone]

    def _accounting_at_rest(self, hosts: typing.Iterable[str],
                            timeout: float) -> Accounting:
        """``collect.accounting`` of ``hosts`` once it stopped changing.
        A move's status is saved before its last calls (a live
        migration's source deletes the migration's allocation after it
        saves ``completed``): a mismatch read in between is not what the
        move left, so a mismatch is read again every ``ACCOUNTING_QUIET``
        seconds until two reads agree (no periodic runs meanwhile: a
        mismatch a periodic made stays).  Where every host matches at
        once nothing is waited for."""
        seen = {'last': collect.accounting(self, hosts)}
        if all(counted.matches for counted in seen['last'].values()):
            return seen['last']

        def agreed() -> typing.Optional[Accounting]:
            now = collect.accounting(self, hosts)
            same, seen['last'] = now == seen['last'], now
            return now if same else None
        return waiting.until(agreed, timeout, 'accounting at rest',
                             interval=ACCOUNTING_QUIET,
                             fail=False) or seen['last']

    def _up(self, hosts: typing.Iterable[str]) -> typing.List[str]:
        """``hosts`` but those crashed or stopped (a fault of ``recover``'s
        rules may end one again: no periodic runs on a dead compute)."""
        return [host for host in hosts if self.nova.compute_running(host)]

    def _start_down_hosts(
            self, timeout: float,
            rules: typing.Optional[
                typing.Mapping[str, typing.Sequence[str]]] = None
    ) -> typing.List[str]:
        """Start every crashed or stopped compute again, with its
        ``rules`` (a start they end is started once more without them, as
        ``restart`` does); what it did."""
        faults = self.nova.faults
        done = []
        for host in self.scenario.hosts:
            if faults.is_crashed(host):
                # The operator restarts it later, not at once (see
                # schema.yaml's recover).
                faults.wait_callers_gave_up(host, timeout)
                what = 'restarted %s' % host
            elif faults.is_stopped(host):
                # A graceful stop is an upgrade's or a reboot's: the
                # operator starts it again at once.
                what = 'started %s again (it was stopped)' % host
            else:
                continue
            host_rules = (rules or {}).get(host)
            ended = None
            if host_rules:
                ended = self.do_restart(host, host_rules)
            else:
                faults.restart(host)
            self.nova.wait_service_state(host, 'up', timeout)
            done.append('%s (%s)' % (what, ended) if ended else what)
        return done

    @property
    def _quiet_seconds(self) -> float:
        """How long a move that changes nothing is given before it counts
        as stuck: ``QUIET_RPC_TIMEOUTS`` of the backend's RPC timeouts."""
        return QUIET_RPC_TIMEOUTS * self.nova.faults.rpc_timeout

    def _periodics_while_held(self, hosts: typing.Iterable[str]
                              ) -> typing.List[
                                  typing.Tuple[str, threading.Thread]]:
        """Start every host's periodic; give them, together, up to the
        quiet time of ``_settle`` to end (one quiet time, not one per
        host: all run at once, and a host's periodic waiting for the
        tracker lock the held thread holds made a hang case at such a
        step cost one quiet time per host); none to those that can only
        run once the hold is released (:meth:`_tracker_lock_held`).
        ``[(host, thread)]``: a thread still alive waits for what the
        held thread holds."""
        hosts = list(hosts)
        locked = self._tracker_lock_held(hosts)
        if locked and self.nova.SHARED_TRACKER_LOCK:
            locked = set(hosts)
        deadline = time.monotonic() + self._quiet_seconds
        started = []
        for host in hosts:
            thread = threading.Thread(target=self.do_periodic, args=(host,),
                                      name='recover-periodic-%s' % host,
                                      daemon=True)
            thread.start()
            started.append((host, thread))
        for host, thread in started:
            if host not in locked:
                thread.join(max(0.0, deadline - time.monotonic()))
        return started

    def _tracker_lock_held(self, hosts: typing.Iterable[str]
                           ) -> typing.Set[str]:
        """The hosts where a held thread holds the resource tracker's
        lock (a hang at a tracker point's ``before`` or ``after``): their
        periodic can only run once it is released, so recover gives it
        no quiet time to run while held (a hang case there cost one
        quiet time more than its crash case: issue 41's 2x).  A hang at a
        barrier of another name (``second-call``) is not matched: its
        host's periodic is given the quiet time, as before."""
        from faultdriver import points as points_module
        catalogue = points_module.catalogue()
        held = {host: self.nova.faults.held(host) for host in hosts}
        if not any(held.values()):
            return set()
        found = set()
        for entry in self.nova.faults.history():
            host = str(entry.get('host'))
            point = catalogue.get(str(entry.get('point')))
            if entry.get('action') == 'hang' and point is not None and \
                    entry.get('point') in held.get(host, {}) and \
                    point.holds_lock(str(entry.get('phase'))):
                found.add(host)
        return found

    def do_decide_resize(self, decision: str, timeout: float = 60) -> str:
        """See schema.yaml's ``decide-resize``."""
        return '; '.join(self._decide_resizes(decision, timeout)) or \
            'no server in VERIFY_RESIZE'

    def _decide_resizes(self, decision: str,
                        timeout: float) -> typing.List[str]:
        """Confirm or revert every server waiting in VERIFY_RESIZE, as
        its user would, and wait (bounded) for that to end."""
        done = []
        for alias, server in self._present():
            if self.nova.api.get_server(server['id'])['status'] != \
                    'VERIFY_RESIZE':
                continue
            (self.do_confirm if decision == 'confirm' else
             self.do_revert)(alias)
            done.append('%s %s' % (decision, alias))
            waiting.until(
                lambda: self._decision_handled(server, decision), timeout,
                '%s of %s' % (decision, alias), interval=0.5, fail=False)
        return done

    def _decision_handled(self, server: records.Server,
                          decision: str) -> bool:
        """Whether the computes are done with ``decision`` of
        ``server``'s resize.

        A terminal migration is not enough: the confirm saves the
        migration confirmed and goes on (a failure after that sets it
        error, the instance ERROR first), so checks taken at the terminal
        status may see what the compute is still changing (a loaded
        machine did).  Done: the decision's last compute event finished,
        or one failed; or, with a host crashed, stopped or holding a
        caller (the event may never finish), every migration terminal.
        """
        if not all(m['status'] in statuses.TERMINAL
                   for m in self.nova.migrations(server)):
            return False
        hosts = self.scenario.hosts
        up = self._up(hosts)
        if len(up) < len(hosts) or any(self.nova.faults.held(host)
                                       for host in up):
            return True
        action, method = texts.DECISIONS[decision]
        return any(event['finish_time'] and (
            event['event'] == 'compute_' + method
            or event['result'] == 'Error')
            for event in self.nova.action_events(server, action))

    def do_settle(self, timeout: float = backend.WAIT_TIMEOUT) -> str:
        """Wait, at most ``timeout`` and without failing, until no
        migration of the scenario's servers is in progress (nor an
        operation: ``_settle``)."""
        self._settle(timeout)
        return ', '.join('%s: %s%s' % (alias, [m['status'] for m in sorted(
            self.nova.migrations(server), key=lambda m: m['id'])],
            self._operated_state(alias, server))
            for alias, server in self._present())

    def _operated_state(self, alias: str, server: records.Server) -> str:
        """`` STATUS on HOST`` (and its task state), then its newest
        instance action and how the computes ended it, of a server an
        operation was asked of (``, shelve: Success``); '' for the
        others."""
        if alias not in self.operated:
            return ''
        fields = self.nova.server_fields(server)
        text = ' %s on %s%s' % (fields['status'], fields['host'], (
            ' (%s)' % fields['task_state']) if fields['task_state'] else '')
        api = self.nova.admin_api
        actions = api.get_instance_actions(server['id'])
        if not actions:
            return text
        events = api.get_instance_action_details(
            server['id'], actions[0]['request_id']).get('events', [])
        results = [e['result'] if e['finish_time'] else 'running'
                   for e in events]
        return '%s, %s: %s' % (text, actions[0]['action'], (
            'Error' if 'Error' in results else 'running' if 'running'
            in results else 'Success' if results else 'no event'))

    def _settle(self, timeout: float, resume: bool = False) -> str:
        """Wait (bounded, without failing) until every move asked for has
        a migration and each ended or waits for someone (a confirm, the
        evacuated host), and every server an operation was asked of
        (``operated``: a shelve, a rebuild) has no task state, or until
        nothing moved for ``QUIET_RPC_TIMEOUTS``
        RPC timeouts: a move stuck for good (its host died and every call
        to it timed out long ago) is not waited for to the deadline.
        Returns the moves still going, as ``alias: [statuses]``, or ''.

        ``resume``: a move state the last wait saw unchanged, and still
        the same, has been quiet since the last wait saw it change
        (nothing was done in between that could move it: never after a
        release or a restart)."""
        over = statuses.TERMINAL + statuses.WAITING
        quiet = self._quiet_seconds
        # The move state last seen changing, and since when.
        last: typing.Dict[str, typing.Any] = {
            'state': None, 'since': time.monotonic()}
        before = self._last_quiet
        if resume and before and before['state'] == self._move_state():
            last.update(before)
        self._last_quiet = last

        def settled() -> typing.Optional[str]:
            state = self._move_state()
            now = time.monotonic()
            if state != last['state']:
                last.update(state=state, since=now)
            going = [(alias, found) for alias, (found, fields, moves)
                     in state.items() if len(found) < moves or any(
                         status not in over for status in found) or (
                         alias in self.operated and fields[1])]
            if not going:
                return 'settled'
            if now - last['since'] >= quiet:
                return 'stuck ' + ', '.join(
                    '%s: %s' % (alias, list(found))
                    for alias, found in going)
            return None
        outcome = waiting.until(settled, timeout, 'moves settled',
                                interval=0.5, fail=False)
        return '' if outcome == 'settled' else (outcome or 'not settled')

    def _move_state(self) -> MoveStates:
        """Per server: its migrations' statuses (oldest first), status,
        task state and host (``move_state``), and the moves asked of it
        (a move just asked for may have no migration record yet)."""
        state: MoveStates = {}
        for alias, server in self._present():
            found, *fields = self.nova.move_state(server)
            state[alias] = (found, tuple(fields),
                            self.moves.get(alias, 0))
        return state
