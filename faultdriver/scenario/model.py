"""Load and validate scenario files (no Nova imports).

Errors are :class:`~faultdriver.exception.ScenarioError` naming the file,
the key path (``steps[3].boot.host``) and what was expected.
"""

import dataclasses
import functools
import importlib.resources
import os

import jsonschema
import yaml

from faultdriver import exception
from faultdriver import rules as rules_module

BUNDLED = 'faultdriver.scenarios'
DEFAULT_HOSTS = ('src', 'dest')
#: Steps that start a move (a new migration record) of their server.
MOVES = ('live-migrate', 'migrate', 'resize', 'evacuate')
#: A host's shape when the topology says nothing: Nova's libvirt test
#: base's fakelibvirt host (faultdriver.harness.topology.HostShape()).
NOVA_HOST = {'cpu_nodes': 2, 'cpu_sockets': 1, 'cpu_cores': 2,
             'cpu_threads': 2, 'memory_mb': None,
             'cpu_dedicated_set': None, 'cpu_shared_set': None}
#: ``pinned: true``: 4 dedicated pCPUs in one NUMA cell.
PINNED_HOST = dict(NOVA_HOST, cpu_nodes=1, cpu_cores=4, cpu_threads=1,
                   cpu_dedicated_set='0-3')
#: Most CPUs a host of the embedded Nova can have (the libvirt test base
#: mocks 16 online CPUs and checks for fewer).
MAX_CPUS = 15
CPU_SETS = ('cpu_dedicated_set', 'cpu_shared_set')


@functools.cache
def schema():
    text = importlib.resources.files(__package__).joinpath(
        'schema.yaml').read_text(encoding='utf-8')
    return yaml.safe_load(text)


@dataclasses.dataclass
class Scenario:
    path: str
    data: dict

    name = property(lambda self: self.data['name'])
    description = property(lambda self: self.data['description'].strip())
    steps = property(lambda self: self.data['steps'])
    variants = property(lambda self: self.data['variants'])

    @property
    def hosts(self):
        return list(self.data.get('topology', {}).get('hosts',
                                                      DEFAULT_HOSTS))

    @property
    def pinned(self):
        return bool(self.data.get('topology', {}).get('pinned', False))

    def host_shapes(self):
        """``{host: shape}``: every key of the schema's host-shape."""
        topology = self.data.get('topology', {})
        base = dict(PINNED_HOST if self.pinned else NOVA_HOST,
                    **topology.get('defaults', {}))
        return {host: dict(base, **topology.get('per-host', {}).get(host, {}))
                for host in self.hosts}

    @property
    def dedicated_cpus(self):
        """Whether hosts have dedicated pCPUs (pinning is reported)."""
        return any(shape['cpu_dedicated_set']
                   for shape in self.host_shapes().values())

    def expectations(self, variant):
        return (list(self.data.get('expectations', ())) +
                list(self.variants[variant].get('expectations', ())))

    def patches(self, variant):
        return list(self.variants[variant].get('patches', ()))

    def expects_bug(self, variant):
        return self.variants[variant].get('expect', 'ok') == 'bug'


def bundled():
    """Bundled scenarios: ``{name: path}``."""
    folder = importlib.resources.files(BUNDLED)
    found = {}
    for entry in folder.iterdir():
        if entry.name.endswith(('.yaml', '.yml')):
            found[entry.name.rsplit('.', 1)[0]] = str(entry)
    return dict(sorted(found.items()))


def resolve(name_or_path):
    """A bundled scenario's path, or the file given."""
    if os.path.isfile(name_or_path):
        return name_or_path
    choices = bundled()
    if name_or_path in choices:
        return choices[name_or_path]
    raise exception.ScenarioError(
        '%s: no such scenario file or bundled scenario%s; bundled: %s'
        % (name_or_path, rules_module.suggest(name_or_path, choices),
           ', '.join(choices)))


def load(name_or_path):
    path = resolve(name_or_path)
    try:
        with open(path, encoding='utf-8') as stream:
            data = yaml.safe_load(stream)
    except (OSError, yaml.YAMLError) as exc:
        raise exception.ScenarioError('%s: cannot read: %s' % (path, exc))
    return validate(data, path)


def validate(data, path='<scenario>'):
    """The Scenario, or ScenarioError for the first problem found."""
    errors = sorted(jsonschema.Draft202012Validator(schema()).iter_errors(
        data), key=lambda e: (list(map(str, e.absolute_path)), e.validator))
    if errors:
        raise exception.ScenarioError('%s: %s' % (path, _describe(errors[0])))
    scenario = Scenario(path, data)
    _check_references(scenario)
    _check_topology(scenario)
    return scenario


def key_path(parts):
    text = ''
    for part in parts:
        if isinstance(part, int):
            text += '[%d]' % part
        else:
            text += ('.' if text else '') + str(part)
    return text or '(top level)'


def _describe(error):
    where = key_path(error.absolute_path)
    if error.validator == 'additionalProperties':
        known = list(error.schema.get('properties', ()))
        unknown = [k for k in error.instance if k not in known]
        if known:
            return ('%s: unknown key %r%s; expected one of %s'
                    % (where, unknown[0],
                       rules_module.suggest(str(unknown[0]), known),
                       ', '.join(known)))
    if error.validator in ('minProperties', 'maxProperties') and \
            'properties' in error.schema:
        return ('%s: expected exactly one key, the kind (one of %s); got %s'
                % (where, ', '.join(error.schema['properties']),
                   ', '.join(map(str, error.instance)) or 'none'))
    if error.validator == 'required':
        return '%s: %s' % (where, error.message)
    return '%s: %s' % (where, error.message)


def _fail(scenario, where, message):
    raise exception.ScenarioError('%s: %s: %s' % (scenario.path,
                                                  key_path(where), message))


def _check_references(scenario):
    """Hosts, servers, flavors, fixes and rules that must exist."""
    from faultdriver import conf
    from faultdriver.tracker import patches as tracker_patches
    hosts = scenario.hosts
    flavors = scenario.data.get('flavors', {})
    rule_type = conf.RuleType()

    def host(where, name):
        if name not in hosts:
            _fail(scenario, where, 'unknown host %r%s; the topology has %s'
                  % (name, rules_module.suggest(name, hosts),
                     ', '.join(hosts)))

    def rule(where, text):
        try:
            rule_type(text)
        except ValueError as exc:
            _fail(scenario, where, 'invalid rule: %s' % exc)

    for name, texts in scenario.data.get('rules', {}).items():
        if name != '*':
            host(['rules', name], name)
        for i, text in enumerate(texts):
            rule(['rules', name, i], text)
    fixes = tracker_patches.registered()
    for variant, spec in scenario.variants.items():
        for i, name in enumerate(spec.get('patches', ())):
            if name not in fixes:
                _fail(scenario, ['variants', variant, 'patches', i],
                      'unknown tracker fix %r%s; expected one of %s'
                      % (name, rules_module.suggest(name, fixes),
                         ', '.join(fixes)))
    booted = set()
    for i, step in enumerate(scenario.steps):
        [(kind, args)] = step.items()
        where = ['steps', i, kind]
        for key in ('host',):
            if key in args:
                host(where + [key], args[key])
        for key in ('server', 'pin-as'):
            if key in args and not (kind == 'boot' and key == 'server'):
                if args[key] not in booted:
                    _fail(scenario, where + [key],
                          'server %r is not booted by an earlier step; '
                          'booted so far: %s' % (args[key], ', '.join(
                              sorted(booted)) or 'none'))
        if 'flavor' in args and args['flavor'] not in flavors:
            _fail(scenario, where + ['flavor'], 'unknown flavor %r; '
                  'expected one of the flavors: %s'
                  % (args['flavor'], ', '.join(flavors) or 'none defined'))
        if kind == 'boot':
            booted.add(args['server'])
        for key in ('rule',):
            if key in args:
                rule(where + [key], args[key])
        for j, text in enumerate(args.get('rules', ())):
            rule(where + ['rules', j], text)
    blocks = [(['expectations'], scenario.data.get('expectations', ()))]
    blocks += [(['variants', v, 'expectations'], s.get('expectations', ()))
               for v, s in scenario.variants.items()]
    for prefix, block in blocks:
        for i, expectation in enumerate(block):
            [(kind, args)] = expectation.items()
            where = prefix + [i, kind]
            names = list(args.get('servers', ()))
            if 'server' in args:
                names.append(args['server'])
            for name in names:
                if name not in booted:
                    _fail(scenario, where, 'server %r is never booted; '
                          'booted: %s' % (name, ', '.join(sorted(booted))))
            if 'host' in args:
                host(where + ['host'], args['host'])
            for j, name in enumerate(args.get('hosts', ())):
                host(where + ['hosts', j], name)


def _check_topology(scenario):
    """CPU sets that Nova would accept on each host's CPUs."""
    from nova import exception as nova_exception
    from nova.virt import hardware
    shapes = scenario.host_shapes()
    for name in scenario.data.get('topology', {}).get('per-host', ()):
        if name not in shapes:
            _fail(scenario, ['topology', 'per-host', name],
                  'unknown host %r%s; the topology has %s'
                  % (name, rules_module.suggest(name, shapes),
                     ', '.join(shapes)))

    topology = scenario.data.get('topology', {})

    def where(host, key):
        if key in topology.get('per-host', {}).get(host, {}):
            return ['topology', 'per-host', host, key]
        if key in topology.get('defaults', {}):
            return ['topology', 'defaults', key]
        return ['topology', 'pinned']

    for host, shape in shapes.items():
        cpus = (shape['cpu_nodes'] * shape['cpu_sockets'] *
                shape['cpu_cores'] * shape['cpu_threads'])
        size = ('cpu_nodes %(cpu_nodes)d x cpu_sockets %(cpu_sockets)d x '
                'cpu_cores %(cpu_cores)d x cpu_threads %(cpu_threads)d'
                % shape)
        if cpus > MAX_CPUS:
            _fail(scenario, ['topology'], 'host %s has %d CPUs (%s); the '
                  'embedded Nova allows at most %d' % (host, cpus, size,
                                                       MAX_CPUS))
        sets = {}
        for key in CPU_SETS:
            if shape[key] is None:
                continue
            try:
                sets[key] = hardware.parse_cpu_spec(shape[key])
            except nova_exception.Invalid as exc:
                _fail(scenario, where(host, key), str(exc))
            outside = sorted(sets[key] - set(range(cpus)))
            if outside:
                _fail(scenario, where(host, key), '%r names CPU %s, which '
                      'host %s does not have: its CPUs are 0-%d (%s)' % (
                          shape[key], ', '.join(map(str, outside)), host,
                          cpus - 1, size))
            if not sets[key]:
                _fail(scenario, where(host, key), '%r leaves no CPU'
                      % shape[key])
        if len(sets) == 2 and sets[CPU_SETS[0]] & sets[CPU_SETS[1]]:
            _fail(scenario, where(host, CPU_SETS[1]), 'host %s: CPUs %s are '
                  'in both cpu_dedicated_set and cpu_shared_set; Nova '
                  'refuses to start with overlapping sets' % (
                      host, sorted(sets[CPU_SETS[0]] & sets[CPU_SETS[1]])))
    for key in CPU_SETS:
        having = [h for h, shape in shapes.items() if shape[key]]
        if having and len(having) < len(shapes):
            missing = [h for h in shapes if h not in having]
            _fail(scenario, where(having[0], key), '%s is set for %s but '
                  'not for %s: the embedded Nova can vary its value per '
                  'host, not whether it is set' % (
                      key, ', '.join(having), ', '.join(missing)))
