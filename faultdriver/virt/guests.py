"""The fake hypervisor's guests, kept on disk so they outlive the process.

A real hypervisor's guests survive a nova-compute crash or restart; Nova
relies on that when it starts (``list_instance_uuids``, ``get_info``) and
when a migration ends on the other host.  :class:`GuestTable` is the
``instances`` mapping of Nova's fake drivers (uuid -> guest with ``name``
and ``state``), written to a JSON file on every change, including a
guest's power state, so no driver method has to remember to save it.
Writes are atomic (temporary file, fsync, rename): a crash leaves the old
table or the new one, never a torn file.
"""

import collections.abc
import json
import os
import tempfile
import threading

VERSION = 1


class Guest:
    """One guest; setting ``state`` saves the table it belongs to.

    Reads like ``nova.virt.fake.FakeInstance`` (attributes and items).
    """

    def __init__(self, table, uuid, name, state):
        self._table = table
        self.uuid = uuid
        self.name = name
        self._state = state

    @property
    def state(self):
        return self._state

    @state.setter
    def state(self, value):
        self._state = value
        self._table.save()

    def __getitem__(self, key):
        return getattr(self, key)

    def __repr__(self):
        return 'Guest(%s, %s, state=%s)' % (self.uuid, self.name, self.state)


class GuestTable(collections.abc.MutableMapping):
    """uuid -> :class:`Guest`, mirrored to ``path``.

    Storing any object with ``name`` and ``state`` records a Guest with
    those values (the stored object itself is not kept).
    """

    def __init__(self, path):
        self.path = path
        self._lock = threading.RLock()
        self._guests = {}
        for record in self._read():
            self._guests[record['uuid']] = Guest(
                self, record['uuid'], record['name'], record['power_state'])

    def _read(self):
        try:
            with open(self.path) as f:
                data = json.load(f)
        except FileNotFoundError:
            return []
        except ValueError as exc:
            raise ValueError('guest table %s is not valid JSON: %s'
                             % (self.path, exc)) from exc
        if data.get('version') != VERSION:
            raise ValueError('guest table %s has version %r, expected %d'
                             % (self.path, data.get('version'), VERSION))
        return data['guests']

    def save(self):
        """Write the table atomically."""
        with self._lock:
            records = [{'uuid': g.uuid, 'name': g.name,
                        'power_state': g.state}
                       for g in self._guests.values()]
            directory = os.path.dirname(self.path) or '.'
            os.makedirs(directory, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=directory, prefix='.guests-')
            try:
                with os.fdopen(fd, 'w') as f:
                    json.dump({'version': VERSION, 'guests': records}, f,
                              indent=1, sort_keys=True)
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(tmp, self.path)
            except BaseException:
                try:
                    os.unlink(tmp)
                except FileNotFoundError:
                    pass
                raise

    def __getitem__(self, uuid):
        return self._guests[uuid]

    def __setitem__(self, uuid, guest):
        with self._lock:
            self._guests[uuid] = Guest(self, uuid, guest.name, guest.state)
            self.save()

    def __delitem__(self, uuid):
        with self._lock:
            del self._guests[uuid]
            self.save()

    def __iter__(self):
        return iter(list(self._guests))

    def __len__(self):
        return len(self._guests)

    def __repr__(self):
        return 'GuestTable(%s, %s)' % (self.path, list(self._guests.values()))
