"""A variant's events as a sequence diagram: one inline SVG, no scripts.

One lane per actor (``API``, then each compute host), one row per event
in time order, the time in the left gutter and what happened in a text
column on the right (hover any row for every recorded field).  A crash
is a red circled cross on the host's lane, and the lane stays red and
dashed while that nova-compute is dead; each migration is a purple arrow
from its source to its destination, shaded until its final status.
"""

from html import escape
import typing

from faultdriver.scenario import timeline

ROW = 24            # height of one event row
HEAD = 54           # lane name boxes
FOOT = 30
GUTTER = 58         # time column
GAP = 150           # between lanes
TEXT_WIDTH = 700    # text column
CHAR = 6.7          # average width of a 12px character
COLOURS = {
    'step': '#455a64', 'ok': '#2e7d32', 'bad': '#c62828',
    'crash': '#c62828', 'migration': '#6a1b9a', 'fault-hang': '#ef6c00',
    'fault-delay': '#f9a825', 'fault-raise': '#ad1457',
    'fault-periodic': '#1565c0', 'fault-log': '#607d8b',
    'fault-off': '#90a4ae', 'note': '#78909c',
}


#: Lanes' x coordinates; an event's ``to`` is looked up in it (a lane
#: for the kinds that draw to one).
Xs = typing.Dict[typing.Optional[str], float]
#: ``(lanes, first row, last row, kind)``: a host down, a migration in
#: flight (:func:`_intervals`).
Span = typing.Tuple[typing.Tuple[typing.Optional[str], ...], int, int, str]


def colour(style: str) -> str:
    return COLOURS.get(style, '#5d4037')


def _attrs(values: typing.Mapping[str, object]) -> str:
    return ' '.join('%s="%s"' % (k.rstrip('_').replace('_', '-'),
                                 escape(str(v)))
                    for k, v in values.items())


def _el(name: str, body: str = '', **attrs: object) -> str:
    if body:
        return '<%s %s>%s</%s>' % (name, _attrs(attrs), body, name)
    return '<%s %s/>' % (name, _attrs(attrs))


def _text(x: float, y: float, text: str, size: int = 12,
          fill: str = '#263238', **attrs: object) -> str:
    return _el('text', escape(text), x=x, y=y, font_size=size, fill=fill,
               **attrs)


def _fit(text: str, width: float) -> str:
    limit = int(width / CHAR)
    return text if len(text) <= limit else text[:limit - 1] + '\u2026'


def _arrow(x1: float, x2: float, y: float, stroke: str,
           width: float = 1.5) -> str:
    """A horizontal arrow from x1 to x2 with a filled head at x2."""
    sign = 1 if x2 > x1 else -1
    head = 6 + 2 * width
    return (_el('line', x1=x1, y1=y, x2=x2 - sign * head, y2=y,
                stroke=stroke, stroke_width=width) +
            _el('polygon', fill=stroke, points='%s,%s %s,%s %s,%s' % (
                x2, y, x2 - sign * head, y - head / 2,
                x2 - sign * head, y + head / 2)))


def _crash(x: float, y: float) -> str:
    d = 5
    return ''.join([
        _el('circle', cx=x, cy=y, r=10, fill=colour('crash')),
        _el('path', d='M%s %sL%s %sM%s %sL%s %s' % (
            x - d, y - d, x + d, y + d, x - d, y + d, x + d, y - d),
            stroke='#fff', stroke_width=2.5)])


def _marker(event: timeline.Event, x: float, y: float) -> str:
    fill = colour(event.style)
    if event.kind == 'crash':
        return _crash(x, y) + _text(x + 14, y + 4, event.tag, 12, fill,
                                    font_weight='bold')
    if event.kind == 'periodic':
        shape = _el('circle', cx=x, cy=y, r=6, fill=fill)
    else:
        shape = _el('polygon', fill=fill, points='%s,%s %s,%s %s,%s %s,%s' % (
            x, y - 8, x + 8, y, x, y + 8, x - 8, y))
    return shape + _text(x + 11, y + 4, event.tag, 11, fill)


def _intervals(events: typing.Sequence[timeline.Event]
               ) -> typing.List[Span]:
    """``[(lane, first row, last row, kind)]``: hosts down, migrations
    in flight."""
    spans: typing.List[Span] = []
    down: typing.Dict[typing.Optional[str], int] = {}
    moving: typing.Dict[str, typing.Tuple[
        int, typing.Tuple[str, typing.Optional[str]]]] = {}
    for row, e in enumerate(events):
        host = e.to if e.kind == 'step' else e.lane
        if e.down and host not in down:
            down[host] = row
        if e.up and host in down:
            spans.append(((host,), down.pop(host), row, 'down'))
        if e.kind == 'migration':
            moving[e.group] = (row, (e.lane, e.to))
        if e.kind == 'migration-status' and e.group in moving:
            start, pair = moving.pop(e.group)
            spans.append((pair, start, row, 'moving'))
    end = len(events) - 1
    spans += [((host,), row, end, 'down') for host, row in down.items()]
    spans += [(pair, row, end, 'moving') for row, pair in moving.values()]
    return spans


def _event(event: timeline.Event, x: Xs, y: float) -> str:
    if event.kind == 'note':
        size = 10 if event.style == 'migration' else 8
        return _el('rect', x=x[event.lane] - size / 2, y=y - size / 2,
                   width=size, height=size,
                   fill=colour('note' if event.style == 'step'
                               else event.style))
    if event.kind == 'step':
        out = _arrow(x[event.lane], x[event.to], y, colour(event.style))
        out += _text(x[event.lane] + 8, y - 4, event.tag, 10,
                     colour(event.style))
        if event.down and event.tag == 'crash':
            out += _crash(x[event.to], y)
        return out
    if event.kind == 'migration':
        a, b = x[event.lane], x[event.to]
        return (_arrow(a, b, y, colour('migration'), 3) +
                _text((a + b) / 2, y - 5, event.tag, 10, colour('migration'),
                      text_anchor='middle'))
    if event.kind == 'migration-status':
        middle = (x[event.lane] + x[event.to]) / 2
        width = len(event.tag) * 7 + 14
        return (_el('rect', x=middle - width / 2, y=y - 9, width=width,
                    height=18, rx=9, fill=colour(event.style)) +
                _text(middle, y + 4, event.tag, 11, '#fff',
                      text_anchor='middle', font_weight='bold'))
    return _marker(event, x[event.lane], y)


def diagram(report: timeline.Report) -> str:
    """The SVG of one variant (an ``<svg>`` element, as text)."""
    lanes = timeline.lanes(report)
    events = timeline.events(report)
    x: Xs = {lane: GUTTER + 70 + i * GAP for i, lane in enumerate(lanes)}
    text_x = x[lanes[-1]] + 90
    width = text_x + TEXT_WIDTH
    height = HEAD + ROW * max(len(events), 1) + FOOT

    def cy(row: int) -> float:
        return HEAD + ROW * row + ROW / 2
    out: typing.List[str] = []
    for row, e in enumerate(events):
        if row % 2:
            out.append(_el('rect', x=0, y=HEAD + ROW * row, width=width,
                           height=ROW, fill='#f5f7f8'))
    for pair, first, last, kind in _intervals(events):
        xs = [x[lane] for lane in pair]
        top, bottom = cy(first), cy(last)
        if kind == 'down':
            out.append(_el('rect', x=xs[0] - 12, y=top, width=24,
                           height=max(bottom - top, 4), fill='#ffcdd2',
                           fill_opacity=0.7))
        else:
            out.append(_el('rect', x=min(xs), y=top,
                           width=abs(xs[1] - xs[0]) or 4,
                           height=max(bottom - top, 4),
                           fill=colour('migration'), fill_opacity=0.07))
    for lane in lanes:
        out.append(_el('line', x1=x[lane], y1=HEAD - 6, x2=x[lane],
                       y2=height - FOOT + 6, stroke='#b0bec5',
                       stroke_width=2, data_lane=lane))
    for pair, first, last, kind in _intervals(events):
        if kind == 'down':
            out.append(_el('line', x1=x[pair[0]], y1=cy(first),
                           x2=x[pair[0]], y2=cy(last), stroke='#c62828',
                           stroke_width=2, stroke_dasharray='5 4'))
    for row, e in enumerate(events):
        y = cy(row)
        body = ''.join([
            _el('title', escape(e.tip or e.text)),
            _text(GUTTER - 8, y + 4, '%.1f' % e.at, 11, '#78909c',
                  text_anchor='end'),
            _event(e, x, y),
            _text(text_x, y + 4, _fit(e.text, TEXT_WIDTH), 12,
                  colour(e.style) if e.style in ('bad', 'crash')
                  else '#263238',
                  font_weight='bold' if e.style == 'crash' else 'normal'),
        ])
        out.append(_el('g', body, class_='event ' + e.kind,
                       data_lane=e.to if e.kind == 'step' else e.lane))
    for lane in lanes:
        host = lane != timeline.API
        out.append(_el('g', ''.join([
            _el('rect', x=x[lane] - 55, y=6, width=110, height=38, rx=5,
                fill='#e3f2fd' if host else '#eceff1', stroke='#90a4ae'),
            _text(x[lane], 23, lane, 13, text_anchor='middle',
                  font_weight='bold'),
            _text(x[lane], 37, 'nova-compute' if host else 'scenario steps',
                  10, '#607d8b', text_anchor='middle'),
            _text(x[lane], height - 8, lane, 11, '#607d8b',
                  text_anchor='middle')]), class_='lane', data_lane=lane))
    out.append(_text(GUTTER - 8, 30, 't (s)', 11, '#607d8b',
                     text_anchor='end'))
    out.append(_text(text_x, 30, 'what happened (hover a row for details)',
                     11, '#607d8b'))
    return _svg(width, height, ''.join(out), 'sequence-diagram')


def _svg(width: float, height: float, body: str, css: str = 'icon') -> str:
    return ('<svg class="%s" width="%d" height="%d" viewBox="0 0 %d %d" '
            'font-family="Helvetica, Arial, sans-serif" role="img">%s</svg>'
            % (css, width, height, width, height, body))


def legend() -> typing.List[typing.Tuple[str, str]]:
    """The symbols of :func:`diagram`: ``[(icon as SVG text, meaning)]``."""
    items = [
        (_arrow(4, 40, 12, colour('step')), 'step on a host'),
        (_arrow(4, 40, 12, colour('bad')), 'periodic step that logged an '
                                           'error (green: none)'),
        (_el('rect', x=18, y=8, width=8, height=8, fill=colour('note')),
         'API step (wait, reset)'),
        (_el('rect', x=17, y=7, width=10, height=10,
             fill=colour('migration')), 'move requested'),
        (_arrow(4, 40, 12, colour('migration'), 3), 'migration created'),
        (_el('rect', x=4, y=3, width=40, height=18, rx=9,
             fill=colour('ok')), 'its final status'),
        (_crash(22, 12), 'crash'),
        (_el('rect', x=10, y=0, width=24, height=24, fill='#ffcdd2') +
         _el('line', x1=22, y1=0, x2=22, y2=24, stroke='#c62828',
             stroke_width=2, stroke_dasharray='5 4'), 'host down'),
        (_marker(timeline.Event(0, 'fault', '', '', style='fault-hang'),
                 22, 12), 'fault fired'),
        (_el('circle', cx=22, cy=12, r=6, fill=colour('ok')),
         'periodic action ran (red: it failed)'),
    ]
    return [(_svg(46, 24, icon), text) for icon, text in items]
