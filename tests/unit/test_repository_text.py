"""What the repository says about itself is true.

* Paths it points to exist in it: no files under a ``shared`` folder that
  only some machine had.
* A module that says it has no Nova imports has none, not even inside a
  function.
* The scenarios page's "Writing a scenario" (doc/source/scenarios.rst)
  names every key, step and expectation kind of the scenario schema, so
  the overview cannot fall behind.
"""

import ast
import pathlib
import re

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHIPPED = ['faultdriver', 'tests', 'doc', 'etc', 'tools', 'benchmarks',
           'releasenotes', 'README.rst', 'tox.ini', 'setup.cfg']
TEXT_SUFFIXES = ('.py', '.yaml', '.yml', '.rst', '.txt', '.sh', '.ini',
                 '.cfg', '.conf', '.example', '.sample', '.json')
NO_NOVA_CLAIM = re.compile(r'no nova imports|imports no nova', re.I)


def _files():
    for entry in SHIPPED:
        path = ROOT / entry
        found = [path] if path.is_file() else sorted(path.rglob('*'))
        for each in found:
            if (each.is_file() and each.suffix in TEXT_SUFFIXES
                    and '__pycache__' not in each.parts
                    and 'build' not in each.relative_to(ROOT).parts):
                yield each


def test_no_references_to_files_outside_the_repository():
    missing = []
    for path in _files():
        text = path.read_text(encoding='utf-8', errors='replace')
        for ref in re.findall(r'(?<![\w/.-])shared/[\w-][\w./-]*', text):
            if not (ROOT / ref.rstrip('.')).exists():
                missing.append('%s: %s' % (path.relative_to(ROOT), ref))
    assert missing == []


def _claims_no_nova(path):
    tree = ast.parse(path.read_text(encoding='utf-8'))
    return NO_NOVA_CLAIM.search(ast.get_docstring(tree) or '') is not None


def _nova_imports(path):
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
        names = ([a.name for a in node.names]
                 if isinstance(node, ast.Import) else
                 [node.module or ''] if isinstance(node, ast.ImportFrom)
                 else [])
        found += [n for n in names if n == 'nova' or n.startswith('nova.')]
    return found


CLAIMS = sorted(p for p in (ROOT / 'faultdriver').rglob('*.py')
                if _claims_no_nova(p))


def test_claims_are_found():
    assert ROOT / 'faultdriver' / 'rules.py' in CLAIMS


@pytest.mark.parametrize('path', CLAIMS, ids=lambda p: p.name)
def test_module_saying_no_nova_imports_has_none(path):
    assert _nova_imports(path) == []


def _scenario_guide_section():
    text = (ROOT / 'doc/source/scenarios.rst').read_text(encoding='utf-8')
    title = 'Writing a scenario\n==================\n'
    start = text.index(title) + len(title)
    return text[start:text.index('\n=====', start)]


def _schema_names():
    schema = yaml.safe_load((ROOT / 'faultdriver/scenario/schema.yaml')
                            .read_text(encoding='utf-8'))
    defs = schema['$defs']
    return (list(schema['properties']) + list(defs['step']['properties'])
            + list(defs['expectation']['properties']))


@pytest.mark.parametrize('name', _schema_names())
def test_scenario_guide_names_every_scenario_key(name):
    assert '``%s``' % name in _scenario_guide_section()
