"""Helpers of the bad-input tests (``test_input_*``): run a command
through the cliff app, and tell that a run wrote nothing."""

import copy
import logging
import os

from faultdriver.cmd import main


def cli(capsys, *argv):
    """``(exit code, stdout, stderr)`` of ``faultdriver ARGV``, in this
    process (the working tree's code)."""
    # cliff adds a handler on the run's (captured) stderr to the root
    # logger each run; earlier runs' handlers write to closed streams.
    # Run with none but this run's, then put the others back.
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    root.handlers = []
    try:
        code = main.FaultDriverApp().run([str(a) for a in argv])
    finally:
        root.handlers = handlers
        root.setLevel(level)
    out, err = capsys.readouterr()
    return code, out, err


def tree(root):
    """Every path under ``root`` with its size: compare before and after
    to show that nothing was written."""
    found = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            found[os.path.relpath(path, root)] = (
                os.path.isdir(path), os.lstat(path).st_size)
    return found


def refused(capsys, *argv, root=None):
    """Run a command that must refuse its input: exit code 2, one short
    message, no traceback, nothing written under ``root``.  Returns the
    message."""
    before = tree(root) if root else None
    code, out, err = cli(capsys, *argv)
    assert code == main.EXIT_BAD_INPUT, (code, out, err)
    assert 'Traceback' not in err, err
    assert out == ''
    message = err.strip().splitlines()[-1]
    assert len(message) < 1000, message[:200]
    if root:
        assert tree(root) == before
    return message


def changed(document, path, value):
    """A deep copy of ``document`` with the key at ``path`` (a sequence
    of keys and indexes) set to ``value``, or deleted if it is KeyError."""
    doc = copy.deepcopy(document)
    *parents, last = path
    node = doc
    for key in parents:
        node = node[key]
    if value is KeyError:
        del node[last]
    else:
        node[last] = value
    return doc


def refused_until_backends(path, text, match, backends):
    """The scenario ``text`` (written to ``path``) is refused naming
    ``match`` (a regex) until it says ``backends: BACKENDS``; returns the
    scenario that loads then.  For what only some tiers can run."""
    import pytest

    from faultdriver import exception
    from faultdriver.scenario import model
    path.write_text(text)
    with pytest.raises(exception.ScenarioError, match=match):
        model.load(str(path))
    path.write_text(text.replace(
        'variants:', 'backends: [%s]\nvariants:' % ', '.join(backends), 1))
    loaded = model.load(str(path))
    assert loaded.backends == tuple(backends)
    return loaded
