"""One-shot start rules: rules and tracker fixes for the next start only.

A runner that restarts a compute with rules (a depth-2 case's recovery
rules, a variant's fix) cannot use the control socket: the process is
down when it decides.  It writes ``[fault_injection] start_rules_path``
instead, a JSON object::

    {"run_id": "r-20261206-1",        # required: the run that wrote it
     "deadline": 1796577000.0,        # required: Unix seconds
     "host": "compute-2",             # optional: refused elsewhere
     "rules": ["pre_live_migration@dest: 1*crash"],
     "tracker_patches": ["stale_migration_context"],
     "enabled": true}                 # optional: overrides ``enabled``

FaultDriver reads it once, at driver init: every key checked and every
rule parsed as nova.conf's (a malformed file refuses the start naming
the file and the key, and stays for the operator to see), then the file
is renamed to ``PATH.consumed`` (the record of what the last start
took) before anything is armed.  A later restart by an operator never
re-arms it: the file is gone, and a copy of it put back (same content
as ``PATH.consumed``) or one past its deadline (whose rules are not
even read) is ignored with a WARNING naming it, and removed.  The
rules come after nova.conf's ``rules``, the fixes after its
``tracker_patches``.
"""

import dataclasses
import datetime
import json
import logging
import os
import time

from faultdriver import exception

LOG = logging.getLogger(__name__)

#: Suffix of the record of the file the last start consumed.
CONSUMED = '.consumed'
KEYS = ('run_id', 'deadline', 'host', 'rules', 'tracker_patches',
        'enabled')


@dataclasses.dataclass(frozen=True)
class StartRules:
    """A consumed start-rules file."""

    path: str
    run_id: str
    deadline: float
    rules: tuple = ()
    tracker_patches: tuple = ()
    #: Overrides ``[fault_injection] enabled`` for this start (None:
    #: nova.conf's value).
    enabled: bool | None = None

    def describe(self):
        """What status reports of it."""
        return {'path': self.path, 'run_id': self.run_id,
                'deadline': self.deadline, 'rules': len(self.rules),
                'tracker_patches': list(self.tracker_patches),
                'enabled': self.enabled}


def _when(seconds):
    return datetime.datetime.fromtimestamp(
        seconds, datetime.timezone.utc).isoformat()


def _bad(path, key, expected, found):
    return exception.ConfigError(
        '[fault_injection] start_rules_path %s: key %s: expected %s, got %s'
        % (path, key, expected, found))


def _strings(path, data, key):
    value = data.get(key, [])
    if not isinstance(value, list) or not all(
            isinstance(item, str) and item for item in value):
        raise _bad(path, key, 'a list of non-empty strings',
                   json.dumps(value)[:80])
    return value


class Expired(Exception):
    """The file's deadline has passed (what else it holds is not read)."""


def parse(path, text, parse_rule, host, now=time.time):
    """The :class:`StartRules` ``text`` (the file at ``path``) holds;
    ConfigError naming the file and the key otherwise, Expired past its
    deadline.  ``parse_rule``: nova.conf's rule type; ``host``: this
    nova-compute's."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise exception.ConfigError(
            '[fault_injection] start_rules_path %s: not JSON: %s'
            % (path, exc)) from None
    if not isinstance(data, dict):
        raise _bad(path, '(the file)', 'a JSON object',
                   type(data).__name__)
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise _bad(path, unknown[0], 'one of %s' % ', '.join(KEYS),
                   'an unknown key')
    run_id = data.get('run_id')
    if not isinstance(run_id, str) or not run_id:
        raise _bad(path, 'run_id', 'a non-empty string', json.dumps(run_id))
    deadline = data.get('deadline')
    if isinstance(deadline, bool) or not isinstance(deadline,
                                                    (int, float)):
        raise _bad(path, 'deadline', 'Unix time in seconds (a number)',
                   json.dumps(deadline))
    if deadline < now():
        raise Expired('run %s\'s deadline %s has passed' % (
            run_id, _when(deadline)))
    if 'host' in data and data['host'] != host:
        raise _bad(path, 'host', 'this nova-compute\'s host %s' % host,
                   json.dumps(data['host']))
    enabled = data.get('enabled')
    if enabled is not None and not isinstance(enabled, bool):
        raise _bad(path, 'enabled', 'true or false', json.dumps(enabled))
    rules = []
    for index, text_rule in enumerate(_strings(path, data, 'rules')):
        try:
            rules.append(parse_rule(text_rule))
        except ValueError as exc:
            raise exception.ConfigError(
                '[fault_injection] start_rules_path %s: key rules[%d]: %s'
                % (path, index, exc)) from None
    return StartRules(path, run_id, float(deadline), tuple(rules),
                      tuple(_strings(path, data, 'tracker_patches')),
                      enabled)


def _remove(path, why):
    LOG.warning('faultdriver: ignoring [fault_injection] start_rules_path '
                '%s: %s; removing it', path, why)
    try:
        os.unlink(path)
    except OSError as exc:
        LOG.warning('faultdriver: cannot remove %s: %s', path, exc.strerror)


def read(path, parse_rule, host, check=None, now=time.time):
    """The start rules at ``path``, checked (``check(start_rules)``
    raises ConfigError for what the file names that this start cannot
    take, e.g. an unknown fix) and consumed; None if there are none to
    take (no file, an expired one, one already consumed)."""
    try:
        with open(path, 'rb') as source:
            content = source.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise exception.ConfigError(
            '[fault_injection] start_rules_path %s cannot be read: %s'
            % (path, exc.strerror)) from None
    try:
        with open(path + CONSUMED, 'rb') as record:
            if record.read() == content:
                _remove(path, 'a start consumed this very file already '
                        '(%s%s)' % (path, CONSUMED))
                return None
    except OSError:
        pass
    try:
        found = parse(path, content.decode('utf-8', 'replace'), parse_rule,
                      host, now)
    except Expired as exc:
        _remove(path, str(exc))
        return None
    if check is not None:
        try:
            check(found)
        except exception.ConfigError as exc:
            raise exception.ConfigError(
                '[fault_injection] start_rules_path %s: %s' % (path, exc)
            ) from None
    try:
        os.replace(path, path + CONSUMED)
    except OSError as exc:
        raise exception.ConfigError(
            '[fault_injection] start_rules_path %s cannot be consumed (%s '
            'to %s%s): %s; a later start would arm it again' % (
                path, path, path, CONSUMED, exc.strerror)) from None
    LOG.warning('faultdriver: start rules of run %s taken from %s (until '
                '%s): %d rule(s), tracker fixes: %s', found.run_id, path,
                _when(found.deadline), len(found.rules),
                ', '.join(found.tracker_patches) or 'none')
    return found
