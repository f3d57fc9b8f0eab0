"""Where a command will write, checked before it does any work: a sweep
that runs for minutes must not end in ``[Errno 2]`` because its HTML
page's folder does not exist."""

import os

from faultdriver import exception


def check_file(option, path):
    """ScenarioError unless ``path`` can be written as a file: not a
    folder, in a folder that exists and is writable."""
    if not path:
        return
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        problem = 'is a directory; expected a file name'
    elif not os.path.isdir(folder):
        problem = 'its directory %s does not exist' % folder
    elif not os.access(folder, os.W_OK | os.X_OK):
        problem = 'its directory %s is not writable' % folder
    elif os.path.exists(path) and not os.access(path, os.W_OK):
        problem = 'exists and is not writable'
    else:
        return
    raise exception.ScenarioError('%s %s: %s' % (option, path, problem))


def check_folder(option, path):
    """ScenarioError unless ``path`` is a writable folder or can be made
    one (its nearest existing ancestor is a writable folder)."""
    if not path:
        return
    if os.path.exists(path):
        if not os.path.isdir(path):
            raise exception.ScenarioError(
                '%s %s: exists and is not a directory' % (option, path))
        if not os.access(path, os.W_OK | os.X_OK):
            raise exception.ScenarioError(
                '%s %s: the directory is not writable' % (option, path))
        return
    parent = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent) or not os.access(parent, os.W_OK | os.X_OK):
        raise exception.ScenarioError(
            '%s %s: cannot be created (%s is not a writable directory)' % (
                option, path, parent))
