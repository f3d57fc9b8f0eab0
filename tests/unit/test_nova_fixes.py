"""Every candidate Nova fix in ``nova-fixes/`` applies to the installed Nova.

Each ``nova-fixes/*.patch`` is a ``git format-patch`` file whose paths
(``a/nova/...``, ``b/nova/...``) are relative to a Nova source tree's root,
i.e. to the directory that holds the ``nova`` package: the installed
package is such a tree (``patch -p1 -d SITE_PACKAGES``).  Each is applied
in memory as ``--nova-patch`` applies it (faultdriver.novaundertest: every
hunk's context and removed lines in the file, never fuzzed; nothing of the
installed Nova is written).  Each file names the finding it fixes.
"""

import pathlib
import re

import pytest

from faultdriver.novaundertest import tree

ROOT = pathlib.Path(__file__).resolve().parents[2]
PATCHES = sorted((ROOT / 'nova-fixes').glob('*.patch'))


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
def test_fix_applies_to_the_installed_nova(path):
    """As ``--nova-patch`` applies it (faultdriver.novaundertest: every
    hunk's context and removed lines in the file, never fuzzed)."""
    edits, [record] = tree.apply_all(tree.installed_package(), [str(path)])
    assert record['changes'] and record['skipped'] == []
    assert sorted(edits) == record['changes']
