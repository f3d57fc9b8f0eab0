"""The server operations that are not moves, as step kinds: shelve,
shelve-offload, unshelve, rebuild, and the server's stop, start and
reboot (``stop-server``, ``start-server``, ``reboot-server``: ``stop``
and ``restart`` are a host's nova-compute).

Why a module of registered kinds (:mod:`faultdriver.scenario.stepkinds`)
and not ``Steps.do_<kind>`` methods: each is one API request, the same
on every tier (the backend contract's ``post_server_action``), so its
declaration -- schema entry, run, export -- is one record here.

Like a move step, each asks the API and returns at once: the API sets
the server's task state before it casts to the compute, and ``settle``
(and ``recover``) wait, without failing, until the task state of every
server an operation was asked of cleared, or stopped changing
(``Steps.operated``, read by :mod:`faultdriver.scenario.recovery`).  A
fault that makes the operation fail is the sweep's to judge, not a
failed step; so is the API's refusal of a later operation the fault
left the server unfit for (``may-be-refused: true``, as for a confirm).
"""

import typing

from faultdriver.scenario import backend
from faultdriver.scenario import specs

#: The run's steps (faultdriver.scenario.steps.Steps, which this module
#: must not import: the registry, which Steps imports, imports this).
Steps = typing.Any
#: faultdriver.export.writer.Writer.
Writer = typing.Any

_SERVER = {'server': {'$ref': '#/$defs/server'},
           'may-be-refused': {'$ref': '#/$defs/may-be-refused'}}


def _post(steps: Steps, server: str, body: typing.Dict[str, typing.Any],
          admin: bool = False,
          may_be_refused: bool = False) -> typing.Optional[str]:
    """Ask the API for ``body`` on ``server``; ``settle`` waits for it.
    With ``may_be_refused`` a refusal (4xx) is the step's outcome, not its
    failure: a sweep's fault in an earlier operation leaves the server in
    a state the API refuses the next one in, and ``recover`` must still
    run."""
    api = steps.nova.admin_api if admin else steps.nova.api
    try:
        api.post_server_action(steps.server(server)['id'], body)
    except Exception as exc:
        status = steps.nova.refusal_status(exc)
        if not may_be_refused or status is None:
            raise
        return 'refused (%d): %s' % (status, str(exc)[:200])
    steps.operated.add(server)
    return 'accepted' if may_be_refused else None


def _export_post(writer: Writer, where: str, server: str, body: str,
                 api: str = 'self.api', may_be_refused: bool = False) -> None:
    """The request, then the wait ``settle`` makes for it: until Nova
    cleared the server's task state (Nova's own helpers wait so); with
    ``may_be_refused``, the wait only if the API took it."""
    name = writer.server(server, where)
    indent = '    ' if may_be_refused else ''
    if may_be_refused:
        writer.comment('The API may refuse it (a 4xx): what follows shows '
                       'what Nova did.')
        writer.need('api_client')
        writer.line('try:')
    head = '%s%s.post_server_action(%s[\'id\'], ' % (indent, api, name)
    if len(head) + len(body) + 9 <= 79:
        writer.line(head + body + ')')
    else:
        writer.line(head.rstrip())
        writer.line('%s    %s)' % (indent, body))
    if may_be_refused:
        writer.line('except client.OpenStackApiException as exc:')
        writer.line('    self.assertLess(exc.response.status_code, 500)')
        writer.line('else:')
    writer.line('%s%s = self._wait_for_server_parameter(' % (indent, name))
    writer.line("%s    %s, {'OS-EXT-STS:task_state': None}, max_retries=%d)"
                % (indent, name, backend.WAIT_TIMEOUT * 2))


Body = typing.Callable[..., typing.Dict[str, typing.Any]]


def _kind(name: str, description: str, body: Body, admin: bool = False,
          extra: typing.Optional[typing.Dict[str, typing.Any]] = None,
          ) -> specs.StepKind:
    """A kind whose request is ``body(**arguments)`` (its arguments but
    ``server``, with their defaults: ``extra``'s schema entries)."""

    def run(steps: Steps, server: str, may_be_refused: bool = False,
            **given: typing.Any) -> typing.Optional[str]:
        return _post(steps, server, body(**given), admin, may_be_refused)

    def export(writer: Writer, where: str, server: str,
               may_be_refused: bool = False, **given: typing.Any) -> None:
        _export_post(writer, where, server, repr(body(**given)),
                     'self.admin_api' if admin else 'self.api',
                     may_be_refused)
    return specs.StepKind(name, run, {
        'description': description, 'type': 'object',
        'additionalProperties': False, 'required': ['server'],
        'properties': dict(_SERVER, **(extra or {}))}, export,
        operates=True)


def _rebuild_run(steps: Steps, server: str,
                 may_be_refused: bool = False) -> typing.Optional[str]:
    found = steps.server(server)
    return _post(steps, server, {'rebuild': {'imageRef': _image(found)}},
                 may_be_refused=may_be_refused)


def _image(server: typing.Mapping[str, typing.Any]) -> str:
    """The image the server was booted from (a rebuild keeps it); a
    server booted from a volume has none to give."""
    image = server.get('image')
    if not image:
        raise AssertionError('server %s was booted from a volume: a '
                             'rebuild step rebuilds with the image the '
                             'server has, and it has none' % server['id'])
    return typing.cast(str, image['id'])


def _rebuild_export(writer: Writer, where: str, server: str,
                    may_be_refused: bool = False) -> None:
    name = writer.server(server, where)
    _export_post(writer, where, server,
                 "{'rebuild': {'imageRef': %s['image']['id']}}" % name,
                 may_be_refused=may_be_refused)


KINDS = (
    _kind('shelve', 'Shelve the server (does not wait): Nova powers it '
          'off and snapshots it to an image; with the scenario\'s '
          '`shelved-offload-time` 0 it also offloads it (SHELVED_OFFLOADED, '
          'no host), with -1 it stays SHELVED on its host.',
          lambda: {'shelve': None}),
    _kind('shelve-offload', 'Offload a SHELVED server (does not wait), as '
          'an admin: its guest is destroyed and its host\'s resources '
          'freed (SHELVED_OFFLOADED, no host).',
          lambda: {'shelveOffload': None}, admin=True),
    _kind('unshelve', 'Unshelve the server (does not wait): a SHELVED '
          'one is powered on where it is; a SHELVED_OFFLOADED one is '
          'scheduled, claimed and spawned from its snapshot on a host '
          'the scheduler picks, and the snapshot deleted.',
          lambda: {'unshelve': None}),
    specs.StepKind('rebuild', _rebuild_run, {
        'description': 'Rebuild the server with the image it has (does '
        'not wait): on its own host, Nova powers it off, destroys and '
        'spawns its guest again (the driver\'s rebuild where it has one).',
        'type': 'object', 'additionalProperties': False,
        'required': ['server'], 'properties': dict(_SERVER)},
        _rebuild_export, operates=True),
    _kind('stop-server', 'Stop the server (os-stop; does not wait): its '
          'guest is powered off (SHUTOFF).  `stop` is a host\'s '
          'nova-compute.', lambda: {'os-stop': None}),
    _kind('start-server', 'Start a SHUTOFF server (os-start; does not '
          'wait).', lambda: {'os-start': None}),
    _kind('reboot-server', 'Reboot the server (does not wait), SOFT (the '
          'default) or HARD.',
          lambda type='SOFT': {'reboot': {'type': type}},
          extra={'type': {'enum': ['SOFT', 'HARD'],
                          'description': 'Default SOFT.'}}),
)
