"""A private copy of the ``nova`` package with changes applied: the
Nova a run imports when it is given diffs or a source tree.

The installed Nova is never modified.  The copy hard-links every file
it does not change (about 3800 files, in a fraction of a second) and
writes the changed ones anew, so the copy costs the changed files only.
Copies are kept under the user's cache, one per (base Nova, changes):
a sweep's hundreds of runner processes, and the next sweep with the
same diff, use the same one.
"""

import hashlib
import importlib.util
import os
import shutil
import tempfile

from faultdriver import exception
from faultdriver.novaundertest import diffs

#: faultdriver's one-line module, as the installed package has it
#: (a source tree of Nova lacks it).
DRIVER_MODULE = ('nova/virt/faultdriver/__init__.py',
                 'from faultdriver.driver import FaultDriver  # noqa\n')
#: Files any Nova tree has: what tells a Nova source tree from another.
NOVA_MARKERS = ('nova/__init__.py', 'nova/compute/manager.py',
                'nova/virt/driver.py')


def installed_package():
    """The folder of the installed ``nova`` package."""
    spec = importlib.util.find_spec('nova')
    if spec is None or not spec.origin or spec.origin == 'namespace':
        raise exception.ScenarioError(
            'Nova is not installed in this environment (%s)' % spec)
    return os.path.dirname(spec.origin)


def cache_root():
    base = os.environ.get('XDG_CACHE_HOME') or os.path.expanduser('~/.cache')
    return os.path.join(base, 'faultdriver', 'nova-under-test')


def key(base_package, changes):
    """The identity of one copy: the base's place and every change's
    content."""
    digest = hashlib.sha256(os.path.realpath(base_package).encode())
    for change in changes:
        digest.update(b'\0' + change.encode())
    return digest.hexdigest()[:24]


def build(base_package, edits, key_text, add_driver_module=False):
    """The root of a copy of ``base_package`` (a ``nova`` folder) with
    ``edits`` ({relative path: new text, or None to delete}) made: a
    folder holding ``nova/``, to put first on ``sys.path``."""
    root = os.path.join(cache_root(), key_text)
    if os.path.isdir(os.path.join(root, 'nova')):
        return root
    os.makedirs(cache_root(), exist_ok=True)
    building = tempfile.mkdtemp(prefix='.building-', dir=cache_root())
    try:
        _link_tree(base_package, os.path.join(building, 'nova'),
                   set(edits))
        if add_driver_module:
            path, text = DRIVER_MODULE
            edits = dict(edits)
            edits.setdefault(path, text)
        for path, text in edits.items():
            target = os.path.join(building, path)
            if os.path.exists(target):
                os.unlink(target)
            if text is not None:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(target, 'w', encoding='utf-8') as out:
                    out.write(text)
        try:
            os.rename(building, root)
        except OSError:
            if not os.path.isdir(os.path.join(root, 'nova')):
                raise
            # Another process built the same copy first: use that one.
            shutil.rmtree(building, ignore_errors=True)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    return root


def _link_tree(source, target, changed):
    """Hard-link ``source`` into ``target`` (copies where links cannot
    be made); the compiled files of ``changed`` modules are left out, so
    Python compiles the changed source."""
    stale = {_compiled_prefix(path) for path in changed}
    for folder, dirs, files in os.walk(source):
        dirs.sort()
        into = os.path.join(target, os.path.relpath(folder, source))
        os.makedirs(into, exist_ok=True)
        for name in files:
            src = os.path.join(folder, name)
            dst = os.path.join(into, name)
            rel = os.path.relpath(dst, os.path.dirname(target))
            if any(rel.startswith(prefix) for prefix in stale):
                continue
            try:
                os.link(src, dst)
            except OSError:
                shutil.copy2(src, dst)


def _compiled_prefix(path):
    """``nova/a/b.py`` -> ``nova/a/__pycache__/b.`` (its .pyc files)."""
    folder, name = os.path.split(path)
    return os.path.join(folder, '__pycache__', os.path.splitext(name)[0]
                        + '.')


def read(base_package, path):
    """The text of ``path`` (``nova/...``) in the base package, or None."""
    full = os.path.join(os.path.dirname(base_package), path)
    if os.path.basename(base_package) != 'nova':
        raise exception.ScenarioError('%s: not a nova package folder' %
                                      base_package)
    if not os.path.isfile(full):
        return None
    with open(full, encoding='utf-8') as stream:
        return stream.read()


def apply_all(base_package, patches):
    """``({path: new text}, [record of each patch])`` for ``patches``
    (paths to diff files) applied in order to ``base_package``; exit-2
    errors name the diff file and the hunk."""
    edits, records = {}, []
    for path in patches:
        try:
            with open(path, 'rb') as stream:
                data = stream.read()
            text = data.decode('utf-8')
        except (OSError, UnicodeDecodeError) as exc:
            raise exception.ScenarioError(
                'Nova change %s: cannot be read as a text diff (%s)' % (
                    path, exc))
        changes = diffs.parse(text, path)
        applied, skipped = [], []
        for change in changes:
            if not change.path.startswith(diffs.PACKAGE):
                skipped.append(change.path)
                continue
            current = edits[change.path] if change.path in edits else \
                read(base_package, change.path)
            edits[change.path] = diffs.apply(change, current, path)
            applied.append(change.path)
        if not applied:
            raise exception.ScenarioError(
                '%s: changes no file of the nova package (only %s)' % (
                    path, ', '.join(skipped)))
        records.append({'file': os.path.basename(path),
                        'sha256': hashlib.sha256(data).hexdigest(),
                        'changes': sorted(set(applied)),
                        'skipped': sorted(set(skipped))})
    return edits, records


def source_package(tree):
    """The ``nova`` package of a Nova source tree (a clone of
    openstack/nova); exit 2 naming what a Nova tree has and it lacks."""
    missing = [m for m in NOVA_MARKERS
               if not os.path.isfile(os.path.join(tree, m))]
    if missing:
        raise exception.ScenarioError(
            '--nova-tree %s: not a Nova source tree (no %s)' % (
                tree, ', '.join(missing)))
    return os.path.join(os.path.abspath(tree), 'nova')
