"""The packaging declares what the code imports.

* Every third-party package that faultdriver/ or nova/ imports is in
  requirements.txt or in one of setup.cfg's extras, even when Nova brings
  it today.
* No package is listed in two extras: ``process`` lists only what it adds
  to ``scenarios`` (installed together: ``.[scenarios,process]``).
"""

import ast
import configparser
from importlib import metadata
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
NAME = re.compile(r'^\s*([A-Za-z0-9][A-Za-z0-9._-]*)')
#: Imports whose distribution is not installed in the unit-test
#: environment (the libvirt tier builds it): module -> distribution.
NOT_INSTALLED_HERE = {'libvirt': 'libvirt-python'}


def _normal(name):
    return re.sub(r'[-_.]+', '-', name).lower()


def _names(lines):
    found = []
    for line in lines:
        line = line.split('#')[0]
        match = NAME.match(line)
        if match:
            found.append(_normal(match.group(1)))
    return found


def _requirements():
    return set(_names((ROOT / 'requirements.txt').read_text().splitlines()))


def _extras():
    parser = configparser.ConfigParser()
    parser.read(ROOT / 'setup.cfg')
    return {extra: _names(value.splitlines())
            for extra, value in parser['extras'].items()}


def _imported_modules():
    modules = set()
    for folder in ('faultdriver', 'nova'):
        for path in (ROOT / folder).rglob('*.py'):
            tree = ast.parse(path.read_text(encoding='utf-8'))
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    modules.update(a.name.split('.')[0] for a in node.names)
                elif isinstance(node, ast.ImportFrom) and node.level == 0:
                    modules.add(node.module.split('.')[0])
    return modules - set(sys.stdlib_module_names) - {'faultdriver'}


def _imported_distributions():
    by_module = metadata.packages_distributions()
    found = {}
    for module in sorted(_imported_modules()):
        names = by_module.get(module) or [NOT_INSTALLED_HERE.get(module)]
        assert names != [None], (
            'faultdriver imports %r, which no installed distribution '
            'provides' % module)
        found[module] = {_normal(n) for n in names}
    return found


def test_every_imported_package_is_declared():
    declared = _requirements().union(*_extras().values())
    undeclared = {module: sorted(dists)
                  for module, dists in _imported_distributions().items()
                  if not dists & declared}
    assert undeclared == {}, (
        'imported but in neither requirements.txt nor an extra of '
        'setup.cfg: %s' % undeclared)


def test_no_package_is_repeated_across_extras():
    seen = {}
    repeated = []
    for extra, names in _extras().items():
        for name in names:
            if name in seen:
                repeated.append('%s (%s and %s)' % (name, seen[name], extra))
            seen[name] = extra
    assert repeated == []
