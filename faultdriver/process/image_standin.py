"""The image stand-in: Glance's v2 images API as Nova 34 uses it.

Why it keeps state: shelving a server makes an image (nova-api's
``POST /v2/images``; the libvirt driver's snapshot then ``PATCH``\\ es
its properties and ``PUT``\\ s its data), unshelving reads it (the
conductor's ``GET``, real libvirt downloads its ``file``) and deletes it
(the compute's ``DELETE``).  An unshelve of an image that was never made
or already deleted must fail as it does against Glance (a 404), so the
stand-in remembers what was created and deleted.

The image every server boots from (:data:`standins.IMAGE`) is always
there; an id never created is answered as that image with the id asked
for, as the stateless stand-in always did (Nova asks only for ids it was
given).  Not modelled: image members, tags, locations, import, stores,
quotas, listing filters.
"""

import json
import threading
import uuid

from faultdriver.process import servicefaults
from faultdriver.process import standins

#: Content type of a JSON-patch request (glanceclient's ``update``).
PATCH = 'application/openstack-images-v2.1-json-patch'
#: What Glance sets itself; a create or patch may not.
READ_ONLY = ('id', 'status', 'size', 'checksum', 'created_at',
             'updated_at', 'file', 'schema', 'virtual_size')


#: An image as Glance's v2 API shows it (JSON: any value by key).
Image = dict[str, standins.Json]
Answer = servicefaults.Answer


def _error(status: int, message: str) -> Answer:
    return status, {'code': status, 'message': message}


class Images:
    """The images made since the stand-in started and their data; its
    HTTP answers are :meth:`route`'s."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._images: dict[str, Image] = {}     # id -> Glance's v2 view
        self._data: dict[str, bytes] = {}       # id -> bytes uploaded
        self._deleted: set[str] = set()

    def created(self) -> dict[str, Image]:
        """``{id: image}`` of the images made and not deleted (tests,
        and what a run's cleanup could look at)."""
        with self._lock:
            return {k: dict(v) for k, v in self._images.items()}

    def route(self, environ: standins.Environ) -> Answer:
        method = environ['REQUEST_METHOD']
        path = environ['PATH_INFO'].rstrip('/')
        base = 'http://%s' % environ['HTTP_HOST']
        if path in ('', '/versions'):
            return 300, standins.versions(base, 'v2.1', 'v2')
        if path == '/v2/schemas/image':
            return 200, standins.IMAGE_SCHEMA
        parts = path.split('/')[1:]
        if parts[:2] != ['v2', 'images']:
            return _error(404, 'no such image path %s' % path)
        with self._lock:
            if len(parts) == 2:
                return self._collection(method, environ)
            image_id, rest = parts[2], parts[3:]
            if rest == ['file']:
                return self._file(method, image_id, environ)
            if not rest:
                return self._one(method, image_id, environ)
        return _error(404, 'not modelled: %s %s' % (method, path))

    def _collection(self, method: str, environ: standins.Environ) -> Answer:
        if method == 'GET':
            return 200, {'images': [standins.IMAGE] + list(
                self._images.values())}
        if method != 'POST':
            return _error(405, '%s /v2/images' % method)
        body = _json(environ)
        if not isinstance(body, dict):
            return _error(400, 'an image is a JSON object')
        image_id: str = body.get('id') or str(uuid.uuid4())
        if image_id in self._images or image_id == standins.IMAGE_ID:
            return _error(409, 'image %s exists' % image_id)
        now = '2026-01-01T00:00:00Z'
        image = dict(standins.IMAGE, tags=[], checksum=None, size=None,
                     disk_format=None, container_format=None)
        image.update({k: v for k, v in body.items() if k not in READ_ONLY})
        image.update(id=image_id, status='queued', created_at=now,
                     updated_at=now, file='/v2/images/%s/file' % image_id)
        self._images[image_id] = image
        return 201, image

    def _one(self, method: str, image_id: str,
             environ: standins.Environ) -> Answer:
        image = self._images.get(image_id)
        if image is None and (image_id in self._deleted or
                              method in ('PATCH', 'DELETE')):
            return _error(404, 'No image found with ID %s' % image_id)
        if method == 'GET':
            return 200, image or dict(standins.IMAGE, id=image_id)
        if method == 'DELETE':
            del self._images[image_id]
            self._data.pop(image_id, None)
            self._deleted.add(image_id)
            return 204, None
        if method == 'PATCH':
            assert image is not None    # a missing one answered 404 above
            return self._patch(image, environ)
        return _error(405, '%s of an image' % method)

    @staticmethod
    def _patch(image: Image, environ: standins.Environ) -> Answer:
        if environ.get('CONTENT_TYPE', '').split(';')[0] != PATCH:
            return _error(415, 'an image is updated with %s' % PATCH)
        changes = _json(environ)
        if not isinstance(changes, list):
            return _error(400, 'a JSON patch is a list of changes')
        for change in changes:
            key = str(change.get('path', '')).lstrip('/')
            if not key or '/' in key or key in READ_ONLY:
                return _error(403, 'attribute %r may not be changed' % key)
            if change.get('op') in ('add', 'replace'):
                image[key] = change.get('value')
            elif change.get('op') == 'remove' and key in image:
                del image[key]
            else:
                return _error(400, 'unknown change %r' % change)
        return 200, image

    def _file(self, method: str, image_id: str,
              environ: standins.Environ) -> Answer:
        image = self._images.get(image_id)
        if image is None and image_id in self._deleted:
            return _error(404, 'No image found with ID %s' % image_id)
        if method == 'GET':
            if image is None:
                return 200, standins.image_bytes()
            if image_id not in self._data:
                return 204, None
            return 200, self._data[image_id]
        if method != 'PUT' or image is None:
            return _error(404 if image is None else 405,
                          '%s of image %s data' % (method, image_id))
        if image['status'] != 'queued':
            return _error(409, 'image %s is %s, not queued'
                          % (image_id, image['status']))
        self._data[image_id] = data = _body(environ)
        image.update(status='active', size=len(data))
        return 204, None


def _body(environ: standins.Environ) -> bytes:
    """A request's bytes: by its Content-Length, or chunked (glanceclient
    streams an upload so; wsgiref does not decode it)."""
    stream = environ['wsgi.input']
    if environ.get('HTTP_TRANSFER_ENCODING', '').lower() != 'chunked':
        length = int(environ.get('CONTENT_LENGTH') or 0)
        return stream.read(length) if length else b''
    chunks: list[bytes] = []
    while True:
        size = int(stream.readline().split(b';')[0].strip() or b'0', 16)
        if not size:
            while stream.readline().strip():
                pass        # trailers, up to the blank line
            return b''.join(chunks)
        chunks.append(stream.read(size))
        stream.readline()   # the CRLF after the chunk


def _json(environ: standins.Environ) -> standins.Json:
    try:
        return json.loads(_body(environ) or b'{}')
    except ValueError:
        return None
