"""``faultdriver stack up`` / ``stack down``: a standing cloud for CI.

The process tier's stack with real Keystone, two fake_numa computes
(``compute1`` for the scenarios' ``src``, ``compute2`` for ``dest``)
and a key-only sshd per compute, kept running by a detached supervisor
(:mod:`faultdriver.process.supervisor`).  ``stack up --out DIR`` writes
what a client needs there: ``clouds.yaml`` (entry ``NAME-admin``),
``profile.yaml`` (the cloud tier's profile, ``manager: stack``),
``ssh_config``, ``known_hosts`` and the client key.  Exit 2 when a
stack already runs or the stack does not start (naming why and the
supervisor's log).
"""

from cliff import command

from faultdriver import exception


class StackUp(command.Command):
    """Start a standing cloud (detached) and write its client files."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--out', metavar='DIR', default='.',
                            help='where clouds.yaml, profile.yaml, '
                                 'ssh_config and the client key go '
                                 '(default: here)')
        parser.add_argument('--name', default='faultdriver',
                            help='the cloud\'s name: clouds.yaml entry '
                                 'NAME-admin, ssh aliases NAME-COMPUTE '
                                 '(default: %(default)s)')
        parser.add_argument('--no-keystone', action='store_true',
                            help='no Keystone (nova-api takes the '
                                 'identity from headers; no clouds.yaml)')
        parser.add_argument('--owner', metavar='USER',
                            help='give DIR and its files to USER (who '
                                 'need not read the stack\'s directory)')
        parser.add_argument('--timeout', type=float, default=600,
                            help='seconds to wait for the stack')
        return parser

    def take_action(self, parsed_args):
        from faultdriver.process import supervisor
        try:
            state = supervisor.up(parsed_args.out, parsed_args.name,
                                  not parsed_args.no_keystone,
                                  parsed_args.owner, parsed_args.timeout)
        except supervisor.Refused as exc:
            raise exception.ConfigError(str(exc)) from None
        self.app.stdout.write(
            'standing cloud up in %.1fs (supervisor pid %d); client files '
            'in %s\n' % (state['seconds'], state['pid'], state['out']))
        return 0


class StackDown(command.Command):
    """End the standing cloud and everything it started."""

    def take_action(self, parsed_args):
        from faultdriver.process import supervisor
        ended = supervisor.down()
        self.app.stdout.write('standing cloud down\n' if ended
                              else 'no standing cloud ran\n')
        return 0
