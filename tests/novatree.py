"""A Nova source tree for tests of ``--nova-tree``: the installed nova
package laid out as a clone of openstack/nova holds it (``TREE/nova``),
hard-linked, with a diff's files written anew (never through a link:
the installed Nova must not change)."""

import os
import shutil

from faultdriver.novaundertest import tree


def make(folder, diff=None):
    """``folder`` made a Nova source tree, ``diff`` (a file) applied to
    it; returns ``folder``."""
    package = tree.installed_package()
    target = os.path.join(folder, 'nova')
    shutil.copytree(package, target, copy_function=os.link,
                    ignore=shutil.ignore_patterns('__pycache__'))
    edits, _records = tree.apply_all(package, [diff] if diff else [])
    for path, text in edits.items():
        os.unlink(os.path.join(folder, path))
        with open(os.path.join(folder, path), 'w', encoding='utf-8') as out:
            out.write(text)
    return folder
