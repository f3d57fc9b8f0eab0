"""Bad input, surface 4: saved runs (``scenario report RUN.json``).

Invariant: a file that is not a run this version can render is exit 2
with one line naming the file (and the key when it is the content),
never a traceback; nothing is printed and no ``--html`` page is written.
A real saved run still renders.
"""

import json
import os

import pytest

from tests.unit import badinput

FIXTURE = os.path.join(os.path.dirname(__file__), 'data',
                       'stale-context-run.json')
HINT = 'expected the JSON of a scenario run'

with open(FIXTURE, encoding='utf-8') as _stream:
    RUN = json.load(_stream)
FIRST = next(iter(RUN['variants']))


def changed(path, value):
    return badinput.changed(RUN, path, value)


# (document or raw bytes, what the message says after "<file>: ")
REFUSED = [
    (b'', 'not JSON: Expecting value'),
    (b'{"variants": {', 'not JSON: Expecting'),
    (b'\xff\xfe{}', 'not UTF-8 text (byte 0)'),
    (b'\x7fELF\x00\x00', 'not JSON'),
    (b'[' * 100000, 'not JSON this can read: nested too deeply'),
    (b'{"variants": %s}' % (b'9' * 5000), 'not JSON: Exceeds the limit'),
    ([], 'the document is list, not dict'),
    ({}, 'it has no "variants" mapping'),
    ({'variants': []}, 'variants is list, not dict'),
    ({'variants': {}}, 'variants is empty'),
    ({'variants': {'a': 'ok'}}, 'variants.a is str, not dict'),
    ({'variants': {'a': {'verdict': 'ok'}}}, "variants.a has no 'variant'"),
    ({'variants': {'a': {'variant': 'a', 'verdict': 3}}},
     'variants.a.verdict is int, not str'),
    (changed(['variants', FIRST, 'state'], []),
     'variants.%s.state is list, not dict' % FIRST),
    (changed(['variants', FIRST, 'state', 'faults'], [1]),
     'variants.%s.state.faults[0] is int, not dict' % FIRST),
    (changed(['variants', FIRST, 'timeline'], {}),
     'variants.%s.timeline is dict, not list' % FIRST),
    (changed(['variants', FIRST, 'expectations'], [None]),
     'variants.%s.expectations[0] is NoneType, not dict' % FIRST),
    # Read as the run's records: refused naming the key, before any
    # renderer sees it.
    (changed(['variants', FIRST, 'state', 'hosts'], {'h': 3}),
     'variants.%s.state.hosts.h is int, not a mapping' % FIRST),
    (changed(['variants', FIRST, 'timeline', 0], {'index': 1}),
     "variants.%s.timeline[0] has no 'step'" % FIRST),
]


@pytest.mark.parametrize('content, problem', REFUSED,
                         ids=[str(i) for i in range(len(REFUSED))])
@pytest.mark.parametrize('html', [False, True])
def test_refused_and_nothing_written(capsys, tmp_path, content, problem,
                                     html):
    path = tmp_path / 'run.json'
    path.write_bytes(content if isinstance(content, bytes)
                     else json.dumps(content).encode('utf-8'))
    args = ['--html', tmp_path / 'report.html'] if html else []
    message = badinput.refused(capsys, 'scenario', 'report', path, *args,
                               root=tmp_path)
    assert message.startswith('%s: ' % path)
    assert problem in message
    assert HINT in message


@pytest.mark.parametrize('make, problem', [
    (lambda tmp: tmp / 'missing.json', 'cannot read: No such file'),
    (lambda tmp: tmp, 'not a regular file'),
])
def test_not_a_file(capsys, tmp_path, make, problem):
    path = make(tmp_path)
    message = badinput.refused(capsys, 'scenario', 'report', path,
                               root=tmp_path)
    assert message.startswith('%s: %s' % (path, problem))


def test_a_real_run_still_renders(capsys, tmp_path):
    page = tmp_path / 'report.html'
    code, out, err = badinput.cli(capsys, 'scenario', 'report', FIXTURE,
                                  '--html', page)
    assert code == 0, err
    assert 'Side by side' in out
    assert page.read_text(encoding='utf-8').startswith('<!DOCTYPE html>')
