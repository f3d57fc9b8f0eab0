"""The exported tests pass Nova's own style checks: flake8 with hacking
and the configuration of Nova 34.0.0's sdist (its tox.ini's [flake8],
[hacking] and [flake8:local-plugins] sections, copied to
nova-regressions/nova-flake8.ini) with the installed Nova's
``nova/hacking/checks.py``, on the shipped modules of nova-regressions/
and on a module exported with ``--bug``.

Invariant: a shipped export a Nova reviewer's pep8 job would reject
fails here, naming the file, line and check.
"""

import configparser
import glob
import os
import re
import subprocess
import sys

import nova.hacking

ROOT = os.path.join(os.path.dirname(__file__), '..', '..')
FOLDER = os.path.join(ROOT, 'nova-regressions')


def _config(tmp_path):
    """Nova's sections, ``paths`` at the installed nova/hacking."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(os.path.join(FOLDER, 'nova-flake8.ini'))
    section = 'flake8:local-plugins'
    assert parser.has_option(section, 'paths'), (
        'nova-flake8.ini: [%s] paths missing (Nova 34.0.0 tox.ini has it)'
        % section)
    parser.set(section, 'paths',
               os.path.dirname(os.path.abspath(nova.hacking.__file__)))
    path = tmp_path / 'nova-flake8.ini'
    with open(path, 'w', encoding='utf-8') as stream:
        parser.write(stream)
    return str(path)


def _flake8(tmp_path, files, folder='nova/tests/functional/regressions'):
    """flake8 with Nova's configuration on copies of ``{name: text}``
    where they land in Nova's tree (``folder``; several of Nova's checks
    apply to ``nova/tests/`` only)."""
    config = _config(tmp_path)
    where = tmp_path / folder
    where.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, text in files.items():
        (where / name).write_text(text)
        paths.append(os.path.join(folder, name))
    return subprocess.run(
        [sys.executable, '-m', 'flake8', '--config', config] + paths,
        capture_output=True, text=True, cwd=str(tmp_path))


def _read(path):
    with open(path, encoding='utf-8') as stream:
        return stream.read()


def test_nova_checks_are_loaded(tmp_path):
    """A module breaking Nova's own N-check (N365, a useless assertion)
    is caught: the local plugins are in force, not silently absent."""
    found = _flake8(tmp_path, {'test_bad.py': (
        'class T(object):\n    def test_x(self):\n'
        '        self.assertTrue(True, "always")\n')})
    assert 'N365' in found.stdout, found.stdout + found.stderr


def test_shipped_exports_pass_novas_flake8(tmp_path):
    files = sorted(glob.glob(os.path.join(FOLDER, 'test_*.py')))
    assert files
    found = _flake8(tmp_path, {os.path.basename(path): _read(path)
                               for path in files})
    assert found.returncode == 0, found.stdout + found.stderr


def test_the_proposed_fixture_passes_novas_flake8(tmp_path):
    """The fixture the exports' Nova change adds, where it lands."""
    from faultdriver.export import novafixture
    folder, name = os.path.split(novafixture.NOVA_PATH)
    found = _flake8(tmp_path, {name: novafixture.text()}, folder)
    assert found.returncode == 0, found.stdout + found.stderr


def test_an_export_with_a_bug_number_passes_novas_flake8(tmp_path):
    from faultdriver import export
    text = export.export(os.path.join(
        FOLDER, 'scenarios', 'post-live-migration-at-destination-raise.yaml'),
        bug=2000001)
    found = _flake8(tmp_path, {'test_bug_2000001.py': text})
    assert found.returncode == 0, found.stdout + found.stderr


#: One reproducer per (workflow, action class) of the named set that
#: exports today, as a sweep writes it: the workflow, its case's rule
#: (faultdriver.sweep.cases.Case.rule) at a point of its move, every
#: swept invariant, one of them broken.
NAMED = {
    'live-migration': ('pre_live_migration', 'dest'),
    'cold-migration-confirm': ('migrate_disk_and_power_off', 'src'),
    'cold-migration-revert': ('migrate_disk_and_power_off', 'src'),
    'resize-confirm': ('migrate_disk_and_power_off', 'src'),
    'resize-revert': ('finish_revert_migration', 'src'),
    'evacuation': ('spawn', 'dest'),
    # A server from a volume, with a port (CinderFixture, NeutronFixture).
    'live-migration-bfv': ('pre_live_migration', 'dest'),
    'resize-revert-bfv': ('finish_revert_migration', 'src'),
    'evacuation-bfv': ('spawn', 'dest'),
}
EXPORTED_ACTIONS = ('crash', 'raise', 'hang', 'periodic', 'peer-periodic',
                    'delay')


def _reproducer(tmp_path, workflow, point, host, action):
    import yaml

    from faultdriver.scenario import invariants
    from faultdriver.scenario import model
    from faultdriver.sweep import cases
    data = dict(model.load(workflow).data)
    peer = ({'src', 'dest'} - {host}).pop() \
        if action == 'peer-periodic' else None
    case = cases.Case(point, host, 'before', action, peer=peer)
    rule = case.rule()
    data['name'] = cases.scenario_name('accounting-matches-placement',
                                       case.id)
    data['rules'] = {host: [rule]}
    data['variants'] = {'stock': {'description': 'as swept',
                                  'expect': 'bug'}}
    data['expectations'] = [
        {name: {'broken': True} if name == 'accounting-matches-placement'
         else {}} for name in invariants.swept()]
    path = tmp_path / ('%s-%s.yaml' % (workflow, action))
    path.write_text(yaml.safe_dump(data))
    return str(path)


def test_the_named_workflows_reproducers_export_clean(tmp_path):
    """Each exports without edits (vacuous invariants dropped), imports
    nothing of faultdriver, and passes Nova's flake8."""
    import ast

    from faultdriver import export
    from faultdriver.export import module
    from faultdriver.scenario import model
    texts = {}
    for workflow, (point, host) in NAMED.items():
        for action in EXPORTED_ACTIONS:
            path = _reproducer(tmp_path, workflow, point, host, action)
            text = export.export(path)
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    names = [getattr(node, 'module', None) or ''] + [
                        alias.name for alias in node.names]
                    assert not any(n.startswith('faultdriver')
                                   for n in names), (workflow, action)
            # The vacuous (holding) volume and port invariants dropped.
            assert '_volume_attachments' not in text
            assert 'port_binding' not in text
            assert ('volume=True' in text) == workflow.endswith('-bfv')
            texts['test_%s_%s.py' % (workflow.replace('-', '_'),
                                     action)] = text
            # A readable name: no sweep hash.
            name = module.file_name(model.load(path))
            assert not re.search(r'_[0-9a-f]{8}\.py$', name), name
    found = _flake8(tmp_path, texts)
    assert found.returncode == 0, found.stdout + found.stderr
