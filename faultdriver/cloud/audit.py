"""Every change a run makes to a host, and its undoing.

A per-run log of JSON lines, kept on the runner's machine: each change
is written (and fsynced) *before* it is made, with the helper call that
undoes it, so a runner killed at any moment leaves a log that
:func:`restore` can replay -- in reverse order, last change first.  A
change the run itself undid (a compute it crashed and then started, a
restart policy it put back) is marked settled and not replayed.

Records::

    {"seq": 3, "time": ..., "host": "devstack0a", "key": "down:devstack@n-cpu",
     "change": "crash devstack@n-cpu", "undo": ["start", "--manager", ...]}
    {"settled": [3], "time": ...}
"""

import json
import os
import time
import typing

from faultdriver.cloud import helper as helper_module

#: A line of the log as read back: JSON, typed Any by name (api.Json).
Json = typing.Any


class Change(typing.TypedDict):
    """One change a run made to a host: its sequence number, when, the
    host (its SSH alias), the key its undoing settles it under, what it
    was, and the helper call (verb and options) that undoes it."""

    seq: int
    time: float
    host: str
    key: str
    change: str
    undo: typing.List[str]


def _change(record: Json) -> Change:
    return {'seq': record['seq'], 'time': record['time'],
            'host': record['host'], 'key': record['key'],
            'change': record['change'], 'undo': record['undo']}


class AuditLog:
    """The audit log at ``path`` (created if absent, appended to)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def _append(self, record: typing.Mapping[str, object]) -> None:
        with open(self.path, 'a') as f:
            f.write(json.dumps(record, sort_keys=True) + '\n')
            f.flush()
            os.fsync(f.fileno())

    def records(self) -> typing.List[Json]:
        try:
            with open(self.path) as f:
                return [json.loads(line) for line in f if line.strip()]
        except FileNotFoundError:
            return []

    def record(self, host: str, key: str, change: str,
               undo: typing.Iterable[str]) -> int:
        """Write a change about to be made; its sequence number."""
        seq: int = 1 + max((r['seq'] for r in self.records() if 'seq' in r),
                           default=0)
        self._append({'seq': seq, 'time': time.time(), 'host': host,
                      'key': key, 'change': change, 'undo': list(undo)})
        return seq

    def settle(self, host: str, key: str) -> typing.List[int]:
        """The open changes of ``host`` under ``key`` are undone."""
        seqs = [r['seq'] for r in self.open() if r['host'] == host and
                r['key'] == key]
        if seqs:
            self._append({'settled': seqs, 'time': time.time()})
        return seqs

    def mark_restored(self, seq: int) -> None:
        """Change ``seq`` was undone by a restore."""
        self._append({'settled': [seq], 'time': time.time(),
                      'restored': True})

    def open(self) -> typing.List[Change]:
        """Changes not undone yet, oldest first."""
        records = self.records()
        settled = {seq for r in records for seq in r.get('settled', ())}
        return [_change(r) for r in records
                if 'seq' in r and r['seq'] not in settled]


def restore(log: AuditLog,
            helper_for: typing.Callable[[str], helper_module.HostHelper]
            ) -> typing.List[Change]:
    """Undo ``log``'s open changes, newest first, each through
    ``helper_for(host)`` (a :class:`~faultdriver.cloud.helper.HostHelper`);
    returns what was undone.  A failing undo raises its HostRefused with
    the changes before it still open, for a later restore."""
    undone = []
    for change in reversed(log.open()):
        helper_for(change['host']).call(*change['undo'])
        log.mark_restored(change['seq'])
        undone.append(change)
    return undone
