"""Each step kind of a scenario (schema.yaml ``step``) as the lines of
the exported test method, with Nova's test means.  A kind or argument
with no such means raises :class:`~faultdriver.export.Unsupported`
naming the step."""

from faultdriver import export
from faultdriver.export import faults
from faultdriver.export import Unsupported
from faultdriver.export.writer import call
from faultdriver.scenario import backend
from faultdriver.scenario import provisions
from faultdriver.scenario import stepkinds


def write(writer, index, step):
    """The lines of StepSpec ``step`` (number ``index``)."""
    kind, args = step.kind, dict(step.args)
    where = 'step %d `%s`' % (index, kind)
    why = export.lacking(provisions.step_needs(step))
    if why:
        raise Unsupported(where, why)
    registered = stepkinds.get(kind)
    method = globals().get('_' + kind.replace('-', '_')) \
        if registered is None else registered.export
    if method is None:
        raise Unsupported(where, 'no Nova test means for this step')
    start = len(writer.lines)
    method(writer, where, **{k.replace('-', '_'): v
                             for k, v in args.items()})
    writer.paragraph(start)
    writer.last_step = kind


def _flavor(writer, where, flavor):
    if flavor is None:
        return 'self.flavor_id'
    if flavor not in writer.flavors:
        raise Unsupported(where, 'flavor %r is not defined' % flavor)
    return writer.flavors[flavor]


def _boot(writer, where, server, host=None, flavor=None, pin_as=None,
          status='ACTIVE', volume=False, port=False):
    host = host or writer.scenario.hosts[0]
    flavor_id = _flavor(writer, where, flavor)
    if status != 'ACTIVE':
        raise Unsupported(where, 'status %s: only a boot that ends ACTIVE '
                          'is exported' % status)
    if pin_as:
        other = writer.server(pin_as, where)
        name = writer.new_server(server, where)
        writer.comment('%s on %s, pinned to the pCPU numbers %s has.'
                       % (server, host, pin_as))
        writer.use('boot_pinned_as')
        writer.line('%s = self._boot_pinned_as(\n    %r, %s, %s)'
                    % (name, host, flavor_id, other))
        return
    name = writer.new_server(server, where)
    if volume or port:
        if volume and writer.volume_booted:
            raise Unsupported(where, 'a second server from a volume: the '
                              'export boots one from CinderFixture\'s '
                              'IMAGE_BACKED_VOL')
        writer.volume_booted = writer.volume_booted or volume
        writer.use('boot_with')
        writer.line(call('%s = self._boot_with' % name, [
            repr(host), flavor_id] + (['volume=True'] if volume else []) +
            (['port=True'] if port else [])))
        return
    writer.line('%s = self._create_server(' % name)
    writer.line('    flavor_id=%s, host=%r, networks=\'none\')'
                % (flavor_id, host))


def _move(writer, where, server, body, api='self.api'):
    """Ask the API for a move of ``server``; ``body`` is a dict literal."""
    name = writer.server(server, where)
    writer.moves[server] = writer.moves.get(server, 0) + 1
    if server not in writer.moved:
        writer.moved.append(server)
    head = '%s.post_server_action(%s[\'id\'], ' % (api, name)
    if len(head) + len(body) + 9 <= 79:
        writer.line(head + body + ')')
    else:
        writer.line(head + '{')
        writer.line('    ' + body[1:-1].strip() + '})')


def _live_migrate(writer, where, server, host=None):
    _move(writer, where, server, "{'os-migrateLive': {'host': %r, "
          "'block_migration': 'auto'}}" % host)


def _migrate(writer, where, server, host=None):
    _move(writer, where, server, "{'migrate': %s}" % (
        '{\'host\': %r}' % host if host else 'None'), 'self.admin_api')


def _resize(writer, where, server, flavor):
    _move(writer, where, server, "{'resize': {'flavorRef': %s}}"
          % _flavor(writer, where, flavor))


def _evacuate(writer, where, server, host=None):
    _move(writer, where, server, "{'evacuate': %s}" % (
        '{\'host\': %r}' % host if host else '{}'), 'self.admin_api')


def _abort(writer, where, server, index=None, timeout=backend.WAIT_TIMEOUT):
    if timeout != 30:
        raise Unsupported(where, "timeout %s: Nova's "
                          '_wait_for_instance_action_event polls a fixed '
                          'number of times' % timeout)
    name = writer.server(server, where)
    # The migration the scenario tier aborts: the server's newest move's.
    index = index or writer.moves.get(server, 1)
    writer.use('migrations')
    writer.line('self.admin_api.delete_migration(')
    writer.line("    %s['id'], self._migrations(%s)[%d]['id'])"
                % (name, name, index - 1))
    writer.comment('The API casts the abort to the source: wait until it '
                   'was handled (exported as a wait for its success).')
    writer.line('self._wait_for_instance_action_event(')
    writer.line("    %s, 'live_migration_cancel', "
                "'compute_live_migration_abort'," % name)
    writer.line("    'Success')")


def _confirm(writer, where, server, may_be_refused=False):
    _post_decision(writer, where, server, 'confirmResize', may_be_refused)


def _revert(writer, where, server, may_be_refused=False):
    _post_decision(writer, where, server, 'revertResize', may_be_refused)


def _post_decision(writer, where, server, action, may_be_refused):
    post = 'self.api.post_server_action(%s[\'id\'], {%r: None})' % (
        writer.server(server, where), action)
    if not may_be_refused:
        writer.line(post)
        return
    writer.comment('The API may refuse it (a 4xx): what follows shows '
                   'what Nova did.')
    writer.need('api_client')
    writer.line('try:\n    %s\nexcept client.OpenStackApiException as '
                'exc:\n    self.assertLess(exc.response.status_code, 500)'
                % post)


def _decide_resize(writer, where, decision, timeout=60):
    """Confirm or revert every resize waiting for it (the helper leaves
    a server not in VERIFY_RESIZE alone, as the step does)."""
    writer.use('decide_resizes')
    writer.line(call('self._decide_resizes', [
        writer.move_list(), repr(decision)] + (
        ['timeout=%s' % timeout] if timeout != 30 else [])))


def _reset_state(writer, where, server, state='active'):
    name = writer.server(server, where)
    writer.line('self.admin_api.post_server_action(')
    writer.line('    %s[\'id\'], {\'os-resetState\': {\'state\': %r}})'
                % (name, state))


def _wait_migration(writer, where, server, status, index=None,
                    timeout=backend.WAIT_TIMEOUT):
    name = writer.server(server, where)
    index = index or writer.moves.get(server, 1)
    writer.use('wait_for_nth_migration')
    args = [name, str(index), repr(status)]
    if timeout != 30:
        args.append('timeout=%s' % timeout)
    writer.line(call('self._wait_for_nth_migration', args))


def _wait_server(writer, where, server,
                 timeout=backend.WAIT_TIMEOUT, **fields):
    name = writer.server(server, where)
    keys = {'status': 'status', 'host': 'OS-EXT-SRV-ATTR:host',
            'task_state': 'OS-EXT-STS:task_state'}
    params = ', '.join('%r: %r' % (keys[k], v) for k, v in fields.items())
    writer.line('%s = self._wait_for_server_parameter(' % name)
    text = '    %s, {%s},' % (name, params)
    if len(text) + 8 > 79:
        writer.line('    %s, {' % name)
        for k, v in fields.items():
            writer.line('        %r: %r,' % (keys[k], v))
        writer.line('    },')
    else:
        writer.line(text)
    writer.line('    max_retries=%d)' % int(timeout * 2))


def _wait_service(writer, where, host, state, timeout=backend.WAIT_TIMEOUT):
    # Nova's wait, as the copied helper was (0.5 s a retry).
    writer.line(call('self._wait_for_service_parameter', [
        repr(host), "'nova-compute'", '{\'state\': %r}' % state,
        'max_retries=%d' % int(timeout * 2)]))


def _wait_point(writer, where, host, point, count=1, phase='before',
                timeout=backend.WAIT_TIMEOUT):
    held = writer.hits.get((host, point))
    if held is not None and count == 1 and phase == 'before':
        writer.line('self.assertTrue(%s.started.wait(%s))' % (held, timeout))
        return
    if count == 1 and writer.faulted.get((host, point)) == phase:
        # The hit is the fault's: the fixture records it as fired.
        writer.use('faults')
        writer.line('self.faults.wait_for(%r, %r%s)' % (
            host, point, '' if timeout == 30 else ', timeout=%s' % timeout))
        return
    raise Unsupported(where, 'only the first hit of a point a hang holds '
                      '(the InterceptMethodFixture says it started) or a '
                      'crash or raise rule fails at its first hit (in the '
                      'same phase) can be waited for')


def _wait_queued(writer, where, host, method, expired=True,
                 timeout=backend.WAIT_TIMEOUT):
    if not expired:
        raise Unsupported(where, 'the fake transport cannot be asked '
                          'whether a message waits in a queue; only '
                          '"until its caller gave up" (expired: true) '
                          'can be exported')
    writer.comment('Until the caller of %s gave up on %s (a timeout).'
                   % (method, host))
    if method not in writer.watched:
        writer.watched.append(method)
    writer.use('watch_rpc')
    writer.line('self.assertTrue(self.gave_up[%r].wait(%s))'
                % (method, timeout))


def _crash(writer, where, host):
    raise Unsupported(where, 'a crash outside a call has no thread to '
                      'stop in; write it as a rule (POINT: 1*crash) of '
                      'the call it should end')


def _stop(writer, where, host):
    writer.line('self.computes[%r].stop()' % host)


def _force_down(writer, where, host, down=True):
    writer.line('service = self.admin_api.get_services(')
    writer.line('    host=%r, binary=\'nova-compute\')[0]' % host)
    writer.line('self.admin_api.put_service_force_down(service[\'id\'], %s)'
                % down)


def _restart(writer, where, host, rules=()):
    if rules:
        raise Unsupported(where, 'rules of a restarted service are in '
                          'force during its start; an exported fault is '
                          'installed on a running service')
    writer.use('faults')
    writer.line('self.faults.restart(%r)' % host)


def _periodic(writer, where, host):
    writer.use('faults')
    writer.line('self.faults.periodic(%r)' % host)


def _add_rule(writer, where, host, rule):
    faults.install(writer, host, rule, where)


def _release(writer, where, host, barrier=None):
    held = [name for (h, b), name in writer.holds.items()
            if h == host and barrier in (None, b)]
    if not held:
        raise Unsupported(where, 'no hang rule on %s holds barrier %r'
                          % (host, barrier))
    for name in held:
        writer.released.add(name)
        writer.line('%s.proceed.set()' % name)


def _settle(writer, where, timeout=backend.WAIT_TIMEOUT):
    writer.use('settle')
    writer.line(call('self._settle', [writer.move_list()] + (
        ['timeout=%s' % timeout] if timeout != 30 else [])))


def _recover(writer, where, timeout=60, resize=None, rules=None):
    if rules:
        # As a restart's rules (see _restart): a fault during Nova's
        # start needs a service built with it.
        raise Unsupported(where, 'rules of the services recover starts '
                          '(a fault during the recovery) are not exported')
    writer.comment('What an operator does after the fault.')
    if 'periodics-clean' in writer.asserts:
        writer.use('periodic_errors_logged')
        writer.line('self.recovery_began = self._periodic_errors_logged()')
    settle = call('self._settle', [writer.move_list()] + (
        ['timeout=%s' % timeout] if timeout != 30 else []))
    writer.use('settle')
    if writer.last_step != 'settle':
        # Else the moves settled just before.
        writer.line(settle)
    held = sorted(set(writer.holds.values()) - writer.released)
    if held:
        writer.comment('A hang lasts until every compute\'s periodic ran '
                       '(or waits for what the held call holds).')
        writer.use('periodics_while_held')
        writer.line('periodics = self._periodics_while_held()')
        for name in held:
            writer.released.add(name)
            writer.line('%s.proceed.set()' % name)
        writer.line('for thread in periodics:\n    thread.join(%s)'
                    % timeout)
        writer.line(settle)
    if writer.crashes:
        writer.use('faults')
        writer.line('self.faults.restart_dead(%s)' % (
            '' if timeout == 30 else 'timeout=%s' % timeout))
        writer.line(settle)
    if resize:
        writer.use('decide_resizes')
        writer.line(call('self._decide_resizes', [
            writer.move_list(), repr(resize)] + (
            ['timeout=%s' % timeout] if timeout != 30 else [])))
    writer.line('for _round in range(2):\n    self._run_periodics()')
    writer.use('reset_stuck')
    writer.line(call('self._reset_stuck', [
        '[%s]' % ', '.join(writer.servers.values())]))


def _sleep(writer, where, seconds):
    writer.need('time')
    writer.line('time.sleep(%s)' % seconds)
