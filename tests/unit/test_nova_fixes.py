"""Every candidate Nova fix in ``nova-fixes/`` applies to the installed Nova.

Each ``nova-fixes/*.patch`` is a ``git format-patch`` file whose paths
(``a/nova/...``, ``b/nova/...``) are relative to a Nova source tree's root,
i.e. to the directory that holds the ``nova`` package: the installed
package is such a tree (``patch -p1 -d SITE_PACKAGES``).  The check only
reads: every hunk's old lines (context and removed lines) must be the
file's lines at the hunk's own position, with no offset and no fuzz, and
the hunk's line counts must match its header.  It also checks that each
file names the finding it fixes.
"""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PATCHES = sorted((ROOT / 'nova-fixes').glob('*.patch'))
HUNK = re.compile(r'^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@')


def _tree():
    import nova
    return pathlib.Path(nova.__file__).resolve().parent.parent


def _files(text):
    """[(old path, new path, [(old start, old count, new count, lines)])]"""
    files = []
    lines = text.split('\n')
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith('--- ') and lines[i + 1].startswith('+++ '):
            old, new = line[4:].split('\t')[0], lines[i + 1][4:]
            files.append((old, new.split('\t')[0], []))
            i += 2
            continue
        match = HUNK.match(line)
        if match:
            start, count, _, new_count = match.groups()
            count = 1 if count is None else int(count)
            new_count = 1 if new_count is None else int(new_count)
            # Read as many lines as the header says (a format-patch
            # signature, '-- ', follows the last hunk).
            body, old_left, new_left = [], count, new_count
            i += 1
            while i < len(lines) and (old_left > 0 or new_left > 0 or
                                      lines[i].startswith('\\')):
                kind = lines[i][:1]
                if kind not in (' ', '-', '+', '\\'):
                    break
                old_left -= kind in (' ', '-')
                new_left -= kind in (' ', '+')
                body.append(lines[i])
                i += 1
            files[-1][2].append((int(start), count, new_count, body))
            continue
        i += 1
    return files


def test_there_are_fixes():
    assert PATCHES, 'no nova-fixes/*.patch'


@pytest.mark.parametrize('path', PATCHES, ids=lambda p: p.name)
def test_fix_is_a_format_patch_naming_its_finding(path):
    text = path.read_text(encoding='utf-8')
    finding = re.match(r'(F\d+)-[\w-]+\.patch$', path.name)
    assert finding, 'name it F<n>-<what>.patch'
    assert text.startswith('From ')
    assert re.search(r'^Subject: \[PATCH\] ', text, re.M)
    message = text[:text.index('\n---\n')]
    assert re.search(r'\b%s\b' % finding.group(1), message)


@pytest.mark.parametrize('path', PATCHES, ids=lambda p: p.name)
def test_fix_applies_cleanly_to_installed_nova(path):
    tree = _tree()
    files = _files(path.read_text(encoding='utf-8'))
    assert files, 'no file diff in %s' % path.name
    problems = []
    for old, new, hunks in files:
        assert old.startswith('a/nova/') and new.startswith('b/nova/'), (
            old, new)
        assert old[2:] == new[2:], 'renames are not expected'
        target = tree / old[2:]
        have = target.read_text(encoding='utf-8').split('\n')
        for start, count, new_count, body in hunks:
            before = [b[1:] for b in body if b[:1] in (' ', '-')]
            after = [b[1:] for b in body if b[:1] in (' ', '+')]
            if (len(before), len(after)) != (count, new_count):
                problems.append('%s@%d: counts %d,%d in the header, %d,%d '
                                'in the hunk' % (old, start, count,
                                                 new_count, len(before),
                                                 len(after)))
            elif have[start - 1:start - 1 + count] != before:
                problems.append('%s@%d: the old lines are not there'
                                % (old, start))
    assert problems == []
