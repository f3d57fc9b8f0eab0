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


def _flake8(tmp_path, files):
    """flake8 with Nova's configuration on copies of ``{name: text}``
    where they land in Nova's tree (several of Nova's checks apply to
    ``nova/tests/`` only)."""
    config = _config(tmp_path)
    where = tmp_path / 'nova' / 'tests' / 'functional' / 'regressions'
    where.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, text in files.items():
        (where / name).write_text(text)
        paths.append(os.path.join('nova', 'tests', 'functional',
                                  'regressions', name))
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


def test_an_export_with_a_bug_number_passes_novas_flake8(tmp_path):
    from faultdriver import export
    text = export.export(os.path.join(
        FOLDER, 'scenarios', 'post-live-migration-at-destination-raise.yaml'),
        bug=2000001)
    found = _flake8(tmp_path, {'test_bug_2000001.py': text})
    assert found.returncode == 0, found.stdout + found.stderr
