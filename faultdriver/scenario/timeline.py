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

from faultdriver.scenario import model

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
    to: str = None            # lane an arrow goes to
    group: str = ''           # ties a migration's creation to its status
    style: str = ''           # CSS class: ok, bad, hang, ...
    down: bool = False        # the host is dead from here ...
    up: bool = False          # ... until here
    tip: str = ''             # hover text: everything known


def lanes(report):
    """``API`` then every host: the scenario's, then any other named."""
    state = report.get('state', {})
    found = [API] + list(state.get('hosts', ()))
    named = [f['host'] for f in state.get('faults', ())]
    for m in state.get('migrations', ()):
        named += [m['source_compute'], m['dest_compute']]
    for entry in report.get('timeline', ()):
        named.append((entry.get('args') or {}).get('host'))
    for host in named:
        if host and host not in found:
            found.append(host)
    return found


def _epoch(stamp):
    """Seconds since the epoch of an API timestamp (UTC, ISO 8601)."""
    if not stamp:
        return None
    when = datetime.datetime.fromisoformat(str(stamp).replace('Z', ''))
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.timezone.utc)
    return when.timestamp()


def _args(entry):
    """A step's kind and arguments (parsed from its text in reports
    written before the runner recorded them)."""
    if 'kind' in entry:
        return entry['kind'], dict(entry.get('args') or {})
    kind, _, rest = entry['step'].partition(' ')
    args = dict(part.split('=', 1) for part in rest.split(' ')
                if '=' in part and part.split('=', 1)[0].isidentifier())
    return kind, args


def _step(entry):
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
    detail = entry.get('detail') or ''
    if (entry.get('seconds') or 0) >= 0.5:
        detail = ('%s (%.1fs)' % (detail, entry['seconds'])).strip()
    style = 'step'
    if entry.get('status') == 'failed':
        style = 'bad'
        detail = 'FAILED: ' + detail
    elif kind == 'periodic':
        style = 'bad' if 'ERROR' in detail else 'ok'
    elif kind == 'restart':
        style = 'ok'
    elif kind in model.MOVES:
        style = 'migration'
    return Event(at=entry['start'], kind='step' if arrow else 'note',
                 lane=API, to=host if arrow else None,
                 tag=kind if arrow else '',
                 text=' '.join(words) + (DASH + detail if detail else ''),
                 style=style, down=kind in ('crash', 'stop'),
                 up=kind == 'restart',
                 tip='step %s: %s: %s %s' % (
                     entry['index'], entry['step'], entry.get('status'),
                     entry.get('detail') or ''))


def _fault(fault, t0):
    host = fault['host']
    tip = ' '.join('%s=%s' % (k, v) for k, v in fault.items() if k != 'time')
    where = '%s.%s' % (fault['point'], fault.get('phase', 'before'))
    if fault['kind'] == 'periodic':
        bad = bool(fault.get('error'))
        text = 'periodic at %s on %s: %s' % (
            where, host, ('error: %s' % fault['error']) if bad else
            ('not run: %s' % fault['skipped']) if fault.get('skipped') else
            'no error')
        if fault.get('waited_for_lock'):
            text += ', waited for the tracker lock'
        return Event(at=fault['time'] - t0, kind='periodic', lane=host,
                     tag='periodic', text=text, style='bad' if bad else 'ok',
                     tip=tip)
    if fault['kind'] == 'shutdown':
        text = 'graceful stop of nova-compute on %s (rule at %s): %s' % (
            host, where, fault['outcome'])
        if fault.get('duration_seconds') is not None:
            text += ' in %ss' % fault['duration_seconds']
        bad = bool(fault.get('error')) or fault['outcome'] == 'killed'
        return Event(at=fault['time'] - t0, kind='shutdown', lane=host,
                     tag='shutdown', text=text, style='bad' if bad else 'ok',
                     down=fault['outcome'] in ('finished', 'killed'),
                     tip=tip)
    action = fault['action']
    text = '%s on %s hit %s: %s' % (where, host, fault.get('hit', '?'),
                                    action)
    crash = action == 'crash'
    return Event(at=fault['time'] - t0, kind='crash' if crash else 'fault',
                 lane=host, tag='CRASH' if crash else action,
                 text=('%s%snova-compute on %s dies' % (text, DASH, host)
                       if crash else text),
                 style='crash' if crash else 'fault-' + action, down=crash,
                 tip=tip)


def _migration(m, t0):
    name = 'migration %s (%s of %s, %s -> %s)' % (
        m['id'], m.get('type') or 'move', m['server'], m['source_compute'],
        m['dest_compute'])
    tip = ' '.join('%s=%s' % item for item in m.items())
    common = dict(lane=m['source_compute'], to=m['dest_compute'], tip=tip,
                  group='migration %s' % m['id'])
    events = []
    created = _epoch(m.get('created_at'))
    if created is not None:
        events.append(Event(
            at=created - t0, kind='migration', tag='migration %s' % m['id'],
            text='%s created' % name, style='migration', **common))
    updated = _epoch(m.get('updated_at'))
    if updated is not None:
        events.append(Event(
            at=updated - t0, kind='migration-status', tag=m['status'],
            text='%s: %s' % (name, m['status']),
            style='bad' if m['status'] in BAD_STATUSES else 'ok', **common))
    return events


def events(report):
    """Every event of the variant, in time order (steps first on ties)."""
    state = report.get('state', {})
    found = [_step(entry) for entry in report.get('timeline', ())]
    t0 = report.get('steps_started_at')
    if t0 is not None:
        found += [_fault(f, t0) for f in state.get('faults', ())]
        for m in state.get('migrations', ()):
            found += _migration(m, t0)
    return sorted(found, key=lambda e: e.at)
