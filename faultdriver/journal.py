"""The journal: one JSON line per fired fault, on disk before a crash.

A crash must leave evidence of why it happened, so :meth:`Journal.flush`
with ``sync=True`` reaches the disk (fsync) before the process dies.
Entries are also kept in memory for tests and run-time control.

A journal path that cannot be a journal (a directory, a FIFO, a parent
that is a file, not writable) is refused when the journal opens, naming
``[fault_injection] journal_path``.  A write that fails later (disk
full, I/O error) never stands in for the fault: the fault still fires as
written, the entry stays in memory, and the failure is logged as an
ERROR line starting with :data:`MARKER` that names the path.
"""

import collections
import dataclasses
import json
import logging
import os
import stat
import threading
import typing

from faultdriver import exception

LOG = logging.getLogger(__name__)

#: An ERROR line starting with this says a fired fault is not on disk.
MARKER = 'FAULTDRIVER-JOURNAL-ERROR'


#: What a journal entry records.
FAULT = 'fault'         # an action fired at a point (one per firing)
PERIODIC = 'periodic'   # what the ``periodic`` action's run did
SHUTDOWN = 'shutdown'   # the shutdown action's graceful stop began or ended
KINDS = (FAULT, PERIODIC, SHUTDOWN)


@dataclasses.dataclass(frozen=True)
class JournalEntry:
    """One journal line: the one shape of what every engine records, the
    control socket's ``journal`` returns, a crash leaves on disk and a
    scenario report's ``state.faults`` lists.  ``kind`` tells a fired
    fault from a periodic's report; fields a kind does not have stay
    None and are left out of the JSON."""

    kind: str
    time: float
    host: str
    point: str
    phase: str = 'before'
    rule_index: int | None = None
    hit: int | None = None
    # -- a fired fault (kind 'fault')
    rule: str | None = None
    action: str | None = None
    role: str | None = None
    instance: str | None = None
    migration: str | None = None
    operation: str | None = None
    in_periodic: bool | None = None
    # -- a periodic's report (kind 'periodic')
    lock_wait_seconds: float | None = None
    waited_for_lock: bool | None = None
    duration_seconds: float | None = None
    error: str | None = None
    skipped: str | None = None
    #: Whose periodic ran when it is not the hit host's
    #: (``periodic(host=...)``); None: the hit host's own.
    periodic_host: str | None = None
    # -- a graceful stop (kind 'shutdown'; also duration_seconds, error)
    #: 'signalled' (SIGTERM sent: the process's log has the rest),
    #: 'finished' (Service.stop() returned) or 'killed' (kill_after ran
    #: out first, as a service manager's SIGKILL ends a long stop) or
    #: 'start ended' (the embedded Nova: the hit was in the service's
    #: start, which unwinds as a crashed one).
    outcome: str | None = None
    hold_seconds: float | None = None
    kill_after_seconds: float | None = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError('journal entry kind %r; expected one of %s'
                             % (self.kind, ', '.join(KINDS)))
        if (self.kind == FAULT) != (self.action is not None):
            raise ValueError('a journal entry has an action exactly when '
                             'it is a fired fault: %r' % (self,))

    #: The fields of each kind beyond the common ones: a kind's JSON
    #: has them all (None included: a fault may have no instance), and
    #: none of the other kind's.
    _OWN = {FAULT: ('rule', 'action', 'role', 'instance', 'migration',
                    'operation', 'in_periodic'),
            PERIODIC: ('lock_wait_seconds', 'waited_for_lock',
                       'duration_seconds', 'error', 'skipped',
                       'periodic_host'),
            SHUTDOWN: ('outcome', 'hold_seconds', 'kill_after_seconds',
                       'duration_seconds', 'error')}

    def to_json(self) -> 'typing.Dict[str, typing.Any]':
        other = {name for kind, names in self._OWN.items()
                 if kind != self.kind
                 for name in names} - set(self._OWN[self.kind])
        return {name: value for name, value in dataclasses.asdict(
            self).items() if name not in other}

    @classmethod
    def from_json(cls, data: 'typing.Dict[str, typing.Any]'
                  ) -> 'JournalEntry':
        """From ``to_json``'s dict; unknown keys are refused by name.
        Reads the shape journals and reports had before ``kind`` too (a
        periodic's report said ``event: periodic``), so saved runs still
        render."""
        if 'kind' not in data:
            data = dict(data)
            data['kind'] = data.pop('event', FAULT)
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ValueError('journal entry with unknown keys %s: %r'
                             % (', '.join(unknown), data))
        return cls(**data)


def path_problem(path, access=True):
    """Why ``path`` cannot be a journal file, or None.  With ``access``
    also whether this process may create or append to it."""
    path = os.path.abspath(path)
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = None
    except OSError as exc:
        return 'cannot be examined: %s' % exc.strerror
    if mode is not None:
        if stat.S_ISDIR(mode):
            return 'is a directory; expected a file name'
        if not (stat.S_ISREG(mode) or stat.S_ISCHR(mode)):
            return 'exists and is not a regular file'
        if access and not os.access(path, os.W_OK):
            return 'is not writable by uid %d' % os.getuid()
        return None
    parent = os.path.dirname(path)
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        return '%s is not a directory' % parent
    if access and not os.access(parent, os.W_OK | os.X_OK):
        return 'directory %s is not writable by uid %d' % (parent,
                                                           os.getuid())
    return None


def _open(path):
    problem = path_problem(path)
    if problem:
        raise exception.ConfigError('[fault_injection] journal_path %s %s'
                                    % (path, problem))
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        # Unbuffered: a write that fails leaves nothing half-buffered to
        # fail again, and a line is in the file once record() returns.
        return open(path, 'ab', buffering=0)
    except OSError as exc:
        raise exception.ConfigError('[fault_injection] journal_path %s '
                                    'cannot be opened for appending: %s'
                                    % (path, exc.strerror or exc))


class Journal:
    """Append-only record of fired faults, optionally backed by a file."""

    def __init__(self, path: typing.Optional[str] = None,
                 keep: int = 10000) -> None:
        self.path = path
        #: The last write failure (text), None while every write worked.
        self.error: typing.Optional[str] = None
        self._entries: collections.deque[typing.Dict[str, typing.Any]] = \
            collections.deque(maxlen=keep)
        self._lock = threading.Lock()
        self._file = _open(path) if path else None

    def record(self, entry: 'JournalEntry') -> None:
        """Keep JournalEntry ``entry`` (as its JSON dict); append it to
        the file.  Never raises for the file: a failure is logged (see the
        module's docstring)."""
        if not isinstance(entry, JournalEntry):
            raise TypeError('journal entries are JournalEntry, not %r'
                            % (entry,))
        data = entry.to_json()
        line = (json.dumps(data, sort_keys=True, default=str) +
                '\n').encode('utf-8')
        with self._lock:
            self._entries.append(data)
            if self._file is not None:
                try:
                    view = memoryview(line)
                    while view:
                        view = view[self._file.write(view):]
                except (OSError, ValueError) as exc:
                    self._failed('could not append a fired fault', exc,
                                 line)

    def entries(self) -> typing.List[typing.Dict[str, typing.Any]]:
        with self._lock:
            return list(self._entries)

    def flush(self, sync=False):
        """Lines are written at once; ``sync`` makes them reach the disk.
        A failing sync is logged, never raised (a crash must go on)."""
        with self._lock:
            if self._file is not None and sync:
                try:
                    os.fsync(self._file.fileno())
                except OSError as exc:
                    self._failed('could not sync to disk', exc)

    def _failed(self, what, exc, line=b''):
        self.error = '%s: %s' % (what, exc)
        LOG.error('%s journal_path=%s: %s (%s); the fault fires anyway%s',
                  MARKER, self.path, what, exc,
                  ('; entry: %s' % line.decode('utf-8').strip())
                  if line else '')

    def close(self):
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


def read(path: str) -> typing.List[typing.Dict[str, typing.Any]]:
    """Entries of a journal file, oldest first.  A line that is not a
    JSON object (cut short by a full disk) is skipped and logged."""
    entries = []
    with open(path, encoding='utf-8', errors='replace') as stream:
        for number, line in enumerate(stream, 1):
            if not line.strip():
                continue
            try:
                entry = JournalEntry.from_json(json.loads(line)).to_json()
            except (ValueError, TypeError, RecursionError,
                    AttributeError):
                LOG.warning('journal %s line %d is not a journal entry; '
                            'skipped', path, number)
                continue
            entries.append(entry)
    return entries
