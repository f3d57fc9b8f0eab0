"""The network stand-in: one network, its ports and their bindings.

Nova asks Neutron for a server's port at boot, binds it to the host
(``binding:host_id``), and on a live migration uses the port-bindings
extension (``binding-extended``): the conductor creates an inactive
binding for dest, dest's ``post_live_migration_at_destination`` path
activates it (the source's turns inactive), the source's is deleted, and
a rollback deletes dest's.  A fault between those calls can leave a port
bound on the wrong host, or an inactive binding that makes the next move
fail with a conflict (409, as Neutron answers a second binding for the
same host).  The stand-in keeps ports and bindings in memory, answers
as Neutron does for the calls Nova makes, and :meth:`Network.bindings`
gives the scenario's ``port-bindings`` invariant what it reads.

``network-vif-plugged``: a live migration's source waits for it after
dest's ``pre_live_migration`` plugged the ports (Nova's
``live_migration_wait_for_vif_plug``).  In a cloud, dest's L2 agent sees
the new tap and Neutron sends the event; here whoever plays the agent's
part reports the plug and the stand-in sends the event to the compute
API: on real libvirt, :class:`faultdriver.process.tap_agent.TapAgent`,
which watches each host's network namespace for the port's tap
(:meth:`Network.tap_appeared`); with ``fake_numa`` (no taps), the driver
itself, whose ``pre_live_migration`` reports the ports plugged on its
host (``POST /faultdriver/plugged``).

Not modelled: DHCP, security group rules, QoS and resource requests,
floating IPs, segments, port status changes (every port is ``ACTIVE``, so
a boot waits for no event), more than one network.
"""

import copy
import threading
import typing
import urllib.parse
import uuid

import requests
from requests import auth as requests_auth

from faultdriver.process import servicefaults
from faultdriver.process import standins

#: A network, subnet, port or binding as the stand-in keeps it
#: (Neutron's view, JSON: any value by key).
Resource = dict[str, standins.Json]
Answer = servicefaults.Answer

NETWORK_ID = '3cb9bc59-5699-4588-a4b1-b87f96708bc6'
SUBNET_ID = 'f8a6e8f8-c2ec-497c-9f23-da9616de54ef'
SECURITY_GROUP_ID = 'aec9df91-db1f-4e04-8ac6-e761d8461c53'
#: How a port is plugged: a bare tap (Nova's ``VIF_TYPE_TAP``, as
#: networking-calico binds), which Nova's privsep daemon creates on the
#: host and libvirt hands to QEMU as is (``managed='no'``): no switch to
#: install (Open vSwitch would need its daemons per host).  The tap is
#: named ``tap`` + the port id's first 11 characters on every host, so
#: the libvirt tier gives each host a network namespace.  fake_numa
#: plugs nothing whatever the type.
VIF_TYPE = 'tap'
VIF_DETAILS = {'port_filter': False}
EXTENSIONS = [{'alias': 'binding-extended', 'name': 'Port Bindings Extended',
               'description': 'Expose port bindings of a virtual port',
               'updated': '2017-07-17T10:00:00-00:00', 'links': []}]


def _network(project: str) -> Resource:
    return {'id': NETWORK_ID, 'name': 'private', 'status': 'ACTIVE',
            'subnets': [SUBNET_ID], 'admin_state_up': True, 'shared': False,
            'tenant_id': project, 'project_id': project, 'mtu': 1450,
            'router:external': False, 'port_security_enabled': True,
            'provider:network_type': 'vxlan',
            'provider:physical_network': None,
            'provider:segmentation_id': 24, 'description': ''}


def _subnet(project: str) -> Resource:
    return {'id': SUBNET_ID, 'name': 'private-subnet', 'ip_version': 4,
            'network_id': NETWORK_ID, 'cidr': '192.168.1.0/24',
            'gateway_ip': '192.168.1.1', 'enable_dhcp': True,
            'dns_nameservers': [], 'host_routes': [],
            'ipv6_address_mode': None, 'ipv6_ra_mode': None,
            'allocation_pools': [{'start': '192.168.1.2',
                                  'end': '192.168.1.254'}],
            'tenant_id': project, 'project_id': project, 'description': ''}


def _security_group(project: str) -> Resource:
    return {'id': SECURITY_GROUP_ID, 'name': 'default',
            'description': 'Default security group',
            'security_group_rules': [], 'tenant_id': project,
            'project_id': project}


def _matches(resource: Resource, query: dict[str, list[str]]) -> bool:
    """Neutron's list filters: every key given (several values: any of
    them), compared as the query string spells the value."""
    for key, values in query.items():
        if key == 'fields':
            continue
        if str(resource.get(key)).lower() not in [v.lower() for v in values]:
            return False
    return True


def tap_name(port_id: str) -> str:
    """Nova's device name of a port: ``tap`` + its id, cut to
    ``NIC_NAME_LEN`` (``nova.network.neutron`` builds it so: a declared
    assumption, checked before a process-tier stack starts)."""
    from nova.network import model
    return ('tap' + port_id)[:model.NIC_NAME_LEN]


def _error(status: int, kind: str, message: str) -> Answer:
    return status, {'NeutronError': {'type': kind, 'message': message,
                                     'detail': ''}}


class Network:
    """The stand-in's state and its HTTP answers (:meth:`route`)."""

    def __init__(self, project: str) -> None:
        self.project = project
        #: The compute API the events go to (the stack sets it).
        self.api_url: typing.Optional[str] = None
        self.api_headers: dict[str, str] = {}
        #: A requests auth for them (the stack's Keystone token), or None.
        self.api_auth: typing.Optional[requests_auth.AuthBase] = None
        self._lock = threading.Lock()
        # port id -> port, without binding fields
        self._ports: dict[str, Resource] = {}
        # port id -> {host: binding}
        self._bindings: dict[str, dict[str, Resource]] = {}
        self._next_ip = 3
        self.resources: dict[str, dict[str, Resource]] = {
            'networks': {NETWORK_ID: _network(project)},
            'subnets': {SUBNET_ID: _subnet(project)},
            'security-groups': {
                SECURITY_GROUP_ID: _security_group(project)}}

    # -- what the invariants read -----------------------------------------

    def bindings(self, device_id: str) -> dict[str, dict[str, str]]:
        """``{port id: {host: 'ACTIVE' or 'INACTIVE'}}`` of the ports
        whose ``device_id`` is the server ``device_id``."""
        with self._lock:
            return {port_id: {host: binding['status'] for host, binding in
                              self._bindings.get(port_id, {}).items()}
                    for port_id, port in self._ports.items()
                    if port['device_id'] == device_id}

    # -- HTTP -------------------------------------------------------------

    def route(self, environ: standins.Environ) -> Answer:
        method = environ['REQUEST_METHOD']
        path = environ['PATH_INFO'].rstrip('/')
        if path.endswith('.json'):
            path = path[:-len('.json')]
        parts = path.split('/')[1:]
        query = urllib.parse.parse_qs(environ.get('QUERY_STRING', ''))
        body = standins.request_body(environ)
        if not parts or parts == ['']:
            return 200, standins.versions('http://%s' % environ['HTTP_HOST'],
                                          'v2.0', 'v2.0')
        if parts == ['faultdriver', 'plugged']:
            return self._plugged(body)
        if parts[0] != 'v2.0' or len(parts) < 2:
            return _error(404, 'HTTPNotFound', 'no such path %s' % path)
        with self._lock:
            return self._answer(method, parts[1:], query, body)

    def _answer(self, method: str, parts: list[str],
                query: dict[str, list[str]], body: standins.Json) -> Answer:
        kind = parts[0]
        if kind == 'extensions':
            return 200, {'extensions': EXTENSIONS}
        if kind == 'quotas':
            return 200, {'quota': {'port': -1, 'network': -1}}
        if kind == 'floatingips':
            return 200, {'floatingips': []}
        if kind == 'ports':
            return self._ports_answer(method, parts[1:], query, body)
        if kind in self.resources and method == 'GET':
            found = self.resources[kind]
            if len(parts) == 2:
                if parts[1] not in found:
                    return _error(404, 'NotFound', '%s %s not found' % (
                        kind, parts[1]))
                return 200, {kind[:-1].replace('-', '_'):
                             copy.deepcopy(found[parts[1]])}
            return 200, {kind.replace('-', '_'): [
                copy.deepcopy(r) for r in found.values()
                if _matches(r, query)]}
        if method == 'GET':
            return 200, {kind.replace('-', '_'): []}
        return _error(404, 'HTTPNotFound', 'not modelled: %s %s' % (
            method, '/'.join(parts)))

    def _ports_answer(self, method: str, parts: list[str],
                      query: dict[str, list[str]],
                      body: standins.Json) -> Answer:
        if not parts:
            if method == 'POST':
                return 201, {'port': self._create(body['port'])}
            shown = [self._shown(port) for port in self._ports.values()]
            return 200, {'ports': [port for port in shown
                                   if _matches(port, query)]}
        port_id = parts[0]
        if port_id not in self._ports:
            return _error(404, 'PortNotFound', 'Port %s could not be '
                          'found.' % port_id)
        if len(parts) == 1:
            if method == 'PUT':
                self._update(port_id, body['port'])
            elif method == 'DELETE':
                del self._ports[port_id]
                self._bindings.pop(port_id, None)
                return 204, None
            return 200, {'port': self._shown(self._ports[port_id])}
        return self._bindings_answer(method, port_id, parts[2:], body)

    def _bindings_answer(self, method: str, port_id: str, parts: list[str],
                         body: standins.Json) -> Answer:
        """``/ports/ID/bindings[/HOST[/activate]]``."""
        bindings = self._bindings.setdefault(port_id, {})
        if not parts:
            if method == 'POST':
                host = body['binding']['host']
                if host in bindings:
                    return _error(409, 'PortBindingAlreadyExists',
                                  'Binding for port %s on host %s already '
                                  'exists.' % (port_id, host))
                binding = self._binding(body['binding'], 'INACTIVE'
                                        if bindings else 'ACTIVE')
                bindings[host] = binding
                return 201, {'binding': copy.deepcopy(binding)}
            return 200, {'bindings': copy.deepcopy(list(bindings.values()))}
        host = parts[0]
        if host not in bindings:
            return _error(404, 'PortBindingNotFound', 'Binding for port %s '
                          'for host %s could not be found.' % (port_id, host))
        if parts[1:] == ['activate'] and method == 'PUT':
            if bindings[host]['status'] == 'ACTIVE':
                return _error(409, 'PortBindingAlreadyActive',
                              'Binding for port %s on host %s is already '
                              'active.' % (port_id, host))
            self._activate(port_id, host)
            return 200, {'binding': copy.deepcopy(bindings[host])}
        if method == 'DELETE':
            del bindings[host]
            return 204, None
        return 200, {'binding': copy.deepcopy(bindings[host])}

    # -- state changes -----------------------------------------------------

    def _create(self, request: standins.Json) -> Resource:
        port_id = str(uuid.uuid4())
        ip = '192.168.1.%d' % self._next_ip
        self._next_ip += 1
        port: Resource = {
                'name': '', 'description': '', 'network_id': NETWORK_ID,
                'admin_state_up': True, 'status': 'ACTIVE',
                'mac_address': 'fa:16:3e:%02x:%02x:%02x' % tuple(
                    uuid.UUID(port_id).bytes[:3]),
                'fixed_ips': [{'ip_address': ip, 'subnet_id': SUBNET_ID}],
                'tenant_id': self.project, 'project_id': self.project,
                'device_id': '', 'device_owner': '',
                'security_groups': [SECURITY_GROUP_ID],
                'binding:vnic_type': 'normal', 'binding:profile': {},
                'port_security_enabled': True, 'dns_name': '',
                'extra_dhcp_opts': [], 'allowed_address_pairs': []}
        port.update({key: value for key, value in request.items()
                     if not key.startswith('binding:')})
        port['id'] = port_id
        self._ports[port_id] = port
        self._update(port_id, {key: value for key, value in request.items()
                               if key.startswith('binding:')})
        return self._shown(port)

    def _update(self, port_id: str, change: standins.Json) -> None:
        """A port update; ``binding:host_id`` moves the port's active
        binding to that host, None deletes it, as the ML2 plugin does (a
        binding's host is part of its key: the old host's is gone);
        inactive bindings stay."""
        port = self._ports[port_id]
        port.update({key: value for key, value in change.items()
                     if key in ('binding:vnic_type', 'binding:profile') or
                     not key.startswith('binding:')})
        if 'binding:host_id' not in change:
            if 'binding:profile' in change:
                for binding in self._bindings.get(port_id, {}).values():
                    if binding['status'] == 'ACTIVE':
                        binding['profile'] = change['binding:profile']
            return
        bindings = self._bindings.setdefault(port_id, {})
        host = change['binding:host_id']
        for name, binding in list(bindings.items()):
            if binding['status'] == 'ACTIVE' and name != host:
                del bindings[name]
        if host:
            bindings[host] = self._binding(
                {'host': host, 'profile': port['binding:profile'],
                 'vnic_type': port['binding:vnic_type']}, 'ACTIVE')

    def _binding(self, request: standins.Json, status: str) -> Resource:
        return {'host': request['host'], 'status': status,
                'vif_type': VIF_TYPE, 'vif_details': dict(VIF_DETAILS),
                'vnic_type': request.get('vnic_type', 'normal'),
                'profile': request.get('profile') or {}}

    def _activate(self, port_id: str, host: str) -> None:
        for name, binding in self._bindings[port_id].items():
            binding['status'] = 'ACTIVE' if name == host else 'INACTIVE'

    def _shown(self, port: Resource) -> Resource:
        """The port with its active binding's fields, as Neutron shows
        it (unbound: no host, vif type ``unbound``)."""
        shown = copy.deepcopy(port)
        active = [b for b in self._bindings.get(port['id'], {}).values()
                  if b['status'] == 'ACTIVE']
        binding = active[0] if active else None
        shown.update({
            'binding:host_id': binding['host'] if binding else '',
            'binding:vif_type': binding['vif_type'] if binding
            else 'unbound',
            'binding:vif_details': copy.deepcopy(binding['vif_details'])
            if binding else {},
            'binding:profile': copy.deepcopy(binding['profile'])
            if binding else port['binding:profile']})
        return shown

    # -- the agent's report, and the event it makes -------------------------

    def _plugged(self, body: standins.Json) -> Answer:
        """``{'host', 'server', 'ports'}``: a hypervisor plugged the
        server's ports on ``host``."""
        return 200, {'sent': self.report_plugged(
            body['host'], body['server'], body['ports'])}

    def tap_appeared(self, host: str, device: str) -> list[str]:
        """A tap named ``device`` appeared on ``host``: the ports it is
        named after are plugged there.  Returns the ports reported."""
        with self._lock:
            found = [(port['device_id'], port_id)
                     for port_id, port in self._ports.items()
                     if tap_name(port_id) == device]
        return [sent for server, port_id in found
                for sent in self.report_plugged(host, server, [port_id])]

    def report_plugged(self, host: str, server: str,
                       ports: typing.Iterable[str]) -> list[str]:
        """The server's ``ports`` are plugged on ``host``: tell the
        compute API, as Neutron does once its agent there wired them (only
        for ports with a binding on that host).  Returns the ports whose
        event was sent."""
        with self._lock:
            plugged = [p for p in ports if p in self._ports and
                     host in self._bindings.get(p, {})]
        events = [{'name': 'network-vif-plugged', 'tag': port,
                   'server_uuid': server, 'status': 'completed'}
                  for port in plugged]
        if events and self.api_url:
            requests.post(self.api_url + '/os-server-external-events',
                          json={'events': events}, headers=self.api_headers,
                          auth=self.api_auth,
                          timeout=30)
        return [event['tag'] for event in events]
