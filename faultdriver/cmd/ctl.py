"""``faultdriver ctl``: control a running FaultDriver through its socket.

Every command takes ``--socket PATH`` (default ``$FAULTDRIVER_SOCKET``),
the ``[fault_injection] control_socket`` of the nova-compute to control.
Exit codes: 0 done; 1 ``wait`` timed out; 2 the request was refused
(bad rule, unknown point or index) or nothing listens at the socket;
3 internal error.
"""

import argparse
import datetime
import json
import os

from cliff import lister
from cliff import show

from faultdriver.actions import base as action_base
from faultdriver import rules

ENV_SOCKET = 'FAULTDRIVER_SOCKET'


def seconds(text):
    """A ``--timeout``, written as a rule's seconds are
    (:func:`faultdriver.actions.base.seconds`: digits, 0 to a day, the
    server's own range), refused by the parser (exit 2) otherwise, before
    a socket is given a timeout it cannot take."""
    try:
        return action_base.seconds(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            'expected seconds from 0 to 86400, not %r' % text) from None


class _Control:
    """Mixin: the ``--socket`` option and a client for it."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        default = os.environ.get(ENV_SOCKET)
        parser.add_argument(
            '--socket', metavar='PATH', default=default,
            required=default is None,
            help='control socket of the nova-compute ([fault_injection] '
                 'control_socket; default $%s)' % ENV_SOCKET)
        return parser

    def client(self, parsed_args):
        from faultdriver.control import client
        return client.Client(parsed_args.socket)


class _ShowResult(_Control, show.ShowOne):
    """A command that sends one request and shows its result's fields."""

    op = None

    def request(self, parsed_args):
        return {}

    def take_action(self, parsed_args):
        result = self.client(parsed_args).request(
            self.op, **self.request(parsed_args))
        return tuple(zip(*sorted(result.items()))) or ((), ())


def _shown(value):
    """A nested field of an answer as one table cell."""
    if isinstance(value, dict):
        return '\n'.join('%s=%s' % (k, _shown(v))
                         for k, v in sorted(value.items()))
    if isinstance(value, list):
        return ', '.join(str(item) for item in value)
    return value


class CtlStatus(_Control, show.ShowOne):
    """Show the host and its nova-compute's facts a runner needs.

    The host (CONF.host), nodenames, pid, Nova and faultdriver versions,
    the injection switch, rule count and held barriers, the journal,
    nova.conf's timings and CPU sets (settings), the tracker fixes
    loaded, whether the RPC servers started (rpc_started), whether the
    timer runs the resource periodic, the start rules this start took
    and the server's clock (time, Unix seconds).
    """

    def take_action(self, parsed_args):
        result = self.client(parsed_args).status()
        result['held'] = ', '.join(
            '%s=%d' % item for item in sorted(result['held'].items()))
        return tuple(zip(*sorted((k, _shown(v)) for k, v in result.items())))


class CtlPoints(_Control, lister.Lister):
    """List the injection points and whether each is armed."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--armed', action='store_true',
                            help='only points with rules or waiters')
        return parser

    def take_action(self, parsed_args):
        rows = [(p['name'], p['kind'], ','.join(p['roles']) or 'any',
                 ','.join(p['operations']) or '-',
                 'yes' if p['tracker_lock'] else 'no',
                 'yes' if p['armed'] else 'no')
                for p in self.client(parsed_args).points()
                if p['armed'] or not parsed_args.armed]
        return ('Point', 'Kind', 'Roles', 'Operations', 'Tracker lock',
                'Armed'), rows


class CtlRules(_Control, lister.Lister):
    """List the installed rules with their counters."""

    def take_action(self, parsed_args):
        rows = [(r['index'], r['rule'], r['hits'], r['fired'],
                 r['exhausted']) for r in self.client(parsed_args).rules()]
        return ('Index', 'Rule', 'Hits', 'Fired', 'Exhausted'), rows


class CtlCounters(_Control, lister.Lister):
    """List how often each armed point was hit."""

    def take_action(self, parsed_args):
        counters = self.client(parsed_args).counters()
        return ('Point', 'Hits'), sorted(counters.items())


class CtlTasks(_Control, lister.Lister):
    """List the tasks the compute manager tracks for its graceful stop.

    A graceful stop (SIGTERM) waits for each of them, up to
    manager_shutdown_timeout less 20 s.  A task listed with no move or
    call under way is tracked for good (a destination whose source died
    mid-move: doc/findings.rst F19) and the next stop waits it out.
    """

    def take_action(self, parsed_args):
        rows = [(t['name'], t['instance_uuid'])
                for t in self.client(parsed_args).tasks()]
        return ('Task', 'Instance'), rows


class CtlAdd(_ShowResult):
    """Add a rule, in nova.conf's grammar (a wrong one changes nothing).

    Exit code 2 and a message naming the rule if it does not parse or
    validate.
    """

    op = 'add'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('rule', metavar='RULE')
        return parser

    def request(self, parsed_args):
        return {'rule': parsed_args.rule}

    def take_action(self, parsed_args):
        names, values = super().take_action(parsed_args)
        return names, tuple('\n'.join(v) if isinstance(v, list) else v
                            for v in values)


class CtlRemove(_ShowResult):
    """Remove the rule with this index (ctl rules shows it)."""

    op = 'remove'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('index', metavar='INDEX', type=int)
        return parser

    def request(self, parsed_args):
        return {'index': parsed_args.index}


class CtlClear(_ShowResult):
    """Remove every rule (their counters go with them)."""

    op = 'clear'


class CtlEnable(_ShowResult):
    """Turn injection on: rules fire."""

    op = 'enable'


class CtlDisable(_ShowResult):
    """Turn injection off: no rule fires; held threads stay held."""

    op = 'disable'


class CtlRelease(_ShowResult):
    """Release the threads held by hang at a barrier (or at all)."""

    op = 'release'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        which = parser.add_mutually_exclusive_group(required=True)
        which.add_argument('name', metavar='BARRIER', nargs='?')
        which.add_argument('--all', action='store_true',
                           help='release every barrier')
        return parser

    def request(self, parsed_args):
        return {'name': None if parsed_args.all else parsed_args.name}


class CtlPeriodic(_ShowResult):
    """Run the host's resource-tracker periodic now; exit 1 if it does
    not end within the timeout.

    The periodic nova-compute runs every update_resources_interval
    seconds, run once at the moment you choose (a failing node's error
    is in nova-compute's log, as for the timer's run).
    """

    op = 'periodic'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--timeout', type=seconds, default=60.0,
                            help='seconds (default 60)')
        return parser

    def take_action(self, parsed_args):
        result = self.client(parsed_args).periodic(parsed_args.timeout)
        return tuple(zip(*sorted(result.items())))


class CtlPinning(_Control, show.ShowOne):
    """Show the pCPUs a compute node record holds as pinned.

    This host's by default; with --host another's, read through the
    conductor as nova-compute reads every record (it answers for a host
    that is down).  No API shows them.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--host', help="another compute's host "
                            '(CONF.host; default this one)')
        parser.add_argument('--nodename',
                            help='only this node of the host')
        return parser

    def take_action(self, parsed_args):
        result = self.client(parsed_args).pinning(parsed_args.host,
                                                  parsed_args.nodename)
        return tuple(zip(*sorted((k, _shown(v)) for k, v in result.items())))


class CtlTimer(_Control, show.ShowOne):
    """Show, or switch, whether the timer runs the resource periodic.

    on and off take effect at the timer's next tick, without a restart
    (update_resources_interval = -1 needs one, and a periodic never on
    the timer cannot go on: exit 2).  ctl periodic runs one meanwhile.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('state', nargs='?', choices=('on', 'off'),
                            help='switch it (default: only show)')
        return parser

    def take_action(self, parsed_args):
        on = None if parsed_args.state is None else parsed_args.state == 'on'
        result = self.client(parsed_args).timer(on)
        return tuple(zip(*sorted(result.items())))


class CtlWait(_Control, show.ShowOne):
    """Wait until a point is hit; exit 1 if it is not within the timeout.

    Hits count from when the point was first armed (by a rule or by the
    first wait for it).
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('point', metavar='POINT')
        parser.add_argument('--count', type=int, default=1,
                            help='hits to wait for (default 1)')
        parser.add_argument('--phase', choices=rules.PHASES,
                            default='before')
        parser.add_argument('--timeout', type=seconds, default=60.0,
                            help='seconds (default 60)')
        return parser

    def take_action(self, parsed_args):
        hits = self.client(parsed_args).wait(
            parsed_args.point, parsed_args.count, parsed_args.timeout,
            parsed_args.phase)
        return ('point', 'phase', 'hits'), (
            parsed_args.point, parsed_args.phase, hits)


class CtlJournal(_Control, lister.Lister):
    """List the fired faults (and periodic reports), oldest first."""

    COLUMNS = ('time', 'point', 'phase', 'rule_index', 'hit', 'action',
               'role', 'instance', 'migration', 'operation')

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--last', type=int, metavar='N',
                            help='only the newest N entries')
        return parser

    def take_action(self, parsed_args):
        rows = []
        for entry in self.client(parsed_args).journal(parsed_args.last):
            row = [entry.get(c) for c in self.COLUMNS]
            if row[0] is not None:
                row[0] = datetime.datetime.fromtimestamp(
                    row[0], datetime.timezone.utc).isoformat()
            row[5] = row[5] or entry['kind']
            rest = {k: v for k, v in entry.items()
                    if k not in self.COLUMNS + ('kind', 'host', 'rule')}
            rows.append(row + [entry.get('rule'),
                               json.dumps(rest, sort_keys=True)
                               if rest else ''])
        return ([c.replace('_', ' ').capitalize() for c in self.COLUMNS]
                + ['Rule', 'Details'], rows)
