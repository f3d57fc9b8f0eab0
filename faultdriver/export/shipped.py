"""The exported tests the repository ships (``nova-regressions/``):
which scenarios, and the file each is written to."""

import os

from faultdriver.export import module
from faultdriver.scenario import model


def listed(folder):
    """``[(scenario, path)]`` of ``folder``'s exports.txt: each line's
    scenario (bundled name, or a file relative to the folder)."""
    found = []
    with open(os.path.join(folder, 'exports.txt'), encoding='utf-8') as f:
        for line in f:
            entry = line.split('#', 1)[0].strip()
            if not entry:
                continue
            path = os.path.join(folder, entry)
            found.append(path if entry.endswith('.yaml') else entry)
    return found


def written(folder, fixed=False):
    """``{file name: text}`` the listed scenarios export to."""
    texts = {}
    for entry in listed(folder):
        scenario = model.load(entry)
        texts[module.file_name(scenario)] = module.render(scenario,
                                                          fixed=fixed)
    return texts
