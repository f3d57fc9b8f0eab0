"""A scenario as a devstack recipe: the faultdriver devstack plugin's
settings per compute node, then the ``openstack`` CLI calls (and
``faultdriver ctl`` calls on the nodes) its steps become.

This is what a bug report (:mod:`faultdriver.export.bugreport`) gives a
Nova developer who reproduces the bug on their own cloud, where
faultdriver's embedded tier is not at hand.  One mapping per step kind
(``_step_<kind>``); a kind or argument with no CLI form raises
:class:`~faultdriver.export.Unsupported` naming the step and its kind
(``faultdriver export --report`` exits 2), never a silent drop: a
recipe that skipped a step would reproduce something else.

The recipe is derived, not run here: the report labels it "not yet run
on devstack" until a devstack run is recorded.
"""

import shlex

from faultdriver.export import Unsupported
from faultdriver.novacompat import texts
from faultdriver.scenario import statuses

#: The Nova test base's flavor (what the embedded tier's servers get).
FLAVOR_RAM_MB = 2048
FLAVOR_DISK_GB = 20
#: The devstack plugin's default control socket
#: (devstack/settings: ``$NOVA_STATE_PATH/faultdriver.sock``).
SOCKET = '/opt/stack/data/nova/faultdriver.sock'
#: devstack's systemd unit of nova-compute.
UNIT = 'devstack@n-cpu'
#: Statuses after which a move waits for nobody (``settle``).
SETTLED = statuses.TERMINAL + statuses.WAITING
#: libvirt's ``virsh domstate`` words for the scenario's guest states.
DOMSTATE = {'shutoff': 'shut off', 'shutdown': 'in shutdown',
            'blocked': 'idle', 'nostate': 'no state'}

#: Shell functions a recipe may use, defined once at its top.
FUNCTIONS = {
    'fdctl': [
        '# fdctl NODE ARGS...: faultdriver ctl on a compute node (as the',
        '# stack user), its arguments quoted for the remote shell',
        'fdctl() {',
        '    local node=$1; shift',
        '    ssh "$node" "FAULTDRIVER_SOCKET=$FD_SOCKET faultdriver ctl '
        '$(printf \'%q \' "$@")"',
        '}'],
    'wait_for': [
        '# wait_for SECONDS COMMAND...: until COMMAND succeeds',
        'wait_for() {',
        '    local end=$((SECONDS + $1)); shift',
        '    until "$@"; do',
        '        [ "$SECONDS" -lt "$end" ] || { echo "timed out: $*" >&2;'
        ' return 1; }',
        '        sleep 2',
        '    done',
        '}'],
    'field': [
        'field() { openstack server show "$1" -f value -c "$2"; }'],
    'migration': [
        '# migration SERVER N: "ID STATUS" of the server\'s Nth migration',
        'migration() { openstack server migration list --server "$1" '
        '-f value -c Id -c Status | sort -n | sed -n "$2p"; }',
        'migration_is() { [ "$(migration "$1" "$2" | cut -d" " -f2)" = '
        '"$3" ]; }',
        'migration_ended() { ! migration "$1" "$2" | grep -qE '
        '" (queued|preparing|running)$"; }'],
    'no_tasks': [
        '# no_tasks NODE...: no compute manager there tracks a task',
        'no_tasks() {',
        '    local n',
        '    for n; do',
        '        [ -z "$(fdctl "$n" tasks -f value)" ] || return 1',
        '    done',
        '}'],
    'settled': [
        '# settled SERVER...: no migration of theirs still in progress',
        'settled() {',
        '    local s',
        '    for s; do',
        '        openstack server migration list --server "$s" -f value '
        '-c Status | grep -qvxE %s && return 1' % shlex.quote(
            '|'.join(SETTLED)),
        '    done',
        '    return 0',
        '}'],
    'decisions_handled': [
        '# decisions_handled SERVER: each confirm and revert of the server',
        '# the API took has its last compute event finished (or one failed)',
        'decisions_handled() {',
        '    local req',
        '    for req in $(openstack server event list "$1" -f value '
        '-c "Request ID" -c Action | awk %s); do' % shlex.quote(
            '$2 ~ /^(%s)$/ {print $1}' % '|'.join(
                action for action, _method in texts.DECISIONS.values())),
        '        openstack server event show "$1" "$req" -f json | '
        'python3 -c %s || return 1' % shlex.quote(
            'import json, sys; sys.exit(not any(e["finish_time"] and '
            '(e["event"] in (%s) or e["result"] == "Error") for e in '
            'json.load(sys.stdin)["events"]))'
            % ', '.join('"compute_%s"' % method for _action, method
                        in texts.DECISIONS.values())),
        '    done',
        '}'],
    'server_is': [
        '# server_is SERVER COLUMN VALUE...: the server shows each value',
        'server_is() {',
        '    local s=$1; shift',
        '    while [ $# -gt 1 ]; do',
        '        [ "$(field "$s" "$1")" = "$2" ] || return 1',
        '        shift 2',
        '    done',
        '}'],
    'service_is': [
        'service_is() { [ "$(openstack compute service list --service '
        'nova-compute --host "$1" -f value -c State)" = "$2" ]; }'],
    'all_up': [
        '# all_up: no Nova service the API takes for down',
        'all_up() { ! openstack compute service list -f value -c State | '
        'grep -qx down; }'],
    'guest_is': [
        '# guest_is NODE SERVER STATE: libvirt\'s state of the guest',
        'guest_is() { [ "$(ssh "$1" sudo virsh domstate "$(field "$2" id)"'
        ' 2>/dev/null || echo absent)" = "$3" ]; }'],
}
#: Functions a function calls.
NEEDS = {'guest_is': ('field',), 'server_is': ('field',)}


class Recipe:
    """What the steps accumulate: shell lines, the functions and the
    flavors they use, each server's moves (an abort or a wait takes the
    newest by default, as the step interpreter does)."""

    def __init__(self, scenario):
        self.scenario = scenario
        self.lines = []
        self.functions = set()
        self.flavors = {}           # name -> openstack flavor create line
        self.servers = []
        self.moves = {}

    def use(self, *names):
        for name in names:
            self.functions.add(name)
            self.use(*NEEDS.get(name, ()))

    def add(self, *lines):
        self.lines.extend(lines)


#: Shell variables a host's variable must not be (``NODE_`` is put first).
RESERVED = ('PATH', 'HOME', 'USER', 'SHELL', 'PWD', 'OLDPWD', 'IFS', 'LANG',
            'TERM', 'HOST', 'HOSTNAME', 'SECONDS', 'RANDOM', 'LINENO', 'UID',
            'EUID', 'PPID', 'OPTIND', 'OPTARG', 'IMAGE', 'FD_SOCKET')


def variable(host):
    """The shell variable holding the scenario host's node name."""
    name = host.upper().replace('-', '_')
    return 'NODE_' + name if name in RESERVED else name


def node(host):
    return '"$%s"' % variable(host)


def recipe(scenario):
    """``(settings, commands)``: per compute node the local.conf lines
    of the devstack plugin, and the shell commands of the steps (with
    the functions they use first).  Unsupported for a step with no CLI
    form."""
    steps = Recipe(scenario)
    for index, step in enumerate(scenario.steps, 1):
        where = 'step %d `%s`' % (index, step.kind)
        method = globals().get('_step_' + step.kind.replace('-', '_'))
        if method is None:
            raise Unsupported(where, 'no devstack (openstack CLI) form for '
                              'this step kind')
        steps.add('', '# %d. %s' % (index, step.describe().strip()))
        method(steps, where, **{k.replace('-', '_'): v
                                for k, v in step.args.items()})
    return settings(scenario), _commands(steps)


def settings(scenario):
    """``{host: [local.conf lines]}``: the plugin enabled, the host's
    rules (a ``*`` rule on every host), its CPU sets; the periodic off
    where the scenario runs it only when a step says so."""
    rules = scenario.data.get('rules', {})
    found = {}
    for host, shape in scenario.host_shapes().items():
        texts = list(rules.get('*', ())) + list(rules.get(host, ()))
        lines = ['[[local|localrc]]',
                 'enable_plugin faultdriver FAULTDRIVER_GIT_URL',
                 'FAULTDRIVER_ENABLED=True']
        if texts:
            lines.append('FAULTDRIVER_RULES=%s' % shlex.quote(
                '; '.join(texts)))
        conf = ['%s = %s' % item for item in shape.cpu_sets().items()]
        default = []
        if not scenario.periodic_timer:
            default.append('update_resources_interval = -1')
        if scenario.shelved_offload_time is not None:
            default.append('shelved_offload_time = %d'
                           % scenario.shelved_offload_time)
        if conf or default:
            lines.append('[[post-config|$NOVA_CONF]]')
        if default:
            lines += ['[DEFAULT]'] + default
        if conf:
            lines += ['[compute]'] + conf
        found[host] = lines
    return found


def _commands(steps):
    hosts = steps.scenario.hosts
    head = ['# %s: your compute nodes\' names' % ', '.join(
        variable(h) for h in hosts),
            ' '.join('%s=compute%d' % (variable(h), i)
                     for i, h in enumerate(hosts, 1)),
            'IMAGE=cirros-0.6.3-x86_64-disk  # an image of the cloud',
            'FD_SOCKET=%s' % SOCKET]
    for name in FUNCTIONS:
        if name in steps.functions:
            head += FUNCTIONS[name]
    return head + [''] + list(steps.flavors.values()) + steps.lines


def _flavor(steps, flavor):
    """The flavor name a boot or resize uses, created once."""
    pinned = {'hw:cpu_policy': 'dedicated'} if steps.scenario.pinned \
        else {}
    if flavor is None:
        name, vcpus, specs = 'fd-default', 2, pinned
    else:
        spec = steps.scenario.data['flavors'][flavor]
        name, vcpus = flavor, spec['vcpus']
        specs = spec.get('extra_specs', pinned)
    if name not in steps.flavors:
        steps.flavors[name] = 'openstack flavor create --vcpus %d --ram %d ' \
            '--disk %d%s %s' % (vcpus, FLAVOR_RAM_MB, FLAVOR_DISK_GB, ''.join(
                ' --property %s' % shlex.quote('%s=%s' % item)
                for item in sorted(specs.items())), shlex.quote(name))
    return name


def _move(steps, server, verb):
    steps.moves[server] = steps.moves.get(server, 0) + 1
    steps.add(verb)


# -- one mapping per step kind (schema.yaml ``step``) ------------------------

def _step_boot(steps, where, server, host=None, flavor=None, pin_as=None,
               status='ACTIVE', volume=False, port=False):
    if pin_as:
        raise Unsupported(where, 'pin-as: booting until a server gets '
                          'another\'s pCPU numbers has no openstack CLI '
                          'form')
    host = host or steps.scenario.hosts[0]
    command = 'openstack server create --flavor %s --image "$IMAGE"%s %s ' \
        '--availability-zone nova:%s' % (
            _flavor(steps, flavor),
            ' --boot-from-volume 1' if volume else '',
            '--network private' if port else '--nic none', node(host))
    steps.servers.append(server)
    if status == 'ACTIVE':
        steps.add('%s --wait %s' % (command, server))
    else:
        steps.use('wait_for', 'field')
        steps.add('%s %s' % (command, server),
                  'wait_for 300 test "$(field %s status)" = %s' % (
                      server, status))


def _step_attach_volume(steps, where, server, volume):
    steps.use('wait_for')
    state = 'test "$(openstack volume show %s -f value -c status)" = ' % \
        volume
    steps.add('openstack volume create --size 1 %s' % volume,
              'wait_for 60 %savailable' % state,
              'openstack server add volume %s %s' % (server, volume),
              'wait_for 60 %sin-use' % state)


def _step_detach_volume(steps, where, server, volume):
    steps.use('wait_for')
    steps.add('openstack server remove volume %s %s' % (server, volume),
              'wait_for 60 test "$(openstack volume show %s -f value -c '
              'status)" = available' % volume)


def _step_delete(steps, where, server):
    steps.add('openstack server delete --wait %s' % server)


def _step_live_migrate(steps, where, server, host=None):
    _move(steps, server, 'openstack --os-compute-api-version 2.30 server '
          'migrate --live-migration %s%s' % (
              '--host %s ' % node(host) if host else '', server))


def _step_migrate(steps, where, server, host=None):
    _move(steps, server, 'openstack --os-compute-api-version 2.56 server '
          'migrate %s%s' % ('--host %s ' % node(host) if host else '',
                            server))


def _step_resize(steps, where, server, flavor):
    _move(steps, server, 'openstack server resize --flavor %s %s' % (
        _flavor(steps, flavor), server))


def _step_evacuate(steps, where, server, host=None):
    _move(steps, server, 'openstack --os-compute-api-version 2.29 server '
          'evacuate %s%s' % ('--host %s ' % node(host) if host else '',
                             server))


def _operation(steps, server, command, may_be_refused=False):
    """A server operation (faultdriver.scenario.serverops), then the
    wait ``settle`` makes for it: until the task state cleared."""
    steps.use('wait_for', 'field')
    steps.add(command + (' || true  # the API may refuse it'
                         if may_be_refused else ''),
              'wait_for 60 test "$(field %s OS-EXT-STS:task_state)" = None'
              % server)


def _step_shelve(steps, where, server, may_be_refused=False):
    _operation(steps, server, 'openstack server shelve %s' % server,
               may_be_refused)


def _step_shelve_offload(steps, where, server, may_be_refused=False):
    _operation(steps, server, 'openstack server shelve --offload %s'
               % server, may_be_refused)


def _step_unshelve(steps, where, server, may_be_refused=False):
    _operation(steps, server, 'openstack server unshelve %s' % server,
               may_be_refused)


def _step_rebuild(steps, where, server, may_be_refused=False):
    _operation(steps, server, 'openstack server rebuild --image "$IMAGE" %s'
               % server, may_be_refused)


def _step_stop_server(steps, where, server, may_be_refused=False):
    _operation(steps, server, 'openstack server stop %s' % server,
               may_be_refused)


def _step_start_server(steps, where, server, may_be_refused=False):
    _operation(steps, server, 'openstack server start %s' % server,
               may_be_refused)


def _step_reboot_server(steps, where, server, type='SOFT',
                        may_be_refused=False):
    _operation(steps, server, 'openstack server reboot %s%s' % (
        '--hard ' if type == 'HARD' else '', server), may_be_refused)


def _step_abort(steps, where, server, index=None, timeout=30):
    index = index or steps.moves.get(server, 1)
    steps.use('migration', 'wait_for')
    steps.add('openstack --os-compute-api-version 2.24 server migration '
              'abort %s "$(migration %s %d | cut -d" " -f1)"' % (
                  server, server, index),
              'wait_for %s migration_ended %s %d' % (timeout, server, index))


def _decision(steps, server, verb, may_be_refused):
    line = 'openstack server resize %s %s' % (verb, server)
    if may_be_refused:
        line += ' || echo "%s refused (the scenario allows it)"' % verb
    steps.add(line)


def _step_confirm(steps, where, server, may_be_refused=False):
    _decision(steps, server, 'confirm', may_be_refused)


def _step_revert(steps, where, server, may_be_refused=False):
    _decision(steps, server, 'revert', may_be_refused)


def _decide(steps, decision, timeout):
    steps.use('field', 'wait_for', 'settled')
    servers = ' '.join(steps.servers)
    steps.add('for s in %s; do [ "$(field "$s" status)" = VERIFY_RESIZE ] '
              '&& openstack server resize %s "$s"; done' % (servers,
                                                           decision),
              'wait_for %s settled %s || true' % (timeout, servers))


def _step_wait_decisions(steps, where, server, timeout=30):
    steps.use('wait_for', 'decisions_handled')
    steps.add('wait_for %s decisions_handled %s' % (timeout, server))


def _step_decide_resize(steps, where, decision, timeout=60):
    _decide(steps, decision, timeout)


def _step_reset_state(steps, where, server, state='active'):
    steps.add('openstack server set --state %s %s' % (state, server))


def _step_wait_migration(steps, where, server, status, index=None,
                         timeout=30):
    index = index or steps.moves.get(server, 1)
    steps.use('migration', 'wait_for')
    steps.add('wait_for %s migration_is %s %d %s' % (timeout, server, index,
                                                     shlex.quote(status)))


def _step_wait_guest(steps, where, server, host, state, timeout=60):
    steps.use('guest_is', 'wait_for')
    steps.add('wait_for %s guest_is %s %s %s' % (
        timeout, node(host), server, shlex.quote(DOMSTATE.get(state,
                                                              state))))


def _step_wait_server(steps, where, server, timeout=30, **fields):
    steps.use('server_is', 'wait_for')
    columns = {'status': 'status', 'host': 'OS-EXT-SRV-ATTR:host',
               'task_state': 'OS-EXT-STS:task_state'}
    pairs = ' '.join('%s %s' % (columns[key], node(value) if key == 'host'
                                else shlex.quote('None' if value is None
                                                 else str(value)))
                     for key, value in fields.items())
    steps.add('wait_for %s server_is %s %s' % (timeout, server, pairs))


def _step_wait_service(steps, where, host, state, timeout=30):
    steps.use('service_is', 'wait_for')
    steps.add('wait_for %s service_is %s %s' % (timeout, node(host), state))


def _step_wait_point(steps, where, host, point, count=1, phase='before',
                     timeout=30):
    steps.use('fdctl')
    steps.add('fdctl %s wait %s --count %d --phase %s --timeout %s' % (
        node(host), point, count, phase, timeout))


#: A devstack's systemd units of each control-plane service (on the node
#: that runs the recipe: devstack's controller).
CONTROL_UNITS = {'rabbitmq': 'rabbitmq-server',
                 'nova-conductor': 'devstack@n-super-cond '
                                   'devstack@n-cond-cell1',
                 'nova-scheduler': 'devstack@n-sch',
                 'placement': 'devstack@placement-api'}


def _step_stop_service(steps, where, service):
    steps.add('sudo systemctl stop %s' % CONTROL_UNITS[service])


def _step_start_service(steps, where, service):
    steps.use('wait_for', 'all_up')
    steps.add('sudo systemctl start %s' % CONTROL_UNITS[service],
              '# until every Nova service reports up again (their '
              'heartbeats go over the broker and the conductor)',
              'wait_for 120 all_up')


def _step_wait_queued(steps, where, host, method, expired=True, timeout=30):
    raise Unsupported(where, 'an RPC message waiting in a dead compute\'s '
                      'queue (and its caller giving up) is the message '
                      'bus\'s, with no openstack CLI form')


def _step_second_call(steps, where, **args):
    raise Unsupported(where, 'another user\'s call made in the background '
                      'while a step is held, and checked to be made while '
                      'it holds, has no single openstack CLI form (run the '
                      'call by hand between the hang and its release)')


def _step_wait_second_call(steps, where, **args):
    raise Unsupported(where, 'it waits for a second-call, which has no CLI '
                      'form')


def _step_wait_tasks(steps, where, timeout=30):
    # As the step: bounded, and it never fails (a task tracked for good
    # is what tasks-ended reports).
    steps.use('fdctl', 'wait_for', 'no_tasks')
    steps.add('wait_for %s no_tasks %s || true' % (timeout, ' '.join(
        node(h) for h in steps.scenario.hosts)))


def _step_crash(steps, where, host):
    steps.add('# a crash stays down until a later step starts it: if your '
              '%s unit' % UNIT,
              '# restarts on failure (Restart=), stop it right after',
              'ssh %s sudo systemctl kill --signal=SIGKILL %s' % (
                  node(host), UNIT))


def _step_stop(steps, where, host):
    steps.add('ssh %s sudo systemctl stop %s' % (node(host), UNIT))


def _step_force_down(steps, where, host, down=True):
    steps.add('openstack --os-compute-api-version 2.11 compute service set '
              '%s %s nova-compute' % ('--down' if down else '--up',
                                      node(host)))


def _step_restart(steps, where, host, rules=()):
    if rules:
        raise Unsupported(where, 'rules: a nova-compute started with its '
                          'own rules needs them in its nova.conf first; '
                          'the recipe does not edit it')
    steps.add('ssh %s sudo systemctl restart %s' % (node(host), UNIT))


def _step_periodic(steps, where, host):
    steps.use('fdctl')
    steps.add('fdctl %s periodic' % node(host))


def _step_add_rule(steps, where, host, rule):
    steps.use('fdctl')
    steps.add('fdctl %s add %s' % (node(host), shlex.quote(rule)))


def _step_clear_rules(steps, where, host):
    steps.use('fdctl')
    steps.add('fdctl %s clear' % node(host))


def _step_release(steps, where, host, barrier=None):
    steps.use('fdctl')
    steps.add('fdctl %s release %s' % (node(host), shlex.quote(barrier)
                                      if barrier else '--all'))


def _step_settle(steps, where, timeout=30):
    steps.use('wait_for', 'settled')
    steps.add('wait_for %s settled %s || true' % (timeout,
                                                  ' '.join(steps.servers)))


def _step_recover(steps, where, timeout=60, resize=None, rules=None):
    if rules:
        raise Unsupported(where, 'rules: the computes recover starts would '
                          'need them in their nova.conf first; the recipe '
                          'does not edit it')
    steps.use('fdctl', 'wait_for', 'settled', 'service_is', 'field')
    hosts = ' '.join(node(h) for h in steps.scenario.hosts)
    servers = ' '.join(steps.servers)
    steps.add(
        '# what an operator does: release held calls, start the computes '
        'that',
        '# died once their callers gave up (rpc_response_timeout), run the',
        '# periodics, reset a task state left set',
        'for n in %s; do fdctl "$n" release --all; done' % hosts,
        'wait_for %s settled %s || true' % (timeout, servers),
        'for n in %s; do ssh "$n" systemctl is-active -q %s || '
        '{ sleep 60; ssh "$n" sudo systemctl start %s; }; done' % (
            hosts, UNIT, UNIT),
        'for n in %s; do wait_for %s service_is "$n" up; done' % (hosts,
                                                                 timeout),
        'wait_for %s settled %s || true' % (timeout, servers))
    if resize:
        _decide(steps, resize, timeout)
    steps.add(
        'for n in %s; do fdctl "$n" periodic; fdctl "$n" periodic; done'
        % hosts,
        'for s in %s; do [ "$(field "$s" OS-EXT-STS:task_state)" = None ] ||'
        ' openstack server set --state "$([ "$(field "$s" status)" = ERROR ]'
        ' && echo error || echo active)" "$s"; done' % servers)


def _step_sleep(steps, where, seconds):
    steps.add('sleep %s' % seconds)
