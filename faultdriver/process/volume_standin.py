"""The block-storage stand-in: volumes and their attachments (Cinder's
v3 attachments API, microversion 3.44, which is what Nova 34 calls).

A move moves a volume's attachment: dest's ``pre_live_migration``
creates one with dest's connector, the source's ``_post_live_migration``
deletes the old one, dest completes the new one; a rollback deletes
dest's.  A fault between those calls can leave a volume attached to two
hosts or to none.  The stand-in keeps volumes and attachments in memory,
answers as Cinder does for the calls Nova makes, and
:meth:`BlockStorage.attachments` gives the scenario's
``volume-attachments`` invariant what it reads.

An attachment is ``reserved`` (no connector yet), ``attaching`` (a
connector: the host that connects it) or ``attached`` (completed); the
volume is ``in-use`` while one is attached, ``attaching`` or
``reserved`` while one exists, else ``available`` (``detaching`` from
the API's begin-detaching to the attachment's deletion).  Each volume's
connection is ``local`` with a ``device_path`` of its own: on the
process tier a file under the stack's directory (``fake_numa`` opens
nothing); on the libvirt tier a loop device over that file (Nova's
libvirt driver gives a ``local`` volume to QEMU as a block device, which
QEMU refuses to open on a regular file), the same path on every host, as
a SAN's device would be.  A volume a server boots from is created from
the image (its content written first, as Cinder's create-from-image),
so a real guest boots from it.  A volume is also created (``POST
/volumes``, from the image when the request names one) and deleted
(refused while it has an attachment, as Cinder refuses) through the
API: what the cloud tier does as a user would, against ``faultdriver
stack up``.

Not modelled: volume types, backends and their capacity, multiattach
(a second server's attachment is refused, as for a volume that does not
allow it), snapshots, encryption, extend, retype and volume migration,
the ``os-attach``/``os-reserve`` action API of microversions before 3.44.
"""

import copy
import os
import subprocess
import threading
import typing
import urllib.parse
import uuid

from faultdriver.process import servicefaults
from faultdriver.process import standins

MAX_VERSION = '3.70'
SIZE_GB = 1


#: A volume or an attachment as the stand-in keeps it (Cinder's view,
#: JSON: any value by key).
Record = dict[str, standins.Json]
Answer = servicefaults.Answer


class AttachmentView(typing.TypedDict):
    """One attachment of a server (:meth:`BlockStorage.attachments`):
    ``host`` is its connector's, None while reserved."""

    id: str
    host: typing.Optional[str]
    status: str


def _error(status: int, kind: str, message: str) -> Answer:
    return status, {kind: {'code': status, 'message': message}}


class BlockStorage:
    """The stand-in's state and its HTTP answers (:meth:`route`)."""

    def __init__(self, directory: str, block_devices: bool = False) -> None:
        #: Where each volume's device file lives.
        self.directory = directory
        #: Each volume gets a loop device over its file (real guests).
        self.block_devices = block_devices
        self._lock = threading.Lock()
        self._volumes: dict[str, Record] = {}        # volume id -> volume
        # attachment id -> attachment
        self._attachments: dict[str, Record] = {}

    # -- what the backend does as an operator, and what invariants read ----

    def create_volume(self, name: str = 'faultdriver-volume',
                      image: typing.Optional[bytes] = None) -> str:
        """A new ``available`` volume, as ``openstack volume create``
        makes one (with ``image``, the image's bytes, from that image);
        returns its id."""
        volume_id = str(uuid.uuid4())
        path = os.path.join(self.directory, 'volume-%s' % volume_id)
        os.makedirs(self.directory, exist_ok=True)
        with open(path, 'wb') as f:
            if image:
                f.write(image)
            f.truncate(SIZE_GB * 1024 ** 3)
        if self.block_devices:
            path = attach_loop(path)
        with self._lock:
            self._volumes[volume_id] = {
                'id': volume_id, 'name': name, 'description': None,
                'size': SIZE_GB, 'availability_zone': 'nova',
                'created_at': '2026-01-01T00:00:00.000000',
                'bootable': 'true', 'volume_type': None,
                'snapshot_id': None, 'metadata': {}, 'multiattach': False,
                'shared_targets': False, 'service_uuid': None,
                'migration_status': None, 'encrypted': False,
                'device_path': path, 'detaching': False}
        return volume_id

    def attachments(self, server_id: str
                    ) -> dict[str, list[AttachmentView]]:
        """``{volume id: [{'id', 'host', 'status'}]}``: the attachments
        of the server (``host``: the connector's, None while reserved)."""
        with self._lock:
            found: dict[str, list[AttachmentView]] = {}
            for attachment in self._attachments.values():
                if attachment['instance'] == server_id:
                    found.setdefault(attachment['volume_id'], []).append({
                        'id': attachment['id'],
                        'host': (attachment['connector'] or {}).get('host'),
                        'status': attachment['attach_status']})
            return found

    def device_path(self, volume_id: str) -> str:
        """The path a host opens for the volume (the loop device on the
        libvirt tier)."""
        with self._lock:
            path: str = self._volumes[volume_id]['device_path']
            return path

    def volume_status(self, volume_id: str) -> str:
        with self._lock:
            return self._status(volume_id)

    # -- HTTP -------------------------------------------------------------

    def route(self, environ: standins.Environ) -> Answer:
        method = environ['REQUEST_METHOD']
        path = environ['PATH_INFO'].rstrip('/')
        parts = path.split('/')[1:]
        query = urllib.parse.parse_qs(environ.get('QUERY_STRING', ''))
        if not parts or parts == ['']:
            base = 'http://%s' % environ['HTTP_HOST']
            return 300, {'versions': [{
                'id': 'v3.0', 'status': 'CURRENT', 'version': MAX_VERSION,
                'min_version': '3.0', 'updated': '2026-01-01T00:00:00Z',
                'links': [{'rel': 'self', 'href': base + '/v3/'}]}]}
        # /v3/PROJECT/KIND[/ID[/action]]
        if parts[0] != 'v3' or len(parts) < 3:
            return _error(404, 'itemNotFound', 'no such path %s' % path)
        kind, rest = parts[2], parts[3:]
        body = standins.request_body(environ)
        if kind == 'volumes' and method == 'POST' and not rest:
            # A volume created through the API (a cloud tier's run
            # against this stack): outside the lock, which
            # create_volume takes.
            request = body.get('volume') or {}
            volume_id = self.create_volume(
                name=request.get('name') or 'faultdriver-volume',
                image=standins.image_bytes() if request.get('imageRef')
                else None)
            with self._lock:
                return 202, {'volume': self._shown(volume_id)}
        with self._lock:
            if kind == 'volumes':
                return self._volumes_answer(method, rest, body)
            if kind == 'attachments':
                return self._attachments_answer(method, rest, query, body)
        return _error(404, 'itemNotFound', 'not modelled: %s %s' % (
            method, path))

    def _volumes_answer(self, method: str, rest: list[str],
                        body: standins.Json) -> Answer:
        if not rest or rest == ['detail']:
            return 200, {'volumes': [self._shown(v) for v in
                                     self._volumes]}
        volume = self._volumes.get(rest[0])
        if volume is None:
            return _error(404, 'itemNotFound', 'Volume %s could not be '
                          'found.' % rest[0])
        if method == 'DELETE' and not rest[1:]:
            if any(a['volume_id'] == rest[0]
                   for a in self._attachments.values()):
                return _error(400, 'badRequest', 'Invalid volume: Volume '
                              'status must be available or error or '
                              'error_restoring or error_extending or '
                              'error_managing and must not be migrating, '
                              'attached, belong to a group, have snapshots, '
                              'awaiting a transfer, or be disassociated from '
                              'snapshots after volume transfer.')
            # Its file (or loop device) goes with the stack's directory.
            del self._volumes[rest[0]]
            return 202, None
        if method == 'POST' and rest[1:] == ['action']:
            # The API's detach marks the volume first, and unmarks it if
            # the detach cannot go on.
            for action, detaching in (('os-begin_detaching', True),
                                      ('os-roll_detaching', False)):
                if action in body:
                    volume['detaching'] = detaching
                    return 202, None
            return _error(400, 'badRequest', 'not modelled: %s' % body)
        return 200, {'volume': self._shown(rest[0])}

    def _attachments_answer(self, method: str, rest: list[str],
                            query: dict[str, list[str]],
                            body: standins.Json) -> Answer:
        if not rest or rest == ['detail']:
            if method == 'POST':
                return self._create(body['attachment'])
            # Cinder's list view (``status`` the attach status);
            # ``all_tenants`` filters nothing here (one project).
            return 200, {'attachments': [
                dict(copy.deepcopy(a), status=a['attach_status'])
                for a in self._attachments.values()
                if all(a.get({'instance_id': 'instance'}.get(k, k)) in v
                       for k, v in query.items() if k != 'all_tenants')]}
        attachment = self._attachments.get(rest[0])
        if attachment is None:
            return _error(404, 'itemNotFound', 'Attachment %s could not be '
                          'found.' % rest[0])
        if method == 'PUT':
            connector = body['attachment']['connector']
            attachment.update(
                connector=connector, attach_status='attaching',
                connection_info=self._connection(attachment, connector))
        elif method == 'POST' and rest[1:] == ['action']:
            if 'os-complete' not in body:
                return _error(400, 'badRequest', 'not modelled: %s' % body)
            attachment.update(attach_status='attached',
                              attached_at='2026-01-01T00:00:00.000000')
            return 204, None
        elif method == 'DELETE':
            del self._attachments[attachment['id']]
            volume = self._volumes[attachment['volume_id']]
            volume['detaching'] = volume['detaching'] and any(
                a['volume_id'] == volume['id']
                for a in self._attachments.values())
            return 200, {}
        return 200, {'attachment': copy.deepcopy(attachment)}

    # -- state changes -----------------------------------------------------

    def _create(self, request: standins.Json) -> Answer:
        volume_id: str = request['volume_uuid']
        if volume_id not in self._volumes:
            return _error(404, 'itemNotFound', 'Volume %s could not be '
                          'found.' % volume_id)
        others = {a['instance'] for a in self._attachments.values()
                  if a['volume_id'] == volume_id}
        if others - {request['instance_uuid']}:
            return _error(400, 'badRequest', 'Invalid volume: volume %s '
                          'is attached to another server and does not allow '
                          'multiattach.' % volume_id)
        attachment: Record = {'id': str(uuid.uuid4()), 'volume_id': volume_id,
                      'instance': request['instance_uuid'],
                      'attach_mode': request.get('mode') or 'rw',
                      'attached_at': None, 'detached_at': None,
                      'connector': None, 'connection_info': {},
                      'attach_status': 'reserved'}
        connector = request.get('connector')
        if connector:
            attachment.update(
                connector=connector, attach_status='attaching',
                connection_info=self._connection(attachment, connector))
        self._attachments[attachment['id']] = attachment
        return 200, {'attachment': copy.deepcopy(attachment)}

    def _connection(self, attachment: Record,
                    connector: standins.Json) -> Record:
        """Cinder's attachment ``connection_info``: flat (Nova's
        ``_translate_attachment_ref`` moves all but the type and the
        attachment id under ``data``, where the libvirt driver reads
        ``device_path``)."""
        volume = self._volumes[attachment['volume_id']]
        return {'driver_volume_type': 'local',
                'device_path': volume['device_path'],
                'volume_id': volume['id'],
                'attachment_id': attachment['id']}

    def _status(self, volume_id: str) -> str:
        states = {a['attach_status'] for a in self._attachments.values()
                  if a['volume_id'] == volume_id}
        if states and self._volumes[volume_id]['detaching']:
            return 'detaching'
        for state, shown in (('attached', 'in-use'),
                             ('attaching', 'attaching'),
                             ('reserved', 'reserved')):
            if state in states:
                return shown
        return 'available'

    def _shown(self, volume_id: str) -> Record:
        volume = copy.deepcopy(self._volumes[volume_id])
        volume['status'] = self._status(volume_id)
        volume['attachments'] = [
            {'attachment_id': a['id'], 'server_id': a['instance'],
             'volume_id': volume_id, 'id': volume_id,
             'host_name': (a['connector'] or {}).get('host'),
             'device': (a['connector'] or {}).get('mountpoint')}
            for a in self._attachments.values()
            if a['volume_id'] == volume_id and
            a['attach_status'] == 'attached']
        del volume['device_path'], volume['detaching']
        return volume


def attach_loop(path: str) -> str:
    """A loop device over the file ``path``: its device path.  Fails
    loudly (no loop device free, no permission: the libvirt tier runs as
    root)."""
    done = subprocess.run(['losetup', '--find', '--show', path],
                          capture_output=True, text=True)
    if done.returncode or not done.stdout.strip():
        raise RuntimeError('block-storage stand-in: losetup --find --show '
                           '%s failed (exit %d): %s' % (
                               path, done.returncode,
                               done.stderr.strip() or done.stdout.strip()))
    return done.stdout.strip()


def detach_loops(directory: str) -> list[str]:
    """Detach every loop device whose file is under ``directory`` (the
    stack's teardown, and its guardian's when the runner was killed);
    returns their names.  Before the files are removed: a deleted
    file's loop device would stay until reboot."""
    try:
        done = subprocess.run(['losetup', '--list', '--noheadings', '--raw',
                               '--output', 'NAME,BACK-FILE'],
                              capture_output=True, text=True)
    except FileNotFoundError:
        # No losetup (a process-tier machine): no volume had a loop
        # device (the libvirt tier refuses to start without it).
        return []
    prefix = os.path.join(os.path.abspath(directory), '')
    detached: list[str] = []
    for line in done.stdout.splitlines():
        name, _, back = line.partition(' ')
        if back.startswith(prefix):
            subprocess.run(['losetup', '--detach', name],
                           capture_output=True)
            detached.append(name)
    return detached
