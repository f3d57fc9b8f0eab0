"""The journal: JournalEntry lines on disk, entries in memory, one shape
told apart by ``kind``."""

import json
import os
from unittest import mock

import pytest

from faultdriver import journal as journal_module


def _fault(hit, **fields):
    """A fired fault's entry at ``spawn``'s ``hit``."""
    return journal_module.JournalEntry(**dict(dict(
        kind=journal_module.FAULT, time=1000.0 + hit, host='src',
        point='spawn', phase='before', rule_index=0, hit=hit,
        action='log', rule='spawn: log'), **fields))


def test_file_journal_writes_json_lines_and_creates_directories(tmp_path):
    path = tmp_path / 'a' / 'b' / 'journal.jsonl'
    journal = journal_module.Journal(str(path))
    journal.record(_fault(1))
    journal.record(_fault(2, instance=object))
    lines = path.read_text(encoding='utf-8').splitlines()
    assert [json.loads(line)['hit'] for line in lines] == [1, 2]
    assert json.loads(lines[1])['instance'] == str(object)
    assert journal_module.read(str(path)) == [
        _fault(1).to_json(), _fault(2, instance=str(object)).to_json()]
    assert journal.entries() == [_fault(1).to_json(),
                                 _fault(2, instance=object).to_json()]
    journal.close()


def test_an_entry_round_trips_and_leaves_out_what_its_kind_lacks():
    entry = _fault(3)
    assert journal_module.JournalEntry.from_json(entry.to_json()) == entry
    assert entry.to_json() == {
        'kind': 'fault', 'time': 1003.0, 'host': 'src', 'point': 'spawn',
        'phase': 'before', 'rule_index': 0, 'hit': 3, 'action': 'log',
        'rule': 'spawn: log', 'role': None, 'instance': None,
        'migration': None, 'operation': None, 'in_periodic': None}
    report = journal_module.JournalEntry(
        kind=journal_module.PERIODIC, time=1.0, host='dest',
        point='tracker.update_available_resource', phase='unlocked',
        rule_index=2, hit=1, waited_for_lock=False, error=None)
    assert 'action' not in report.to_json()
    assert report.to_json()['waited_for_lock'] is False


@pytest.mark.parametrize('fields, message', [
    ({'kind': 'event'}, "kind 'event'"),
    ({'action': None}, 'has an action exactly when it is a fired fault'),
    ({'kind': 'periodic'}, 'has an action exactly when'),
])
def test_a_malformed_entry_is_refused(fields, message):
    with pytest.raises(ValueError, match=message):
        _fault(1, **fields)


def test_unknown_keys_are_refused_by_name():
    data = dict(_fault(1).to_json(), event='periodic')
    with pytest.raises(ValueError, match='unknown keys event'):
        journal_module.JournalEntry.from_json(data)


def test_only_journal_entries_are_recorded():
    with pytest.raises(TypeError, match='JournalEntry'):
        journal_module.Journal().record({'hit': 1})


def test_lines_reach_the_file_at_once(tmp_path):
    path = str(tmp_path / 'journal')
    journal = journal_module.Journal(path)
    journal.record(_fault(1))
    # Another reader (or a post-mortem) sees the line before close().
    assert journal_module.read(path) == [_fault(1).to_json()]
    journal.close()


def test_reopening_appends(tmp_path):
    path = str(tmp_path / 'journal')
    for n in (1, 2):
        journal = journal_module.Journal(path)
        journal.record(_fault(n))
        journal.close()
    assert [e['hit'] for e in journal_module.read(path)] == [1, 2]


def test_flush_sync_reaches_the_disk(tmp_path):
    journal = journal_module.Journal(str(tmp_path / 'journal'))
    journal.record(_fault(1))
    with mock.patch('os.fsync', autospec=True,
                    side_effect=os.fsync) as fsync:
        journal.flush()
        fsync.assert_not_called()
        journal.flush(sync=True)
    fsync.assert_called_once_with(journal._file.fileno())
    journal.close()
    journal.flush(sync=True)      # closed: nothing to do, no error


def test_memory_journal_keeps_the_newest(tmp_path):
    journal = journal_module.Journal(keep=3)
    for n in range(5):
        journal.record(_fault(n))
    journal.flush(sync=True)
    assert journal.path is None
    assert [e['hit'] for e in journal.entries()] == [2, 3, 4]


def test_read_skips_blank_lines_and_what_is_no_entry(tmp_path):
    path = tmp_path / 'journal'
    line = json.dumps(_fault(1).to_json())
    path.write_text(line + '\n\n{"hit": 2}\n' + line + '\n',
                    encoding='utf-8')
    assert journal_module.read(str(path)) == [_fault(1).to_json()] * 2
