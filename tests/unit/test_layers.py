"""The layer order of faultdriver's modules holds: no module imports one
of a higher layer, and no import cycle (doc/source/architecture.rst
draws the same order).

Every ``import`` of every module under faultdriver/ is read with ast,
those inside functions too (a lazy import is still a dependency: the
scenario contract's check once hid a cycle that way).  A submodule's
import of its own package (``from faultdriver.export import
Unsupported``) is not counted: Python runs the package's ``__init__``
first in any case, and the names it imports are the package's own.

A new module must be given a layer below (the test names one that has
none): that is where its place in the architecture is decided.
"""

import ast
import os

ROOT = os.path.join(os.path.dirname(__file__), '..', '..', 'faultdriver')

#: Lowest first.  A module's layer is that of its longest entry: a
#: package (``faultdriver.process``: its __init__ and every submodule)
#: or a module.
LAYERS = (
    ('ground', (
        'faultdriver', 'faultdriver.exception', 'faultdriver.rules',
        'faultdriver.surface', 'faultdriver.waiting',
        'faultdriver.hostshape', 'faultdriver.lifeline',
        'faultdriver.manager_tasks', 'faultdriver.data',
        'faultdriver.scenarios',
        # What the scenario layer and the command line know of the tiers
        # without importing one.
        'faultdriver.scenario.tiers', 'faultdriver.scenario.prereqs')),
    ('records', (
        'faultdriver.journal', 'faultdriver.points', 'faultdriver.inner',
        'faultdriver.control', 'faultdriver.novaundertest',
        'faultdriver.hitcontext')),
    ('engine', (
        'faultdriver.engine', 'faultdriver.actions',
        'faultdriver.novacompat', 'faultdriver.conf',
        'faultdriver.confcheck', 'faultdriver.start_rules')),
    # The tracker's hooks, and what else the driver reads of and hooks on
    # the nova-compute it runs in.
    ('tracker', ('faultdriver.tracker', 'faultdriver.rpcstarted',
                 'faultdriver.servicecall', 'faultdriver.rpcmessage',
                 'faultdriver.hostfacts', 'faultdriver.pinning')),
    ('driver', ('faultdriver.driver', 'faultdriver.virt')),
    ('scenario', ('faultdriver.scenario',)),
    # The cloud tier reaches a cloud it did not build: below the tiers
    # that build one, so it can import none of them (and the test below
    # says so by name).
    ('cloud', ('faultdriver.cloud',)),
    ('tiers', ('faultdriver.harness', 'faultdriver.process',
               'faultdriver.fixture')),
    ('sweep and export', ('faultdriver.sweep', 'faultdriver.export')),
    ('cmd', ('faultdriver.cmd',)),
)


def modules():
    """``{dotted name: path}`` of every module under faultdriver/."""
    found = {}
    base = os.path.dirname(os.path.abspath(ROOT))
    for folder, _dirs, files in os.walk(os.path.abspath(ROOT)):
        for name in files:
            if not name.endswith('.py'):
                continue
            path = os.path.join(folder, name)
            parts = os.path.relpath(path, base)[:-3].split(os.sep)
            if parts[-1] == '__init__':
                parts = parts[:-1]
            found['.'.join(parts)] = path
    return found


def imports(name, path, known):
    """The faultdriver modules ``name`` imports, anywhere in it."""
    package = name if path.endswith('__init__.py') else \
        name.rpartition('.')[0]
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ''
            if node.level:
                parts = package.split('.')[:len(package.split('.')) -
                                           node.level + 1]
                base = '.'.join(parts + ([base] if base else []))
            for alias in node.names:
                full = base + '.' + alias.name
                found.add(full if full in known else base)
    return {each for each in found
            if each.split('.')[0] == 'faultdriver'
            and not name.startswith(each + '.')}


def graph():
    known = modules()
    return {name: {each for each in imports(name, path, known)
                   if each in known}
            for name, path in known.items()}


def layer(name):
    """The index in LAYERS of ``name``'s longest entry, or None."""
    best = None
    for index, (_title, entries) in enumerate(LAYERS):
        for entry in entries:
            if name == entry or name.startswith(entry + '.'):
                if best is None or len(entry) > len(best[1]):
                    best = (index, entry)
    return best and best[0]


def cycles(edges):
    """Every import cycle, each as its modules in order (Tarjan's strongly
    connected components of more than one module, or one importing
    itself)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for each in sorted(edges.get(node, ())):
            if each not in index:
                visit(each)
                low[node] = min(low[node], low[each])
            elif each in on_stack:
                low[node] = min(low[node], index[each])
        if low[node] == index[node]:
            component = []
            while True:
                each = stack.pop()
                on_stack.discard(each)
                component.append(each)
                if each == node:
                    break
            if len(component) > 1 or node in edges.get(node, ()):
                found.append(sorted(component))
    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_every_module_has_a_layer():
    assert sorted(name for name in modules() if layer(name) is None) == []


def test_no_module_imports_a_higher_layer():
    upward = ['%s (%s) imports %s (%s)' % (
        name, LAYERS[layer(name)][0], each, LAYERS[layer(each)][0])
        for name, targets in sorted(graph().items())
        for each in sorted(targets)
        if layer(each) is not None and layer(name) is not None
        and layer(each) > layer(name)]
    assert upward == []


def test_no_import_cycle():
    assert cycles(graph()) == []


def test_the_check_finds_what_it_looks_for():
    # The test above must be able to fail: a lazy import inside a
    # function is seen, and a cycle is found.
    assert 'faultdriver.harness.scenario_case' in graph()[
        'faultdriver.harness.runner']
    assert cycles({'a': {'b'}, 'b': {'c'}, 'c': {'a'}, 'd': {'a'}}) == [
        ['a', 'b', 'c']]
    assert layer('faultdriver.scenario.tiers') < layer(
        'faultdriver.scenario.model') < layer('faultdriver.process.nova')


def test_the_cloud_imports_no_other_tier():
    # faultdriver/cloud reaches an existing deployment: nothing of the
    # tiers that start Nova themselves (issue 42).
    found = ['%s imports %s' % (name, each)
             for name, targets in sorted(graph().items())
             if name.startswith('faultdriver.cloud')
             for each in sorted(targets)
             if each.startswith(('faultdriver.process',
                                 'faultdriver.harness'))]
    assert found == []
    # The tier itself is among what is read: its backend, runner, API
    # layer and profile.
    assert {'faultdriver.cloud.transport', 'faultdriver.cloud.backend',
            'faultdriver.cloud.runner', 'faultdriver.cloud.api',
            'faultdriver.cloud.profile'} <= set(graph())


def test_the_host_helper_imports_nothing_of_faultdriver():
    # It is piped to `python3 -` on hosts with no faultdriver.
    assert graph()['faultdriver.cloud.hosthelper'] == set()
