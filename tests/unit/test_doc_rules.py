"""Every rule the documentation shows is a rule faultdriver accepts.

The examples are found in the files themselves (README.rst, every page
of doc/source, the ``rules`` option's help in faultdriver/conf.py, the
sample config and the nova.conf example in etc/), so an example or a page
added later is tested without anyone listing it here: ``rules = ...``
lines, ``ctl add '...'`` arguments, quoted rules in YAML rule lists, and
every line or inline literal shaped like ``point[...]: chain`` whose
point is a point, or close enough to one to be a typo of it.
"""

import nova.tests.unit  # noqa: F401  (Nova's objects first)

import difflib
import pathlib
import re

import pytest

from faultdriver import conf
from faultdriver import points

ROOT = pathlib.Path(__file__).resolve().parents[2]
#: ``point[.phase][@role][filters]: chain``, as written in prose.
RULE_SHAPE = re.compile(
    r'^(?P<point>[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)*)'
    r'(?:\s*@\s*[a-z]+)?(?:\s*\[[^\]]*\])?\s*:\s*\S.*$')
QUOTED = re.compile(r"'((?:[^'\\]|\\.)+)'")
INLINE = re.compile(r'``(.+?)``', re.S)
TRAILING_COMMENT = re.compile(r'\s{2,}#.*$')


def _point_like(text):
    """Whether ``text`` is shaped like a rule on a point, or a typo of
    one (so a misspelt example is tested, and fails)."""
    found = RULE_SHAPE.match(text)
    if not found:
        return False
    name = found.group('point')
    for phase in ('.before', '.after'):
        name = name.removesuffix(phase)
    known = points.catalogue()
    return name in known or bool(difflib.get_close_matches(
        name, known, n=1, cutoff=0.85))


def candidates(text):
    """Rule examples in a document's text."""
    found = []
    for literal in INLINE.findall(text):
        literal = ' '.join(literal.split())
        if _point_like(literal):
            found.append(literal)
    for line in text.splitlines():
        line = TRAILING_COMMENT.sub('', line.strip().lstrip('#').strip())
        setting = re.match(r'^rules\s*=\s*(.+)$', line)
        if setting:
            if setting.group(1) != '<None>':
                found.append(setting.group(1))
            continue
        added = re.search(r"\bctl\b.*\badd\s+'([^']+)'", line)
        if added:
            found.append(added.group(1))
            continue
        for quoted in QUOTED.findall(line):
            if _point_like(quoted):
                found.append(quoted)
        if '``' not in line and "'" not in line and _point_like(line):
            found.append(line)
    return list(dict.fromkeys(found))


#: Documents that must show rules (the others may).
SHOWING_RULES = {'README.rst', 'doc/source/rules.rst',
                 'doc/source/control.rst', 'doc/source/install.rst',
                 'faultdriver/conf.py [rules] help',
                 'etc/faultdriver/faultdriver.conf.sample',
                 'etc/faultdriver/nova.conf.example'}


def _pages():
    # doc/findings.rst and doc/inner-driver.rst are included from
    # doc/source but kept (and checked) on their own.
    return {str(path.relative_to(ROOT)): path.read_text(encoding='utf-8')
            for path in sorted((ROOT / 'doc' / 'source').rglob('*.rst'))}


def _documents():
    rules_help = next(o for o in conf.fault_opts if o.name == 'rules').help
    return {
        'README.rst': (ROOT / 'README.rst').read_text(encoding='utf-8'),
        **_pages(),
        'faultdriver/conf.py [rules] help': rules_help,
        'etc/faultdriver/faultdriver.conf.sample': (
            ROOT / 'etc/faultdriver/faultdriver.conf.sample').read_text(
                encoding='utf-8'),
        'etc/faultdriver/nova.conf.example': (
            ROOT / 'etc/faultdriver/nova.conf.example').read_text(
                encoding='utf-8'),
    }


EXAMPLES = [(name, rule) for name, text in _documents().items()
            for rule in candidates(text)]


@pytest.mark.parametrize('document, rule', EXAMPLES)
def test_documented_rule_is_accepted(document, rule):
    conf.RuleType()(rule)


def test_examples_are_found_in_every_document_that_shows_rules():
    assert SHOWING_RULES <= set(_documents())
    found = {name for name, _rule in EXAMPLES}
    assert SHOWING_RULES <= found
    for name, example in [
            ('README.rst', 'live_migration: 25%delay(3) -> log(slow)'),
            ('README.rst', 'pre_live_migration@dest: 1*hang(300, hold)'),
            ('doc/source/rules.rst',
             'live_migration: 25%delay(3) -> log(slow)'),
            ('doc/source/control.rst',
             'pre_live_migration@dest: 1*hang(300, hold)')]:
        assert (name, example) in EXAMPLES
    pages = [rule for name, rule in EXAMPLES if name.startswith('doc/')]
    assert len(pages) >= 10


def test_extraction_finds_a_misspelt_example():
    # The test would catch a typo in a point name, not skip it.
    assert candidates('    pre_live_migraton@dest: crash\n') == [
        'pre_live_migraton@dest: crash']
    assert candidates('``expect: bug`` and ``count: all``') == []
