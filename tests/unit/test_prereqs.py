"""The process tiers' prerequisite check: each missing program, Python
module or root is named with the command that installs it, in one line;
``scenario run`` refuses a tier that lacks one with exit code 2 before
anything starts.  No Nova import (the CLI's subprocess imports none
either before it refuses)."""

import os
import stat
import subprocess
import sys

import pytest

from faultdriver import exception
from faultdriver.scenario import prereqs

NEEDS = {(n.tier, n.kind, n.name): n for n in prereqs.NEEDS}


def missing(*keys, detail=None):
    return [prereqs.Result(NEEDS[key], None, detail) for key in keys]


def executable(folder, name):
    path = os.path.join(folder, name)
    with open(path, 'w') as out:
        out.write('#!/bin/sh\n')
    os.chmod(path, stat.S_IRWXU)
    return path


@pytest.mark.parametrize('results, text', [
    (missing(('process', 'program', 'mariadbd')),
     '--backend process cannot start, this machine lacks: program mariadbd '
     '(Debian package mariadb-server). Install: '
     'tools/install-process-deps.sh (or apt-get install -y mariadb-server)'),
    (missing(('process', 'program', 'epmd'),
             ('libvirt', 'program', 'qemu-img')),
     '--backend process cannot start, this machine lacks: program epmd '
     '(Debian package erlang-base), program qemu-img (Debian package '
     'qemu-utils). Install: tools/install-process-deps.sh libvirt (or '
     'apt-get install -y erlang-base qemu-utils)'),
    (missing(('process', 'module', 'pymysql'),
             detail="ModuleNotFoundError: No module named 'pymysql'"),
     '--backend process cannot start, this machine lacks: Python module '
     "pymysql (PyMySQL; ModuleNotFoundError: No module named 'pymysql'). "
     "Install: pip install 'faultdriver[process]'"),
    (missing(('libvirt', 'root', 'root'), detail='running as uid 1000'),
     '--backend process cannot start, this machine lacks: root (running '
     'as uid 1000). Install: run it as root'),
])
def test_message_names_each_missing_thing_and_its_install(results, text):
    assert prereqs.message('process', results) == text


def test_a_program_missing_from_the_path_is_named(tmp_path):
    executable(str(tmp_path), 'mariadb-install-db')
    with pytest.raises(exception.MissingPrerequisite) as refused:
        prereqs.refuse('process', path=[str(tmp_path)])
    text = str(refused.value)
    assert 'program mariadbd (Debian package mariadb-server)' in text
    assert 'program epmd (Debian package erlang-base)' in text
    assert 'program mariadb-install-db' not in text      # it was found
    assert 'tools/install-process-deps.sh (or apt-get install -y' in text
    assert 'libvirt' not in text        # the process tier only


def result(results, kind, name):
    [found] = [r for r in results if (r.need.kind, r.need.name) ==
               (kind, name)]
    return found


def test_a_program_found_is_where_the_stack_runs_it_from(tmp_path):
    path = executable(str(tmp_path), 'qemu-img')
    results = prereqs.check('libvirt', path=[str(tmp_path)])
    assert result(results, 'program', 'qemu-img').found == path
    assert result(results, 'program', 'libvirtd').found is None


def test_an_unimportable_module_is_named_with_the_extra(tmp_path):
    env, _scratch = blocked(tmp_path, 'gunicorn')
    found = result(prereqs.check('process', env=env), 'module', 'gunicorn')
    assert found.found is None
    assert prereqs.message('process', [found]) == (
        '--backend process cannot start, this machine lacks: Python module '
        'gunicorn (gunicorn; ImportError: gunicorn blocked by the test). '
        "Install: pip install 'faultdriver[process]'")


def test_a_module_that_fails_to_load_says_why(tmp_path):
    """libvirt-python built against a libvirt no longer there."""
    (tmp_path / 'libvirt.py').write_text(
        'raise ImportError("libvirt.so.0: cannot open shared object '
        'file")\n')
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    found = result(prereqs.check('libvirt', env=env), 'module', 'libvirt')
    assert found.found is None
    text = prereqs.message('libvirt', [found])
    assert 'Python module libvirt (libvirt-python; ImportError: ' \
        'libvirt.so.0: cannot open shared object file)' in text
    assert "pip install 'faultdriver[libvirt]'" in text


def test_modules_are_not_imported_here():
    """The caller (the CLI, Nova's unit tests) imports none of them."""
    before = set(sys.modules)
    prereqs.check('libvirt')
    assert not {'pymysql', 'gunicorn', 'placement', 'libvirt'} & (
        set(sys.modules) - before)


def test_not_root_refuses_the_libvirt_tier_only(monkeypatch):
    monkeypatch.setattr(os, 'geteuid', lambda: 1000)
    assert [n for n in prereqs.needs('process') if n.kind == 'root'] == []
    root = result(prereqs.check('libvirt'), 'root', 'root')
    assert root.found is None
    assert prereqs.message('libvirt', [root]).endswith(
        'lacks: root (running as uid 1000). Install: run it as root')


def test_the_libvirt_tier_needs_the_process_tier_too():
    names = {(n.kind, n.name) for n in prereqs.needs('libvirt')}
    assert {('program', 'mariadbd'), ('module', 'pymysql'),
            ('program', 'libvirtd'), ('program', 'virtlogd'),
            ('program', 'qemu-system-x86_64'), ('module', 'libvirt'),
            ('root', 'root')} <= names


def test_an_unknown_tier_is_an_error():
    with pytest.raises(ValueError, match="tier 'embedded': expected one of "
                                         'process, libvirt'):
        prereqs.needs('embedded')


def blocked(tmp_path, module):
    """An environment in which ``import module`` fails (a module of that
    name first on the path raises ImportError)."""
    folder = tmp_path / 'blocked'
    folder.mkdir()
    (folder / (module + '.py')).write_text(
        'raise ImportError("%s blocked by the test")\n' % module)
    scratch = tmp_path / 'tmp'
    scratch.mkdir()
    return dict(os.environ, PYTHONPATH=str(folder), TMPDIR=str(scratch),
                PYTHONWARNINGS='ignore'), scratch


@pytest.mark.parametrize('backend, module, extra', [
    ('process', 'pymysql', 'process'),
    ('libvirt', 'libvirt', 'libvirt'),
    ('both', 'gunicorn', 'process'),
])
def test_scenario_run_refuses_before_anything_starts(tmp_path, backend,
                                                     module, extra):
    env, scratch = blocked(tmp_path, module)
    done = subprocess.run(
        [sys.executable, '-m', 'faultdriver.cmd.main', 'scenario', 'run',
         'stale-error-migration-context', '--backend', backend],
        capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ''
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert 'Python module %s' % module in lines[0]
    assert '%s blocked by the test' % module in lines[0]
    assert "pip install 'faultdriver[%s]'" % extra in lines[0]
    # No variant started (not even the embedded one of "both"), no
    # stack, no temporary directory.
    assert list(scratch.iterdir()) == []


def test_sweep_refuses_a_confirm_tier_before_its_cases(tmp_path):
    env, scratch = blocked(tmp_path, 'pymysql')
    done = subprocess.run(
        [sys.executable, '-m', 'faultdriver.cmd.main', 'sweep',
         'live-migration', '--confirm', 'process', '--results',
         str(tmp_path / 'results')],
        capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 2, done.stderr
    assert 'Python module pymysql' in done.stderr
    assert not (tmp_path / 'results').exists()
    assert list(scratch.iterdir()) == []
