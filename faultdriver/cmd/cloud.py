"""Commands of the cloud tier: ``faultdriver ctl relay`` (on a compute),
``cloud reach``, ``cloud init``, ``cloud check`` and ``cloud restore``
(on the runner), and the ``--cloud NAME`` / ``--profile PATH`` that
``scenario run`` and ``sweep`` take.

Exit codes as every command's: 2 when the host refuses (naming it and
the fact: host down or unreachable, key refused, socket absent, no
opt-in, host or nodename mismatch, dirty host, FaultDriver not the
compute_driver, Nova not 34.x) or nothing listens at the socket.
"""

from cliff import command
from cliff import show


class CtlRelay(command.Command):
    """Relay stdin and stdout to the control socket (run over SSH).

    For where sshd forbids stream-local forwarding: the runner runs
    ``ssh HOST faultdriver ctl relay --socket PATH`` once per control
    connection.  Exit 2 naming the path if nothing listens there.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--socket', metavar='PATH', required=True,
                            help='control socket of the nova-compute')
        return parser

    def take_action(self, parsed_args):
        from faultdriver.cloud import relay
        from faultdriver.control import protocol
        try:
            relay.relay(parsed_args.socket)
        except relay.SocketAbsent as exc:
            raise protocol.Unreachable(str(exc)) from None
        return 0


class CloudReach(show.ShowOne):
    """Reach a compute's control socket over SSH; show its status.

    HOST is what ``ssh HOST`` takes (an alias of ~/.ssh/config).  The
    socket is forwarded to a private local one, or relayed where sshd
    forbids forwarding; the status shows which.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('host', metavar='HOST')
        parser.add_argument('--socket', metavar='PATH', required=True,
                            help='the control socket on the host')
        parser.add_argument('--ssh-config', metavar='FILE',
                            help='ssh_config to use instead of '
                                 '~/.ssh/config (ssh -F)')
        parser.add_argument('--relay-command', metavar='CMD',
                            default='faultdriver ctl relay',
                            help='the relay on the host (default: '
                                 '%(default)s)')
        return parser

    def take_action(self, parsed_args):
        from faultdriver.cloud import transport
        from faultdriver.control import client
        target = transport.SshTarget(
            parsed_args.host, parsed_args.ssh_config,
            tuple(parsed_args.relay_command.split()))
        with transport.Transport(target) as reached:
            local = reached.control_socket(parsed_args.socket)
            status = client.Client(local).status()
            mode = reached.mode[parsed_args.socket]
        row = {'ssh': parsed_args.host, 'reached by': mode,
               'host': status['host'], 'pid': status['pid'],
               'enabled': status['enabled']}
        return tuple(zip(*sorted(row.items())))


def add_cloud_arguments(parser):
    """``--cloud NAME`` and ``--profile PATH``: run on that cloud (the
    cloud tier; ``--backend`` is then not given)."""
    parser.add_argument('--cloud', metavar='NAME',
                        help='run on cloud NAME, an existing deployment '
                             'reached over SSH (its profile '
                             '~/.config/faultdriver/clouds/NAME.yaml; '
                             'doc/source/tiers.rst)')
    parser.add_argument('--profile', metavar='PATH',
                        help='the cloud profile to use instead of '
                             'NAME.yaml (implies the cloud tier)')


def use_cloud(parsed_args, hosts=None, wanted_by='--cloud'):
    """Load the profile ``--cloud``/``--profile`` name and check its
    hosts (``hosts``: those a scenario uses; exit 2 naming the host and
    the fact), for the cloud tier's runners to reach."""
    import os

    from faultdriver.cloud import profile as profile_module
    from faultdriver.cloud import survey
    from faultdriver import exception
    from faultdriver.scenario import launch
    if not (parsed_args.cloud or parsed_args.profile):
        raise exception.ScenarioError('%s: expected --cloud NAME (or '
                                      '--profile PATH)' % wanted_by)
    from faultdriver.cloud import provides
    profile = profile_module.load(parsed_args.cloud, parsed_args.profile)
    provides.use(profile, hosts)
    found = survey.check(profile, [h for h in (hosts or profile.hosts)
                                   if h in profile.hosts])
    os.environ[launch.CLOUD_PROFILE] = os.path.abspath(profile.path)
    use_rpc_timeout(survey.rpc_timeout(found))


def use_provisions(parsed_args, hosts=None):
    """The cloud tier as the profile's computes are (their libvirt
    gives a real hypervisor: cloud.provides), before a scenario is
    checked against it; the profile is only read."""
    from faultdriver.cloud import profile as profile_module
    from faultdriver.cloud import provides
    _refuse_backend(parsed_args)
    provides.use(profile_module.load(parsed_args.cloud, parsed_args.profile),
                 hosts)


def use_rpc_timeout(seconds):
    """The cloud tier's ``rpc_timeout`` is the cloud's own (its
    computes' ``rpc_response_timeout``, from their status), not the CI
    cloud's default: a sweep's ``delay`` fault outlasts it by a second,
    so that the caller gives up while the step goes on."""
    import dataclasses

    from faultdriver.scenario import tiers
    if seconds is not None:
        tiers.TIERS[tiers.CLOUD] = dataclasses.replace(
            tiers.TIERS[tiers.CLOUD], rpc_timeout=seconds)


def cloud_backend(parsed_args, hosts=None):
    """The cloud tier's name when ``--cloud``/``--profile`` is given
    (its profile loaded and its hosts checked first), else
    ``parsed_args.backend``."""
    if not (parsed_args.cloud or parsed_args.profile):
        return parsed_args.backend
    from faultdriver.scenario import tiers
    _refuse_backend(parsed_args)
    use_cloud(parsed_args, hosts)
    return tiers.CLOUD


def _refuse_backend(parsed_args):
    from faultdriver import exception
    from faultdriver.scenario import tiers
    if parsed_args.backend != tiers.DEFAULT:
        raise exception.ScenarioError(
            '--backend %s and --cloud: expected one of them (--cloud runs '
            'on the cloud tier)' % parsed_args.backend)


class _ProfileCommand(command.Command):

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('cloud', metavar='NAME')
        parser.add_argument('--profile', metavar='PATH',
                            help='the profile instead of '
                                 '~/.config/faultdriver/clouds/NAME.yaml')
        return parser

    def profile(self, parsed_args):
        from faultdriver.cloud import profile as profile_module
        return profile_module.load(parsed_args.cloud, parsed_args.profile)


class CloudCheck(_ProfileCommand):
    """Check a cloud's profile and computes before a run.

    Each host: reached over SSH, its control socket answering, FaultDriver
    its compute_driver, Nova 34.x, the host and nodename the profile (and
    the compute API) name, nothing left armed, held or booted there.  Exit
    2 naming the host and the fact at the first that fails; advice
    (timings, DEBUG logging, clock skew) is shown, not refused.
    """

    def take_action(self, parsed_args):
        from faultdriver.cloud import survey
        profile = self.profile(parsed_args)
        for found in survey.check(profile):
            self.app.stdout.write(
                '%s (%s): host %s, node %s, Nova %s, faultdriver %s, '
                'socket %s, clock %+.3fs: ok\n' % (
                    found.alias, found.ssh, found.host, found.nodename,
                    found.nova, found.faultdriver, found.reached_by,
                    found.clock_offset))
            for line in found.advice:
                self.app.stdout.write('  advice: %s\n' % line)
        return 0


class CloudRestore(_ProfileCommand):
    """Undo what runs on a cloud left (a killed runner's).

    Replays every run's audit log in reverse (computes started again,
    restart policies put back), then clears each host's rules, releases
    its barriers, turns its timer's periodic on and removes its
    start-rules file.  ``cloud check`` then reports clean hosts.
    """

    def take_action(self, parsed_args):
        from faultdriver.cloud import survey
        said = survey.restore(self.profile(parsed_args))
        self.app.stdout.write(''.join(line + '\n' for line in said) or
                              'nothing to restore\n')
        return 0


class CloudInit(command.Command):
    """Write a cloud's profile from its compute API and its computes'
    own status.

    The compute API lists the computes (enabled nova-compute services
    that are up, each with its hypervisor; ``--compute HOST`` picks and
    orders them): the first two become the scenarios' ``src`` and
    ``dest``, each reached at ``--ssh`` (``{host}``: its service host).
    Or each ``--host ALIAS=SSH`` names one.  Each is reached, its
    FaultDriver's status read (its Nova host, nodename and journal),
    checked as ``cloud check`` does and against the compute API; the
    profile is written to ~/.config/faultdriver/clouds/NAME.yaml (or
    --profile PATH).  Without --fault-injection-allowed it says false,
    and runs refuse it until the cloud's owner changes that.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('cloud', metavar='NAME')
        parser.add_argument('--os-cloud', metavar='ENTRY',
                            help="the clouds.yaml entry with admin "
                                 "credentials (default: NAME)")
        parser.add_argument('--clouds-yaml', metavar='FILE')
        parser.add_argument('--ssh-config', metavar='FILE')
        parser.add_argument('--host', action='append', default=[],
                            metavar='ALIAS=SSH',
                            help='a scenario host and its ssh target '
                                 '(repeat: --host src=devstack0a '
                                 '--host dest=devstack0b; default: the '
                                 'computes the compute API lists)')
        parser.add_argument('--compute', action='append', default=[],
                            metavar='HOST',
                            help='of the computes the API lists, this '
                                 'service host (repeat: the first is src, '
                                 'the second dest; default: the first two '
                                 'by name)')
        parser.add_argument('--ssh', default='{host}', metavar='TEMPLATE',
                            help='the ssh target of a listed compute, '
                                 '{host} its service host (default: '
                                 '%(default)s)')
        parser.add_argument('--socket', required=True, metavar='PATH',
                            help='the control socket on each host '
                                 '({host}: a listed compute\'s host, also '
                                 'in --unit, --compute-log, --start-rules)')
        parser.add_argument('--manager', default='systemd',
                            choices=('systemd', 'docker', 'podman',
                                     'stack'))
        parser.add_argument('--unit', default='devstack@n-cpu')
        # Not --log-file: that is cliff's own (the command's log).
        parser.add_argument('--compute-log', metavar='PATH',
                            help="nova-compute's log file on each host "
                                 "(default: journald's records of --unit)")
        parser.add_argument('--start-rules', required=True, metavar='PATH',
                            help="[fault_injection] start_rules_path on "
                                 "each host")
        parser.add_argument('--fault-injection-allowed',
                            action='store_true')
        parser.add_argument('--profile', metavar='PATH')
        return parser

    def take_action(self, parsed_args):
        import os
        import typing

        import yaml

        from faultdriver.cloud import profile as profile_module
        from faultdriver.cloud import survey
        from faultdriver import exception
        targets = {}
        if parsed_args.host and parsed_args.compute:
            raise exception.ScenarioError(
                '--host and --compute: expected one of them (--compute '
                'picks among the computes the API lists)')
        for each in parsed_args.host:
            alias, _, ssh = each.partition('=')
            if not alias or not ssh:
                raise exception.ScenarioError(
                    '--host %s: expected ALIAS=SSH' % each)
            targets[alias] = ssh
        said: list = []
        log = ('file', parsed_args.compute_log) \
            if parsed_args.compute_log \
            else ('journald', parsed_args.unit)
        data = survey.init(
            parsed_args.cloud, parsed_args.os_cloud or parsed_args.cloud,
            targets, parsed_args.socket, parsed_args.manager,
            parsed_args.unit, log, parsed_args.start_rules,
            parsed_args.ssh_config, parsed_args.clouds_yaml,
            parsed_args.fault_injection_allowed, ssh=parsed_args.ssh,
            computes=parsed_args.compute, said=said)
        path = parsed_args.profile or profile_module.path_of(
            parsed_args.cloud)
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, 'w') as f:
            yaml.safe_dump(data, f, sort_keys=False)
        for line in said:
            self.app.stdout.write(line + '\n')
        hosts = typing.cast(dict, data['hosts'])
        self.app.stdout.write('wrote %s: %s\n' % (path, ', '.join(
            '%s=%s' % (alias, host['host'])
            for alias, host in hosts.items())))
        return 0
