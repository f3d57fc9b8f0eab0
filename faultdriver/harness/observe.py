"""Cheap reads of an embedded Nova's state, for polling.

In the embedded Nova an API request runs the whole WSGI stack (routing,
policy, views of every microversion) in the waiting thread: polling the
API costs several times the CPU of a database read, CPU the services
doing the work being waited for then lack.  Waits therefore poll the
database through Nova's own objects, with the derivations the API applies
(server status from ``vm_state``/``task_state``, service state from the
servicegroup API), then read the API once for what they return.
"""

import typing

from nova.api.openstack import common
from nova import context
from nova import exception
from nova import objects
from nova import servicegroup

from faultdriver.scenario import backend_records as records


class Observer:
    """Reads for one embedded Nova (remembers each instance's cell)."""

    def __init__(self) -> None:
        self._cells: typing.Dict[str, typing.Any] = {}
        self._servicegroup = servicegroup.API()

    def _instance(self, uuid: str) -> typing.Any:
        """The instance from its cell's database, with no joined fields;
        None while it is only a build request."""
        ctxt = context.get_admin_context()
        cell = self._cells.get(uuid)
        if cell is None:
            mapping = objects.InstanceMapping.get_by_instance_uuid(ctxt, uuid)
            if mapping.cell_mapping is None:
                return None
            cell = self._cells[uuid] = mapping.cell_mapping
        with context.target_cell(ctxt, cell) as cctxt:
            return objects.Instance.get_by_uuid(cctxt, uuid,
                                                expected_attrs=[])

    def server_fields(self, uuid: str) -> 'records.ServerFields':
        """``{'status', 'host', 'task_state'}`` as the API shows them."""
        instance = self._instance(uuid)
        if instance is None:
            return {'status': 'BUILD', 'host': None,
                    'task_state': 'scheduling'}
        return {'status': common.status_from_state(instance.vm_state,
                                                   instance.task_state),
                'host': instance.host, 'task_state': instance.task_state}

    def server_gone(self, uuid: str) -> bool:
        """Whether the instance is deleted (the API answers 404)."""
        try:
            self._instance(uuid)
        except (exception.InstanceNotFound,
                exception.InstanceMappingNotFound):
            return True
        return False

    @staticmethod
    def migration_statuses(uuid: str) -> typing.List[typing.Tuple[int, str]]:
        """``[(id, status)]`` of the instance's migrations, oldest first."""
        found = objects.MigrationList.get_by_filters(
            context.get_admin_context(), {'instance_uuid': uuid})
        return sorted((m.id, m.status) for m in found)

    def service_state(self, host: str, binary: str = 'nova-compute') -> str:
        """'up' or 'down', as ``GET /os-services`` reports it."""
        service = objects.Service.get_by_host_and_binary(
            context.get_admin_context(), host, binary)
        return 'up' if self._servicegroup.service_is_up(service) else 'down'
