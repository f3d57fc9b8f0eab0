"""The shapes that cross the scenario <-> tier boundary, declared once.

Every member of the contract (:mod:`faultdriver.scenario.backend`) is
annotated with these, so what a tier returns is written down where both
sides read it, and mypy holds the contract and the shared half to it.
The tiers return plain dicts, lists and tuples today (the API's JSON, a
database row, a control-socket reply), so the records are TypedDicts and
aliases, not classes: annotating them changed no value a step or an
expectation sees.

Nova's API dicts (a server, a migration, a service, an instance action)
carry more keys than a step reads; only the keys the scenario layer reads
are declared (``total=False`` where the API may leave them out), values
as the API gives them.  JSON values a step only passes on are
``object``.
"""

import typing


#: A server as Nova's compute API shows it (``GET /servers/{id}``).  Only
#: ``id`` is always there: a step may hold just ``{'id': ...}``.
Server = typing.TypedDict('Server', {
    'id': typing.Required[str],
    'status': str,
    'name': str,
    'flavor': dict[str, object],
    'fault': dict[str, object],
    'OS-EXT-SRV-ATTR:host': typing.Optional[str],
    'OS-EXT-STS:task_state': typing.Optional[str],
    'OS-EXT-STS:vm_state': str,
}, total=False)


class ServerFields(typing.TypedDict):
    """What a step polls of a server, read cheaply enough to poll."""

    status: str
    host: typing.Optional[str]
    task_state: typing.Optional[str]


#: ``(id, status)`` of one of a server's migrations.
MigrationStatus = tuple[int, str]


class Migration(typing.TypedDict, total=False):
    """A migration as the API's ``GET /os-migrations`` shows it."""

    id: typing.Required[int]
    uuid: str
    status: typing.Required[str]
    migration_type: str
    source_compute: typing.Optional[str]
    dest_compute: typing.Optional[str]
    source_node: typing.Optional[str]
    dest_node: typing.Optional[str]
    instance_uuid: str
    created_at: str
    updated_at: typing.Optional[str]


#: ``(migration statuses oldest first, status, task_state, host)``:
#: what shows a move's progress (``BackendBase.move_state``).
MoveState = tuple[tuple[str, ...], str, typing.Optional[str],
                  typing.Optional[str]]


class VolumeAttachment(typing.TypedDict):
    """One attachment the block storage holds of a volume: ``host`` is
    its connector's, None while not connected."""

    id: str
    host: typing.Optional[str]


class VolumeView(typing.TypedDict, total=False):
    """One of a server's volumes (``NovaBackend.server_volumes``): the
    block storage's attachments of the server, the attachment its block
    device mapping names, and, where a real hypervisor can be asked,
    whether each host's guest has the volume's device as a disk."""

    attachments: typing.Required[list[VolumeAttachment]]
    bdm: typing.Required[typing.Optional[str]]
    guest_disk: dict[str, bool]


#: ``{volume id: VolumeView}`` of a server.
VolumeViews = dict[str, VolumeView]

#: ``{port id: {host: 'ACTIVE' or 'INACTIVE'}}``: the bindings the network
#: holds for each of a server's ports.
PortBindings = dict[str, dict[str, str]]


class TrackedTask(typing.TypedDict):
    """A task a compute manager tracks for a graceful stop
    (:mod:`faultdriver.manager_tasks`)."""

    name: str
    instance_uuid: typing.Optional[str]


class Service(typing.TypedDict, total=False):
    """A service as ``GET /os-services`` shows it."""

    id: typing.Required[typing.Union[int, str]]
    binary: str
    host: str
    status: str
    state: str
    forced_down: bool


class InstanceAction(typing.TypedDict, total=False):
    """An instance action (``GET /servers/{id}/os-instance-actions``);
    with its events when asked for one."""

    action: typing.Required[str]
    request_id: typing.Required[str]
    instance_uuid: str
    start_time: str
    events: list['ActionEvent']


class ActionEvent(typing.TypedDict, total=False):
    """An event of an instance action (e.g. compute_live_migration_abort);
    ``result`` is Success or Error once it finished."""

    event: typing.Required[str]
    start_time: typing.Optional[str]
    finish_time: typing.Optional[str]
    result: typing.Optional[str]
    #: What failed, for an admin (microversions 2.51 and 2.84).
    traceback: typing.Optional[str]
    details: typing.Optional[str]


#: ``{consumer uuid: {resource class: amount}}`` placement holds on a
#: host's resource provider.
Allocations = dict[str, dict[str, int]]

#: ``{instance uuid: state}`` a host's hypervisor itself has.
Guests = dict[str, str]

#: ``{barrier: threads held}`` on a host.
Held = dict[str, int]

#: One fault-journal entry (:mod:`faultdriver.journal`): a JSON object
#: whose keys depend on its ``kind``.
JournalEntry = dict[str, object]

#: A compute API request body (``POST /servers/{id}/action``'s).
RequestBody = dict[str, object]

#: A state a step waits for: something true, returned by the wait, once
#: reached; None (or false) until then.
Check = typing.Callable[[], object]
#: What a wait that timed out says it waited for (or says it when asked).
What = typing.Union[str, typing.Callable[[], str]]
