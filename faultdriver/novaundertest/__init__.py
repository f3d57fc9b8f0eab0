"""The Nova under test: the installed Nova, or a copy of it with changes
(unified diffs, or a Nova source tree) that every process of a run
imports instead.

A run's processes learn it from the environment (:data:`ENV` and
``PYTHONPATH``, which every Nova service, the privsep daemon and the
sweep's runners inherit), and every report and sweep record carries
:func:`record`, defined here once, so that a result is never mistaken
for one of stock Nova.
"""

import dataclasses
import hashlib
from importlib import metadata
import json
import os
import typing

from faultdriver import exception
from faultdriver.novaundertest import tree as tree_module

#: The Nova under test, as JSON, in the environment of a run's processes.
ENV = 'FAULTDRIVER_NOVA_UNDER_TEST'


@dataclasses.dataclass(frozen=True)
class NovaUnderTest:
    #: The folder to put first on ``sys.path`` (holds ``nova/``); None
    #: for the installed Nova.
    root: str | None
    #: What reports and sweep records say (no machine-local paths: two
    #: shards of one sweep on two machines agree).
    record: dict

    @property
    def stock(self):
        return self.root is None

    def environ(self, env: typing.Optional[typing.Mapping[str, str]] = None
                ) -> typing.Dict[str, str]:
        """``env`` (default: this process's) for a process that runs this
        Nova."""
        env = dict(os.environ if env is None else env)
        env[ENV] = json.dumps({'root': self.root, 'record': self.record})
        if self.root:
            env['PYTHONPATH'] = os.pathsep.join(
                [self.root] + [p for p in env.get('PYTHONPATH', '').split(
                    os.pathsep) if p and p != self.root])
        return env


def _base():
    try:
        return 'nova %s' % metadata.version('nova')
    except metadata.PackageNotFoundError:
        return 'nova (version unknown)'


def prepare(patches: typing.Iterable[str] = (),
            tree: typing.Optional[str] = None) -> NovaUnderTest:
    """The Nova under test for ``patches`` (diff files, applied in
    order) on ``tree`` (a Nova source tree; default the installed
    package).  Bad input (a diff that does not apply, a folder that is
    not Nova) raises ScenarioError naming it."""
    patches = list(patches or ())
    record = {'base': _base(), 'tree': None, 'patches': []}
    if not patches and not tree:
        return NovaUnderTest(None, record)
    if tree:
        package = tree_module.source_package(tree)
        record['base'] = 'Nova source tree'
        record['tree'] = {'path': os.path.abspath(tree),
                          'sha256': _tree_digest(package)}
    else:
        package = tree_module.installed_package()
    edits, record['patches'] = tree_module.apply_all(package, patches)
    key = tree_module.key(package, [json.dumps(record, sort_keys=True)])
    root = tree_module.build(package, edits, key,
                             add_driver_module=bool(tree))
    return NovaUnderTest(root, record)


def _tree_digest(package):
    """A digest of a source tree's Python files (what a tree's record
    says it ran)."""
    digest = hashlib.sha256()
    for folder, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != '__pycache__')
        for name in sorted(files):
            if name.endswith('.py'):
                path = os.path.join(folder, name)
                digest.update(os.path.relpath(path, package).encode())
                with open(path, 'rb') as stream:
                    digest.update(stream.read())
    return digest.hexdigest()


def recorded() -> typing.Dict[str, typing.Any]:
    """The record of the Nova under test this process was given (from
    its environment; unchecked), or the stock record."""
    given = os.environ.get(ENV)
    if not given:
        return {'base': _base(), 'tree': None, 'patches': []}
    return json.loads(given)['record']


def is_changed():
    """Whether this process runs a changed Nova under test."""
    record = recorded()
    return bool(record.get('patches') or record.get('tree'))


def current() -> typing.Dict[str, typing.Any]:
    """The record of the Nova this process runs (in a run's process),
    checked: when the run asked for a changed Nova, the ``nova`` package
    imported must be its copy (a loud error, never a silent stock run).
    """
    given = os.environ.get(ENV)
    if not given:
        return recorded()
    data = json.loads(given)
    if data['root']:
        import nova
        imported = os.path.realpath(os.path.dirname(nova.__file__))
        wanted = os.path.realpath(os.path.join(data['root'], 'nova'))
        if imported != wanted:
            raise exception.FaultDriverError(
                'the Nova under test is %s (%s) but this process imported '
                'nova from %s' % (describe(data['record']), wanted,
                                  imported))
    return data['record']


def variant_keys(patches: typing.Iterable[str] = (),
                 tree: typing.Optional[str] = None
                 ) -> typing.Dict[str, typing.Any]:
    """The scenario variant keys (``nova-patches``, ``nova-tree``) that
    name this Nova under test, with absolute paths: a sweep's case file is
    its reproducer, wherever it is replayed from."""
    keys: typing.Dict[str, typing.Any] = {}
    if patches:
        keys['nova-patches'] = [os.path.abspath(path) for path in patches]
    if tree:
        keys['nova-tree'] = os.path.abspath(tree)
    return keys


def check_includes(record: typing.Mapping[str, typing.Any],
                   patches: typing.Iterable[str],
                   tree: typing.Optional[str] = None) -> None:
    """FaultDriverError unless the Nova under test (``record``) has every
    diff in ``patches`` (a scenario variant's ``nova-patches``) and runs
    on ``tree`` (its ``nova-tree``) if one is named: a runner given a case
    of another Nova must say so, not run it on its own."""
    if tree and (record.get('tree') or {}).get('path') != \
            os.path.abspath(tree):
        raise exception.FaultDriverError(
            'the scenario asks for the Nova source tree %s, this process '
            'runs %s' % (tree, describe(record)))
    have = {patch['sha256'] for patch in record.get('patches', ())}
    for path in patches:
        with open(path, 'rb') as stream:
            digest = hashlib.sha256(stream.read()).hexdigest()
        if digest not in have:
            raise exception.FaultDriverError(
                'the scenario asks for Nova with %s (sha256 %s), this '
                'process runs %s' % (path, digest[:12], describe(record)))


def describe(record: typing.Optional[typing.Mapping[str, typing.Any]]
             ) -> str:
    """One line: ``nova 34.0.0`` (stock) or ``nova 34.0.0 + fix.patch
    (sha256 1a2b3c4d)``."""
    if not record:
        return 'unknown'
    text = record['base'] or 'nova'
    if record.get('tree'):
        text += ' at %s' % record['tree']['path']
    for patch in record.get('patches', ()):
        text += ' + %s (sha256 %s)' % (patch['file'], patch['sha256'][:12])
    if not record.get('tree') and not record.get('patches'):
        text += ' (stock)'
    return text
