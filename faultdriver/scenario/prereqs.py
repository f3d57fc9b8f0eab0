"""What the process and libvirt tiers need on this machine, checked
before anything starts.

Without it a stack fails half way (MariaDB and RabbitMQ already up when
``import pymysql`` fails) or, worse, never gets far enough to fail.  The
checks are cheap and import no Nova: a program lookup, the effective
user, and the modules imported in one fresh interpreter (this one's, as
the stack's processes run it; a module that fails to load, such as
libvirt-python built against a libvirt no longer there, is found too,
and the caller imports none of them).  ``scenario run`` and ``sweep``
call :func:`refuse` before any variant starts (exit code 2, one line),
:meth:`faultdriver.process.stack.Stack.start` before it starts anything,
and ``faultdriver doctor`` lists :func:`check`'s results.

Programs are looked up on ``PATH`` and then in the sbin directories
(a user's ``PATH`` often lacks them); the stack runs them from where
they were found (:func:`program`).  RabbitMQ's broker and CLI are only
taken from Debian's private directory: the wrappers on ``PATH`` switch
to the ``rabbitmq`` user.
"""

import json
import os
import shutil
import subprocess
import sys
import typing

from faultdriver import exception
from faultdriver.scenario import tiers as tiers_module

#: The tiers that need something of this machine (their ``prerequisites``
#: in :mod:`faultdriver.scenario.tiers`).
TIERS = tuple(tier.name for tier in tiers_module.TIERS.values()
              if tier.prerequisites)
RABBIT_BIN = '/usr/lib/rabbitmq/bin'
SBIN = ('/usr/local/sbin', '/usr/sbin', '/sbin')


class Need(typing.NamedTuple):
    """``tier`` is the group of needs a tier's ``prerequisites`` name;
    ``kind`` is program (``source`` its Debian package), script (a
    console script beside the interpreter; ``source`` its distribution),
    module (``source`` its distribution) or root."""

    tier: str
    kind: str
    name: str
    source: typing.Optional[str]


class Result(typing.NamedTuple):
    """``found``: where the program or module is, or None; ``detail``:
    why it is missing (an import error's text), or None."""

    need: Need
    found: typing.Optional[str]
    detail: typing.Optional[str]


NEEDS = (
    Need('process', 'program', 'mariadbd', 'mariadb-server'),
    Need('process', 'program', 'mariadb-install-db', 'mariadb-server'),
    Need('process', 'program', 'rabbitmq-server', 'rabbitmq-server'),
    Need('process', 'program', 'rabbitmqctl', 'rabbitmq-server'),
    Need('process', 'program', 'epmd', 'erlang-base'),
    Need('process', 'module', 'pymysql', 'PyMySQL'),
    Need('process', 'module', 'gunicorn', 'gunicorn'),
    Need('process', 'module', 'placement', 'openstack-placement'),
    Need('process', 'script', 'gunicorn', 'gunicorn'),
    Need('process', 'script', 'placement-manage', 'openstack-placement'),
    Need('libvirt', 'program', 'libvirtd', 'libvirt-daemon-system'),
    Need('libvirt', 'program', 'virtlogd', 'libvirt-daemon-system'),
    Need('libvirt', 'program', 'qemu-system-x86_64', 'qemu-system-x86'),
    Need('libvirt', 'program', 'qemu-img', 'qemu-utils'),
    # A volume's loop device (the block-storage stand-in).
    Need('libvirt', 'program', 'losetup', 'mount'),
    # A host's network namespace (its loopback up) and a port's tap
    # (Nova's privsep daemon runs ip tuntap).
    Need('libvirt', 'program', 'ip', 'iproute2'),
    Need('libvirt', 'module', 'libvirt', 'libvirt-python'),
    # Its daemons run in mount and network namespaces of their own, with
    # libvirt's directories and cgroups bound over the system's.
    Need('libvirt', 'root', 'root', None),
)
#: Programs found only in one directory (see the module's docstring).
ONLY_IN = {'rabbitmq-server': RABBIT_BIN, 'rabbitmqctl': RABBIT_BIN}
#: How to install what is missing, by kind: Debian packages (the script
#: is in faultdriver's source tree; from a wheel, apt-get), pip extras,
#: root.
DEBIAN = 'tools/install-process-deps.sh%s (or apt-get install -y %s)'
PIP = "pip install 'faultdriver[%s]'"
#: What a distribution builds against, said where pip installs it.
BUILDS = {'libvirt-python': 'it builds against libvirt-dev, which '
                            'tools/install-process-deps.sh libvirt installs'}
ROOT = 'run it as root'


def needs(tier: str) -> list[Need]:
    """What ``tier`` needs: the groups its ``prerequisites`` name (the
    libvirt tier runs the process tier's services too)."""
    if tier not in TIERS:
        raise ValueError('tier %r: expected one of %s'
                         % (tier, ', '.join(TIERS)))
    groups: tuple[str, ...] = tiers_module.get(tier).prerequisites
    return [need for need in NEEDS if need.tier in groups]


def find_program(name: str, path: typing.Optional[typing.Iterable[str]] = None
                 ) -> typing.Optional[str]:
    """Where program ``name`` is (``path``: the directories searched,
    default ``PATH`` then the sbin directories), or None."""
    if name in ONLY_IN:
        dirs = [ONLY_IN[name]]
    elif path is not None:
        dirs = list(path)
    else:
        dirs = os.environ.get('PATH', os.defpath).split(os.pathsep) + \
            list(SBIN)
    return shutil.which(name, path=os.pathsep.join(dirs))


def program(name: str) -> str:
    """The path the stack runs ``name`` from (as checked), or the bare
    name, for the error of starting it to name it."""
    return find_program(name) or name


def script(name: str) -> str:
    """A console script of the interpreter's environment (the stack runs
    Nova's, placement's and gunicorn's from there)."""
    return os.path.join(os.path.dirname(sys.executable), name)


IMPORT = """
import importlib, json, sys
found = {}
for name in sys.argv[1:]:
    try:
        found[name] = [importlib.import_module(name).__file__, None]
    except Exception as exc:
        found[name] = [None, '%s: %s' % (type(exc).__name__, exc)]
print(json.dumps(found))
"""


#: ``{module: [file or None, error or None]}`` (as JSON gives it).
Imported = dict[str, list[typing.Optional[str]]]


def import_modules(names: typing.Sequence[str],
                   env: typing.Optional[typing.Mapping[str, str]] = None
                   ) -> Imported:
    """``{name: (file or None, error or None)}``: each module imported in
    a fresh interpreter of this one's executable, with ``env`` (default
    this process's environment)."""
    if not names:
        return {}
    done = subprocess.run([sys.executable, '-W', 'ignore', '-c', IMPORT] +
                          list(names), capture_output=True, text=True,
                          env=env, timeout=120)
    try:
        found: Imported = json.loads(done.stdout.splitlines()[-1])
        return found
    except (IndexError, ValueError):
        why = (done.stderr.strip().splitlines() or ['no output'])[-1]
        return {name: [None, 'the import check failed: %s' % why]
                for name in names}


def check(tier: str, path: typing.Optional[typing.Iterable[str]] = None,
          env: typing.Optional[typing.Mapping[str, str]] = None
          ) -> list[Result]:
    """A :class:`Result` for each need of ``tier``: programs looked up
    in ``path`` (default: see find_program), modules imported with
    ``env``."""
    wanted = needs(tier)
    modules = import_modules([n.name for n in wanted if n.kind == 'module'],
                             env)
    results = []
    for need in wanted:
        if need.kind == 'program':
            results.append(Result(need, find_program(need.name, path), None))
        elif need.kind == 'script':
            found = script(need.name)
            results.append(Result(
                need, found if os.access(found, os.X_OK) else None, None))
        elif need.kind == 'module':
            where, detail = modules[need.name]
            results.append(Result(need, where, detail))
        else:
            root = os.geteuid() == 0
            results.append(Result(need, 'uid 0' if root else None, None
                                  if root else 'running as uid %d'
                                  % os.geteuid()))
    return results


def describe(result: Result) -> str:
    """One missing need, as the refusal names it."""
    need = result.need
    if need.kind == 'program':
        return 'program %s (Debian package %s)' % (need.name, need.source)
    if need.kind == 'script':
        return 'console script %s beside %s (%s)' % (
            need.name, sys.executable, need.source)
    if need.kind == 'module':
        return 'Python module %s (%s; %s)' % (need.name, need.source,
                                              result.detail)
    return 'root (%s)' % result.detail


def install(missing: typing.Sequence[Result]) -> str:
    """The commands that install the ``missing`` results, in one line."""
    commands = []
    packages = sorted({r.need.source or r.need.name for r in missing
                       if r.need.kind == 'program'})
    if packages:
        libvirt = any(r.need.tier == 'libvirt' for r in missing
                      if r.need.kind == 'program')
        commands.append(DEBIAN % (' libvirt' if libvirt else '',
                                  ' '.join(packages)))
    for tier in TIERS:
        sources = sorted({r.need.source or r.need.name for r in missing
                          if r.need.tier == tier
                          and r.need.kind in ('module', 'script')})
        if sources:
            notes = [BUILDS[s] for s in sources if s in BUILDS]
            extra: str = tiers_module.get(tier).extra
            commands.append(PIP % extra + ''.join(
                ' (%s)' % note for note in notes))
    if any(r.need.kind == 'root' for r in missing):
        commands.append(ROOT)
    return '; '.join(commands)


def message(tier: str, missing: typing.Sequence[Result]) -> str:
    """The one line refusing ``tier`` for the ``missing`` results."""
    return '--backend %s cannot start, this machine lacks: %s. Install: %s' \
        % (tier, ', '.join(describe(r) for r in missing), install(missing))


def refuse(tier: str, path: typing.Optional[typing.Iterable[str]] = None,
           env: typing.Optional[typing.Mapping[str, str]] = None) -> None:
    """Raise MissingPrerequisite naming everything ``tier`` lacks here
    and how to install it; return None when nothing is missing."""
    missing = [r for r in check(tier, path, env) if r.found is None]
    if missing:
        raise exception.MissingPrerequisite(message(tier, missing))
