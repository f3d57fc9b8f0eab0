"""Commands of the cloud tier built so far: ``faultdriver ctl relay``
(on a compute) and ``faultdriver cloud reach`` (on the runner).

Exit codes as every command's: 2 when the host refuses (naming it and
the fact: host down or unreachable, key refused, socket absent) or
nothing listens at the socket.
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
