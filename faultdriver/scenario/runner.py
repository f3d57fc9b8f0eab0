"""Run one variant of a scenario on an embedded Nova, in this process.

Started by :mod:`faultdriver.scenario.launch` as ``python -m
faultdriver.scenario.runner FILE VARIANT MODE OUT``: the mode decides
``OS_NOVA_DISABLE_EVENTLET_PATCHING`` before Nova is first imported, so
each variant gets a process (and a fresh embedded Nova) of its own.  The
steps run as the one test of a TestCase built on
:class:`faultdriver.harness.embedded.EmbeddedNova`, through unittest,
outside any test discovery; the report is written to OUT as JSON.
"""

import json
import logging
import os
import sys
import threading
import time
import traceback
import unittest
import warnings

from faultdriver import exception
from faultdriver.novacompat import texts
from faultdriver import novaundertest
from faultdriver.scenario import backend
from faultdriver.scenario import expect
from faultdriver.scenario import model
from faultdriver import waiting

MODES = {'eventlet': 'False', 'threading': 'True'}
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
#: Loggers whose records log expectations count, and their levels.
CAPTURED = (('nova.compute', logging.DEBUG), ('faultdriver', logging.INFO))


def progress(variant, text):
    sys.__stderr__.write('[%s] %s\n' % (variant, text))
    sys.__stderr__.flush()


class Steps:
    """Carries out a scenario's steps on a running EmbeddedNova ``test``."""

    def __init__(self, test, scenario, variant):
        self.test = test
        self.scenario = scenario
        self.variant = variant
        self.servers = {}           # alias -> server (API view)
        self.moves = {}             # alias -> moves started
        self.flavors = {}           # name -> flavor id
        self.periodics = []         # (host, error logged)
        #: Log counts when ``recover`` began (see :meth:`log_counts`):
        #: the periodics-clean invariant looks at what came after.
        self.recovery_marks = None

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
        return ''.join(capture.output for capture in self.test.scenario_logs)

    def server(self, alias):
        return self.servers[alias]

    def flavor(self, name):
        if name not in self.flavors:
            spec = self.scenario.data['flavors'][name]
            self.flavors[name] = self.test.create_flavor(
                spec['vcpus'], spec.get('extra_specs'))
        return self.flavors[name]

    def run(self, kind, args):
        method = getattr(self, 'do_' + kind.replace('-', '_'))
        return method(**{k.replace('-', '_'): v for k, v in args.items()})

    # -- the steps, one method each (see schema.yaml) -----------------------

    def do_boot(self, server, host=None, flavor=None, pin_as=None,
                status='ACTIVE'):
        host = host or self.scenario.hosts[0]

        def boot():
            if flavor:
                return self.test.create_server(host, self.flavor(flavor),
                                               status=status)
            return self.test.boot(host=host, status=status)
        created = boot()
        if status == 'ERROR':
            self.servers[server] = created
            return 'ERROR: %s' % created.get('fault', {}).get('message')
        if pin_as:
            wanted = self.test.instance_pinning(self.server(pin_as))
            misses = []
            while self.test.instance_pinning(created) != wanted:
                if len(misses) >= 3:
                    raise AssertionError(
                        'no server on %s got the pCPUs %s of %s'
                        % (host, wanted, pin_as))
                misses.append(created)
                created = boot()
            for miss in misses:
                self.test.delete_server(miss)
        self.servers[server] = created
        return 'on %s, pCPUs %s' % (host, self.test.instance_pinning(created)
                                    if self.scenario.dedicated_cpus else '-')

    def do_delete(self, server):
        self.test.delete_server(self.servers.pop(server))

    def _move(self, server, body, api=None):
        (api or self.test.api).post_server_action(self.server(server)['id'],
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
                   api=self.test.admin_api)

    def do_abort(self, server, index=None, timeout=30):
        index = index or self.moves.get(server, 1)
        migrations = sorted(self.test.migrations(self.server(server)),
                            key=lambda m: m['id'])
        if len(migrations) < index:
            raise AssertionError('%s has %d migrations, no migration %d'
                                 % (server, len(migrations), index))
        migration = migrations[index - 1]
        self.test.admin_api.delete_migration(self.server(server)['id'],
                                             migration['id'])
        # The API casts the abort to the source: wait until it was handled.
        event = self.test.wait_action_event(
            self.server(server), 'live_migration_cancel',
            'compute_live_migration_abort', timeout)
        return 'migration %d (%s) was %s; source: %s' % (
            index, migration['uuid'][:8], migration['status'],
            event['result'])

    def do_confirm(self, server):
        self.test.api.post_server_action(self.server(server)['id'],
                                         {'confirmResize': None})

    def do_revert(self, server):
        self.test.api.post_server_action(self.server(server)['id'],
                                         {'revertResize': None})

    def do_reset_state(self, server, state='active'):
        self.test.admin_api.post_server_action(
            self.server(server)['id'], {'os-resetState': {'state': state}})

    def do_wait_migration(self, server, status, index=None, timeout=30):
        index = index or self.moves.get(server, 1)
        migration = self.test.wait_newest_migration(
            self.server(server), status, index, timeout=timeout)
        return 'migration %d (%s) %s' % (index, migration['uuid'][:8],
                                         status)

    def do_wait_server(self, server, timeout=30, **fields):
        self.servers[server] = self.test.wait_for_server(
            self.server(server), timeout=timeout, **fields)

    def do_wait_service(self, host, state, timeout=30):
        self.test.wait_service_state(host, state, timeout=timeout)

    def do_wait_point(self, host, point, count=1, phase='before',
                      timeout=30):
        self.test.faults.wait_for_hit(host, point, count, timeout, phase)

    def do_wait_queued(self, host, method, expired=True, timeout=30):
        self.test.faults.wait_for_queued(host, method, expired, timeout)

    def do_crash(self, host):
        self.test.faults.crash_host(host)

    def do_stop(self, host):
        self.test.stop_compute(host)

    def do_force_down(self, host, down=True):
        self.test.force_down(host, down)

    def do_restart(self, host, rules=()):
        try:
            self.test.faults.restart(host, rules=list(rules))
        except exception.StartFailed as exc:
            # nova-compute exits when its start fails; it is started
            # again (systemd's Restart=on-failure, or the operator),
            # without the rules: the fault happened.
            self.test.faults.restart(host)
            return '%s; started again without rules' % exc

    def do_periodic(self, host):
        marker = PERIODIC_ERROR % host
        before = self.log_text().count(marker)
        self.test.run_periodic(host)
        error = self.log_text().count(marker) > before
        self.periodics.append((host, error))
        return 'ERROR logged' if error else 'no error'

    def do_add_rule(self, host, rule):
        self.test.faults.add_rule(host, rule)

    def do_clear_rules(self, host):
        self.test.faults.set_rules(host, [])

    def do_release(self, host, barrier=None):
        return 'released %s' % self.test.faults.release(host, barrier)

    def do_wait_guest(self, server, host, state, timeout=60):
        """Until ``host``'s hypervisor has the server's guest in ``state``
        (``absent``: has none)."""
        uuid = self.server(server)['id']
        if getattr(self.test, 'guests', None) is None:
            raise RuntimeError('wait-guest needs a backend with a real '
                               'hypervisor (--backend libvirt)')

        def seen():
            found = self.test.guests(host)
            if found is None:
                raise RuntimeError('wait-guest needs a backend with a real '
                                   'hypervisor (--backend libvirt)')
            return found.get(uuid, 'absent') == state
        self.test.wait(seen, 'guest of %s %s on %s' % (server, state, host),
                       timeout)
        return 'guest of %s %s on %s' % (server, state, host)

    def do_recover(self, timeout=60, resize=None):
        """See schema.yaml's ``recover``; returns what it did."""
        self.recovery_marks = self.log_counts()
        done = []
        faults = self.test.faults
        live = [h for h in self.scenario.hosts if not faults.is_crashed(h)]
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
        for host in self.scenario.hosts:
            if faults.is_crashed(host):
                # The operator restarts it later, not at once (see
                # schema.yaml's recover).
                faults.wait_callers_gave_up(host, timeout)
                faults.restart(host)
                self.test.wait_service_state(host, 'up', timeout)
                done.append('restarted %s' % host)
        stuck = self._settle(timeout)
        if stuck:
            done.append(stuck)
        if resize:
            done += self._decide_resizes(resize, timeout)
        for _ in range(2):
            for host in self.scenario.hosts:
                self.do_periodic(host)
        for alias, server in self.servers.items():
            fields = self.test.api.get_server(server['id'])
            if fields['OS-EXT-STS:task_state']:
                self.do_reset_state(alias, 'active' if fields['status'] !=
                                    'ERROR' else 'error')
                done.append('reset-state %s (was %s/%s)' % (
                    alias, fields['status'], fields['OS-EXT-STS:task_state']))
        return '; '.join(done) or 'nothing to do'

    @property
    def _quiet_seconds(self):
        """How long a move that changes nothing is given before it counts
        as stuck: ``QUIET_RPC_TIMEOUTS`` of the backend's RPC timeouts."""
        return QUIET_RPC_TIMEOUTS * self.test.faults.rpc_timeout

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
            if self.test.api.get_server(server['id'])['status'] != \
                    'VERIFY_RESIZE':
                continue
            (self.do_confirm if decision == 'confirm' else
             self.do_revert)(alias)
            done.append('%s %s' % (decision, alias))
            waiting.until(lambda: all(
                m['status'] in expect.TERMINAL
                for m in self.test.migrations(server)), timeout,
                '%s of %s' % (decision, alias), interval=0.5, fail=False)
        return done

    def do_settle(self, timeout=30):
        """Wait, at most ``timeout`` and without failing, until no
        migration of the scenario's servers is in progress."""
        self._settle(timeout)
        return ', '.join('%s: %s' % (alias, [m['status'] for m in sorted(
            self.test.migrations(server), key=lambda m: m['id'])])
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
            statuses, *fields = self.test.move_state(server)
            state[alias] = (statuses, tuple(fields),
                            self.moves.get(alias, 0))
        return state

    def do_sleep(self, seconds):
        time.sleep(seconds)


def describe_step(kind, args):
    return '%s %s' % (kind, ' '.join('%s=%s' % (k, v)
                                     for k, v in args.items()))


def collect_state(steps):
    """Migrations, per-host accounting and fired faults, as plain data."""
    test = steps.test
    migrations = []
    for alias, server in steps.servers.items():
        for m in sorted(test.migrations(server), key=lambda m: m['id']):
            migrations.append({
                'server': alias, 'id': m['id'], 'uuid': m['uuid'],
                'type': m.get('migration_type'), 'status': m['status'],
                'source_compute': m['source_compute'],
                'dest_compute': m['dest_compute'],
                'created_at': m.get('created_at'),
                'updated_at': m.get('updated_at')})
    hosts = {}
    for host in steps.scenario.hosts:
        pinned = (test.pinned_cpus(host) if steps.scenario.dedicated_cpus
                  else [])
        pcpus = test.placement_pcpus(host)
        hosts[host] = {'service': test.service_state(host),
                       'pinned_cpus': pinned, 'placement_pcpu': pcpus,
                       'matches': len(pinned) == pcpus}
    keys = ('time', 'host', 'point', 'phase', 'hit', 'action', 'event',
            'rule', 'error', 'waited_for_lock', 'in_periodic', 'skipped')
    faults = [{k: e[k] for k in keys if k in e}
              for e in test.faults.history()]
    servers = {}
    guests = hypervisor_guests(steps)
    for alias, server in steps.servers.items():
        server = test.api.get_server(server['id'])
        servers[alias] = {
            'id': server['id'], 'status': server['status'],
            'host': server['OS-EXT-SRV-ATTR:host'],
            'task_state': server['OS-EXT-STS:task_state'],
            'pinned_cpus': (test.instance_pinning(server)
                            if steps.scenario.dedicated_cpus else [])}
        if guests is not None:
            servers[alias]['guests'] = {
                host: found[server['id']] for host, found in guests.items()
                if server['id'] in found}
    return {'migrations': migrations, 'hosts': hosts, 'faults': faults,
            'servers': servers}


def hypervisor_guests(steps):
    """``{host: {uuid: state}}`` as the hypervisors see it, where the
    backend can ask a real one (``guests``); else None."""
    ask = getattr(steps.test, 'guests', None)
    if ask is None:
        return None
    found = {host: ask(host) for host in steps.scenario.hosts}
    return None if None in found.values() else found


def scenario_test(scenario, variant, report, steps_class=None):
    """The test method: run the steps, then check the expectations.

    ``self`` is the Nova to run on: an EmbeddedNova test case, or the
    process tier's :class:`faultdriver.process.nova.ProcessNova` (which
    passes its own ``steps_class``).
    """

    def test_scenario(self):
        backend.check(self)
        steps = (steps_class or Steps)(self, scenario, variant)
        started = time.monotonic()
        # Wall clock of step 0: places journal times on the timeline.
        report['steps_started_at'] = time.time()
        report['setup_seconds'] = round(started - report['_t0'], 2)
        _mark_cpu(report, 'setup')
        progress(variant, 'Nova up in %.1fs (hosts %s)'
                 % (report['setup_seconds'], ', '.join(scenario.hosts)))
        total = len(scenario.steps)
        for i, step in enumerate(scenario.steps, 1):
            [(kind, args)] = step.items()
            entry = {'index': i, 'step': describe_step(kind, args),
                     'kind': kind, 'args': args,
                     'start': round(time.monotonic() - started, 2)}
            report['timeline'].append(entry)
            t = time.monotonic()
            try:
                detail = steps.run(kind, args)
                entry['status'] = 'ok'
            except Exception as exc:
                detail = '%s: %s' % (type(exc).__name__, exc)
                entry['status'] = 'failed'
                report['step_failed'] = entry['step']
            entry['seconds'] = round(time.monotonic() - t, 2)
            entry['detail'] = detail or ''
            progress(variant, '%2d/%d %-60s %5.2fs %s %s'
                     % (i, total, entry['step'][:60], entry['seconds'],
                        entry['status'], entry['detail']))
            if entry['status'] == 'failed':
                break
        report['steps_seconds'] = round(time.monotonic() - started, 2)
        _mark_cpu(report, 'steps')
        report['state'] = collect_state(steps)
        report['expectations'] = expect.evaluate(
            steps, scenario.expectations(variant), report['state'])
        _mark_cpu(report, 'expectations')
        if report['step_failed'] or not all(
                e['met'] for e in report['expectations']):
            # What the computes logged (CAPTURED), to tell why.
            report['compute_log'] = steps.log_text()
        for verdict in report['expectations']:
            progress(variant, '%s %s (actual: %s)' % (
                'met    ' if verdict['met'] else 'NOT MET',
                verdict['expectation'], verdict['actual']))
    return test_scenario


def _mark_cpu(report, phase):
    """Record the CPU seconds ``phase`` took in this whole process
    (every thread: the embedded Nova's services too): where a case's time
    goes when the sweep's workers share the cores and wall times stretch.
    Only on the embedded Nova (the process tier's services are other
    processes)."""
    if '_cpu0' in report:
        cpu = report['cpu_seconds']
        spent = time.process_time() - report['_cpu0']
        cpu[phase] = round(spent - sum(cpu.values()), 2)


def _no_disk_copy(self, context, instance, dest, flavor, network_info,
                  block_device_info=None, timeout=0, retry_interval=0):
    """LibvirtDriver.migrate_disk_and_power_off on fakelibvirt, which
    cannot copy disks (Nova's own tests stub it too): no disk info."""
    return '{}'


def run(path, variant, mode):
    """Run ``variant`` of the scenario at ``path``; returns the report."""
    os.environ['OS_NOVA_DISABLE_EVENTLET_PATCHING'] = MODES[mode]
    # A previous run in this process (serve) left logging disabled.
    logging.disable(logging.NOTSET)
    # Nova decides eventlet patching on this first import (before the
    # loader checks rules, which imports Nova's driver module).
    from faultdriver.harness import embedded
    from faultdriver.harness import heap
    import fixtures

    from faultdriver.novacompat import patchfixtures
    scenario = model.load(path)
    report = {'scenario': scenario.name, 'variant': variant, 'mode': mode,
              'expect': scenario.variants[variant].get('expect', 'ok'),
              'patches': scenario.patches(variant), 'timeline': [],
              'topology': {host: shape.as_dict() for host, shape in
                           scenario.host_shapes().items()},
              'step_failed': None, '_t0': time.monotonic(),
              '_cpu0': time.process_time(), 'cpu_seconds': {}}
    progress(variant, 'starting embedded Nova (%s mode, fixes: %s)'
             % (mode, ', '.join(report['patches']) or 'none (stock)'))

    class ScenarioCase(embedded.EmbeddedNova):
        PINNED = scenario.pinned
        HOSTS = tuple(scenario.hosts)
        TOPOLOGY = scenario.host_shapes()
        IDLE_WAKEUP = 0.2       # restarts and teardown wait <= 0.2 s
        RULES = scenario.data.get('rules', {})
        PATCHES = tuple(scenario.patches(variant))

        def setUp(self):
            super().setUp()
            self.stub_live_migration()
            self.useFixture(patchfixtures.Patch(
                'nova.virt.libvirt.driver.LibvirtDriver.'
                'migrate_disk_and_power_off', _no_disk_copy))
            self.scenario_logs = [self.useFixture(fixtures.FakeLogger(
                name=name, level=level,
                format='%(levelname)s %(name)s %(message)s'))
                for name, level in CAPTURED]
            # Registered last, runs first: Nova's thread pools log their
            # shutdown once the test's logging fixtures are gone.
            self.addCleanup(logging.disable, logging.CRITICAL)

        test_scenario = scenario_test(scenario, variant, report)

    result = unittest.TestResult()
    heap.ready_for_case()
    ScenarioCase('test_scenario').run(result)
    report['wall_seconds'] = round(time.monotonic() - report.pop('_t0'), 2)
    _mark_cpu(report, 'teardown')
    del report['_cpu0']
    problems = result.errors + result.failures
    report['internal_error'] = (
        ''.join(text for _case, text in problems) or None)
    if report['internal_error']:
        progress(variant, 'internal error:\n' + report['internal_error'])
    return report


def main(argv=None, run_variant=None, backend='embedded'):
    """``FILE VARIANT MODE OUT``: run, then write the report to OUT (an
    internal error becomes a report too).  The process tier passes its
    own ``run_variant``."""
    warnings.simplefilter('ignore')
    path, variant, mode, out = argv or sys.argv[1:]
    nova = None
    try:
        # Which Nova this process runs, checked before anything starts.
        nova = novaundertest.current()
        scenario = model.read(path)
        novaundertest.check_includes(nova, scenario.nova_patches(variant))
        report = (run_variant or run)(path, variant, mode)
        report['unavailable'] = unavailable(scenario.patches(variant))
    except (exception.ScenarioError, exception.MissingPrerequisite) as exc:
        # Bad input, not an internal error: the launcher read the file but
        # left the checks that import Nova to its variants, which import
        # it anyway (launch.run raises it).  A prerequisite the stack
        # finds missing (before it starts anything) is refused alike.
        report = {'variant': variant, 'mode': mode, 'backend': backend,
                  'scenario_error': str(exc)}
    except Exception:
        report = {'variant': variant, 'mode': mode, 'backend': backend,
                  'internal_error': traceback.format_exc()}
        progress(variant, 'internal error:\n' + report['internal_error'])
    report['nova'] = nova
    with open(out, 'w', encoding='utf-8') as stream:
        json.dump(report, stream, indent=2, default=str)
    return 0


def unavailable(fixes):
    """``{feature or fix: why}``: what the changed Nova under test made
    unavailable (the run went on without it; the report says so)."""
    from faultdriver import novacompat
    from faultdriver.tracker import patches as tracker_patches
    found = dict(novacompat.unavailable())
    found.update(('fix %s' % name, why) for name, why in
                 tracker_patches.unavailable(fixes).items())
    return found


def serve(mode):
    """``--serve MODE``: run one scenario variant after another in this
    process (the sweep's workers: Nova's imports and its cached database
    schema are paid once, each run still gets a fresh embedded Nova).

    Reads one JSON request per line on stdin, ``{"path", "variant",
    "out", "log"}``; the run's output goes to ``log``, its report to
    ``out``, then the line ``done`` on the original stdout.
    """
    warnings.simplefilter('ignore')
    replies = os.fdopen(os.dup(1), 'w')
    for line in sys.stdin:
        request = json.loads(line)
        with open(request['log'], 'a', encoding='utf-8') as log:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(log.fileno(), 1)
            os.dup2(log.fileno(), 2)
            main([request['path'], request['variant'], mode,
                  request['out']])
            sys.stdout.flush()
            sys.stderr.flush()
        replies.write('done\n')
        replies.flush()


if __name__ == '__main__':
    if sys.argv[1:2] == ['--serve']:
        serve(sys.argv[2])
    else:
        main()
    # The report is written; Nova's leftover threads and pools (whose
    # shutdown logs after the test's logging fixtures are gone) need not
    # be waited for.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
