"""Load and validate scenario files: the Scenario record and where it
is read from.  The schema and its check are
:mod:`faultdriver.scenario.schemacheck`'s, what the schema cannot say
:mod:`faultdriver.scenario.semantics`'.

Errors are :class:`~faultdriver.exception.ScenarioError` naming the file,
the key path (``steps[3].boot.host``) and what was expected.
"""

import dataclasses
import importlib.resources
import os
import stat
import sys
import typing

import yaml

from faultdriver import exception
from faultdriver import hostshape
from faultdriver import rules as rules_module
from faultdriver.scenario import bounded_yaml
from faultdriver.scenario import schemacheck
from faultdriver.scenario import semantics
from faultdriver.scenario import specs
from faultdriver.scenario import stepkinds
from faultdriver.scenario import tiers

BUNDLED = 'faultdriver.scenarios'
#: Where an installed faultdriver keeps the candidate fixes (setup.cfg
#: [files] data_files).
INSTALLED_FIXES = os.path.join(sys.prefix, 'share', 'faultdriver',
                               'nova-fixes')
DEFAULT_HOSTS = ('src', 'dest')
#: Steps that start a move (a new migration record) of their server.
MOVES = ('live-migrate', 'migrate', 'resize', 'evacuate')


def starts_operation(kind: str) -> bool:
    """Whether a step of ``kind`` asks Nova for a move or another
    operation on a server (a registered kind that ``operates``: shelve,
    rebuild...): where a sweep's trace of a workflow begins."""
    registered = stepkinds.get(kind)
    return kind in MOVES or bool(registered and registered.operates)


#: A host's shape when the topology says nothing (Nova's libvirt test
#: base's host), and with ``pinned: true``.
NOVA_HOST = hostshape.NOVA_HOST
PINNED_HOST = hostshape.PINNED_HOST

# What other modules read here, each defined where its concern is.
schema = schemacheck.schema
key_path = schemacheck.key_path
MAX_MESSAGE = schemacheck.MAX_MESSAGE
check = semantics.check
check_tier = semantics.check_tier
MAX_CPUS = semantics.MAX_CPUS
MAX_CPU_NUMBER = semantics.MAX_CPU_NUMBER
CPU_SETS = semantics.CPU_SETS


@dataclasses.dataclass
class Scenario:
    path: str
    data: typing.Dict[str, typing.Any]

    name = property(lambda self: self.data['name'])
    description = property(lambda self: self.data['description'].strip())
    variants = property(lambda self: self.data['variants'])

    @property
    def steps(self) -> typing.List[specs.StepSpec]:
        """The steps, as :class:`~faultdriver.scenario.specs.StepSpec`."""
        return [specs.StepSpec.from_json(s) for s in self.data['steps']]

    @property
    def hosts(self) -> typing.List[str]:
        return list(self.data.get('topology', {}).get('hosts',
                                                      DEFAULT_HOSTS))

    @property
    def pinned(self) -> bool:
        return bool(self.data.get('topology', {}).get('pinned', False))

    @property
    def periodic_timer(self) -> bool:
        """Whether nova-compute also runs the tracker periodic on its
        timer (process tiers; the embedded Nova has none)."""
        return bool(self.data.get('topology', {}).get('periodic-timer',
                                                      True))

    @property
    @tiers.needs(tiers.Provision.TRANSFERS_GUEST)
    def live_migration_bandwidth(self) -> typing.Optional[int]:
        """MiB/s a live migration's transfer may use on real libvirt
        (``[libvirt] live_migration_bandwidth``), or None: Nova's default,
        no limit."""
        found: typing.Optional[int] = self.data.get('topology', {}).get(
            'live-migration-bandwidth')
        return found

    @property
    @tiers.needs(tiers.Provision.NOVA_OPTIONS)
    def shelved_offload_time(self) -> typing.Optional[int]:
        """``[DEFAULT] shelved_offload_time`` of every service (-1: a
        shelved server is never offloaded by itself, 0: at once, in the
        shelve), or None: the tier's (Nova's default is 0)."""
        found: typing.Optional[int] = self.data.get('topology', {}).get(
            'shelved-offload-time')
        return found

    def host_shapes(self) -> typing.Dict[str, hostshape.HostShape]:
        """``{host: HostShape}`` (faultdriver.hostshape)."""
        topology = self.data.get('topology', {})
        base = (PINNED_HOST if self.pinned else NOVA_HOST).replace(
            **topology.get('defaults', {}))
        return {host: base.replace(**topology.get('per-host', {}).get(
            host, {})) for host in self.hosts}

    @property
    def backends(self) -> typing.Tuple[str, ...]:
        """Backends the scenario runs on (every one this machine runs
        unless it says)."""
        return tuple(self.data.get('backends', tiers.LOCAL))

    def runs_on(self, backend: str) -> bool:
        """Whether its ``backends`` admits ``backend``: a remote tier (a
        cloud) runs a scenario that names none, where the cloud provides
        what it needs (checked when its run loads it), and one written
        for real libvirt where the cloud's computes are libvirt (it
        provides a real hypervisor: cloud.provides)."""
        tier = tiers.get(backend)
        if backend in self.backends:
            return True
        if not tier.remote:
            return False
        return 'backends' not in self.data or (
            'libvirt' in self.backends and
            tiers.Provision.REAL_HYPERVISOR in tier.provides)

    @property
    def dedicated_cpus(self) -> bool:
        """Whether hosts have dedicated pCPUs (pinning is reported)."""
        return any(shape.cpu_dedicated_set
                   for shape in self.host_shapes().values())

    def common_expectations(self) -> typing.List[specs.ExpectationSpec]:
        """Every variant's expectations (ExpectationSpec)."""
        return [specs.ExpectationSpec.from_json(e)
                for e in self.data.get('expectations', ())]

    def own_expectations(self, variant: str
                         ) -> typing.List[specs.ExpectationSpec]:
        """The expectations ``variant`` adds (ExpectationSpec)."""
        return [specs.ExpectationSpec.from_json(e)
                for e in self.variants[variant].get('expectations', ())]

    def expectations(self, variant: str
                     ) -> typing.List[specs.ExpectationSpec]:
        """What decides ``variant``'s verdict: the common expectations,
        then its own."""
        return self.common_expectations() + self.own_expectations(variant)

    def patches(self, variant: str) -> typing.List[str]:
        return list(self.variants[variant].get('patches', ()))

    def nova_patches(self, variant: str) -> typing.List[str]:
        """The variant's Nova diffs, as paths (relative ones are relative
        to the scenario file).  A bundled scenario's fix variant names a
        file of a checkout's nova-fixes/ (``../../nova-fixes/F22...``);
        installed, that folder is INSTALLED_FIXES."""
        folder = os.path.dirname(os.path.abspath(self.path))
        found = []
        for path in self.variants[variant].get('nova-patches', ()):
            full = os.path.normpath(os.path.join(folder, path))
            installed = os.path.join(INSTALLED_FIXES, os.path.basename(full))
            if (not os.path.exists(full) and os.path.basename(
                    os.path.dirname(full)) == 'nova-fixes' and
                    os.path.exists(installed)):
                full = installed
            found.append(full)
        return found

    def nova_tree(self, variant: str) -> typing.Optional[str]:
        """The variant's Nova source tree, as a path (a relative one is
        relative to the scenario file), or None for the installed Nova."""
        tree = self.variants[variant].get('nova-tree')
        if not tree:
            return None
        return os.path.abspath(os.path.join(
            os.path.dirname(os.path.abspath(self.path)), tree))

    def expects_bug(self, variant: str) -> bool:
        expects: bool = self.variants[variant].get('expect', 'ok') == 'bug'
        return expects


def bundled() -> typing.Dict[str, str]:
    """Bundled scenarios: ``{name: path}``."""
    folder = importlib.resources.files(BUNDLED)
    found: typing.Dict[str, str] = {}
    for entry in folder.iterdir():
        if entry.name.endswith(('.yaml', '.yml')):
            found[entry.name.rsplit('.', 1)[0]] = str(entry)
    return dict(sorted(found.items()))


def resolve(name_or_path: str) -> str:
    """A bundled scenario's path, or the file given."""
    choices = bundled()
    if os.path.isfile(name_or_path) or (os.path.exists(name_or_path) and
                                        name_or_path not in choices):
        return name_or_path         # load() says if it is not a file
    if name_or_path in choices:
        return choices[name_or_path]
    raise exception.ScenarioError(
        '%s: no such scenario file or bundled scenario%s; bundled: %s'
        % (name_or_path, rules_module.suggest(name_or_path, choices),
           ', '.join(choices)))


def load(name_or_path: str) -> Scenario:
    """The validated Scenario of a file or bundled name; ScenarioError
    naming the file for anything wrong, read within the bounds of
    :mod:`faultdriver.scenario.bounded_yaml`."""
    scenario = read(name_or_path)
    check(scenario)
    return scenario


def read(name_or_path: str) -> Scenario:
    """The Scenario of a file or bundled name, checked against the
    schema only (no Nova import: quick); :func:`check` does the rest.
    ``scenario run`` starts its variants on this; each variant's process
    loads it in full."""
    path = resolve(name_or_path)
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise exception.ScenarioError('%s: not a regular file' % path)
        data = bounded_yaml.load_file(path)
    except OSError as exc:
        raise exception.ScenarioError('%s: cannot read: %s'
                                      % (path, exc.strerror or exc))
    except bounded_yaml.LimitError as exc:
        raise exception.ScenarioError('%s: %s' % (path, exc))
    except yaml.YAMLError as exc:
        raise exception.ScenarioError('%s: not valid YAML: %s' % (
            path, schemacheck.clip(' '.join(str(exc).split()))))
    return _schema_checked(data, path)


def _schema_checked(data: typing.Any, path: str) -> Scenario:
    """The Scenario of ``data`` if it matches the schema."""
    schemacheck.check(data, path)
    return Scenario(path, data)


def validate(data: typing.Any, path: str = '<scenario>') -> Scenario:
    """The Scenario, or ScenarioError for the first problem found."""
    scenario = _schema_checked(data, path)
    check(scenario)
    return scenario
