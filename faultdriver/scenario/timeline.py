"""One variant's report as a time-ordered list of events on lanes.

The sequence diagram (:mod:`faultdriver.scenario.svg`) draws these: the
scenario's steps start on the ``API`` lane (an arrow to the host a step
names), faults fired sit on the lane of the host they fired on, and each
migration record is an arrow from its source to its destination when it
was created, with its final status where it was last updated.  Times are
seconds from step 0 (report ``steps_started_at``), the clock the
timeline's ``At`` column uses.
"""

import dataclasses
import datetime
import typing

from faultdriver import journal
from faultdriver.scenario import model
from faultdriver.scenario import runstate
from faultdriver.scenario import variant_report

Report = variant_report.VariantReport

API = 'API'
#: Migration statuses that mean it went wrong.
BAD_STATUSES = ('error', 'failed')
DASH = ' \u2014 '


@dataclasses.dataclass
class Event:
    at: float                 # seconds from step 0
    kind: str                 # step, note, fault, crash, periodic, shutdown,
    #                           migration, migration-status
    lane: str                 # where it starts (or sits)
    text: str                 # the sentence in the diagram's text column
    tag: str = ''             # short text on the arrow or marker
    to: typing.Optional[str] = None   # lane an arrow goes to
    group: str = ''           # ties a migration's creation to its status
    style: str = ''           # CSS class: ok, bad, hang, ...
    down: bool = False        # the host is dead from here ...
    up: bool = False          # ... until here
    tip: str = ''             # hover text: everything known


def lanes(report: Report) -> typing.List[str]:
    """``API`` then every host: the scenario's, then any other named."""
    state = report.state
    found = [API] + list(state.hosts if state else ())
    named: typing.List[typing.Optional[str]] = [
        f.host for f in (state.faults if state else ())]
    for m in state.migrations if state else ():
        named += [m.source_compute, m.dest_compute]
    for entry in report.timeline:
        named.append((entry.args or {}).get('host'))
    for host in named:
        if host and host not in found:
            found.append(host)
    return found


def _epoch(stamp: typing.Optional[str]) -> typing.Optional[float]:
    """Seconds since the epoch of an API timestamp (UTC, ISO 8601)."""
    if not stamp:
        return None
    when = datetime.datetime.fromisoformat(str(stamp).replace('Z', ''))
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.timezone.utc)
    return when.timestamp()


def _args(entry: runstate.TimelineEntry
          ) -> typing.Tuple[str, typing.Dict[str, typing.Any]]:
    """A step's kind and arguments (parsed from its text in reports
    written before the runner recorded them)."""
    if entry.kind is not None:
        return entry.kind, dict(entry.args or {})
    kind, _, rest = entry.step.partition(' ')
    args = dict(part.split('=', 1) for part in rest.split(' ')
                if '=' in part and part.split('=', 1)[0].isidentifier())
    return kind, args


def _step(entry: runstate.TimelineEntry) -> Event:
    kind, args = _args(entry)
    host = args.pop('host', None)
    words = [kind]
    if 'server' in args:
        words.append(str(args.pop('server')))
    # A move's host is where it goes, a wait's what it watches: a note on
    # the API lane, not an arrow to the host that acts.
    arrow = bool(host) and kind not in model.MOVES and \
        not kind.startswith('wait')
    if host and not arrow:
        words.append(('-> %s' if kind in model.MOVES else 'host=%s') % host)
    words += ['%s=%s' % item for item in args.items()]
    detail = entry.detail or ''
    if (entry.seconds or 0) >= 0.5:
        detail = ('%s (%.1fs)' % (detail, entry.seconds)).strip()
    style = 'step'
    if entry.status == 'failed':
        style = 'bad'
        detail = 'FAILED: ' + detail
    elif kind == 'periodic':
        style = 'bad' if 'ERROR' in detail else 'ok'
    elif kind == 'restart':
        style = 'ok'
    elif kind in model.MOVES:
        style = 'migration'
    return Event(at=entry.start, kind='step' if arrow else 'note',
                 lane=API, to=host if arrow else None,
                 tag=kind if arrow else '',
                 text=' '.join(words) + (DASH + detail if detail else ''),
                 style=style, down=kind in ('crash', 'stop'),
                 up=kind == 'restart',
                 tip='step %s: %s: %s %s' % (
                     entry.index, entry.step, entry.status,
                     entry.detail or ''))


def _fault(fault: journal.JournalEntry, t0: float) -> Event:
    host = fault.host
    tip = ' '.join('%s=%s' % (k, v) for k, v in fault.to_json().items()
                   if k != 'time')
    where = '%s.%s' % (fault.point, fault.phase)
    if fault.kind == 'periodic':
        bad = bool(fault.error)
        text = 'periodic at %s on %s: %s' % (
            where, host, ('error: %s' % fault.error) if bad else
            ('not run: %s' % fault.skipped) if fault.skipped else
            'no error')
        if fault.waited_for_lock:
            text += ', waited for the tracker lock'
        return Event(at=fault.time - t0, kind='periodic', lane=host,
                     tag='periodic', text=text, style='bad' if bad else 'ok',
                     tip=tip)
    if fault.kind == 'shutdown':
        text = 'graceful stop of nova-compute on %s (rule at %s): %s' % (
            host, where, fault.outcome)
        if fault.duration_seconds is not None:
            text += ' in %ss' % fault.duration_seconds
        bad = bool(fault.error) or fault.outcome == 'killed'
        return Event(at=fault.time - t0, kind='shutdown', lane=host,
                     tag='shutdown', text=text, style='bad' if bad else 'ok',
                     down=fault.outcome in ('finished', 'killed'),
                     tip=tip)
    action = fault.action
    # A fired fault's entry has its action (JournalEntry checks it).
    assert action is not None
    text = '%s on %s hit %s: %s' % (where, host, fault.hit, action)
    crash = action == 'crash'
    return Event(at=fault.time - t0, kind='crash' if crash else 'fault',
                 lane=host, tag='CRASH' if crash else action,
                 text=('%s%snova-compute on %s dies' % (text, DASH, host)
                       if crash else text),
                 style='crash' if crash else 'fault-%s' % action, down=crash,
                 tip=tip)


def _migration(m: runstate.RunMigration, t0: float) -> typing.List[Event]:
    name = 'migration %s (%s of %s, %s -> %s)' % (
        m.id, m.type or 'move', m.server, m.source_compute,
        m.dest_compute)
    tip = ' '.join('%s=%s' % item for item in m.to_json().items())
    # A migration refused before a destination was chosen (a failed
    # pre-check of the conductor's) has none: drawn on its source.
    lane = str(m.source_compute)
    to = m.dest_compute or lane
    group = 'migration %s' % m.id
    events = []
    created = _epoch(m.created_at)
    if created is not None:
        events.append(Event(
            at=created - t0, kind='migration', tag='migration %s' % m.id,
            text='%s created' % name, style='migration', lane=lane, to=to,
            tip=tip, group=group))
    updated = _epoch(m.updated_at)
    if updated is not None:
        events.append(Event(
            at=updated - t0, kind='migration-status', tag=m.status,
            text='%s: %s' % (name, m.status),
            style='bad' if m.status in BAD_STATUSES else 'ok', lane=lane,
            to=to, tip=tip, group=group))
    return events


def events(report: Report) -> typing.List[Event]:
    """Every event of the variant, in time order (steps first on ties)."""
    state = report.state
    found = [_step(entry) for entry in report.timeline]
    t0 = report.steps_started_at
    if t0 is not None and state is not None:
        found += [_fault(f, t0) for f in state.faults]
        for m in state.migrations:
            found += _migration(m, t0)
    return sorted(found, key=lambda e: e.at)
