"""Checks of a [fault_injection] section as a whole, before anything
starts: run by FaultDriver at service start and by ``faultdriver
validate``, so a file that validates is one the driver accepts.

Every option is read (oslo.config converts a value only when it is
read, so ``enabled = maybe`` would otherwise pass until first use); the
journal and control socket paths are checked as the journal and the
socket will use them.  Problems are
:class:`~faultdriver.exception.ConfigError` naming the option.
"""

import logging
import os
import re

from oslo_config import cfg

from faultdriver import exception

LOG = logging.getLogger(__name__)


def oslo_message(exc):
    """oslo.config's message without its "Value for option X from
    LocationInfo(...) is not valid:" preamble."""
    return re.sub(r'^Value for option \S+ from .*? is not valid: ', '',
                  str(exc))


def check(group, access=True, host=None):
    """Raise ConfigError for the first problem of ``group`` (the
    registered [fault_injection] options); log a WARNING for what is
    risky but allowed.  ``access``: also whether this process may write
    the journal (false in ``validate``, which may run as another user).
    ``host``: this nova-compute's ``[DEFAULT] host`` (a
    ``periodic(host=...)`` naming it needs no peer socket).  Returns the
    warnings."""
    from faultdriver import conf
    from faultdriver.control import listen
    from faultdriver import journal
    for opt in conf.fault_opts:
        try:
            getattr(group, opt.dest)
        except (ValueError, cfg.Error) as exc:
            raise exception.ConfigError('invalid [fault_injection] %s: %s'
                                        % (opt.name, oslo_message(exc))
                                        ) from None
    if group.journal_path:
        problem = journal.path_problem(group.journal_path, access)
        if problem:
            raise exception.ConfigError('[fault_injection] journal_path %s '
                                        '%s' % (group.journal_path, problem))
    for peer, path in sorted((group.peer_control_sockets or {}).items()):
        if not peer or not path or not os.path.isabs(path):
            raise exception.ConfigError(
                '[fault_injection] peer_control_sockets %s:%s: expected '
                'host:/absolute/path/of/its/control_socket' % (peer, path))
    refuse_unreachable_peers(group.rules or (),
                             group.peer_control_sockets or {}, host)
    warnings = []
    if group.control_socket:
        listen.check_path(group.control_socket)
        warning = listen.parent_warning(group.control_socket)
        if warning:
            warnings.append(warning)
    return warnings


def refuse_unreachable_peers(rules, sockets, host):
    """A ``periodic(host=...)`` naming a host this nova-compute cannot
    reach (not in ``peer_control_sockets``) would only fail when it
    fires: refused before anything starts, naming the rule and the
    option."""
    from faultdriver.actions import periodic
    for rule in rules:
        for term in rule.terms:
            if term.action != periodic.Periodic.name:
                continue
            peer = periodic.Periodic.bind(term).get('host')
            if peer not in (None, host) and peer not in sockets:
                raise exception.ConfigError(
                    'rule [%s]: periodic(host=%s) needs %s\'s control socket'
                    ' in [fault_injection] peer_control_sockets (has: %s)'
                    % (rule, peer, peer, ', '.join(sorted(sockets)) or
                       'none'))
