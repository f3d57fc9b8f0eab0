"""The journal: JSON lines on disk, entries in memory."""

import json
import os
from unittest import mock

from faultdriver import journal as journal_module


def test_file_journal_writes_json_lines_and_creates_directories(tmp_path):
    path = tmp_path / 'a' / 'b' / 'journal.jsonl'
    journal = journal_module.Journal(str(path))
    journal.record({'point': 'spawn', 'hit': 1})
    journal.record({'point': 'spawn', 'hit': 2, 'odd': object})
    lines = path.read_text(encoding='utf-8').splitlines()
    assert [json.loads(line)['hit'] for line in lines] == [1, 2]
    assert json.loads(lines[1])['odd'] == str(object)
    assert journal_module.read(str(path)) == [
        {'point': 'spawn', 'hit': 1},
        {'point': 'spawn', 'hit': 2, 'odd': str(object)}]
    assert journal.entries() == [{'point': 'spawn', 'hit': 1},
                                 {'point': 'spawn', 'hit': 2, 'odd': object}]
    journal.close()


def test_lines_reach_the_file_at_once(tmp_path):
    path = str(tmp_path / 'journal')
    journal = journal_module.Journal(path)
    journal.record({'hit': 1})
    # Another reader (or a post-mortem) sees the line before close().
    assert journal_module.read(path) == [{'hit': 1}]
    journal.close()


def test_reopening_appends(tmp_path):
    path = str(tmp_path / 'journal')
    for n in (1, 2):
        journal = journal_module.Journal(path)
        journal.record({'hit': n})
        journal.close()
    assert journal_module.read(path) == [{'hit': 1}, {'hit': 2}]


def test_flush_sync_reaches_the_disk(tmp_path):
    journal = journal_module.Journal(str(tmp_path / 'journal'))
    journal.record({'hit': 1})
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
        journal.record({'hit': n})
    journal.flush(sync=True)
    assert journal.path is None
    assert [e['hit'] for e in journal.entries()] == [2, 3, 4]


def test_read_skips_blank_lines(tmp_path):
    path = tmp_path / 'journal'
    path.write_text('{"hit": 1}\n\n{"hit": 2}\n', encoding='utf-8')
    assert journal_module.read(str(path)) == [{'hit': 1}, {'hit': 2}]
