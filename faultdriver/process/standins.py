"""The stand-ins' HTTP serving, and the image service's answers.

Nova asks the image service for one image's metadata (and glanceclient
for the image schema; real libvirt also downloads its data: a boot
sector that fills some guest memory and halts,
:mod:`~faultdriver.process.guest_image`); a shelve makes images
(:mod:`~faultdriver.process.image_standin` keeps them).  The
network and block-storage stand-ins keep state
(:mod:`~faultdriver.process.network_standin`,
:mod:`~faultdriver.process.volume_standin`).  Each is served from a
thread of the runner on loopback.
"""

import json
import socket
import socketserver
import threading
import typing
from wsgiref import simple_server
from wsgiref import types as wsgi_types

from faultdriver.process import guest_image
from faultdriver.process import servicefaults

#: A JSON document a stand-in answers, or is sent.
Json = typing.Any
#: A request's WSGI environ, as a stand-in's route reads it.
Environ = typing.Dict[str, typing.Any]

IMAGE_ID = '155d900f-4e14-4e4c-a73d-069cbf4541e6'   # nova's fake image id
IMAGE_SIZE = 1024 * 1024
IMAGE = {
    'id': IMAGE_ID, 'name': 'faultdriver-image', 'status': 'active',
    'visibility': 'public', 'protected': False, 'disk_format': 'raw',
    'container_format': 'bare', 'size': IMAGE_SIZE, 'virtual_size': None,
    'min_disk': 0, 'min_ram': 0, 'tags': [], 'checksum': None,
    'owner': None, 'os_hidden': False,
    'created_at': '2026-01-01T00:00:00Z', 'updated_at': '2026-01-01T00:00:00Z',
    'file': '/v2/images/%s/file' % IMAGE_ID, 'schema': '/v2/schemas/image',
}
# Every key of IMAGE is a base property (Nova sorts the rest into
# 'properties'); any value type is accepted.
IMAGE_SCHEMA = {'name': 'image',
                'properties': {key: {} for key in IMAGE},
                'additionalProperties': {'type': 'string'}, 'links': []}


def versions(base: str, version: str, path: str) -> Json:
    """A service's version document: one ``CURRENT`` version, served
    under ``base/path/``."""
    return {'versions': [{'id': version, 'status': 'CURRENT', 'links': [
        {'rel': 'self', 'href': '%s/%s/' % (base, path)}]}]}


def image_bytes() -> bytes:
    """The image's content: what glance serves and what a volume
    created from the image holds."""
    return guest_image.disk(IMAGE_SIZE)


def request_body(environ: Environ) -> Json:
    """A request's JSON body ({} when it has none)."""
    length = int(environ.get('CONTENT_LENGTH') or 0)
    if not length:
        return {}
    return json.loads(environ['wsgi.input'].read(length) or b'{}')


def _app(route: servicefaults.Route) -> wsgi_types.WSGIApplication:
    def application(environ: wsgi_types.WSGIEnvironment,
                    start_response: wsgi_types.StartResponse
                    ) -> list[bytes]:
        try:
            status, body = route(environ)
        except servicefaults.Dropped:
            # connfail at the service: the connection closes without an
            # answer (the client sees it dropped); wsgiref expects a
            # client to go abruptly and ends the request quietly.
            environ[CONNECTION].shutdown(socket.SHUT_RDWR)
            start_response('500 ERR', [('Content-Length', '0')])
            return [b'']
        binary = isinstance(body, bytes)
        data = (body if binary else b'' if body is None
                else json.dumps(body).encode())
        start_response('%d %s' % (status, 'OK' if status < 400 else 'ERR'),
                       [('Content-Type', 'application/octet-stream' if binary
                         else 'application/json'),
                        ('Content-Length', str(len(data)))])
        return [data]
    return application


class _Server(socketserver.ThreadingMixIn, simple_server.WSGIServer):
    daemon_threads = True


#: Where a request's environ holds its socket (for a dropped answer).
CONNECTION = 'faultdriver.connection'


class _QuietHandler(simple_server.WSGIRequestHandler):
    def log_message(self, *args: typing.Any) -> None:
        pass

    def get_environ(self) -> wsgi_types.WSGIEnvironment:
        environ = super().get_environ()
        environ[CONNECTION] = self.connection
        return environ


class StandIn:
    """One stand-in service on 127.0.0.1:``port``, in a daemon thread.

    The port is bound by :meth:`start` (a port taken since is an error
    there, naming the stand-in); :meth:`stop` is safe whatever ``start``
    got to, and twice.
    """

    def __init__(self, name: str, route: servicefaults.Route,
                 port: int) -> None:
        self.name = name
        self.route = route
        self.port = port
        self.url = 'http://127.0.0.1:%d' % port
        self.server: typing.Optional[_Server] = None
        self.thread: typing.Optional[threading.Thread] = None

    def start(self) -> 'StandIn':
        self.server = simple_server.make_server(
            '127.0.0.1', self.port, _app(self.route), server_class=_Server,
            handler_class=_QuietHandler)
        self.thread = threading.Thread(target=self.server.serve_forever,
                                       name=self.name, daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        # shutdown() waits for serve_forever to notice: only a thread
        # that runs it (or will: it returns at once then) can.  (A
        # thread is there only with its server.)
        if (self.server is not None and self.thread is not None
                and self.thread.is_alive()):
            self.server.shutdown()
            self.thread.join()
        if self.server is not None:
            self.server.server_close()
        self.server = self.thread = None
