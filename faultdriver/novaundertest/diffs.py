"""Unified diffs of Nova (``git diff`` / ``git format-patch`` output, as
a Gerrit change downloads), read and applied strictly: every hunk's
context must be found as written (at its line or moved, never fuzzed),
else the diff is refused naming the file and the hunk.  Imports no
Nova: a bad diff is bad input, found before anything starts.
"""

import dataclasses
import re

from faultdriver import exception

_HUNK = re.compile(r'^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@')
#: Only files of the ``nova`` package can change the Nova that runs;
#: release notes, docs and tests outside it are skipped (and listed).
PACKAGE = 'nova/'


@dataclasses.dataclass
class Hunk:
    header: str
    old_start: int
    old: list           # lines (with their ends) the hunk expects
    new: list           # lines it leaves


@dataclasses.dataclass
class FileChange:
    path: str           # relative to the Nova tree's root: nova/...
    hunks: list
    created: bool = False
    deleted: bool = False


def _strip(name):
    """``a/nova/x.py`` -> ``nova/x.py``; ``/dev/null`` -> None."""
    name = name.split('\t')[0].strip()
    if name == '/dev/null':
        return None
    return name.split('/', 1)[1] if '/' in name else name


def parse(text, source):
    """The file changes of a diff text; ScenarioError naming ``source``
    and the line where it is not a unified diff."""
    lines = text.splitlines(keepends=True)
    changes, i = [], 0
    while i < len(lines):
        line = lines[i]
        if line.startswith('GIT binary patch') or \
                line.startswith('Binary files '):
            raise exception.ScenarioError(
                '%s line %d: a binary change; only text diffs of the nova '
                'package can be applied' % (source, i + 1))
        if not (line.startswith('--- ') and i + 1 < len(lines) and
                lines[i + 1].startswith('+++ ')):
            i += 1
            continue
        old, new = _strip(line[4:]), _strip(lines[i + 1][4:])
        change = FileChange(new or old, [], created=old is None,
                            deleted=new is None)
        i += 2
        while i < len(lines) and lines[i].startswith('@@'):
            hunk, i = _hunk(lines, i, source)
            change.hunks.append(hunk)
        if not change.hunks:
            raise exception.ScenarioError(
                '%s line %d: %s has no hunks' % (source, i, change.path))
        changes.append(change)
    if not changes:
        raise exception.ScenarioError(
            '%s: not a unified diff (no "--- a/..." / "+++ b/..." file '
            'header with hunks)' % source)
    return changes


def _hunk(lines, i, source):
    match = _HUNK.match(lines[i])
    if not match:
        raise exception.ScenarioError('%s line %d: not a hunk header: %s' % (
            source, i + 1, lines[i].strip()))
    header = lines[i].split('@@')[1].strip()
    old_left = int(match.group(2) if match.group(2) is not None else 1)
    new_left = int(match.group(4) if match.group(4) is not None else 1)
    hunk = Hunk('@@ %s @@' % header, int(match.group(1)), [], [])
    i += 1
    last = None
    while old_left or new_left or (i < len(lines) and
                                   lines[i].startswith('\\')):
        if i >= len(lines):
            raise exception.ScenarioError(
                '%s: hunk %s ends early (the diff is cut short)' % (
                    source, hunk.header))
        line = lines[i]
        kind, body = line[:1], line[1:]
        if line.startswith('\\'):
            # "\ No newline at end of file": the line before has none.
            for side in last or ():
                side[-1] = side[-1].rstrip('\n')
        elif kind in (' ', '\n') and old_left and new_left:
            body = body if kind == ' ' else '\n'
            hunk.old.append(body)
            hunk.new.append(body)
            old_left, new_left = old_left - 1, new_left - 1
            last = (hunk.old, hunk.new)
        elif kind == '-' and old_left:
            hunk.old.append(body)
            old_left -= 1
            last = (hunk.old,)
        elif kind == '+' and new_left:
            hunk.new.append(body)
            new_left -= 1
            last = (hunk.new,)
        else:
            raise exception.ScenarioError(
                '%s line %d: hunk %s does not match its line counts' % (
                    source, i + 1, hunk.header))
        i += 1
    return hunk, i


def apply(change, text, source):
    """``text`` (the file's content, None where it does not exist) with
    ``change`` applied; ScenarioError naming the hunk that does not
    apply."""
    if change.created:
        if text is not None:
            raise exception.ScenarioError(
                '%s: creates %s, which the Nova under test already has' % (
                    source, change.path))
        text = ''
    elif text is None:
        raise exception.ScenarioError(
            '%s: changes %s, which the Nova under test does not have' % (
                source, change.path))
    lines = text.splitlines(keepends=True)
    offset = 0
    for number, hunk in enumerate(change.hunks, 1):
        # A hunk that only adds (``-N,0``) inserts after line N.
        base = hunk.old_start - 1 if hunk.old else hunk.old_start
        at = _find(lines, hunk.old, max(0, base + offset))
        if at is None:
            raise exception.ScenarioError(
                '%s: hunk %d (%s) of %s does not apply to the Nova under '
                'test: its context and removed lines are not in the file' % (
                    source, number, hunk.header, change.path))
        lines[at:at + len(hunk.old)] = hunk.new
        offset = at - base + len(hunk.new) - len(hunk.old)
    if change.deleted:
        if lines:
            raise exception.ScenarioError(
                '%s: deletes %s, but it is not empty after its hunks' % (
                    source, change.path))
        return None
    return ''.join(lines)


def _find(lines, wanted, expected):
    """The index nearest ``expected`` where ``wanted`` stands in
    ``lines``, or None."""
    size = len(wanted)
    if not size:
        return min(expected, len(lines))
    for distance in range(len(lines) + 1):
        for at in (expected - distance, expected + distance):
            if 0 <= at <= len(lines) - size and \
                    lines[at:at + size] == wanted:
                return at
        if expected - distance < 0 and expected + distance > len(lines):
            break
    return None
