"""The exported tests the repository ships (``nova-regressions/``):
which scenarios, the file each is written to, and the saved run whose
values its bug's assertions state (``--from-run``)."""

import os

from faultdriver import exception
from faultdriver.export import module

#: What may follow a line's scenario in exports.txt.
FROM_RUN = '--from-run'


def entries(folder):
    """``[(scenario, run file or None)]`` of ``folder``'s exports.txt:
    each line's scenario (bundled name, or a file relative to the
    folder), then optionally ``--from-run FILE`` (relative to it)."""
    found = []
    path = os.path.join(folder, 'exports.txt')
    with open(path, encoding='utf-8') as f:
        for number, line in enumerate(f, 1):
            words = line.split('#', 1)[0].split()
            if not words:
                continue
            if len(words) not in (1, 3) or (
                    len(words) == 3 and words[1] != FROM_RUN):
                raise exception.ScenarioError(
                    '%s:%d: expected SCENARIO [%s RUN.json], got %r'
                    % (path, number, FROM_RUN, line.strip()))
            entry = words[0]
            scenario = (os.path.join(folder, entry)
                        if entry.endswith('.yaml') else entry)
            run = os.path.join(folder, words[2]) if len(words) == 3 \
                else None
            found.append((scenario, run))
    return found


def listed(folder):
    """The scenarios of ``folder``'s exports.txt (see :func:`entries`)."""
    return [scenario for scenario, _run in entries(folder)]


def written(folder, fixed=False):
    """``{file name: text}`` the listed scenarios export to."""
    from faultdriver import export
    from faultdriver.scenario import model
    texts = {}
    for entry, run in entries(folder):
        name = module.file_name(model.load(entry))
        texts[name] = export.export(entry, fixed=fixed, run_file=run)
    return texts
