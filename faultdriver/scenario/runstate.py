"""The records a scenario run produces and its reports read: each step's
timeline entry, the state the run ended in (per migration, host and
server, with the journal's fired faults) and each expectation's result.

Why records: these cross from the run (:mod:`play`, :mod:`collect`,
:mod:`expect`) to the renderers (:mod:`report`, :mod:`timeline`), the
launcher and the sweep.  As dicts every reader re-learnt their keys (a
misspelt one read None); as frozen dataclasses a reader names a field
the type checker knows.  JSON is only the file boundary: each record's
``to_json`` writes the keys in the order reports always had, and
``from_json`` reads them back (a saved run's, also one written before a
key existed), raising ValueError naming the key and what was expected.

Frozen means no field is reassigned; the lists and mappings a record
holds (pinned pCPUs, allocations, a server's volumes) stay lists and
mappings, as the expectations compare them with what a scenario wrote
(a list in YAML is not equal to a tuple), and nothing changes them once
collected.
"""

import dataclasses
import typing

from faultdriver import journal

#: A JSON value as the records hold it (what an API or a scenario gave).
JSON = typing.Any
#: A JSON object.
Mapping = typing.Dict[str, typing.Any]

T = typing.TypeVar('T')


def _need(data: Mapping, key: str, kinds: typing.Tuple[type, ...],
          where: str, optional: bool = False) -> JSON:
    """``data[key]`` if it is one of ``kinds`` (None too when
    ``optional``); ValueError naming ``where`` and ``key`` if not."""
    if key not in data:
        if optional:
            return None
        raise ValueError('%s has no %r' % (where, key))
    value = data[key]
    if value is None and optional:
        return None
    if not isinstance(value, kinds) or (
            isinstance(value, bool) and bool not in kinds):
        raise ValueError('%s.%s is %s, not %s' % (
            where, key, type(value).__name__,
            ' or '.join(k.__name__ for k in kinds)))
    return value


def _mapping(data: JSON, where: str) -> Mapping:
    if not isinstance(data, dict):
        raise ValueError('%s is %s, not a mapping' % (
            where, type(data).__name__))
    return data


def _each(data: Mapping, key: str, where: str,
          read: typing.Callable[[JSON, str], T]) -> typing.Dict[str, T]:
    """``{name: read(item)}`` of the mapping ``data[key]`` ({} when
    absent: a run saved before the key existed)."""
    found = _need(data, key, (dict,), where, optional=True) or {}
    return {name: read(item, '%s.%s.%s' % (where, key, name))
            for name, item in found.items()}


NUMBER = (int, float)


@dataclasses.dataclass(frozen=True)
class TimelineEntry:
    """One step as it ran: its text, kind and arguments, when it started
    and how long it took (seconds from step 0), ``ok`` or ``failed``,
    and what it said."""

    index: int
    step: str
    start: float
    status: str
    seconds: float
    detail: str
    #: None only in runs saved before the runner recorded them (the
    #: timeline parses ``step`` then).
    kind: typing.Optional[str] = None
    args: typing.Optional[Mapping] = None

    def to_json(self) -> Mapping:
        data: Mapping = {'index': self.index, 'step': self.step}
        if self.kind is not None:
            data['kind'] = self.kind
        if self.args is not None:
            data['args'] = self.args
        data.update(start=self.start, status=self.status,
                    seconds=self.seconds, detail=self.detail)
        return data

    @classmethod
    def from_json(cls, data: JSON, where: str) -> 'TimelineEntry':
        data = _mapping(data, where)
        return cls(index=_need(data, 'index', (int,), where),
                   step=_need(data, 'step', (str,), where),
                   start=_need(data, 'start', NUMBER, where),
                   status=_need(data, 'status', (str,), where),
                   seconds=_need(data, 'seconds', NUMBER, where),
                   detail=_need(data, 'detail', (str,), where),
                   kind=_need(data, 'kind', (str,), where, True),
                   args=_need(data, 'args', (dict,), where, True))


@dataclasses.dataclass(frozen=True)
class ExpectationResult:
    """What one expectation found: its kind, its text, met or not, the
    actual value (any JSON) and how long checking it took."""

    #: None only in runs saved before results named their kind.
    kind: typing.Optional[str]
    expectation: str
    met: bool
    actual: JSON
    #: None only in runs saved before checks were timed.
    seconds: typing.Optional[float] = None

    def to_json(self) -> Mapping:
        data: Mapping = {} if self.kind is None else {'kind': self.kind}
        data.update(expectation=self.expectation, met=self.met,
                    actual=self.actual)
        if self.seconds is not None:
            data['seconds'] = self.seconds
        return data

    @classmethod
    def from_json(cls, data: JSON, where: str) -> 'ExpectationResult':
        data = _mapping(data, where)
        return cls(kind=_need(data, 'kind', (str,), where, True),
                   expectation=_need(data, 'expectation', (str,), where),
                   met=_need(data, 'met', (bool,), where),
                   actual=data.get('actual'),
                   seconds=_need(data, 'seconds', NUMBER, where, True))


@dataclasses.dataclass(frozen=True)
class RunMigration:
    """A migration of a scenario server as the API showed it at the end
    (``server``: the scenario's alias)."""

    server: str
    id: int
    uuid: str
    type: typing.Optional[str]
    status: str
    source_compute: typing.Optional[str]
    dest_compute: typing.Optional[str]
    created_at: typing.Optional[str]
    updated_at: typing.Optional[str]

    def to_json(self) -> Mapping:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: JSON, where: str) -> 'RunMigration':
        data = _mapping(data, where)
        text = (str,)
        return cls(server=_need(data, 'server', text, where),
                   id=_need(data, 'id', (int,), where),
                   uuid=_need(data, 'uuid', text, where),
                   type=_need(data, 'type', text, where, True),
                   status=_need(data, 'status', text, where),
                   source_compute=_need(data, 'source_compute', text, where,
                                        True),
                   dest_compute=_need(data, 'dest_compute', text, where,
                                      True),
                   created_at=_need(data, 'created_at', text, where, True),
                   updated_at=_need(data, 'updated_at', text, where, True))


@dataclasses.dataclass(frozen=True)
class HostCount:
    """A host's pCPU accounting: the pCPUs its compute node records as
    pinned, placement's PCPU usage there, and whether they agree."""

    pinned_cpus: typing.List[int]
    placement_pcpu: int
    matches: bool

    def to_json(self) -> Mapping:
        return {'pinned_cpus': list(self.pinned_cpus),
                'placement_pcpu': self.placement_pcpu,
                'matches': self.matches}

    @classmethod
    def from_json(cls, data: JSON, where: str) -> 'HostCount':
        data = _mapping(data, where)
        return cls(**cls._counted(data, where))

    @staticmethod
    def _counted(data: Mapping, where: str) -> Mapping:
        return {'pinned_cpus': list(_need(data, 'pinned_cpus', (list,),
                                          where)),
                'placement_pcpu': _need(data, 'placement_pcpu', (int,),
                                        where),
                'matches': _need(data, 'matches', (bool,), where)}


@dataclasses.dataclass(frozen=True)
class RunHost(HostCount):
    """A host at the end: its accounting, its compute service's state,
    placement's allocations on it (``{consumer: {class: amount}}``) and
    the tasks its nova-compute tracks for a graceful shutdown.  The last
    two are None only in runs saved before they were collected."""

    service: typing.Optional[str] = None
    allocations: typing.Optional[typing.Dict[
        str, typing.Dict[str, int]]] = None
    tasks: typing.Optional[typing.List[Mapping]] = None

    def to_json(self) -> Mapping:
        data = super().to_json()
        data['service'] = self.service
        if self.allocations is not None:
            data['allocations'] = self.allocations
        if self.tasks is not None:
            data['tasks'] = self.tasks
        return data

    @classmethod
    def from_json(cls, data: JSON, where: str) -> 'RunHost':
        data = _mapping(data, where)
        return cls(service=_need(data, 'service', (str,), where, True),
                   allocations=_need(data, 'allocations', (dict,), where,
                                     True),
                   tasks=_need(data, 'tasks', (list,), where, True),
                   **cls._counted(data, where))


@dataclasses.dataclass(frozen=True)
class RunServer:
    """A scenario server at the end, as the API showed it: its uuid
    (``id``), status, host, task state and pinned pCPUs, its volumes
    (``{volume: {attachments, bdm, ...}}``) and ports (``{port: {host:
    binding status}}``) and, where a real hypervisor was asked, its
    guests (``{host: state}``; None: not asked)."""

    id: str
    status: str
    host: typing.Optional[str]
    task_state: typing.Optional[str]
    pinned_cpus: typing.List[int]
    volumes: typing.Optional[Mapping] = None
    ports: typing.Optional[typing.Dict[str, typing.Dict[str, str]]] = None
    guests: typing.Optional[typing.Dict[str, str]] = None

    def to_json(self) -> Mapping:
        data: Mapping = {'id': self.id, 'status': self.status,
                         'host': self.host, 'task_state': self.task_state,
                         'pinned_cpus': list(self.pinned_cpus)}
        for name in ('volumes', 'ports', 'guests'):
            if getattr(self, name) is not None:
                data[name] = getattr(self, name)
        return data

    @classmethod
    def from_json(cls, data: JSON, where: str) -> 'RunServer':
        data = _mapping(data, where)
        return cls(id=_need(data, 'id', (str,), where),
                   status=_need(data, 'status', (str,), where),
                   host=_need(data, 'host', (str,), where, True),
                   task_state=_need(data, 'task_state', (str,), where,
                                    True),
                   pinned_cpus=list(_need(data, 'pinned_cpus', (list,),
                                          where, True) or ()),
                   volumes=_need(data, 'volumes', (dict,), where, True),
                   ports=_need(data, 'ports', (dict,), where, True),
                   guests=_need(data, 'guests', (dict,), where, True))


@dataclasses.dataclass(frozen=True)
class RunState:
    """The state a run ended in (:func:`faultdriver.scenario.collect.
    collect_state`): its migrations (oldest first per server), hosts,
    fired faults (the journal), servers by alias, and each host's
    accounting when the moves ended, before any periodic of recover's
    repaired it (``move_end``; None: not taken)."""

    migrations: typing.List[RunMigration]
    hosts: typing.Dict[str, RunHost]
    faults: typing.List[journal.JournalEntry]
    servers: typing.Dict[str, RunServer]
    move_end: typing.Optional[typing.Dict[str, HostCount]] = None

    def to_json(self) -> Mapping:
        return {
            'migrations': [m.to_json() for m in self.migrations],
            'hosts': {h: v.to_json() for h, v in self.hosts.items()},
            'faults': [f.to_json() for f in self.faults],
            'servers': {a: s.to_json() for a, s in self.servers.items()},
            'move_end': None if self.move_end is None else {
                h: c.to_json() for h, c in self.move_end.items()}}

    @classmethod
    def from_json(cls, data: JSON, where: str = 'state') -> 'RunState':
        data = _mapping(data, where)
        migrations = _need(data, 'migrations', (list,), where, True) or []
        faults = _need(data, 'faults', (list,), where, True) or []
        entries = []
        for i, entry in enumerate(faults):
            try:
                entries.append(journal.JournalEntry.from_json(entry))
            except (TypeError, ValueError, AttributeError) as exc:
                raise ValueError('%s.faults[%d]: %s' % (where, i, exc))
        move_end = None
        if data.get('move_end') is not None:
            move_end = _each(data, 'move_end', where, HostCount.from_json)
        return cls(
            migrations=[RunMigration.from_json(m, '%s.migrations[%d]' % (
                where, i)) for i, m in enumerate(migrations)],
            hosts=_each(data, 'hosts', where, RunHost.from_json),
            faults=entries,
            servers=_each(data, 'servers', where, RunServer.from_json),
            move_end=move_end)
