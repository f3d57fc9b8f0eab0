"""Real Keystone in a process-tier stack (``Stack(..., keystone=True)``).

keystone (2026.2, the series of Nova 34) runs under gunicorn as
``keystone.wsgi.api:application`` with its database in the stack's
MariaDB.  Its keys are made with ``keystone-manage fernet_setup`` and
``credential_setup`` (no database needed: they run while MariaDB
starts), its schema with ``db_sync`` (kept in the stack's cached schema,
:mod:`faultdriver.process.schema`), then ``bootstrap`` makes the admin
user, project and role, the region and the identity endpoint.  The
service users (nova, placement, neutron) and the catalog (compute,
placement, and the stand-ins' image, network and volumev3) are made
through Keystone's own API once it serves.

With it, nova-api runs the installed api-paste (keystonemiddleware's
authtoken), placement runs with ``auth_strategy = keystone``, and Nova's
clients authenticate with passwords and find their services in the
catalog (:func:`faultdriver.process.config.nova_common`).  The
stand-ins do not check tokens: they stand for services whose own
authentication is not under test.

Why not always: it adds Keystone's start and a token check to every
request; the ordinary process tier keeps its headers-only identity.
"""

import grp
import os
import pwd
import typing

import requests
from requests import auth as requests_auth

from faultdriver import waiting

#: The region everything is registered in.
REGION = 'RegionOne'
#: The admin user, project and role ``bootstrap`` makes.
ADMIN = 'admin'
#: The project the service users belong to.
SERVICE_PROJECT = 'service'
#: The service users, each with the admin and service roles in
#: :data:`SERVICE_PROJECT` (Nova 34's policy for external events wants
#: ``role:service``; placement's, admin or service).
SERVICE_USERS = ('nova', 'placement', 'neutron')
#: Roles given to the service users.
SERVICE_ROLES = ('admin', 'service')
#: bcrypt's least work factor: every token issued checks a password,
#: and a throw-away cloud's passwords need no slow hash.
HASH_ROUNDS = 4


def settings(database_url: str, directory: str,
             log: str) -> dict[str, list[tuple[str, object]]]:
    """keystone.conf's sections (for :func:`config.write`)."""
    return {
        'DEFAULT': [('debug', False), ('log_file', log)],
        'database': [('connection', database_url)],
        'token': [('provider', 'fernet'),
                  # A standing cloud's tokens outlive a long sweep case.
                  ('expiration', 86400)],
        'fernet_tokens': [('key_repository',
                           os.path.join(directory, 'fernet-keys'))],
        'credential': [('key_repository',
                        os.path.join(directory, 'credential-keys'))],
        'identity': [('password_hash_rounds', HASH_ROUNDS)],
        'cache': [('enabled', False)],
    }


def owner_args() -> list[str]:
    """``--keystone-user``/``--keystone-group`` for the key setups: who
    runs the stack (keystone-manage requires them, and chowns the keys
    to them)."""
    return ['--keystone-user', pwd.getpwuid(os.getuid()).pw_name,
            '--keystone-group', grp.getgrgid(os.getgid()).gr_name]


def bootstrap_args(password: str, url: str) -> list[str]:
    """``keystone-manage bootstrap``'s arguments: admin, region and the
    identity endpoint at ``url``."""
    return ['bootstrap', '--bootstrap-password', password,
            '--bootstrap-username', ADMIN,
            '--bootstrap-project-name', ADMIN,
            '--bootstrap-role-name', ADMIN,
            '--bootstrap-service-name', 'keystone',
            '--bootstrap-region-id', REGION,
            '--bootstrap-admin-url', url,
            '--bootstrap-internal-url', url,
            '--bootstrap-public-url', url]


def password_auth(url: str, username: str, password: str,
                  project: str) -> list[tuple[str, object]]:
    """A keystoneauth password section for Nova's and keystonemiddleware's
    options (``[placement]``, ``[keystone_authtoken]``, ...)."""
    return [('auth_type', 'password'), ('auth_url', url),
            ('username', username), ('password', password),
            ('project_name', project),
            ('user_domain_name', 'Default'),
            ('project_domain_name', 'Default'),
            ('region_name', REGION)]


def token(url: str, username: str, password: str,
          project: str) -> tuple[str, dict[str, typing.Any]]:
    """A project-scoped token and its body, by password."""
    response = requests.post(url + '/v3/auth/tokens', json={'auth': {
        'identity': {'methods': ['password'], 'password': {'user': {
            'name': username, 'domain': {'name': 'Default'},
            'password': password}}},
        'scope': {'project': {'name': project,
                              'domain': {'name': 'Default'}}}}},
        timeout=60)
    if response.status_code != 201:
        raise RuntimeError('Keystone at %s refused %s a token: %s %s' % (
            url, username, response.status_code, response.text[:300]))
    return response.headers['X-Subject-Token'], response.json()['token']


class TokenAuth(requests_auth.AuthBase):
    """A requests auth that sends a Keystone token of ``username``,
    fetched once and again when it is about to expire (the stand-in's
    events to nova-api, the stack's own API client)."""

    def __init__(self, url: str, username: str, password: str,
                 project: str) -> None:
        self.args = (url, username, password, project)
        self._token: typing.Optional[str] = None

    def value(self) -> str:
        if self._token is None:
            self._token, _body = token(*self.args)
        return self._token

    def __call__(self, request: requests.PreparedRequest
                 ) -> requests.PreparedRequest:
        request.headers['X-Auth-Token'] = self.value()
        return request


class Catalog:
    """Keystone's API as the admin, for the service users and the
    catalog (a few dozen requests, once per stack)."""

    def __init__(self, url: str, password: str) -> None:
        self.url = url
        self.session = requests.Session()
        self.session.auth = TokenAuth(url, ADMIN, password, ADMIN)

    def _call(self, method: str, path: str,
              body: typing.Optional[dict[str, typing.Any]] = None
              ) -> typing.Any:
        response = self.session.request(method, self.url + '/v3' + path,
                                        json=body, timeout=60)
        if response.status_code >= 300:
            raise RuntimeError('Keystone %s %s -> %s: %s' % (
                method, path, response.status_code, response.text[:300]))
        return response.json() if response.content else None

    def _find(self, kind: str, name: str) -> typing.Optional[str]:
        found = self._call('GET', '/%s?name=%s' % (kind, name))[kind]
        return found[0]['id'] if found else None

    def _ensure(self, kind: str, name: str,
                body: dict[str, typing.Any]) -> str:
        existing = self._find(kind, name)
        if existing:
            return existing
        single = kind[:-1]
        created: str = self._call('POST', '/' + kind, {single: dict(
            body, name=name)})[single]['id']
        return created

    def wait_ready(self, timeout: float = 180) -> None:
        """Until Keystone answers (its app loads at the first request:
        tens of seconds on a loaded machine)."""
        def answers() -> bool:
            try:
                return requests.get(self.url + '/v3',
                                    timeout=60).status_code == 200
            except (requests.ConnectionError, requests.Timeout):
                return False
        waiting.until(answers, timeout, 'Keystone at %s' % self.url)

    def register(self, password: str,
                 endpoints: dict[str, tuple[str, str]]) -> None:
        """The service project, users and roles, and one public endpoint
        per ``{type: (name, url)}``."""
        project = self._ensure('projects', SERVICE_PROJECT,
                               {'domain_id': 'default'})
        roles = [self._ensure('roles', role, {}) for role in SERVICE_ROLES]
        for user in SERVICE_USERS:
            user_id = self._ensure('users', user, {
                'domain_id': 'default', 'password': password,
                'default_project_id': project})
            for role in roles:
                self._call('PUT', '/projects/%s/users/%s/roles/%s' % (
                    project, user_id, role))
        for kind, (name, url) in sorted(endpoints.items()):
            service = self._ensure('services', name, {'type': kind})
            for interface in ('public', 'internal'):
                self._call('POST', '/endpoints', {'endpoint': {
                    'service_id': service, 'interface': interface,
                    'region_id': REGION, 'url': url}})


def check_catalog(token_body: dict[str, typing.Any],
                  endpoints: dict[str, tuple[str, str]]) -> None:
    """Raise naming the first service whose public URL in a token's
    catalog is not ``endpoints``' (``{type: (name, url)}``)."""
    found = {entry['type']: {e['url'] for e in entry['endpoints']
                             if e['interface'] == 'public'}
             for entry in token_body.get('catalog', [])}
    project = token_body.get('project', {}).get('id', '')
    for kind, (_name, url) in sorted(endpoints.items()):
        url = url.replace('$(project_id)s', project)
        if found.get(kind) != {url}:
            raise RuntimeError('Keystone\'s catalog has %s at %s, not %s'
                               % (kind, sorted(found.get(kind, ())), url))


def adopt(query: typing.Callable[..., typing.Any], password: str,
          endpoints: dict[str, tuple[str, str]]) -> None:
    """A cached Keystone database made this stack's: every endpoint's
    URL (this stack's ports) and every user's password (this stack's;
    bcrypt as Keystone hashes it, :data:`HASH_ROUNDS`).  ``query`` is
    :meth:`faultdriver.process.backing.MariaDB.query`."""
    import bcrypt
    for kind, (_name, url) in endpoints.items():
        query('keystone', 'UPDATE endpoint JOIN service ON '
              'endpoint.service_id = service.id SET endpoint.url = %s '
              'WHERE service.type = %s', url, kind)
    hashed = bcrypt.hashpw(password.encode(),
                           bcrypt.gensalt(HASH_ROUNDS)).decode('ascii')
    query('keystone', 'UPDATE password SET password_hash = %s', hashed)
