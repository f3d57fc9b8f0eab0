"""The journal: one JSON line per fired fault, on disk before a crash.

A crash must leave evidence of why it happened, so :meth:`Journal.flush`
with ``sync=True`` reaches the disk (fsync) before the process dies.
Entries are also kept in memory for tests and run-time control.
"""

import collections
import json
import os
import threading


class Journal:
    """Append-only record of fired faults, optionally backed by a file."""

    def __init__(self, path=None, keep=10000):
        self.path = path
        self._entries = collections.deque(maxlen=keep)
        self._lock = threading.Lock()
        self._file = None
        if path:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            self._file = open(path, 'a', encoding='utf-8')

    def record(self, entry):
        line = json.dumps(entry, sort_keys=True, default=str)
        with self._lock:
            self._entries.append(entry)
            if self._file is not None:
                self._file.write(line + '\n')
                self._file.flush()

    def entries(self):
        with self._lock:
            return list(self._entries)

    def flush(self, sync=False):
        with self._lock:
            if self._file is not None:
                self._file.flush()
                if sync:
                    os.fsync(self._file.fileno())

    def close(self):
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


def read(path):
    """Entries of a journal file, oldest first."""
    with open(path, encoding='utf-8') as stream:
        return [json.loads(line) for line in stream if line.strip()]
