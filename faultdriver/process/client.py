"""A small client for the stack's compute and placement APIs.

Without Keystone the compute API takes the identity from headers
(see :func:`faultdriver.process.config.api_paste`), placement runs with
``noauth2``; a stack with Keystone (``Stack(keystone=True)``) gets the
admin's token for every request instead (the headers' identity is then
dropped by keystonemiddleware).
"""

import os
import typing

import requests

from faultdriver.process import procs
from faultdriver import waiting

PROJECT = '6f70656e737461636b20342065766572'
HEADERS = {
    'X-Auth-Token': 'admin', 'X-User-Id': 'faultdriver',
    'X-Project-Id': PROJECT, 'X-Roles': 'admin,member,reader',
    'OpenStack-API-Version': 'compute latest',
}
PLACEMENT_HEADERS = {'X-Auth-Token': 'admin',
                     'OpenStack-API-Version': 'placement latest'}
#: A JSON document as the compute or placement API answered it.
Json = typing.Any
T = typing.TypeVar('T')


class Endpoints(typing.Protocol):
    """What the client reads of a stack (:class:`stack.Stack`)."""

    api_url: str
    placement_url: str
    logs: str


class KeystoneEndpoints(Endpoints, typing.Protocol):
    """A stack with Keystone (its ``keystone`` true) also has these."""

    keystone_url: str
    password: str


class APIError(Exception):
    """An API answered a status not asked for; ``status`` is it (the
    message may quote a service log, which can mention any number)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


#: The service log that says why an API answered 5xx.
SERVICE_LOGS = {False: 'nova-api.log', True: 'placement.out'}


def last_error(path: str, lines: int = 40) -> str:
    """The last ERROR record of a service log with its traceback (at most
    ``lines`` lines), or '' when there is none: an API's 500 says only
    "Unexpected API Error", its log says what happened."""
    records = procs.read_end(path, 262144).splitlines()
    # oslo.log: "DATE TIME PID LEVEL logger ..."; a traceback is written
    # as ERROR lines with the record's time and pid.
    errors = [i for i, line in enumerate(records)
              if line.split(' ', 4)[3:4] == ['ERROR']]
    if not errors:
        return ''
    start = errors[-1]
    stamp = ' '.join(records[start].split(' ', 4)[:4])
    while start and records[start - 1].startswith(stamp + ' '):
        start -= 1
    return '\n'.join(records[start:start + lines])


class Client:
    def __init__(self, stack: Endpoints, timeout: float = 60) -> None:
        self.url = stack.api_url
        self.placement_url = stack.placement_url
        self.logs = stack.logs
        self.timeout = timeout
        self.session = requests.Session()
        if getattr(stack, 'keystone', False):
            from faultdriver.process import keystone
            with_keystone = typing.cast(KeystoneEndpoints, stack)
            self.session.auth = keystone.TokenAuth(
                with_keystone.keystone_url, keystone.ADMIN,
                with_keystone.password, keystone.ADMIN)

    # -- HTTP -------------------------------------------------------------

    def request(self, method: str, path: str, body: Json = None,
                placement: bool = False,
                ok: typing.Container[int] = (200,)) -> Json:
        base = self.placement_url if placement else self.url
        headers = PLACEMENT_HEADERS if placement else HEADERS
        response = self.session.request(method, base + path, json=body,
                                        headers=headers, timeout=self.timeout)
        if response.status_code not in ok:
            message = '%s %s -> %s: %s' % (method, path,
                                           response.status_code,
                                           response.text[:500])
            if response.status_code >= 500:
                log = os.path.join(self.logs, SERVICE_LOGS[placement])
                message += '\n%s says:\n%s' % (
                    log, last_error(log) or '(no ERROR record)')
            raise APIError(message, response.status_code)
        return response.json() if response.content else None

    def get(self, path: str, *, placement: bool = False,
            ok: typing.Container[int] = (200,)) -> Json:
        return self.request('GET', path, placement=placement, ok=ok)

    def post(self, path: str, body: Json,
             ok: typing.Container[int] = (200, 201, 202), *,
             placement: bool = False) -> Json:
        return self.request('POST', path, body, ok=ok, placement=placement)

    # -- waiting ----------------------------------------------------------

    def wait(self, check: typing.Callable[[], typing.Optional[T]], what: str,
             timeout: float = 60, interval: float = 0.25) -> T:
        """Poll ``check()`` until it returns a true value; return it.  A
        service that does not answer yet counts as not there yet."""
        last: list[object] = [None]

        def answered() -> typing.Optional[T]:
            try:
                answer = check()
            except (requests.ConnectionError, APIError) as exc:
                last[0] = exc
                return None
            last[0] = answer
            return answer
        return waiting.until(answered, timeout, lambda: '%s (last: %r)' % (
            what, last[0]), interval)

    def services(self, binary: typing.Optional[str],
                 host: typing.Optional[str] = None) -> Json:
        path = '/os-services?binary=%s' % binary
        if host:
            path += '&host=%s' % host
        return self.get(path)['services']

    def wait_for_service(self, binary: str, host: typing.Optional[str],
                         state: str, timeout: float = 90,
                         processes: typing.Iterable[procs.Process] = ()
                         ) -> object:
        """Wait until the API says ``state``; stop at once if one of
        ``processes`` (:class:`~faultdriver.process.procs.Process`)
        exits first."""
        what = '%s on %s %s' % (binary, host or '*', state)

        def check() -> object:
            procs.check_alive(processes, what)
            services = self.services(binary, host)
            return services and all(s['state'] == state for s in services)
        return self.wait(check, what, timeout)

    def wait_for_hypervisors(
            self, count: int, timeout: float = 60,
            processes: typing.Iterable[procs.Process] = ()) -> bool:
        what = '%d compute nodes' % count

        def check() -> bool:
            procs.check_alive(processes, what)
            return len(self.get('/os-hypervisors')['hypervisors']) >= count
        return self.wait(check, what, timeout)

    # -- servers and flavors ----------------------------------------------

    def create_flavor(self, name: str, vcpus: int, ram: int = 512,
                      disk: int = 1,
                      extra_specs: typing.Optional[dict[str, str]] = None
                      ) -> str:
        flavor = self.post('/flavors', {'flavor': {
            'name': name, 'vcpus': vcpus, 'ram': ram, 'disk': disk}})['flavor']
        if extra_specs:
            self.post('/flavors/%s/os-extra_specs' % flavor['id'],
                      {'extra_specs': extra_specs})
        flavor_id: str = flavor['id']
        return flavor_id

    def boot(self, name: str, flavor: str, image: str,
             host: typing.Optional[str] = None,
             networks: typing.Union[str, list[dict[str, str]]] = 'none',
             volume: typing.Optional[str] = None) -> str:
        """A server from ``image``, or from ``volume`` (its root disk);
        ``networks``: 'none' or a list of ``{'uuid': network}``."""
        body: dict[str, Json] = {'server': {'name': name, 'flavorRef': flavor,
                           'imageRef': image, 'networks': networks}}
        if volume:
            body['server'].update(imageRef='', block_device_mapping_v2=[{
                'boot_index': 0, 'uuid': volume, 'source_type': 'volume',
                'destination_type': 'volume'}])
        if host:
            body['server']['host'] = host
        server_id: str = self.post('/servers', body)['server']['id']
        return server_id

    def volume_attachments(self, server_id: str) -> Json:
        """The server's block device mappings of volumes (with the
        attachment id each names: microversion 2.89)."""
        return self.get('/servers/%s/os-volume_attachments'
                        % server_id)['volumeAttachments']

    def attach_volume(self, server_id: str, volume_id: str) -> None:
        self.post('/servers/%s/os-volume_attachments' % server_id,
                  {'volumeAttachment': {'volumeId': volume_id}})

    def detach_volume(self, server_id: str, volume_id: str) -> None:
        self.request('DELETE', '/servers/%s/os-volume_attachments/%s' % (
            server_id, volume_id), ok=(202,))

    def server(self, server_id: str) -> Json:
        return self.get('/servers/%s' % server_id)['server']

    def migrations(self, server_id: str) -> list[Json]:
        found = self.get('/os-migrations?instance_uuid=%s' % server_id)
        return sorted(found['migrations'], key=lambda m: m['id'])

    # -- placement --------------------------------------------------------

    def provider(self, host: str) -> typing.Optional[str]:
        found = self.get('/resource_providers?name=%s' % host,
                         placement=True)['resource_providers']
        uuid: typing.Optional[str] = found[0]['uuid'] if found else None
        return uuid

    def usages(self, host: str) -> Json:
        uuid = self.provider(host)
        return self.get('/resource_providers/%s/usages' % uuid,
                        placement=True)['usages']
