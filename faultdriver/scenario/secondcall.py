"""The user's (or admin's) second call while a step of a move is held:
the ``second-call`` and ``wait-second-call`` steps and the
``second-call`` expectation (schema.yaml).

Why a thread: the step a ``hang`` holds may be reached in any later
step of the scenario -- in a ``decide-resize`` that waits for the
confirm it posted, in a ``settle`` -- so the call cannot be a step put
after the hit.  ``second-call`` starts "the other user" at once: it
waits until the point's hit is held at its barrier, makes the call,
checks that the barrier still holds the thread once the answer came,
then releases it; ``wait-second-call`` joins it before ``recover``.

Why the hold is checked on both sides of the call: a call made once the
operation completed is an ordinary call, not this class; a case whose
call was not made while the step was held is *not reached*
(:func:`judge`), never a pass.  The hold's start is the journal's
``hang`` entry; ``held_before``/``held_after`` are the barrier's count
read just before the request and just after its answer (only this
thread releases the barrier, and the hang's own timeout is far longer).
"""

import dataclasses
import threading
import time
import typing

from faultdriver.scenario import backend
from faultdriver.scenario import backend_records as records

#: The run's steps (faultdriver.scenario.steps.Steps, which imports this
#: module): its ``nova``, ``servers``, ``moves``, ``gone``,
#: ``second_calls``, ``server()`` and ``flavor()``.
Steps = typing.Any

#: The calls a user or admin could make while a move or another
#: operation runs, and the API request each is (``live-migrate``,
#: ``migrate``, ``resize`` and ``evacuate`` repeat the move with the
#: step's ``to``/``flavor``; ``rebuild`` keeps the server's image).
CALLS = ('live-migrate', 'migrate', 'resize', 'evacuate', 'confirm',
         'revert', 'abort', 'delete', 'stop', 'start', 'reboot',
         'shelve', 'shelve-offload', 'unshelve', 'rebuild')
#: The barrier a sweep case's ``hang`` holds its thread at.
BARRIER = 'second-call'
#: Seconds the other user waits for the held hit, by default.
HIT_TIMEOUT = 90.0
#: Seconds it waits for the hit thread to reach the barrier once the hit
#: was counted (the hit is journaled before the thread waits).
HOLD_TIMEOUT = 10.0

#: What :func:`judge` says of a call.
REFUSED = 'refused'
ACCEPTED = 'accepted'
UNCLEAN = 'unclean'
NOT_REACHED = 'not reached'


@dataclasses.dataclass
class Made:
    """One second call: where the step was held, when the call was made,
    what the API answered."""

    server: str
    call: str
    host: str
    point: str
    phase: str
    barrier: str
    #: Wall-clock time of the journal's hang entry (the hold began).
    held_since: typing.Optional[float] = None
    #: Threads held at the barrier just before the request and just
    #: after its answer.
    held_before: int = 0
    held_after: int = 0
    called_at: typing.Optional[float] = None
    answered_at: typing.Optional[float] = None
    #: ``accepted``, the refusal's HTTP status (4xx), or None: no answer
    #: (see ``error``).
    answer: typing.Union[str, int, None] = None
    #: Why there was no answer, or the call was not made (the point never
    #: held, an error that is no refusal: a 5xx, a timeout).
    error: typing.Optional[str] = None
    released: int = 0

    def to_json(self) -> typing.Dict[str, typing.Any]:
        return dataclasses.asdict(self)

    def describe(self) -> str:
        """In words, for the step's detail and the case's report."""
        verdict, why = judge(self)
        return '%s while %s.%s@%s held: %s (%s)' % (
            self.call, self.point, self.phase, self.host,
            self.answer if self.answer is not None else 'no answer',
            verdict if verdict == NOT_REACHED else why)


def judge(made: Made) -> typing.Tuple[str, str]:
    """``(verdict, why)``: ``not reached`` (no call made while the step
    was held: not this class, not counted), ``refused`` (a 4xx: Nova
    refused it cleanly), ``accepted`` (Nova took it: its invariants judge
    whether it was serialised) or ``unclean`` (an answer that is no
    refusal, or none)."""
    if made.called_at is None:
        return NOT_REACHED, made.error or 'the call was not made'
    if not made.held_before or not made.held_after or \
            made.held_since is None or made.held_since > made.called_at:
        return NOT_REACHED, (
            'the hold was not active over the call (held since %s, %d held '
            'before, %d after): not made during the operation' % (
                made.held_since, made.held_before, made.held_after))
    if made.answer == ACCEPTED:
        return ACCEPTED, 'accepted while held (serialised if every ' \
            'invariant holds)'
    if isinstance(made.answer, int) and 400 <= made.answer < 500:
        return REFUSED, 'refused %d while held' % made.answer
    return UNCLEAN, 'neither refused (4xx) nor accepted: %s' % made.error


def request(steps: Steps, made: Made,
            to: typing.Optional[str] = None,
            flavor: typing.Optional[str] = None) -> None:
    """Make ``made.call`` as its user would; raises what the API client
    raises on a refusal."""
    nova = steps.nova
    server = steps.server(made.server)
    uuid = server['id']
    bodies: typing.Dict[str, typing.Optional[records.RequestBody]] = {
        'live-migrate': {'os-migrateLive': {'host': to,
                                            'block_migration': 'auto'}},
        'migrate': {'migrate': {'host': to} if to else None},
        'resize': {'resize': {'flavorRef': steps.flavor(flavor)}}
        if flavor else None,
        'confirm': {'confirmResize': None},
        'revert': {'revertResize': None},
        'stop': {'os-stop': None},
        'start': {'os-start': None},
        'reboot': {'reboot': {'type': 'SOFT'}},
        'shelve': {'shelve': None},
        'unshelve': {'unshelve': None},
    }
    body = bodies.get(made.call)
    if made.call == 'evacuate':
        nova.admin_api.post_server_action(
            uuid, {'evacuate': {'host': to} if to else {}})
    elif made.call == 'shelve-offload':
        nova.admin_api.post_server_action(uuid, {'shelveOffload': None})
    elif made.call == 'rebuild':
        image = server.get('image')
        if not image:
            raise ValueError('second call rebuild: server %s was booted '
                             'from a volume, it has no image to rebuild '
                             'with' % uuid)
        nova.api.post_server_action(
            uuid, {'rebuild': {'imageRef': image['id']}})
    elif made.call == 'abort':
        newest = max(nova.migrations(server), key=lambda m: m['id'])
        nova.admin_api.delete_migration(uuid, newest['id'])
    elif made.call == 'delete':
        nova.api.delete_server(uuid)
    elif body is not None:
        nova.api.post_server_action(uuid, body)
    else:
        raise ValueError('second call %r: unknown, or resize without a '
                         'flavor' % made.call)


def other_user(steps: Steps, made: Made, count: int,
               timeout: float, to: typing.Optional[str],
               flavor: typing.Optional[str]) -> None:
    """What the thread ``second-call`` starts does (fills ``made``)."""
    faults = steps.nova.faults
    try:
        faults.wait_for_hit(made.host, made.point, count, timeout,
                            made.phase)
    except Exception as exc:
        made.error = 'the step was never held: %s' % exc
        return
    deadline = time.monotonic() + HOLD_TIMEOUT
    while not faults.held(made.host).get(made.barrier):
        if time.monotonic() > deadline:
            made.error = ('%s.%s was hit on %s but no thread is held at '
                          'barrier %r' % (made.point, made.phase,
                                          made.host, made.barrier))
            return
        time.sleep(0.05)
    made.held_since = next((
        typing.cast(float, entry['time'])
        for entry in reversed(faults.history())
        if entry.get('kind') == 'fault' and entry.get('action') == 'hang'
        and (entry.get('host'), entry.get('point'),
             entry.get('phase', 'before')) == (made.host, made.point,
                                               made.phase)), None)
    try:
        made.held_before = faults.held(made.host).get(made.barrier, 0)
        made.called_at = time.time()
        try:
            request(steps, made, to, flavor)
            made.answer = ACCEPTED
            if made.call == 'delete':
                # The steps still running stop waiting for it.
                steps.gone.add(made.server)
        except Exception as exc:
            made.answer = steps.nova.refusal_status(exc)
            made.error = '%s: %s' % (type(exc).__name__, str(exc)[:300])
        made.answered_at = time.time()
        made.held_after = faults.held(made.host).get(made.barrier, 0)
        if made.answer == ACCEPTED and made.call in MOVES:
            steps.moves[made.server] = steps.moves.get(made.server, 0) + 1
    finally:
        made.released = faults.release(made.host, made.barrier)


#: The calls that start a move of their own when accepted.
MOVES = ('live-migrate', 'migrate', 'resize', 'evacuate')


def start(steps: Steps, server: str, call: str, host: str,
          point: str, phase: str = 'before', count: int = 1,
          barrier: str = BARRIER, to: typing.Optional[str] = None,
          flavor: typing.Optional[str] = None,
          timeout: float = HIT_TIMEOUT) -> str:
    """The ``second-call`` step: start the other user; returns at once."""
    steps.server(server)            # a KeyError now, not in the thread
    made = Made(server, call, host, point, phase, barrier)
    thread = threading.Thread(
        target=other_user, args=(steps, made, count, timeout, to, flavor),
        name='second-call-%s' % call, daemon=True)
    steps.second_calls.append((made, thread))
    thread.start()
    return 'waiting for %s.%s@%s (hit %d) held, then %s %s' % (
        point, phase, host, count, call, server)


def join(steps: Steps,
         timeout: float = HIT_TIMEOUT + backend.WAIT_TIMEOUT) -> str:
    """The ``wait-second-call`` step: wait for every other user to end
    (fails at ``timeout``); a server whose delete was accepted is waited
    for until gone and is no longer the scenario's."""
    deadline = time.monotonic() + timeout
    said = []
    for made, thread in steps.second_calls:
        thread.join(max(0.0, deadline - time.monotonic()))
        if thread.is_alive():
            raise AssertionError('the second call %s of %s did not end in '
                                 '%ss' % (made.call, made.server, timeout))
        if made.call == 'delete' and made.answer == ACCEPTED and \
                made.server in steps.servers:
            gone = steps.servers[made.server]
            steps.nova.wait(lambda: not steps.nova.server_exists(gone),
                            'server %s deleted (its delete was accepted '
                            'while %s.%s was held)' % (
                                made.server, made.point, made.phase),
                            backend.SERVER_TIMEOUT)
            del steps.servers[made.server]
        said.append(made.describe())
    return '; '.join(said) or 'no second call'


def checked(steps: Steps, state: typing.Any,
            server: str) -> typing.Tuple[bool, str, typing.Any]:
    """The ``second-call`` expectation: every second call of ``server``
    was made while its step was held and refused cleanly (4xx) or
    accepted; ``actual``: each call with its verdict (a sweep counts a
    case whose call was ``not reached`` as neither ok nor a finding)."""
    found = [made for made, _thread in steps.second_calls
             if made.server == server]
    actual = [dict(made.to_json(), verdict=judge(made)[0],
                   why=judge(made)[1]) for made in found]
    met = bool(found) and all(a['verdict'] in (REFUSED, ACCEPTED)
                              for a in actual)
    return met, ('%s: each second call made while its step was held, '
                 'refused (4xx) or accepted' % server), actual
