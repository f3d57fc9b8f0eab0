"""The generated parts of the reference pages, checked in so that the
pages read whole in the repository (a Sphinx directive is empty there).

A page marks each generated part::

    .. BEGIN generated (tools/generate-reference.py): points driver

    ...

    .. END generated

``tools/generate-reference.py`` rewrites every part from its single
source of truth (the action plugins, the points catalogue, the tracker
fixes, the rollback table, ``faultdriver/scenario/schema.yaml``, the
declared Nova assumptions, what each tier provides);
tests/unit/test_reference_pages.py regenerates them and fails when a
page is behind.
"""

import pathlib
import re

from faultdriver_docs import catalogues
from faultdriver_docs import compat
from faultdriver_docs import provisions
from faultdriver_docs import scenario_schema

PAGES = pathlib.Path(__file__).resolve().parents[2]
TOOL = 'tools/generate-reference.py'
#: What a part may name, and the function that writes its lines.
PARTS = {
    'actions': catalogues.actions,
    'points': catalogues.points,
    'fixes': catalogues.fixes,
    'rollback': catalogues.rollback,
    'assumptions': compat.assumptions,
    'scenario-schema': scenario_schema.part,
    'tiers': provisions.tiers,
}
BLOCK = re.compile(
    r'^\.\. BEGIN generated \(%s\): (?P<what>[^\n]+)\n.*?'
    r'^\.\. END generated$' % re.escape(TOOL), re.M | re.S)


def part(what):
    """The text of one part: ``NAME [ARGUMENT]``."""
    name, *args = what.split()
    if name not in PARTS:
        raise ValueError('unknown generated part %r; expected one of %s'
                         % (name, ', '.join(PARTS)))
    lines = [line.rstrip() for text in PARTS[name](*args)
             for line in str(text).split('\n')]
    while lines and not lines[-1]:
        lines.pop()
    return '\n'.join(lines)


def render(text):
    """``text`` (a page) with each generated part written anew."""
    def fill(match):
        return ('.. BEGIN generated (%s): %s\n\n%s\n\n.. END generated'
                % (TOOL, match.group('what'), part(match.group('what'))))
    return BLOCK.sub(fill, text)


def pages():
    """The pages that have generated parts."""
    return sorted(path for path in PAGES.glob('*.rst')
                  if BLOCK.search(path.read_text(encoding='utf-8')))


def stale():
    """``{page: regenerated text}`` of the pages that are behind."""
    found = {}
    for path in pages():
        text = path.read_text(encoding='utf-8')
        fresh = render(text)
        if fresh != text:
            found[path] = fresh
    return found
