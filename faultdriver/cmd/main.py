"""The ``faultdriver`` command (cliff application).

Exit codes: 0 success (for ``scenario run``: every expectation met);
1 expectations not met (for ``ctl wait``: the point was not hit in
time); 2 bad input (rule, config, scenario, a request the control
socket refused, no control server at the socket) or a prerequisite of
the process or libvirt tier missing on this machine; 3 internal error.
"""

import sys
import warnings

from cliff import app
from cliff import commandmanager
from cliff import help as cliff_help

from faultdriver.cloud import errors as cloud_errors
from faultdriver.control import protocol
from faultdriver import exception
from faultdriver import rules

EXIT_OK = 0
EXIT_EXPECTATION = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3


class GroupHelp(cliff_help.HelpCommand):
    """print detailed help for another command, or list a group's"""

    def take_action(self, parsed_args):
        group = ' '.join(parsed_args.cmd)
        members = sorted(
            (name, factory) for name, factory in self.app.command_manager
            if name.startswith(group + ' ')) if group else []
        if not members or group in dict(self.app.command_manager):
            return super().take_action(parsed_args)
        # ``faultdriver scenario --help``: cliff printed the names only.
        self.app.stdout.write('faultdriver %s: one of these commands '
                              '(faultdriver %s COMMAND --help for '
                              'its options)\n' % (group, group))
        width = max(len(name) for name, _ in members)
        for name, entry in members:
            text = ' '.join((entry.load().__doc__ or '').strip().split(
                '\n\n')[0].split())
            end = text.find('. ')
            self.app.stdout.write('  %-*s  %s\n' % (
                width, name, text if end < 0 else text[:end + 1]))
        return 0


class FaultDriverApp(app.App):

    def __init__(self):
        super().__init__(
            description='Fault injection for OpenStack Nova compute.',
            version='faultdriver',
            command_manager=commandmanager.CommandManager('faultdriver.cli'),
            deferred_help=True)
        # A group's --help lists its commands with what each does.
        self.command_manager.add_command('help', GroupHelp)

    def clean_up(self, cmd, result, err):
        self.last_error = err

    def run_subcommand(self, argv):
        self.last_error = None
        result = super().run_subcommand(argv)
        if isinstance(self.last_error, BAD_INPUT):
            return EXIT_BAD_INPUT
        if isinstance(self.last_error, NOT_MET):
            return EXIT_EXPECTATION
        if self.last_error is not None:
            return EXIT_INTERNAL
        return result


#: Errors that mean the user's input was wrong, or this machine lacks
#: what the command needs (exit code 2).
BAD_INPUT = (exception.ConfigError, exception.ScenarioError,
             exception.MissingPrerequisite, rules.RuleError,
             protocol.RequestRejected, protocol.Unreachable,
             cloud_errors.HostRefused)
#: Errors that mean something expected did not happen (exit code 1).
NOT_MET = (protocol.WaitTimeout,)


def main(argv=None):
    # Nova's imports pull in eventlet and deprecated modules, which warn
    # on import; a command line tool has no use for that noise.
    warnings.simplefilter('ignore')
    argv = sys.argv[1:] if argv is None else argv
    return FaultDriverApp().run(argv)


if __name__ == '__main__':
    sys.exit(main())
