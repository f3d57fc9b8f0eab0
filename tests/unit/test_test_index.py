"""Every faultdriver module with logic is indexed with its tests.

A newcomer looks for a module's tests by its name, but many modules are
tested by a file named after something else (the command line, the
sweep, a behaviour), so ``tests/index.yaml`` says where (issue 39, "a
newcomer's path").  An index nobody checks goes stale, so this test
fails when:

* a module with logic is neither indexed (``tested``) nor ``exempt``;
* an entry names a module that no longer exists;
* an indexed test file does not exist;
* an indexed test file (with the helpers under ``tests/`` it imports,
  ``tests.unit.fakes``) does not name the module it is indexed for, nor
  a faultdriver module that names it or loads it through an entry point
  of ``setup.cfg`` (one step, no further);
* an exempt module has grown a function (then it has logic to test).

"Names" is by text, and exact: the dotted path (``faultdriver.x.y``,
also as the start of a longer one, ``faultdriver.x.y.z``) or ``from
faultdriver.x import y``; a module loads an entry point group when it
holds the group's name as a quoted string (``'faultdriver.cli'``).  A
package ``__init__.py`` that holds only a docstring needs no entry.
"""

import ast
import configparser
import pathlib
import re

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
INDEX = ROOT / 'tests' / 'index.yaml'
DOTTED = re.compile(r'\bfaultdriver(?:\.\w+)+')


def _modules():
    """``{dotted name: path}`` of every module of the package."""
    found = {}
    for path in sorted((ROOT / 'faultdriver').rglob('*.py')):
        parts = list(path.relative_to(ROOT).with_suffix('').parts)
        if parts[-1] == '__init__':
            parts.pop()
        found['.'.join(parts)] = path
    return found


def _bare(path):
    """True for a module that is empty or holds only a docstring."""
    body = ast.parse(path.read_text(encoding='utf-8')).body
    return all(isinstance(node, ast.Expr) and
               isinstance(node.value, ast.Constant) for node in body)


def _named(text):
    """The dotted names ``text`` names: each dotted path it holds and
    its prefixes, and ``pkg.mod`` for ``from pkg import mod``."""
    names = set()
    for match in DOTTED.findall(text):
        parts = match.split('.')
        names.update('.'.join(parts[:n]) for n in range(2, len(parts) + 1))
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and \
                node.module and node.module.startswith('faultdriver'):
            names.update('%s.%s' % (node.module, alias.name)
                         for alias in node.names)
    return names


def _loaded(text):
    """The modules of the entry point groups ``text`` names, quoted: a
    stevedore or cliff manager loads them (the commands, the actions,
    the tracker patches are imported no other way)."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(ROOT / 'setup.cfg', encoding='utf-8')
    modules = set()
    for group, value in parser['entry_points'].items():
        if "'%s'" % group in text or '"%s"' % group in text:
            modules.update(line.split('=', 1)[1].split(':')[0].strip()
                           for line in value.splitlines() if '=' in line)
    return modules


def _test_names(path):
    """What a test file names, with what the helpers it imports from
    ``tests`` name (one level: a helper's own helpers do not count)."""
    text = path.read_text(encoding='utf-8')
    names = _named(text)
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and node.module and \
                node.module.split('.')[0] == 'tests':
            helpers = ['%s.%s' % (node.module, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            helpers = [a.name for a in node.names
                       if a.name.split('.')[0] == 'tests']
        else:
            continue
        for helper in helpers:
            file = ROOT.joinpath(*helper.split('.')).with_suffix('.py')
            if file.is_file():
                names |= _named(file.read_text(encoding='utf-8'))
    return names


class _Loader(yaml.SafeLoader):
    """Refuses a key given twice: YAML would keep the last silently."""

    def construct_mapping(self, node, deep=False):
        keys = [self.construct_object(key, deep=deep) for key, _ in
                node.value]
        twice = sorted({key for key in keys if keys.count(key) > 1})
        assert not twice, '%s: given twice: %s' % (INDEX.name,
                                                   ', '.join(twice))
        return super().construct_mapping(node, deep=deep)


def _index():
    with open(INDEX, encoding='utf-8') as f:
        index = yaml.load(f, Loader=_Loader)
    assert set(index) == {'tested', 'exempt'}, (
        '%s: expected the keys tested and exempt, found %s'
        % (INDEX.name, sorted(index)))
    return index['tested'], index['exempt']


def test_every_module_is_indexed_or_exempt():
    tested, exempt = _index()
    missing = ['%s (%s)' % (name, path.relative_to(ROOT))
               for name, path in _modules().items()
               if name not in tested and name not in exempt
               and not _bare(path)]
    assert not missing, (
        'not in tests/index.yaml: %s.  Add each under "tested" with the '
        'test files that import it, or under "exempt" with a phrase '
        'saying why it has no logic to test.' % ', '.join(missing))


def test_entries_name_modules_that_exist():
    tested, exempt = _index()
    modules = _modules()
    gone = sorted(name for name in list(tested) + list(exempt)
                  if name not in modules)
    assert not gone, ('tests/index.yaml names modules that no longer '
                      'exist: %s; remove or rename them' % ', '.join(gone))
    both = sorted(set(tested) & set(exempt))
    assert not both, 'both tested and exempt in tests/index.yaml: %s' % (
        ', '.join(both))


def test_indexed_test_files_exist():
    tested, _ = _index()
    wrong = []
    for name, files in tested.items():
        if not files:
            wrong.append('%s: no test file' % name)
        for file in files or ():
            path = ROOT / file
            if not path.is_file():
                wrong.append('%s: %s does not exist' % (name, file))
            elif not (file.startswith('tests/') and
                      path.name.startswith('test_')):
                wrong.append('%s: %s is not a test file (tests/**/test_*.py)'
                             % (name, file))
    assert not wrong, 'tests/index.yaml: ' + '; '.join(wrong)


def test_indexed_test_files_name_their_module():
    tested, _ = _index()
    modules = _modules()
    texts = {name: path.read_text(encoding='utf-8')
             for name, path in modules.items()}
    named_by = {name: _named(text) | _loaded(text)
                for name, text in texts.items()}
    wrong = []
    for name, files in tested.items():
        if name not in modules:
            continue    # reported by test_entries_name_modules_that_exist
        for file in files or ():
            path = ROOT / file
            if not path.is_file():
                continue    # reported by test_indexed_test_files_exist
            names = _test_names(path)
            if name in names:
                continue
            if any(name in named_by[other] for other in names
                   if other in modules):
                continue
            wrong.append('%s does not import %s, nor a faultdriver module '
                         'that imports or loads it' % (file, name))
    assert not wrong, 'tests/index.yaml: ' + '; '.join(wrong)


def test_exempt_modules_have_no_logic():
    _, exempt = _index()
    modules = _modules()
    wrong = []
    for name, why in exempt.items():
        if not isinstance(why, str) or not why.strip():
            wrong.append('%s: say why it is exempt' % name)
        if name in modules and any(
                isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                for node in ast.walk(ast.parse(
                    modules[name].read_text(encoding='utf-8')))):
            wrong.append('%s defines a function: index its tests under '
                         '"tested" instead' % name)
    assert not wrong, 'tests/index.yaml exempt: ' + '; '.join(wrong)


def test_named_reads_imports_exactly():
    """The text rule the index is checked with, on its three forms."""
    names = _named('import faultdriver.rules\n'
                   'from faultdriver.scenario import (model,\n steps)\n'
                   "x = 'faultdriver.sweep.cases.build'\n")
    assert {'faultdriver.rules', 'faultdriver.scenario.model',
            'faultdriver.scenario.steps', 'faultdriver.sweep.cases',
            'faultdriver.sweep'} <= names
    assert 'faultdriver.scenario.expect' not in names
    assert 'faultdriver.sweep.cases.build' in names     # a name, harmless
    assert 'faultdriver.rule' not in names


def test_loaded_reads_entry_point_groups():
    """A quoted group name loads its modules; a bare mention does not."""
    assert 'faultdriver.cmd.ctl' in _loaded(
        "manager = commandmanager.CommandManager('faultdriver.cli')")
    assert 'faultdriver.actions.timing' in _loaded(
        'NAMESPACE = "faultdriver.actions"')
    assert not _loaded('see faultdriver.cli in setup.cfg')
