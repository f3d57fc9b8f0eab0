"""Every candidate Nova fix in ``nova-fixes/`` applies to the installed Nova.

Each ``nova-fixes/*.patch`` is a ``git format-patch`` file whose paths
(``a/nova/...``, ``b/nova/...``) are relative to a Nova source tree's root,
i.e. to the directory that holds the ``nova`` package: the installed
package is such a tree (``patch -p1 -d SITE_PACKAGES``).  Each is applied
in memory as ``--nova-patch`` applies it (faultdriver.novaundertest: every
hunk's context and removed lines in the file, never fuzzed; nothing of the
installed Nova is written).  Each file names the finding it fixes.
"""

import os
import pathlib
import re

import pytest

from faultdriver import exception
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


#: Fixes that change the same lines: F2 carries F5's first hunk (the
#: allocation given back in ``_reset_live_migration``), with more.
OVERLAPPING = {'F5': 'F2'}


def test_fixes_apply_together_but_the_overlapping():
    """Every fix on top of the others, in the order of their numbers,
    leaving out the one another fix carries; and that one does overlap
    (so the exception is not kept once it stops being true)."""
    def number(path):
        return int(re.match(r'F(\d+)', path.name).group(1))
    finding = {re.match(r'(F\d+)', p.name).group(1): p for p in PATCHES}
    together = sorted((p for name, p in finding.items()
                       if name not in OVERLAPPING), key=number)
    _edits, records = tree.apply_all(tree.installed_package(),
                                     [str(p) for p in together])
    assert all(r['changes'] and r['skipped'] == [] for r in records)
    for left_out, carrier in OVERLAPPING.items():
        with pytest.raises(exception.ScenarioError, match='does not apply'):
            tree.apply_all(tree.installed_package(),
                           [str(finding[carrier]), str(finding[left_out])])


def test_an_installed_bundled_fix_variant_reads_the_installed_fixes(
        tmp_path, monkeypatch):
    """Installed, a bundled scenario's ``../../nova-fixes/F22...`` is not
    beside the package: the variant reads the patch from the folder
    setup.cfg's data_files installs (model.INSTALLED_FIXES)."""
    from faultdriver.scenario import model
    bundled = model.load('placement-failure-at-revert')
    [wanted] = bundled.nova_patches('f22-fix')
    assert os.path.exists(wanted)       # a checkout's nova-fixes/
    folder = tmp_path / 'site' / 'faultdriver' / 'scenarios'
    folder.mkdir(parents=True)
    copy = folder / 'placement-failure-at-revert.yaml'
    copy.write_text(open(bundled.path).read())
    installed = tmp_path / 'share' / 'faultdriver' / 'nova-fixes'
    installed.mkdir(parents=True)
    (installed / os.path.basename(wanted)).write_text(open(wanted).read())
    monkeypatch.setattr(model, 'INSTALLED_FIXES', str(installed))
    assert model.load(str(copy)).nova_patches('f22-fix') == [
        str(installed / os.path.basename(wanted))]
