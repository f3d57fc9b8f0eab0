"""The reference pages read whole in the repository and say what the
code does.

Invariants: every generated part of doc/source's pages (actions, points,
fixes, scenario keys, Nova assumptions) is what
``tools/generate-reference.py`` writes from the code now -- a changed
docstring, point, schema text or assumption fails here until the pages
are regenerated -- and no page is left with a build-time directive,
empty when read in the repository.
"""

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / 'doc' / 'source' / '_ext'))

from faultdriver_docs import generate  # noqa: E402


def test_the_generated_parts_are_current():
    behind = generate.stale()
    assert not behind, ('%s behind their sources: run python '
                        'tools/generate-reference.py and commit them' %
                        ', '.join(sorted(p.name for p in behind)))


def test_every_reference_page_has_its_parts():
    names = {path.name for path in generate.pages()}
    assert {'actions.rst', 'points.rst', 'fixes.rst', 'compat.rst',
            'scenario-reference.rst'} <= names
    reference = ROOT / 'doc' / 'source' / 'scenario-reference.rst'
    assert 'logged-elsewhere' in reference.read_text(encoding='utf-8')
    for path in (ROOT / 'doc' / 'source').glob('*.rst'):
        assert '.. faultdriver-' not in path.read_text(encoding='utf-8'), \
            path


def test_a_stale_part_is_rewritten():
    text = ('x\n\n.. BEGIN generated (tools/generate-reference.py): '
            'points tracker\n\nSTALE TEXT\n\n.. END generated\n')
    fresh = generate.render(text)
    assert 'STALE TEXT' not in fresh
    assert '``tracker.' in fresh and fresh.endswith('.. END generated\n')
