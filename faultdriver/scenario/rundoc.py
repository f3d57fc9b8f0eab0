"""Read a saved run (``scenario run -f json``) for ``scenario report``.

The file is input like any other: read within :data:`MAX_BYTES`, parsed
without recursion limits reached or 5000-digit numbers converted, and
checked for the parts the reports read before anything is written, so a
truncated, edited or foreign file is :class:`~faultdriver.exception.
ScenarioError` (exit 2) naming the file and the key, never a traceback.
"""

import json
import os
import stat
import typing

from faultdriver import exception
from faultdriver.scenario import variant_report

#: Largest run file read (a run with its logs is a few MiB).
MAX_BYTES = 64 * 1024 * 1024

HINT = ('expected the JSON of a scenario run (faultdriver scenario run '
        'NAME -f json > RUN.json)')


def _fail(path: str, problem: str) -> typing.NoReturn:
    raise exception.ScenarioError('%s: %s; %s' % (path, problem, HINT))


def _shape(path: str, where: str, value: typing.Any,
           kinds: typing.Tuple[type, ...]) -> typing.Any:
    """Fail unless ``value`` is one of ``kinds``."""
    if not isinstance(value, kinds) or isinstance(value, bool):
        _fail(path, '%s is %s, not %s' % (
            where, type(value).__name__,
            ' or '.join(k.__name__ for k in kinds)))
    return value


def _items(path: str, where: str, values: typing.Iterable[typing.Any]
           ) -> None:
    for i, item in enumerate(values):
        _shape(path, '%s[%d]' % (where, i), item, (dict,))


def check(path: str, doc: typing.Any) -> None:
    """The parts of ``doc`` every report renders; ScenarioError if not.
    Its ``variants`` become VariantReports."""
    _shape(path, 'the document', doc, (dict,))
    if 'variants' not in doc:
        _fail(path, 'it has no "variants" mapping')
    variants = _shape(path, 'variants', doc['variants'], (dict,))
    if not variants:
        _fail(path, 'variants is empty')
    for name, report in list(variants.items()):
        where = 'variants.%s' % name
        _shape(path, where, report, (dict,))
        for key in ('variant', 'verdict'):
            if key not in report:
                _fail(path, '%s has no %r' % (where, key))
            _shape(path, '%s.%s' % (where, key), report[key], (str,))

        if 'state' not in report or 'expectations' not in report:
            continue            # did not run: the report shows its error
        state = _shape(path, where + '.state', report['state'], (dict,))
        for key, kinds in (('faults', list), ('migrations', list),
                           ('hosts', dict), ('servers', dict)):
            if key in state:
                _shape(path, '%s.state.%s' % (where, key), state[key],
                       (kinds,))
        for key in ('timeline', 'expectations'):
            _items(path, '%s.%s' % (where, key),
                   _shape(path, '%s.%s' % (where, key),
                          report.get(key, []), (list,)))
        for key in ('faults', 'migrations'):
            _items(path, '%s.state.%s' % (where, key), state.get(key, []))
    for name, report in list(variants.items()):
        try:
            # Through the record: its fields' kinds, its run's records
            # (a run saved before some of their keys existed too).
            variants[name] = variant_report.VariantReport.from_json(
                report, 'variants.%s' % name)
        except ValueError as exc:
            _fail(path, str(exc))


def load(path: str) -> typing.Dict[str, typing.Any]:
    """The run document at ``path``, checked, its ``variants``
    VariantReports; ScenarioError if not."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            _fail(path, 'not a regular file')
        with open(path, 'rb') as stream:
            data = stream.read(MAX_BYTES + 1)
    except OSError as exc:
        _fail(path, 'cannot read: %s' % (exc.strerror or exc))
    if len(data) > MAX_BYTES:
        _fail(path, 'larger than %d bytes' % MAX_BYTES)
    try:
        doc = json.loads(data.decode('utf-8'))
    except UnicodeDecodeError as exc:
        _fail(path, 'not UTF-8 text (byte %d)' % exc.start)
    except RecursionError:
        _fail(path, 'not JSON this can read: nested too deeply')
    except ValueError as exc:
        _fail(path, 'not JSON: %s' % str(exc)[:200])
    check(path, doc)
    return typing.cast(typing.Dict[str, typing.Any], doc)


def rendered(path: str, doc: typing.Dict[str, typing.Any],
             html: bool = False
             ) -> typing.Tuple[str, typing.Optional[str]]:
    """Render the text report (and the HTML page) in memory, so that a
    field of the wrong kind deep in a report is ScenarioError naming the
    variant before any output is written.  Returns (text, html)."""
    from faultdriver.scenario import htmlreport
    from faultdriver.scenario import report
    variants = doc['variants']
    for name, one in variants.items():
        try:
            report.variant_text(one)
        except (KeyError, TypeError, AttributeError, ValueError,
                IndexError) as exc:
            _fail(path, 'variants.%s cannot be rendered (%s: %s)' % (
                name, type(exc).__name__, str(exc)[:200]))
    try:
        text = report.text(variants)
        page = htmlreport.render(doc) if html else None
    except (KeyError, TypeError, AttributeError, ValueError,
            IndexError) as exc:
        _fail(path, 'cannot be rendered (%s: %s)' % (type(exc).__name__,
                                                     str(exc)[:200]))
    return text, page
