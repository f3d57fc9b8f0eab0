"""Bad input, surface 6: the journal (``[fault_injection] journal_path``
and the file it names).

Invariant: a path that cannot be a journal is refused when the journal
opens, with a message naming ``journal_path``, and nothing is created;
a write that fails later (a full disk: ``/dev/full``) never replaces the
fault: the fault fires as written, the entry stays in memory and an
ERROR line with the FAULTDRIVER-JOURNAL-ERROR marker names the path; a
line cut short on disk is skipped when the journal is read.
"""

import json
import logging
import os
import subprocess
import sys
import textwrap

import pytest

from faultdriver import engine as engine_module
from faultdriver import exception
from faultdriver import journal as journal_module
from tests.unit import badinput
from tests.unit import fakes

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
FULL = '/dev/full'
needs_dev_full = pytest.mark.skipif(not os.path.exists(FULL),
                                    reason='no /dev/full here')


def _under_a_file(tmp_path):
    (tmp_path / 'file').write_text('')
    return tmp_path / 'file' / 'journal'


def _fifo(tmp_path):
    path = tmp_path / 'fifo'
    os.mkfifo(path)
    return path


# (make the path under tmp_path, what the message must say)
REFUSED = [
    (lambda tmp: tmp, 'is a directory; expected a file name'),
    (lambda tmp: _fifo(tmp), 'exists and is not a regular file'),
    (_under_a_file, 'is not a directory'),
]


@pytest.mark.parametrize('make, problem', REFUSED)
def test_unusable_path_is_refused_naming_journal_path(tmp_path, make,
                                                      problem):
    path = str(make(tmp_path))
    before = badinput.tree(tmp_path)
    with pytest.raises(exception.ConfigError) as caught:
        journal_module.Journal(path)
    assert str(caught.value).startswith(
        '[fault_injection] journal_path %s ' % path)
    assert problem in str(caught.value)
    assert badinput.tree(tmp_path) == before


@pytest.mark.skipif(os.geteuid() == 0, reason='root may write anywhere')
def test_unwritable_directory_is_refused(tmp_path):
    locked = tmp_path / 'locked'
    locked.mkdir(mode=0o500)
    with pytest.raises(exception.ConfigError,
                       match='journal_path .* not writable by uid'):
        journal_module.Journal(str(locked / 'journal'))


@needs_dev_full
@pytest.mark.parametrize('rule, raised', [
    ('spawn: record(x)', None),
    ('spawn: delay(0)', None),
])
def test_full_disk_fault_still_fires_and_is_loud(caplog, rule, raised):
    journal = journal_module.Journal(FULL)
    engine = engine_module.Engine('h1', fakes.ACTIONS, [fakes.rule(rule)],
                                  enabled=True, journal=journal)
    seen = []
    with caplog.at_level(logging.ERROR, logger='faultdriver.journal'):
        engine.hit('spawn', 'before', {}, target=seen)   # does not raise
        engine.close()                                    # sync fails too
    if rule.startswith('spawn: record'):
        assert seen == [('x', 0, 1, 1)]                   # it fired
    assert [e['point'] for e in journal.entries()] == ['spawn']
    errors = [r.getMessage() for r in caplog.records
              if r.levelno == logging.ERROR]
    assert errors and all(m.startswith(
        '%s journal_path=%s: ' % (journal_module.MARKER, FULL))
        for m in errors)
    assert 'could not append a fired fault' in errors[0]
    assert 'the fault fires anyway' in errors[0]
    assert journal.error


@needs_dev_full
def test_full_disk_raise_is_still_the_injected_exception():
    class Boom(Exception):
        pass

    class RaiseBoom(fakes.Record):
        name = 'boom'

        def __call__(self, hit):
            raise Boom()

    actions = dict(fakes.ACTIONS, boom=RaiseBoom)
    rule = fakes.rules.validate(fakes.rules.parse('spawn: boom'),
                                fakes.CATALOGUE, actions)
    engine = engine_module.Engine('h1', actions, [rule], enabled=True,
                                  journal=journal_module.Journal(FULL))
    with pytest.raises(Boom):       # not an OSError
        engine.hit('spawn', 'before', {})


@needs_dev_full
def test_full_disk_crash_still_crashes_with_its_exit_code():
    code = textwrap.dedent('''
        import sys
        from faultdriver.actions import crash
        from faultdriver import engine as engine_module
        from faultdriver import journal as journal_module
        from faultdriver import rules
        from tests.unit import fakes
        actions = dict(fakes.ACTIONS, crash=crash.Crash)
        rule = rules.validate(rules.parse('spawn: crash(exit_code=7)'),
                              fakes.CATALOGUE, actions)
        engine = engine_module.Engine(
            'h1', actions, [rule], enabled=True,
            journal=journal_module.Journal('/dev/full'))
        engine.hit('spawn', 'before', {})
        sys.exit(0)
    ''')
    done = subprocess.run([sys.executable, '-c', code], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 7, done.stderr
    assert journal_module.MARKER in done.stderr
    assert 'OSError' not in done.stderr


@needs_dev_full
def test_full_disk_shows_in_the_control_status(tmp_path):
    from faultdriver.control import client as client_module
    from faultdriver.control import server as server_module
    journal = journal_module.Journal(FULL)
    engine = engine_module.Engine('h1', fakes.ACTIONS,
                                  [fakes.rule('spawn: off')], enabled=True,
                                  journal=journal)
    server = server_module.ControlServer(
        str(tmp_path / 'c.sock'), engine, fakes.CATALOGUE,
        fakes.rule).start()
    try:
        client = client_module.Client(server.path)
        assert client.status()['journal_error'] is None
        engine.hit('spawn', 'before', {})
        status = client.status()
        assert status['journal'] == FULL
        assert status['journal_error'].startswith(
            'could not append a fired fault: [Errno 28]')
        assert [e['point'] for e in client.journal()] == ['spawn']
    finally:
        server.stop()
        engine.close()


def test_line_cut_short_on_disk_is_skipped(tmp_path):
    path = tmp_path / 'journal'
    one, three = (journal_module.JournalEntry(
        kind='fault', time=1.0, host='src', point='spawn', hit=hit,
        action='log').to_json() for hit in (1, 3))
    path.write_bytes(json.dumps(one).encode() + b'\n{"hit": 2, "poi\n[1]\n'
                     b'\xff\n' + b'[' * 100000 + b'\n' +
                     json.dumps(three).encode() + b'\n')
    assert journal_module.read(str(path)) == [one, three]


def test_validate_refuses_a_directory_journal_path(capsys, tmp_path):
    conf = tmp_path / 'nova.conf'
    conf.write_text('[fault_injection]\njournal_path = %s\n' % tmp_path)
    message = badinput.refused(capsys, 'validate', conf, root=tmp_path)
    assert message == ('%s: [fault_injection] journal_path %s is a '
                       'directory; expected a file name' % (conf, tmp_path))
