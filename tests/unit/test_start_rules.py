"""One-shot start rules ([fault_injection] start_rules_path).

Invariants: a valid file is taken once -- its rules and fixes are armed
at driver init, after nova.conf's, and the file is gone (renamed to
``PATH.consumed``) before anything fires, so a later start arms nothing
of it; a copy of the consumed file put back, or a file past its
deadline, is ignored with a WARNING naming it, and removed; a malformed
file refuses the start naming the file and the key, and stays.
"""

import nova.tests.unit  # noqa: F401  (Nova's patching and objects first)

import json
import logging
import os
import shutil
import tempfile
import time

import fixtures
import pytest

from faultdriver import exception
from faultdriver import start_rules
from tests.unit import fakes
from tests.unit import test_driver

FUTURE = time.time() + 3600


def write(path, **data):
    data.setdefault('run_id', 'r1')
    data.setdefault('deadline', FUTURE)
    with open(path, 'w') as out:
        json.dump(data, out)
    return path


@pytest.fixture
def path():
    directory = tempfile.mkdtemp(prefix='fds', dir='/tmp')
    yield os.path.join(directory, 'start.json')
    shutil.rmtree(directory, ignore_errors=True)


def read(path, **kwargs):
    return start_rules.read(path, fakes.rule, 'h1', **kwargs)


def test_taken_once_and_renamed(path):
    write(path, rules=['spawn: 1*off'], tracker_patches=['fix'],
          enabled=True, host='h1')
    content = open(path).read()
    found = read(path)
    assert (found.run_id, [str(r) for r in found.rules],
            found.tracker_patches, found.enabled) == (
        'r1', ['spawn: 1*off'], ('fix',), True)
    assert not os.path.exists(path)
    assert open(path + '.consumed').read() == content
    assert read(path) is None                     # nothing left to take


def test_no_file_no_rules(path):
    assert read(path) is None


def test_a_copy_of_the_consumed_file_is_ignored_and_removed(path, caplog):
    write(path, rules=['spawn: off'])
    shutil.copy(path, path + '.copy')
    read(path)
    os.rename(path + '.copy', path)               # put back
    with caplog.at_level(logging.WARNING):
        assert read(path) is None
    assert ('ignoring [fault_injection] start_rules_path %s: a start '
            'consumed this very file already' % path) in caplog.text
    assert not os.path.exists(path)


def test_a_new_file_of_the_same_run_is_taken(path):
    write(path, rules=['spawn: off'])
    read(path)
    write(path, rules=['destroy: off'])
    assert [str(r) for r in read(path).rules] == ['destroy: off']


def test_an_expired_file_is_ignored_and_removed(path, caplog):
    write(path, run_id='old', deadline=1000.0, rules=['spawn: crash'])
    with caplog.at_level(logging.WARNING):
        assert read(path) is None
    assert ("ignoring [fault_injection] start_rules_path %s: run old's "
            'deadline 1970-01-01T00:16:40+00:00 has passed; removing it'
            % path) in caplog.text
    assert not os.path.exists(path)
    assert not os.path.exists(path + '.consumed')


@pytest.mark.parametrize('data, key, expected', [
    ({'run_id': ''}, 'run_id', 'a non-empty string'),
    ({'deadline': '2026-12-06'}, 'deadline', 'Unix time in seconds'),
    ({'deadline': True}, 'deadline', 'Unix time in seconds'),
    ({'rules': 'spawn: off'}, 'rules', 'a list of non-empty strings'),
    ({'tracker_patches': [3]}, 'tracker_patches',
     'a list of non-empty strings'),
    ({'enabled': 'yes'}, 'enabled', 'true or false'),
    ({'host': 'h2'}, 'host', "this nova-compute's host h1"),
    ({'rule': []}, 'rule', 'one of run_id, deadline'),
])
def test_malformed_file_refuses_naming_file_and_key(path, data, key,
                                                    expected):
    write(path, **data)
    with pytest.raises(exception.ConfigError) as caught:
        read(path)
    assert str(caught.value).startswith(
        '[fault_injection] start_rules_path %s: key %s: expected %s'
        % (path, key, expected))
    assert os.path.exists(path)                   # left for the operator


def test_a_bad_rule_is_named_by_its_index(path):
    write(path, rules=['spawn: off', 'spwan: off'])
    with pytest.raises(exception.ConfigError) as caught:
        read(path)
    assert str(caught.value).startswith(
        "[fault_injection] start_rules_path %s: key rules[1]: rule "
        "'spwan: off'" % path)
    assert os.path.exists(path)


@pytest.mark.parametrize('text, message', [
    ('{"run_id": "r1",', 'not JSON'),
    ('[1]', 'key (the file): expected a JSON object, got list'),
])
def test_not_an_object_refuses(path, text, message):
    with open(path, 'w') as out:
        out.write(text)
    with pytest.raises(exception.ConfigError) as caught:
        read(path)
    assert str(caught.value).startswith(
        '[fault_injection] start_rules_path %s: %s' % (path, message))


def test_a_refused_check_names_the_file_and_consumes_nothing(path):
    write(path, tracker_patches=['nofix'])

    def check(found):
        raise exception.ConfigError('unknown fix %r' % found.
                                    tracker_patches[0])
    with pytest.raises(exception.ConfigError) as caught:
        read(path, check=check)
    assert str(caught.value) == ("[fault_injection] start_rules_path %s: "
                                 "unknown fix 'nofix'" % path)
    assert os.path.exists(path)


class TestDriverStart(test_driver.DriverTestBase):
    """FaultDriver takes the file at init, after nova.conf's rules."""

    def setUp(self):
        super().setUp()
        directory = tempfile.mkdtemp(prefix='fds', dir='/tmp')
        self.addCleanup(shutil.rmtree, directory, ignore_errors=True)
        self.path = os.path.join(directory, 'start.json')
        self.flags(start_rules_path=self.path, group='fault_injection')

    def test_rules_fixes_and_enabled_for_this_start_only(self):
        write(self.path, rules=['list_instance_uuids: 1*off'],
              tracker_patches=['stale_migration_context'], enabled=True)
        first = self.make('destroy: off', enabled=False)
        self.addCleanup(first.close)
        self.assertEqual(['destroy: off', 'list_instance_uuids: 1*off'],
                         [r['rule'] for r in first.engine.rules()])
        self.assertTrue(first.engine.enabled)
        self.assertEqual(['stale_migration_context'],
                         [p.name for p in first._fault_patches])
        self.assertEqual('r1', first._facts()['start_rules']['run_id'])
        self.assertFalse(os.path.exists(self.path))
        # An operator's restart: nova.conf's only.
        second = self.make('destroy: off', enabled=False)
        self.addCleanup(second.close)
        self.assertEqual(['destroy: off'],
                         [r['rule'] for r in second.engine.rules()])
        self.assertFalse(second.engine.enabled)
        self.assertEqual([], second._fault_patches)
        self.assertIsNone(second._facts()['start_rules'])

    def test_an_unknown_fix_refuses_the_start_naming_the_file(self):
        write(self.path, tracker_patches=['stale_migration_contxt'])
        error = self.assertRaises(exception.ConfigError, self.make)
        self.assertIn('[fault_injection] start_rules_path %s: '
                      "[fault_injection] tracker_patches: unknown fix "
                      "'stale_migration_contxt'" % self.path, str(error))
        self.assertTrue(os.path.exists(self.path))

    def test_a_peer_periodic_without_its_socket_refuses_the_start(self):
        write(self.path, rules=['list_instance_uuids: periodic(host=hostB)'])
        error = self.assertRaises(exception.ConfigError, self.make)
        self.assertIn('[fault_injection] start_rules_path %s: rule '
                      '[list_instance_uuids: periodic(host=hostB)]: '
                      "periodic(host=hostB) needs hostB's control socket"
                      % self.path, str(error))

    def test_an_expired_file_arms_nothing(self):
        log = self.useFixture(fixtures.FakeLogger(
            name='faultdriver.start_rules', level=logging.WARNING))
        write(self.path, deadline=time.time() - 1,
              rules=['list_instance_uuids: crash'])
        wrapped = self.make()
        self.addCleanup(wrapped.close)
        self.assertEqual([], wrapped.engine.rules())
        self.assertIn('ignoring [fault_injection] start_rules_path %s'
                      % self.path, log.output)
