"""What every scenario backend does the same way, written once.

The waits, ``boot``, ``delete_server``, ``move_state`` and ``force_down``
are built here on a tier's primitives (:class:`faultdriver.scenario.
backend.NovaBackend`): the embedded Nova and the process tier inherit
them and may not override them (``backend.problems`` says so), so a wait
cannot behave one way on one tier and another way on the other -- as
they did when each tier had its copy (one waited out its timeout on a
server in ERROR, the other failed at once).

Which members are shared is not listed anywhere: it is every public
method this class defines (:data:`SHARED`, derived below).  For mypy the
class implements :class:`~faultdriver.scenario.backend.NovaBackend` (so
the shared half is checked against the primitives' annotations); at
run time it is a plain mixin, as it always was.
"""

import typing

from faultdriver.scenario import backend
from faultdriver.scenario import backend_records as records
from faultdriver import waiting

T = typing.TypeVar('T')

if typing.TYPE_CHECKING:
    _Contract = backend.NovaBackend
else:
    _Contract = object


class BackendBase(_Contract):
    """The shared half of a scenario backend (a mixin: put it first)."""

    #: Seconds between two looks at the state a wait waits for (a tier
    #: whose reads are dearer looks less often).
    POLL = 0.1
    #: Extra specs of the flavor a pinned scenario boots with.
    PINNED_SPECS = {'hw:cpu_policy': 'dedicated'}
    #: Whether every host's resource tracker takes one lock (the embedded
    #: Nova: all computes in one process share Nova's named lock), so a
    #: thread held under it stops every host's periodic, not only its own.
    SHARED_TRACKER_LOCK = False

    def wait(self, check: typing.Callable[[], typing.Optional[T]],
             what: waiting.What, timeout: float) -> T:
        """Poll ``check`` until it answers; a timeout fails the step (or
        test) with ``what`` (a string or a callable giving one)."""
        return waiting.until(check, timeout, what, interval=self.POLL,
                             error=AssertionError)

    def boot(self, host: str = 'src', vcpus: typing.Optional[int] = None,
             status: str = 'ACTIVE', volume: bool = False,
             port: bool = False) -> records.Server:
        """Boot a server on ``host`` with the tier's default flavor
        (pinned when the scenario is), wait for ``status``."""
        flavor = None
        if self.PINNED:
            flavor = self.create_flavor(vcpus or self.default_vcpus,
                                        self.PINNED_SPECS)
        elif vcpus:
            flavor = self.create_flavor(vcpus)
        return self.create_server(host, flavor, status=status, volume=volume,
                                  port=port)

    def delete_server(self, server: records.Server,
                      timeout: float = backend.SERVER_TIMEOUT) -> None:
        """Delete and wait until the server is gone."""
        self.api.delete_server(server['id'])
        self.wait(lambda: not self.server_exists(server),
                  'server %s deleted' % server['id'], timeout)

    def move_state(self, server: records.Server) -> records.MoveState:
        """``(migration statuses oldest first, status, task_state,
        host)``: what shows a move's progress, cheap enough to poll."""
        fields = self.server_fields(server)
        return (tuple(status for _id, status in
                      self.migration_statuses(server)),
                fields['status'], fields['task_state'], fields['host'])

    def _migration(self, server: records.Server,
                   migration_id: int) -> records.Migration:
        [found] = [m for m in self.migrations(server)
                   if m['id'] == migration_id]
        return found

    def wait_newest_migration(
            self, server: records.Server, status: str, count: int,
            timeout: float = backend.WAIT_TIMEOUT,
            fail_on: typing.Collection[str] = ('error', 'failed'),
    ) -> records.Migration:
        """Wait for the server's ``count``-th migration (oldest first) to
        reach ``status``; fail at once if it reaches one of ``fail_on``.
        Returns the migration (API dict)."""
        def reached() -> typing.Optional[records.Migration]:
            migrations = self.migration_statuses(server)
            if len(migrations) >= count:
                migration_id, actual = migrations[count - 1]
                if actual == status:
                    return self._migration(server, migration_id)
                if status not in fail_on and actual in fail_on:
                    raise AssertionError(
                        'migration %d of %s is %s, not %s: %s' % (
                            count, server['id'], actual, status,
                            self._migration(server, migration_id)))
            return None
        return self.wait(reached, lambda: 'migration %d of %s %s: %s' % (
            count, server['id'], status,
            self.migration_statuses(server)), timeout)

    def wait_for_server(self, server: records.Server,
                        timeout: float = backend.WAIT_TIMEOUT,
                        **expected: typing.Optional[str]) -> records.Server:
        """Wait until the server's fields (``status='ACTIVE'``,
        ``host='src'``, ``task_state=None``) match; returns the server.
        ``status=backend.ACTIVE_OR_ERROR`` matches either.  A server in
        ERROR when ERROR is not asked for fails at once, with its fault:
        nothing brings it back by itself."""
        either = expected.get('status') == backend.ACTIVE_OR_ERROR

        def matches(key: str, found: typing.Optional[str],
                    wanted: typing.Optional[str]) -> bool:
            if key == 'status' and either:
                return found in ('ACTIVE', 'ERROR')
            return found == wanted

        def reached() -> typing.Optional[records.Server]:
            fields = typing.cast(typing.Mapping[str, typing.Optional[str]],
                                 self.server_fields(server))
            if all(matches(k, fields[k], v) for k, v in expected.items()):
                return self.api.get_server(server['id'])
            if fields['status'] == 'ERROR' and \
                    expected.get('status') != 'ERROR':
                found = self.api.get_server(server['id'])
                raise AssertionError('server %s went to ERROR, not %s: %s'
                                     % (server['id'], expected,
                                        found.get('fault')))
            return None

        def what() -> str:
            fields = typing.cast(typing.Mapping[str, typing.Optional[str]],
                                 self.server_fields(server))
            return 'server %s %s; it is %s' % (server['id'], expected, {
                k: fields[k] for k in expected})
        return self.wait(reached, what, timeout)

    def action_events(self, server: records.Server,
                      action: str) -> list[records.ActionEvent]:
        """The events (``event``, ``finish_time``, ``result``) of the
        server's newest ``action`` (e.g. confirmResize); ``[]`` before
        the API recorded that action."""
        actions = [a for a in self.admin_api.get_instance_actions(
            server['id']) if a['action'] == action]
        if not actions:
            return []
        return self.admin_api.get_instance_action_details(
            server['id'], actions[0]['request_id']).get('events', [])

    def wait_action_event(self, server: records.Server, action: str,
                          event: str, timeout: float = backend.WAIT_TIMEOUT,
                          ) -> records.ActionEvent:
        """Wait until the newest ``action`` (e.g. live_migration_cancel)
        of the server has ``event`` (compute_live_migration_abort)
        finished; returns the event (``result``: Success or Error)."""
        def finished() -> typing.Optional[records.ActionEvent]:
            for found in self.action_events(server, action):
                if found['event'] == event and found['finish_time']:
                    return found
            return None
        return self.wait(finished, 'a finished %s event of %s of %s' % (
            event, action, server['id']), timeout)

    def wait_service_state(self, host: str, state: str,
                           timeout: float = backend.WAIT_TIMEOUT) -> None:
        """Wait until the API would say ``state`` ('up'/'down')."""
        self.wait(lambda: self.service_state(host) == state,
                  lambda: 'nova-compute on %s %s (it is %s)' % (
                      host, state, self.service_state(host)), timeout)

    def wait_own_heartbeat(self, host: str,
                           timeout: float = backend.WAIT_TIMEOUT) -> None:
        """After a restart of ``host``'s nova-compute: wait until the API
        shows a heartbeat newer than the one it shows now.

        The killed process's last heartbeat keeps the service "up" for
        ``service_down_time``; the new one's first comes only
        ``INITIAL_REPORTING_DELAY`` (5 s) after it joined its service
        group.  Between the two the scheduler's ComputeFilter and the
        conductor's host check take the host for dead: a move or boot
        in that gap ends NoValidHost (seen in CI: the seed's fix
        variant on the cloud line).  Called once the new process runs,
        so any newer heartbeat is its own."""
        def updated() -> object:
            return self.admin_api.get_services(
                'nova-compute', host)[0].get('updated_at')
        seen = updated()
        self.wait(lambda: updated() != seen,
                  'a heartbeat of the new nova-compute on %s (the API '
                  'still shows %s)' % (host, seen), timeout)

    def attach_volume(self, server: records.Server,
                      timeout: float = backend.WAIT_TIMEOUT) -> str:
        """Attach a new data volume to ``server``; returns its id once
        the server's block device mapping has it and the compute
        connected it (its attachment carries the connector's host: Nova's
        API makes the mapping before the compute's attach runs, so a read
        right after the mapping appeared could still see no host).  A
        tier without a block-storage stand-in refuses."""
        volume_id = self.request_volume_attach(server)

        def connected() -> bool:
            if volume_id not in self.mapped_volumes(server):
                return False
            view = self.server_volumes(server).get(volume_id)
            return bool(view and view['attachments'] and all(
                attachment['host'] for attachment in view['attachments']))
        self.wait(connected,
                  'volume %s attached to server %s' % (volume_id,
                                                       server['id']),
                  timeout)
        return volume_id

    def detach_volume(self, server: records.Server, volume_id: str,
                      timeout: float = backend.WAIT_TIMEOUT) -> None:
        """Detach ``volume_id`` from ``server``; returns once the block
        device mapping no longer has it."""
        self.request_volume_detach(server, volume_id)
        self.wait(lambda: volume_id not in self.mapped_volumes(server),
                  'volume %s detached from server %s' % (volume_id,
                                                         server['id']),
                  timeout)

    def compute_running(self, host: str) -> bool:
        """Whether ``host``'s nova-compute runs: neither crashed (or its
        start failed) nor gracefully stopped and not started again."""
        faults = self.faults
        return not faults.is_crashed(host) and not faults.is_stopped(host)

    def tasks_in_progress(
            self, host: str) -> typing.Optional[list[records.TrackedTask]]:
        """``[{name, instance_uuid}]`` the host's compute manager tracks
        for a graceful stop (faultdriver.manager_tasks), or None when its
        nova-compute is not running."""
        return self.tracked_tasks(host) if self.compute_running(host) \
            else None

    def force_down(self, host: str, down: bool = True) -> None:
        """Mark ``host``'s nova-compute forced down (or up again) through
        the API, as an operator fencing a failed host before evacuating."""
        [service] = self.admin_api.get_services(host=host,
                                                binary='nova-compute')
        self.admin_api.put_service_force_down(service['id'], down)


#: Members written here that a tier must not override: every public
#: method of the shared half, derived, so a member added to it is shared
#: (and checked) without a list to keep.
SHARED = tuple(name for name, value in vars(BackendBase).items()
               if not name.startswith('_') and callable(value))
