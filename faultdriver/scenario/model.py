"""Load and validate scenario files.

Nova is imported only to check CPU sets with Nova's own parser
(``nova.virt.hardware.parse_cpu_spec``), and only for a topology that
names them.

Errors are :class:`~faultdriver.exception.ScenarioError` naming the file,
the key path (``steps[3].boot.host``) and what was expected.
"""

import dataclasses
import functools
import importlib.resources
import math
import os
import re
import stat

import jsonschema
import yaml

from faultdriver import exception
from faultdriver import hostshape
from faultdriver import rules as rules_module
from faultdriver.scenario import bounded_yaml
from faultdriver.scenario import invariants
from faultdriver.scenario import specs
from faultdriver.scenario import tiers

BUNDLED = 'faultdriver.scenarios'
DEFAULT_HOSTS = ('src', 'dest')
#: Steps that start a move (a new migration record) of their server.
MOVES = ('live-migrate', 'migrate', 'resize', 'evacuate')
#: A host's shape when the topology says nothing (Nova's libvirt test
#: base's host), and with ``pinned: true``.
NOVA_HOST = hostshape.NOVA_HOST
PINNED_HOST = hostshape.PINNED_HOST
#: Most CPUs a host of the embedded Nova can have (the libvirt test base
#: mocks 16 online CPUs and checks for fewer).
MAX_CPUS = 15
#: Largest CPU number a CPU set may name before it is parsed (so that a
#: range like 0-999999999 is refused before it is built).
MAX_CPU_NUMBER = 1023
CPU_SETS = ('cpu_dedicated_set', 'cpu_shared_set')


#: Longest error message a scenario file gets (values in it are cut).
MAX_MESSAGE = 300


def schema():
    """schema.yaml, with the tier names of the one list of them
    (:mod:`faultdriver.scenario.tiers`) and the expectations of the
    registered invariants (:mod:`faultdriver.scenario.invariants`, read
    again whenever it changed)."""
    return _schema(invariants.version())


@functools.lru_cache(maxsize=2)
def _schema(version):
    text = importlib.resources.files(__package__).joinpath(
        'schema.yaml').read_text(encoding='utf-8')
    data = yaml.safe_load(text)
    data['$defs']['tier']['enum'] = list(tiers.NAMES)
    kinds = data['$defs']['expectation']['properties']
    for invariant in invariants.registered():
        kinds[invariant.name] = invariant.schema()
    data['properties']['recognises']['items']['properties'][
        'invariant']['enum'] = list(invariants.names())
    return data


@dataclasses.dataclass
class Scenario:
    path: str
    data: dict

    name = property(lambda self: self.data['name'])
    description = property(lambda self: self.data['description'].strip())
    variants = property(lambda self: self.data['variants'])

    @property
    def steps(self):
        """The steps, as :class:`~faultdriver.scenario.specs.StepSpec`."""
        return [specs.StepSpec.from_json(s) for s in self.data['steps']]

    @property
    def hosts(self):
        return list(self.data.get('topology', {}).get('hosts',
                                                      DEFAULT_HOSTS))

    @property
    def pinned(self):
        return bool(self.data.get('topology', {}).get('pinned', False))

    @property
    def periodic_timer(self):
        """Whether nova-compute also runs the tracker periodic on its
        timer (process tiers; the embedded Nova has none)."""
        return bool(self.data.get('topology', {}).get('periodic-timer',
                                                      True))

    @property
    @tiers.needs(tiers.Provision.TRANSFERS_GUEST)
    def live_migration_bandwidth(self):
        """MiB/s a live migration's transfer may use on real libvirt
        (``[libvirt] live_migration_bandwidth``), or None: Nova's default,
        no limit."""
        return self.data.get('topology', {}).get('live-migration-bandwidth')

    def host_shapes(self):
        """``{host: HostShape}`` (faultdriver.hostshape)."""
        topology = self.data.get('topology', {})
        base = (PINNED_HOST if self.pinned else NOVA_HOST).replace(
            **topology.get('defaults', {}))
        return {host: base.replace(**topology.get('per-host', {}).get(
            host, {})) for host in self.hosts}

    @property
    def backends(self):
        """Backends the scenario runs on (every one unless it says)."""
        return tuple(self.data.get('backends', tiers.NAMES))

    @property
    def dedicated_cpus(self):
        """Whether hosts have dedicated pCPUs (pinning is reported)."""
        return any(shape.cpu_dedicated_set
                   for shape in self.host_shapes().values())

    def common_expectations(self):
        """Every variant's expectations (ExpectationSpec)."""
        return [specs.ExpectationSpec.from_json(e)
                for e in self.data.get('expectations', ())]

    def own_expectations(self, variant):
        """The expectations ``variant`` adds (ExpectationSpec)."""
        return [specs.ExpectationSpec.from_json(e)
                for e in self.variants[variant].get('expectations', ())]

    def expectations(self, variant):
        """What decides ``variant``'s verdict: the common expectations,
        then its own."""
        return self.common_expectations() + self.own_expectations(variant)

    def patches(self, variant):
        return list(self.variants[variant].get('patches', ()))

    def nova_patches(self, variant):
        """The variant's Nova diffs, as paths (relative ones are relative
        to the scenario file)."""
        folder = os.path.dirname(os.path.abspath(self.path))
        return [os.path.join(folder, path) for path in
                self.variants[variant].get('nova-patches', ())]

    def nova_tree(self, variant):
        """The variant's Nova source tree, as a path (a relative one is
        relative to the scenario file), or None for the installed Nova."""
        tree = self.variants[variant].get('nova-tree')
        if not tree:
            return None
        return os.path.abspath(os.path.join(
            os.path.dirname(os.path.abspath(self.path)), tree))

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


def load(name_or_path):
    """The validated Scenario of a file or bundled name; ScenarioError
    naming the file for anything wrong, read within the bounds of
    :mod:`faultdriver.scenario.bounded_yaml`."""
    scenario = read(name_or_path)
    check(scenario)
    return scenario


def read(name_or_path):
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
            path, _clip(' '.join(str(exc).split()))))
    return _schema_checked(data, path)


def _integer(checker, instance):
    """JSON Schema counts 2.0 as an integer; a scenario does not."""
    return isinstance(instance, int) and not isinstance(instance, bool)


def _number(checker, instance):
    """NaN and infinity compare false with every bound: not numbers."""
    return (isinstance(instance, (int, float))
            and not isinstance(instance, bool) and math.isfinite(instance))


def _pattern(validator, pattern, instance, schema):
    """Names match their pattern whole: Python's ``$`` would also let a
    trailing newline through."""
    if isinstance(instance, str) and (not re.search(pattern, instance)
                                      or '\n' in instance):
        yield jsonschema.ValidationError('%s does not match %s' % (
            _clip(repr(instance), 60), pattern))


_Validator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    validators={'pattern': _pattern},
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine_many(
        {'integer': _integer, 'number': _number}))


def _clip(text, size=MAX_MESSAGE):
    return text if len(text) <= size else text[:size] + '...'


def validate(data, path='<scenario>'):
    """The Scenario, or ScenarioError for the first problem found."""
    scenario = _schema_checked(data, path)
    check(scenario)
    return scenario


def check(scenario):
    """What the schema cannot say (ScenarioError for the first problem):
    hosts, servers, flavors, fixes and rules that must exist, expectations
    that can fail, CPU sets Nova accepts.  Imports Nova."""
    _check_references(scenario)
    _check_expectations(scenario)
    _check_topology(scenario)
    _check_log_texts(scenario)
    for name in scenario.backends:
        check_tier(scenario, name)


def check_tier(scenario, name, advice=None):
    """ScenarioError naming the first part of ``scenario`` that needs
    what tier ``name`` does not provide (Tier.provides), then ``advice``
    (default: what its ``backends`` key should say)."""
    from faultdriver.scenario import provisions
    refused = provisions.refusal(scenario, tiers.get(name))
    if refused:
        where, message = refused
        _fail(scenario, where, '%s; %s' % (
            message, advice or provisions.advice(scenario)))


def _schema_checked(data, path):
    """The Scenario of ``data`` if it matches the schema."""
    try:
        errors = sorted(_Validator(schema()).iter_errors(data), key=lambda e: (
            list(map(str, e.absolute_path)), e.validator))
    except RecursionError:
        raise exception.ScenarioError('%s: nested too deeply' % path)
    if errors:
        raise exception.ScenarioError('%s: %s' % (
            path, _clip(_describe(errors[0]))))
    return Scenario(path, data)


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
    if error.validator == 'type':
        return '%s: %s is not of type %s' % (
            where, _clip(repr(error.instance), 60),
            ' or '.join(map(repr, error.validator_value
                            if isinstance(error.validator_value, list)
                            else [error.validator_value])))
    return '%s: %s' % (where, error.message)


def _fail(scenario, where, message):
    raise exception.ScenarioError('%s: %s: %s' % (
        scenario.path, key_path(where), _clip(message)))


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
    booted, volumes = set(), set()
    for i, step in enumerate(scenario.steps):
        kind, args = step.kind, step.args
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
        if kind in ('attach-volume', 'detach-volume'):
            if kind == 'attach-volume':
                volumes.add(args['volume'])
            elif args['volume'] not in volumes:
                _fail(scenario, where + ['volume'],
                      'volume %r is not attached by an earlier step; '
                      'attached so far: %s' % (args['volume'], ', '.join(
                          sorted(volumes)) or 'none'))
        if kind == 'boot':
            booted.add(args['server'])
        for key in ('rule',):
            if key in args:
                rule(where + [key], args[key])
        if kind == 'recover':
            for name, texts in (args.get('rules') or {}).items():
                host(where + ['rules', name], name)
                for j, text in enumerate(texts):
                    rule(where + ['rules', name, j], text)
        else:
            for j, text in enumerate(args.get('rules', ())):
                rule(where + ['rules', j], text)
    for prefix, block in _blocks(scenario):
        for i, expectation in enumerate(block):
            kind, args = expectation.kind, expectation.args
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


def _blocks(scenario):
    """``(key path, expectation list)`` of the scenario and each variant."""
    blocks = [(['expectations'], scenario.common_expectations())]
    blocks += [(['variants', v, 'expectations'], scenario.own_expectations(v))
               for v in scenario.variants]
    return blocks


def _check_expectations(scenario):
    """What decides a verdict must be able to fail: points and actions
    from the catalogues the rules use, bounds that some count meets."""
    from faultdriver import actions as actions_module
    from faultdriver import points
    catalogue = points.catalogue()
    actions = actions_module.load_all()

    def known(where, name, choices, what, listing):
        if name not in choices:
            _fail(scenario, where, 'unknown %s %r%s (%s lists them); it '
                  'would never match' % (what, name, rules_module.suggest(
                      name, choices), listing))

    for i, step in enumerate(scenario.steps):
        kind, args = step.kind, step.args
        if kind == 'wait-point':
            known(['steps', i, kind, 'point'], args['point'], catalogue,
                  'point', 'faultdriver points')
    for prefix, block in _blocks(scenario):
        for i, expectation in enumerate(block):
            kind, args = expectation.kind, expectation.args
            where = prefix + [i, kind]
            if kind == 'faults':
                if 'point' in args:
                    known(where + ['point'], args['point'], catalogue,
                          'point', 'faultdriver points')
                if 'action' in args:
                    known(where + ['action'], args['action'], actions,
                          'action', 'faultdriver actions')
            low, high = args.get('min'), args.get('max')
            if low is not None and high is not None and low > high:
                _fail(scenario, where, 'min %d is more than max %d: no '
                      'count meets both' % (low, high))
            count = args.get('count')
            if isinstance(count, int) and (
                    (low is not None and count < low) or
                    (high is not None and count > high)):
                _fail(scenario, where, 'count %d is outside min/max: no '
                      'count meets all' % count)


def _check_log_texts(scenario):
    """A ``log`` text the Nova under test never logs would let ``count:
    0`` pass whatever Nova does: refused, unless the expectation says it
    is ``logged-elsewhere`` (:mod:`faultdriver.novacompat.logtexts`).  A
    variant's text may be one its own ``nova-patches`` add; a common
    text must be one every variant's Nova logs."""
    from faultdriver.novacompat import logtexts
    from faultdriver import novaundertest
    base = novaundertest.describe(novaundertest.recorded())
    for prefix, block in _blocks(scenario):
        variants = prefix[1:2] if prefix[0] == 'variants' else list(
            scenario.variants)
        for i, expectation in enumerate(block):
            args = expectation.args
            if expectation.kind != 'log' or args.get(logtexts.ELSEWHERE):
                continue
            problem = logtexts.unlogged(
                args['text'],
                [(scenario.nova_tree(v), scenario.nova_patches(v))
                 for v in variants],
                [' + '.join([scenario.nova_tree(v) or base] + [
                    os.path.basename(p) for p in scenario.nova_patches(v)])
                 for v in variants])
            if problem:
                _fail(scenario, prefix + [i, 'log', 'text'], problem)


def _check_cpu_spec(scenario, where, spec, cpus, host, size):
    """Refuse what ``parse_cpu_spec`` would expand before it does (a
    range such as 0-999999999 builds the whole set first) or read
    otherwise than written (it takes other scripts' digits)."""
    if any(c.isdigit() and c not in '0123456789' for c in spec):
        _fail(scenario, where, '%r has non-ASCII digits; expected Nova\'s '
              'syntax ("0-3", "2,3", "0-7,^4")' % spec)
    beyond = sorted({n for n in re.findall('[0-9]+', spec[:1000])
                     if len(n) > 6 or int(n) > MAX_CPU_NUMBER},
                    key=lambda n: (len(n), n))
    if beyond:
        _fail(scenario, where, '%r names CPU %s, which host %s does not '
              'have: its CPUs are 0-%d (%s)' % (
                  spec, ', '.join(_clip(n, 12) for n in beyond[:5]),
                  host, cpus - 1, size))


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
        cpus = shape.cpus
        size = ('cpu_nodes %(cpu_nodes)d x cpu_sockets %(cpu_sockets)d x '
                'cpu_cores %(cpu_cores)d x cpu_threads %(cpu_threads)d'
                % shape.as_dict())
        if cpus > MAX_CPUS:
            _fail(scenario, ['topology'], 'host %s has %d CPUs (%s); the '
                  'embedded Nova allows at most %d' % (host, cpus, size,
                                                       MAX_CPUS))
        sets = {}
        for key, spec in shape.cpu_sets().items():
            _check_cpu_spec(scenario, where(host, key), spec, cpus,
                            host, size)
            try:
                sets[key] = hardware.parse_cpu_spec(spec)
            except nova_exception.Invalid as exc:
                _fail(scenario, where(host, key), str(exc))
            outside = sorted(sets[key] - set(range(cpus)))
            if outside:
                _fail(scenario, where(host, key), '%r names CPU %s, which '
                      'host %s does not have: its CPUs are 0-%d (%s)' % (
                          spec, ', '.join(map(str, outside)), host,
                          cpus - 1, size))
            if not sets[key]:
                _fail(scenario, where(host, key), '%r leaves no CPU'
                      % spec)
        if len(sets) == 2 and sets[CPU_SETS[0]] & sets[CPU_SETS[1]]:
            _fail(scenario, where(host, CPU_SETS[1]), 'host %s: CPUs %s are '
                  'in both cpu_dedicated_set and cpu_shared_set; Nova '
                  'refuses to start with overlapping sets' % (
                      host, sorted(sets[CPU_SETS[0]] & sets[CPU_SETS[1]])))
    for key in CPU_SETS:
        having = [h for h, shape in shapes.items()
                  if getattr(shape, key)]
        if having and len(having) < len(shapes):
            missing = [h for h in shapes if h not in having]
            _fail(scenario, where(having[0], key), '%s is set for %s but '
                  'not for %s: the embedded Nova can vary its value per '
                  'host, not whether it is set' % (
                      key, ', '.join(having), ', '.join(missing)))
