"""The Nova under test: diffs applied strictly to a private copy of the
installed nova package, which a run's processes import; the installed
Nova is never modified, and a diff that does not apply is refused
naming the file and the hunk."""

import hashlib
import json
import os
import subprocess
import sys

import pytest

from faultdriver import exception
from faultdriver import novaundertest
from faultdriver.novaundertest import diffs
from faultdriver.novaundertest import tree
from tests import novatree

DIFF = os.path.join(os.path.dirname(__file__), os.pardir, 'functional',
                    'data', 'revert-stale-error-context.diff')
TRACKER = 'nova/compute/resource_tracker.py'


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path / 'cache'))


def _installed(path):
    return os.path.join(os.path.dirname(tree.installed_package()), path)


def _digest(path):
    with open(path, 'rb') as stream:
        return hashlib.sha256(stream.read()).hexdigest()


def _diff(path, old, new, start=1):
    """A one-hunk diff of ``path`` replacing lines ``old`` by ``new``."""
    body = ''.join('-%s\n' % line for line in old) + \
        ''.join('+%s\n' % line for line in new)
    return ('--- a/%s\n+++ b/%s\n@@ -%d,%d +%d,%d @@\n%s' % (
        path, path, start, len(old), start, len(new), body))


def test_a_hunk_applies_where_its_context_moved():
    text = 'a\nb\nc\nd\n'
    [change] = diffs.parse(_diff('nova/x.py', ['c'], ['C']), 'x.diff')
    # Expected at line 1; found at line 3 (as patch does, without fuzz).
    assert diffs.apply(change, text, 'x.diff') == 'a\nb\nC\nd\n'


def test_a_hunk_whose_context_is_not_there_names_file_and_hunk():
    [change] = diffs.parse(_diff('nova/x.py', ['q'], ['Q'], 7), 'x.diff')
    with pytest.raises(exception.ScenarioError,
                       match=r'x.diff: hunk 1 \(@@ -7,1 \+7,1 @@\) of '
                             r'nova/x.py does not apply'):
        diffs.apply(change, 'a\nb\n', 'x.diff')


def test_format_patch_output_and_files_outside_nova(tmp_path):
    patch = tmp_path / '0001-fix.patch'
    patch.write_text(
        'From 1234 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] Fix\n\n'
        'Closes-Bug: #1\n---\n releasenotes/notes/x.yaml | 1 +\n\n'
        'diff --git a/releasenotes/notes/x.yaml b/releasenotes/notes/x.yaml'
        '\nnew file mode 100644\n--- /dev/null\n'
        '+++ b/releasenotes/notes/x.yaml\n@@ -0,0 +1 @@\n+fixes: [x]\n'
        + open(DIFF).read() + '-- \n2.39.5\n')
    edits, [record] = tree.apply_all(tree.installed_package(), [str(patch)])
    assert list(edits) == [TRACKER]
    assert record['changes'] == [TRACKER]
    assert record['skipped'] == ['releasenotes/notes/x.yaml']
    assert "if migration.status == 'error':" in edits[TRACKER]


def test_new_files_and_a_missing_newline():
    text = ('--- /dev/null\n+++ b/nova/new.py\n@@ -0,0 +1,2 @@\n+a\n+b\n'
            '\\ No newline at end of file\n')
    [change] = diffs.parse(text, 'n.diff')
    assert change.created
    assert diffs.apply(change, None, 'n.diff') == 'a\nb'


@pytest.mark.parametrize('text, said', [
    ('just words\n', 'not a unified diff'),
    ('--- a/nova/x.py\n+++ b/nova/x.py\n@@ -1,2 +1,2 @@\n-a\n',
     'ends early'),
    ('--- a/nova/x.py\n+++ b/nova/x.py\n@@ -1,1 +1,1 @@\n-a\n-b\n',
     'does not match its line counts'),
])
def test_what_is_not_a_diff_is_bad_input(text, said):
    with pytest.raises(exception.ScenarioError, match=said):
        diffs.parse(text, 'bad.diff')


def test_the_copy_changes_nothing_installed_and_links_the_rest():
    before = _digest(_installed(TRACKER))
    nova = novaundertest.prepare([DIFF])
    assert _digest(_installed(TRACKER)) == before
    copied = os.path.join(nova.root, TRACKER)
    with open(copied) as stream:
        assert "instance.revert_migration_context()" in stream.read()
    assert not os.path.samefile(copied, _installed(TRACKER))
    # Unchanged files cost nothing: the same file, linked.
    manager = 'nova/compute/manager.py'
    assert os.path.samefile(os.path.join(nova.root, manager),
                            _installed(manager))
    [patch] = nova.record['patches']
    assert (patch['file'], patch['sha256']) == (
        'revert-stale-error-context.diff', _digest(DIFF))
    assert novaundertest.describe(nova.record).endswith(
        '+ revert-stale-error-context.diff (sha256 %s)' % _digest(DIFF)[:12])
    # The same change again: the same copy.
    assert novaundertest.prepare([DIFF]).root == nova.root
    assert novaundertest.prepare([]).stock


def _current(env):
    return subprocess.run(
        [sys.executable, '-c', 'import json; from faultdriver import '
         'novaundertest; print(json.dumps(novaundertest.current()))'],
        capture_output=True, text=True, env=env, timeout=120)


def test_a_process_given_the_nova_under_test_imports_it():
    nova = novaundertest.prepare([DIFF])
    done = _current(nova.environ())
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == nova.record
    # The environment says a changed Nova, the path gives stock: loud.
    env = nova.environ()
    env['PYTHONPATH'] = os.environ.get('PYTHONPATH', '')
    done = _current(env)
    assert done.returncode != 0
    assert 'but this process imported nova from' in done.stderr


def test_a_diff_that_does_not_apply_is_exit_2_before_anything_runs(
        tmp_path):
    bad = tmp_path / 'stale.diff'
    bad.write_text(open(DIFF).read().replace(
        'instance.apply_migration_context()', 'instance.apply_other()'))
    done = subprocess.run(
        [sys.executable, '-m', 'faultdriver.cmd.main', 'scenario', 'run',
         'stale-error-migration-context', '--nova-patch', str(bad)],
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert ('%s: hunk 1 (@@ -1052,6 +1052,10 @@) of %s does not apply'
            % (bad, TRACKER)) in done.stderr
    assert '[stock]' not in done.stderr     # no variant started
    sweep = subprocess.run(
        [sys.executable, '-m', 'faultdriver.cmd.main', 'sweep',
         'live-migration', '--ab-nova-patch', str(bad)],
        capture_output=True, text=True, timeout=300)
    assert sweep.returncode == 2, sweep.stderr
    assert 'does not apply' in sweep.stderr


def test_a_nova_source_tree_is_the_nova_under_test(tmp_path):
    """A source tree (a Gerrit change checked out) runs as the diff does:
    its own files, faultdriver's driver module added, the installed Nova
    untouched; the record names the tree and its content's digest."""
    before = _digest(_installed(TRACKER))
    source = novatree.make(str(tmp_path / 'nova-src'), DIFF)
    nova = novaundertest.prepare([], source)
    assert _digest(_installed(TRACKER)) == before
    with open(os.path.join(nova.root, TRACKER)) as stream:
        assert "instance.revert_migration_context()" in stream.read()
    assert os.path.isfile(os.path.join(
        nova.root, 'nova', 'virt', 'faultdriver', '__init__.py'))
    assert nova.record['tree']['path'] == source
    assert novaundertest.describe(nova.record) == \
        'Nova source tree at %s' % source
    # A change to the tree is another Nova.
    with open(os.path.join(source, TRACKER), 'a') as stream:
        stream.write('# changed\n')
    assert novaundertest.prepare([], source).record != nova.record


def test_a_case_names_the_tree_and_a_runner_on_another_nova_refuses(
        tmp_path):
    keys = novaundertest.variant_keys(['x.diff'], 'src')
    assert keys == {'nova-patches': [os.path.abspath('x.diff')],
                    'nova-tree': os.path.abspath('src')}
    assert novaundertest.variant_keys() == {}
    source = novatree.make(str(tmp_path / 'nova-src'))
    on_tree = novaundertest.prepare([], source).record
    novaundertest.check_includes(on_tree, [], source)
    with pytest.raises(exception.FaultDriverError,
                       match='asks for the Nova source tree %s, this '
                             'process runs nova 34' % (tmp_path / 'other')):
        novaundertest.check_includes(novaundertest.prepare().record, [],
                                     str(tmp_path / 'other'))


def test_a_folder_that_is_not_a_nova_tree_is_exit_2(tmp_path):
    for args in (['scenario', 'run', 'stale-error-migration-context',
                  '--nova-tree', str(tmp_path)],
                 ['sweep', 'live-migration', '--nova-tree', str(tmp_path)],
                 ['sweep', 'live-migration', '--ab-nova-tree',
                  str(tmp_path)]):
        done = subprocess.run(
            [sys.executable, '-m', 'faultdriver.cmd.main'] + args,
            capture_output=True, text=True, timeout=300)
        assert done.returncode == 2, (args, done.stderr)
        assert ('--nova-tree %s: not a Nova source tree (no '
                'nova/__init__.py' % tmp_path) in done.stderr, done.stderr
