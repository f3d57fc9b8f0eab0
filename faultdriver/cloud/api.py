"""The cloud's APIs as raw JSON, through real Keystone, with the
scenario's host names at the boundary.

The session comes from openstacksdk's own reading of clouds.yaml (the
profile's ``cloud`` entry: admin credentials, TLS with a CA bundle,
interface, region), so a cloud reached here is reached as ``openstack
--os-cloud NAME`` reaches it.  The calls go through keystoneauth
Adapters, one per service (compute, placement, network, block-storage),
and answer the API's JSON dicts, not SDK resources: the scenario layer
compares them with what the other tiers' clients give.  The compute
API's microversion is the newest the cloud offers (negotiated once from
its version document): a boot onto a named host needs 2.74, a server's
topology 2.78, a volume attachment's id 2.89.

Scenarios name hosts ``src`` and ``dest``; the cloud names them
``compute1``.  :class:`Aliases` turns one into the other in both
directions: in requests (a boot's ``host``, a live migration's
``host``, the services filter) and in responses (a server's host and
node, migrations' source and destination, a service's host), so
expectations compare aliases on every tier.
"""

import typing

from faultdriver.cloud import profile as profile_module
from faultdriver import exception

if typing.TYPE_CHECKING:
    # Imported where used (connect): keystoneauth is slow to import.
    from keystoneauth1 import adapter as ks_adapter

Json = typing.Any
#: The statuses of a request that succeeded, unless a caller says.
OK = (200, 201, 202, 204)
#: Keys of a response whose value is a Nova service host.
HOST_KEYS = ('OS-EXT-SRV-ATTR:host', 'source_compute', 'dest_compute',
             'host', 'host_name')
#: Keys whose value is a nodename (hypervisor_hostname).
NODE_KEYS = ('OS-EXT-SRV-ATTR:hypervisor_hostname', 'source_node',
             'dest_node', 'hypervisor_hostname')
#: Services by the name the rest of faultdriver uses.
SERVICES = {'compute': 'compute', 'placement': 'placement',
            'network': 'network', 'block-storage': 'block-storage',
            'image': 'image'}


class APIError(exception.FaultDriverError):
    """An API answered a status not asked for (``status``)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class Aliases:
    """The scenario's host names <-> the cloud's, from the profile.  A
    name the profile does not map passes unchanged (a host outside the
    profile is never the scenario's)."""

    def __init__(self, hosts: typing.Mapping[str,
                                             profile_module.HostProfile]):
        self.real = {alias: h.host for alias, h in hosts.items()}
        self.node = {alias: h.nodename for alias, h in hosts.items()}
        self._alias = {h.host: alias for alias, h in hosts.items()}
        self._node_alias = {h.nodename: alias for alias, h in hosts.items()}

    def host(self, alias: str) -> str:
        """The real service host of ``alias``."""
        return self.real.get(alias, alias)

    def nodename(self, alias: str) -> str:
        return self.node.get(alias, alias)

    def alias(self, real: typing.Optional[str]) -> typing.Optional[str]:
        if real is None:
            return None
        return self._alias.get(real, real)

    def node_alias(self, real: typing.Optional[str]
                   ) -> typing.Optional[str]:
        if real is None:
            return None
        return self._node_alias.get(real, real)

    def response(self, value: Json) -> Json:
        """``value`` (a response's JSON) with every host and node key's
        value turned into the scenario's name."""
        if isinstance(value, list):
            return [self.response(v) for v in value]
        if not isinstance(value, dict):
            return value
        found = {}
        for key, each in value.items():
            if key in HOST_KEYS and isinstance(each, str):
                found[key] = self.alias(each)
            elif key in NODE_KEYS and isinstance(each, str):
                found[key] = self.node_alias(each)
            else:
                found[key] = self.response(each)
        return found

    def request(self, body: Json) -> Json:
        """A request body with its ``host`` (a boot's, a live
        migration's, an evacuation's) turned into the real host."""
        if isinstance(body, list):
            return [self.request(v) for v in body]
        if not isinstance(body, dict):
            return body
        return {key: (self.host(each) if key == 'host' and
                      isinstance(each, str) else self.request(each))
                for key, each in body.items()}


class CloudAPI:
    """One keystoneauth Adapter per service on the cloud's session."""

    def __init__(self, adapters: typing.Mapping[str, 'ks_adapter.Adapter'],
                 aliases: Aliases,
                 headers: typing.Mapping[str, typing.Mapping[str, str]]
                 ) -> None:
        self.adapters = dict(adapters)
        self.aliases = aliases
        self.headers = {k: dict(v) for k, v in headers.items()}

    def request(self, method: str, path: str, body: Json = None,
                service: str = 'compute',
                ok: typing.Collection[int] = OK,
                translate: bool = True) -> Json:
        """The JSON answer of ``method path`` on ``service``; APIError
        with the status when it is not one of ``ok``."""
        adapter = self.adapters[service]
        if translate and body is not None:
            body = self.aliases.request(body)
        response = adapter.request(
            path, method, json=body, raise_exc=False,
            headers=self.headers.get(service, {}))
        if response.status_code not in ok:
            raise APIError('%s %s %s -> %s: %s' % (
                service, method, path, response.status_code,
                response.text[:500]), response.status_code)
        data = response.json() if response.content else None
        return self.aliases.response(data) if translate else data

    def get(self, path: str, service: str = 'compute',
            ok: typing.Collection[int] = OK,
            translate: bool = True) -> Json:
        return self.request('GET', path, service=service, ok=ok,
                            translate=translate)

    def post(self, path: str, body: Json, service: str = 'compute',
             ok: typing.Collection[int] = OK,
             translate: bool = True) -> Json:
        return self.request('POST', path, body, service=service, ok=ok,
                            translate=translate)


def negotiated(adapter: 'ks_adapter.Adapter', service: str) -> str:
    """The newest microversion of ``service`` the cloud offers, as an
    ``OpenStack-API-Version`` header value."""
    data = adapter.get_endpoint_data()
    newest = getattr(data, 'max_microversion', None) if data else None
    if not newest:
        return '%s latest' % service
    return '%s %d.%d' % ((service,) + tuple(newest))


def connect(profile: profile_module.Profile) -> CloudAPI:
    """The cloud of ``profile`` through its clouds.yaml entry."""
    import keystoneauth1.adapter
    import keystoneauth1.exceptions
    import openstack.config
    import openstack.connection
    import openstack.exceptions

    files = [profile.clouds_yaml] if profile.clouds_yaml else None
    try:
        config = openstack.config.OpenStackConfig(config_files=files)
        region = config.get_one(cloud=profile.cloud)
        session = openstack.connection.Connection(config=region).session
    except openstack.exceptions.ConfigException as exc:
        raise profile_module.ProfileError('%s: key cloud: %r is not a '
                                          'cloud of %s: %s' % (
                                              profile.path, profile.cloud,
                                              profile.clouds_yaml or
                                              'clouds.yaml', exc)) from None
    adapters = {}
    for name, service_type in SERVICES.items():
        adapters[name] = keystoneauth1.adapter.Adapter(
            session=session, service_type=service_type,
            interface=region.get_interface(service_type),
            region_name=region.get_region_name(service_type))
    try:
        headers = {
            'compute': {'OpenStack-API-Version':
                        negotiated(adapters['compute'], 'compute')},
            'placement': {'OpenStack-API-Version': 'placement latest'},
            # What Nova 34's Cinder client asks: the attachments API.
            'block-storage': {'OpenStack-API-Version': 'volume 3.44'}}
    except keystoneauth1.exceptions.ClientException as exc:
        raise exception.ConfigError(
            '%s: cloud %s: cannot authenticate or find the compute API: %s'
            % (profile.path, profile.cloud, exc)) from None
    return CloudAPI(adapters, Aliases(profile.hosts), headers)
