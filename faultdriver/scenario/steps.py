"""The step interpreter: one method per step kind of ``schema.yaml``.

It runs on any backend that keeps the contract of
:mod:`faultdriver.scenario.backend` (the embedded Nova, the process and
libvirt tiers) and knows none of them: a tier differs in its primitives,
never in what a step does.
"""

import threading
import time

from faultdriver import exception
from faultdriver.novacompat import texts
from faultdriver.scenario import backend
from faultdriver.scenario import collect
from faultdriver.scenario import expect
from faultdriver.scenario import tiers
from faultdriver import waiting

Provision = tiers.Provision

PERIODIC_ERROR = texts.PERIODIC_ERROR
#: A move that shows no change (migration statuses, server status, task
#: state, host) for this many RPC timeouts is stuck: by then every call
#: its hosts made timed out, and the caller's error handling (which may
#: call a dead host once more) timed out too.
QUIET_RPC_TIMEOUTS = 3
#: The resource tracker's line when its periodic applies an instance's
#: migration context for a migration to this host
#: (``ResourceTracker._update_available_resource``).
APPLIED_CONTEXT = texts.APPLIED_CONTEXT
#: Seconds between two reads of a mismatched accounting when the moves
#: ended (``Steps._accounting_at_rest``).
ACCOUNTING_QUIET = 1.0
#: The instance actions of a user's decision on a resize, and the compute
#: events that end each (a revert ends on the source).
DECISION_ACTIONS = tuple(action for action, _method
                         in texts.DECISIONS.values())
DECISION_EVENTS = tuple('compute_' + method for _action, method
                        in texts.DECISIONS.values())


class Steps:
    """Carries out a scenario's steps on a running Nova (``nova``: a
    backend keeping :mod:`faultdriver.scenario.backend`'s contract)."""

    def __init__(self, nova, scenario, variant):
        self.nova = nova
        self.scenario = scenario
        self.variant = variant
        self.servers = {}           # alias -> server (API view)
        self.moves = {}             # alias -> moves started
        self.flavors = {}           # name -> flavor id
        self.volumes = {}           # alias -> volume id (attach-volume)
        self.periodics = []         # (host, error logged)
        #: What the API answered each ``confirm``/``revert`` step:
        #: (alias, action, 'accepted' or the refusal's HTTP status).
        self.decisions = []
        #: Log counts when ``recover`` began (see :meth:`log_counts`):
        #: the periodics-clean invariant looks at what came after.
        self.recovery_marks = None
        #: Each running host's accounting when ``recover`` found the moves
        #: settled, before its periodics (``collect.accounting``); None
        #: where a held thread made recover run periodics first.
        self.move_end = None

    def log_counts(self):
        """How often the log has each host's periodic error line and
        the tracker's line for each status of a migration whose context
        it applied (counts, not positions: the process tier's log is
        several files)."""
        text = self.log_text()
        counts = {('error', host): text.count(PERIODIC_ERROR % host)
                  for host in self.scenario.hosts}
        for status in expect.TERMINAL:
            counts[('applied', status)] = text.count(
                APPLIED_CONTEXT % status)
        return counts

    def log_text(self):
        return self.nova.log_text()

    def server(self, alias):
        return self.servers[alias]

    def flavor(self, name):
        if name not in self.flavors:
            spec = self.scenario.data['flavors'][name]
            self.flavors[name] = self.nova.create_flavor(
                spec['vcpus'], spec.get('extra_specs'))
        return self.flavors[name]

    def run(self, step):
        """Carry out one StepSpec; returns what it did (text) or None."""
        method = getattr(self, 'do_' + step.kind.replace('-', '_'))
        return method(**{k.replace('-', '_'): v
                         for k, v in step.args.items()})

    # -- the steps, one method each (see schema.yaml) -----------------------
    # A step that needs what only some tiers provide declares it
    # (tiers.needs): a scenario is refused where it would lack it, when
    # it loads (faultdriver.scenario.provisions).

    @tiers.needs(volume=Provision.BLOCK_STORAGE, port=Provision.NETWORK)
    def do_boot(self, server, host=None, flavor=None, pin_as=None,
                status='ACTIVE', volume=False, port=False):
        host = host or self.scenario.hosts[0]

        def boot():
            if flavor:
                return self.nova.create_server(
                    host, self.flavor(flavor), status=status, volume=volume,
                    port=port)
            return self.nova.boot(host=host, status=status, volume=volume,
                                  port=port)
        created = boot()
        if status == 'ERROR':
            self.servers[server] = created
            return 'ERROR: %s' % created.get('fault', {}).get('message')
        if pin_as:
            wanted = self.nova.instance_pinning(self.server(pin_as))
            misses = []
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
    def do_attach_volume(self, server, volume):
        self.volumes[volume] = self.nova.attach_volume(self.server(server))
        return 'volume %s' % self.volumes[volume]

    @tiers.needs(Provision.BLOCK_STORAGE)
    def do_detach_volume(self, server, volume):
        self.nova.detach_volume(self.server(server), self.volumes[volume])

    def do_delete(self, server):
        self.nova.delete_server(self.servers.pop(server))

    def _move(self, server, body, api=None):
        (api or self.nova.api).post_server_action(self.server(server)['id'],
                                                  body)
        self.moves[server] = self.moves.get(server, 0) + 1

    def do_live_migrate(self, server, host=None):
        self._move(server, {'os-migrateLive': {
            'host': host, 'block_migration': 'auto'}})

    def do_migrate(self, server, host=None):
        self._move(server, {'migrate': {'host': host} if host else None})

    def do_resize(self, server, flavor):
        self._move(server, {'resize': {'flavorRef': self.flavor(flavor)}})

    def do_evacuate(self, server, host=None):
        self._move(server, {'evacuate': {'host': host} if host else {}},
                   api=self.nova.admin_api)

    def do_abort(self, server, index=None, timeout=backend.WAIT_TIMEOUT):
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

    def do_confirm(self, server, may_be_refused=False):
        return self._post_decision(server, 'confirmResize', may_be_refused)

    def do_revert(self, server, may_be_refused=False):
        return self._post_decision(server, 'revertResize', may_be_refused)

    def _post_decision(self, server, action, may_be_refused):
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

    def do_wait_decisions(self, server, timeout=backend.WAIT_TIMEOUT):
        """See schema.yaml's ``wait-decisions``: until the computes
        handled every confirm and revert of the server the API took (a
        second one a user made while the first ran, too: its end is
        what a scenario of concurrent calls is about, and it may come
        after the migration ended)."""
        uuid = self.server(server)['id']
        api = self.nova.admin_api

        def pending():
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

    def do_reset_state(self, server, state='active'):
        self.nova.admin_api.post_server_action(
            self.server(server)['id'], {'os-resetState': {'state': state}})

    def do_wait_migration(self, server, status, index=None,
                          timeout=backend.WAIT_TIMEOUT):
        index = index or self.moves.get(server, 1)
        migration = self.nova.wait_newest_migration(
            self.server(server), status, index, timeout=timeout)
        return 'migration %d (%s) %s' % (index, migration['uuid'][:8],
                                         status)

    def do_wait_server(self, server, timeout=backend.WAIT_TIMEOUT, **fields):
        self.servers[server] = self.nova.wait_for_server(
            self.server(server), timeout=timeout, **fields)

    def do_wait_service(self, host, state, timeout=backend.WAIT_TIMEOUT):
        self.nova.wait_service_state(host, state, timeout=timeout)

    def do_wait_point(self, host, point, count=1, phase='before',
                      timeout=backend.WAIT_TIMEOUT):
        self.nova.faults.wait_for_hit(host, point, count, timeout, phase)

    def do_wait_queued(self, host, method, expired=True,
                       timeout=backend.WAIT_TIMEOUT):
        self.nova.faults.wait_for_queued(host, method, expired, timeout)

    def do_crash(self, host):
        self.nova.faults.crash_host(host)

    def do_stop(self, host):
        self.nova.stop_compute(host)

    def do_force_down(self, host, down=True):
        self.nova.force_down(host, down)

    def do_restart(self, host, rules=()):
        try:
            self.nova.faults.restart(host, rules=list(rules))
        except exception.StartFailed as exc:
            # nova-compute exits when its start fails; it is started
            # again (systemd's Restart=on-failure, or the operator),
            # without the rules: the fault happened.
            self.nova.faults.restart(host)
            return '%s; started again without rules' % exc
        return None

    def do_periodic(self, host):
        marker = PERIODIC_ERROR % host
        before = self.log_text().count(marker)
        if not self.nova.run_periodic(host):
            return '%s died during it' % host
        error = self.log_text().count(marker) > before
        self.periodics.append((host, error))
        return 'ERROR logged' if error else 'no error'

    def do_add_rule(self, host, rule):
        self.nova.faults.add_rule(host, rule)

    def do_clear_rules(self, host):
        self.nova.faults.set_rules(host, [])

    def do_release(self, host, barrier=None):
        return 'released %s' % self.nova.faults.release(host, barrier)

    @tiers.needs(Provision.REAL_HYPERVISOR)
    def do_wait_guest(self, server, host, state, timeout=60):
        """Until ``host``'s hypervisor has the server's guest in ``state``
        (``absent``: has none)."""
        uuid = self.server(server)['id']

        def seen():
            return self.nova.guests(host).get(uuid, 'absent') == state
        self.nova.wait(seen, 'guest of %s %s on %s' % (server, state, host),
                       timeout)
        return 'guest of %s %s on %s' % (server, state, host)

    def do_recover(self, timeout=60, resize=None, rules=None):
        """See schema.yaml's ``recover``; returns what it did.

        ``rules``: ``{host: [rule, ...]}`` of the services recover starts
        (a fault during the recovery, a sweep's second fault)."""
        rules = rules or {}
        self.recovery_marks = self.log_counts()
        done = []
        faults = self.nova.faults
        live = self._up(self.scenario.hosts)
        waiting_periodics = []
        if any(faults.held(host) for host in live):
            # A hang lasts until the move stopped changing and every
            # host's periodic ran (or waits for a lock the held thread
            # has: it runs once released, as in nova-compute).
            self._settle(timeout)
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
        for alias, server in self.servers.items():
            fields = self.nova.api.get_server(server['id'])
            if fields['OS-EXT-STS:task_state']:
                self.do_reset_state(alias, 'active' if fields['status'] !=
                                    'ERROR' else 'error')
                done.append('reset-state %s (was %s/%s)' % (
                    alias, fields['status'], fields['OS-EXT-STS:task_state']))
        return '; '.join(done) or 'nothing to do'

    def _accounting_at_rest(self, hosts, timeout):
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

        def agreed():
            now = collect.accounting(self, hosts)
            same, seen['last'] = now == seen['last'], now
            return now if same else None
        return waiting.until(agreed, timeout, 'accounting at rest',
                             interval=ACCOUNTING_QUIET,
                             fail=False) or seen['last']

    def _up(self, hosts):
        """``hosts`` but those crashed or stopped (a fault of ``recover``'s
        rules may end one again: no periodic runs on a dead compute)."""
        return [host for host in hosts if self.nova.compute_running(host)]

    def _start_down_hosts(self, timeout, rules=None):
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
    def _quiet_seconds(self):
        """How long a move that changes nothing is given before it counts
        as stuck: ``QUIET_RPC_TIMEOUTS`` of the backend's RPC timeouts."""
        return QUIET_RPC_TIMEOUTS * self.nova.faults.rpc_timeout

    def _periodics_while_held(self, hosts):
        """Start every host's periodic; give each up to the quiet time of
        ``_settle`` to end.  ``[(host, thread)]``: a thread still alive
        waits for what the held thread holds."""
        quiet = self._quiet_seconds
        started = []
        for host in hosts:
            thread = threading.Thread(target=self.do_periodic, args=(host,),
                                      name='recover-periodic-%s' % host,
                                      daemon=True)
            thread.start()
            started.append((host, thread))
        for _host, thread in started:
            thread.join(quiet)
        return started

    def do_decide_resize(self, decision, timeout=60):
        """See schema.yaml's ``decide-resize``."""
        return '; '.join(self._decide_resizes(decision, timeout)) or \
            'no server in VERIFY_RESIZE'

    def _decide_resizes(self, decision, timeout):
        """Confirm or revert every server waiting in VERIFY_RESIZE, as
        its user would, and wait (bounded) for that to end."""
        done = []
        for alias, server in self.servers.items():
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

    def _decision_handled(self, server, decision):
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
        if not all(m['status'] in expect.TERMINAL
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

    def do_settle(self, timeout=backend.WAIT_TIMEOUT):
        """Wait, at most ``timeout`` and without failing, until no
        migration of the scenario's servers is in progress."""
        self._settle(timeout)
        return ', '.join('%s: %s' % (alias, [m['status'] for m in sorted(
            self.nova.migrations(server), key=lambda m: m['id'])])
            for alias, server in self.servers.items())

    def _settle(self, timeout):
        """Wait (bounded, without failing) until every move asked for has
        a migration and each ended or waits for someone (a confirm, the
        evacuated host), or until nothing moved for ``QUIET_RPC_TIMEOUTS``
        RPC timeouts: a move stuck for good (its host died and every call
        to it timed out long ago) is not waited for to the deadline.
        Returns the moves still going, as ``alias: [statuses]``, or ''."""
        over = expect.TERMINAL + expect.WAITING
        quiet = self._quiet_seconds
        last = {'state': None, 'since': time.monotonic()}

        def settled():
            state = self._move_state()
            now = time.monotonic()
            if state != last['state']:
                last.update(state=state, since=now)
            going = [(alias, statuses) for alias, (statuses, _server, moves)
                     in state.items() if len(statuses) < moves or any(
                         status not in over for status in statuses)]
            if not going:
                return 'settled'
            if now - last['since'] >= quiet:
                return 'stuck ' + ', '.join(
                    '%s: %s' % (alias, list(statuses))
                    for alias, statuses in going)
            return None
        outcome = waiting.until(settled, timeout, 'moves settled',
                                interval=0.5, fail=False)
        return '' if outcome == 'settled' else (outcome or 'not settled')

    def _move_state(self):
        """Per server: its migrations' statuses (oldest first), status,
        task state and host (``move_state``), and the moves asked of it
        (a move just asked for may have no migration record yet)."""
        state = {}
        for alias, server in self.servers.items():
            statuses, *fields = self.nova.move_state(server)
            state[alias] = (statuses, tuple(fields),
                            self.moves.get(alias, 0))
        return state

    def do_sleep(self, seconds):
        time.sleep(seconds)
