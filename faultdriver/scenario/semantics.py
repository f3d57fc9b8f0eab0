"""What the schema cannot say about a scenario, checked when it loads:
hosts, servers, flavors, fixes and rules that must exist, expectations
that can fail, CPU sets Nova accepts, and what the tiers it names
provide.  Nova is imported only where a scenario needs it (its CPU-set
parser for a topology that names CPU sets).

Errors are :class:`~faultdriver.exception.ScenarioError` naming the file,
the key path and what was expected.
"""

import os
import re
import typing

from faultdriver import exception
from faultdriver import rules as rules_module
from faultdriver.scenario import schemacheck
from faultdriver.scenario import specs
from faultdriver.scenario import tiers

#: Most CPUs a host of the embedded Nova can have (the libvirt test base
#: mocks 16 online CPUs and checks for fewer).
MAX_CPUS = 15
#: Largest CPU number a CPU set may name before it is parsed (so that a
#: range like 0-999999999 is refused before it is built).
MAX_CPU_NUMBER = 1023
CPU_SETS = ('cpu_dedicated_set', 'cpu_shared_set')

#: A loaded scenario (faultdriver.scenario.model.Scenario: model.py
#: imports this module to check what it loads, so it is not imported
#: here, as in provisions.py).
Scenario = typing.Any
#: A key path in a scenario file (``['steps', 3, 'boot', 'host']``).
Where = typing.List[typing.Union[str, int]]


def check(scenario: Scenario) -> None:
    """What the schema cannot say (ScenarioError for the first problem):
    hosts, servers, flavors, fixes and rules that must exist, expectations
    that can fail, CPU sets Nova accepts.  Imports Nova."""
    _check_references(scenario)
    _check_expectations(scenario)
    _check_topology(scenario)
    _check_log_texts(scenario)
    for name in scenario.backends:
        check_tier(scenario, name)


def check_tier(scenario: Scenario, name: str,
               advice: typing.Optional[str] = None) -> None:
    """ScenarioError naming the first part of ``scenario`` that needs
    what tier ``name`` does not provide (Tier.provides), then ``advice``
    (default: what its ``backends`` key should say)."""
    from faultdriver.scenario import provisions
    refused = provisions.refusal(scenario, tiers.get(name))
    if refused:
        where, message = refused
        _fail(scenario, where, '%s; %s' % (
            message, advice or provisions.advice(scenario)))


def _fail(scenario: Scenario, where: Where,
          message: str) -> typing.NoReturn:
    raise exception.ScenarioError('%s: %s: %s' % (
        scenario.path, schemacheck.key_path(where), schemacheck.clip(message)))


def _check_references(scenario: Scenario) -> None:
    """Hosts, servers, flavors, fixes and rules that must exist."""
    from faultdriver import conf
    from faultdriver.tracker import patches as tracker_patches
    hosts = scenario.hosts
    flavors = scenario.data.get('flavors', {})
    rule_type = conf.RuleType()

    def host(where: Where, name: str) -> None:
        if name not in hosts:
            _fail(scenario, where, 'unknown host %r%s; the topology has %s'
                  % (name, rules_module.suggest(name, hosts),
                     ', '.join(hosts)))

    def rule(where: Where, text: str) -> None:
        try:
            rule_type(text)
        except ValueError as exc:
            _fail(scenario, where, 'invalid rule: %s' % exc)

    def standin_rule(where: Where, name: str, text: str) -> None:
        from faultdriver import servicecall
        try:
            servicecall.standin_rule(name, rule_type(text))
        except ValueError as exc:
            _fail(scenario, where, 'invalid rule for the %s stand-in: %s'
                  % (name, exc))

    #: The stand-ins whose rules the scenario writes (their journals
    #: are the run's too: a ``faults`` expectation may name them).
    standins = {name for name in scenario.data.get('rules', {})
                if name in tiers.STAND_INS and name not in hosts}
    for name, texts in scenario.data.get('rules', {}).items():
        if name in standins:
            # A stand-in service's pseudo-host (Provision.SERVICE_SIDE).
            for i, text in enumerate(texts):
                standin_rule(['rules', name, i], name, text)
            continue
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
    booted: typing.Set[str] = set()
    volumes: typing.Set[str] = set()
    for i, step in enumerate(scenario.steps):
        kind, args = step.kind, step.args
        where: Where = ['steps', i, kind]
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
            if kind == 'faults' and args.get('host') in standins:
                pass        # the stand-in whose rules the scenario writes
            elif 'host' in args:
                host(where + ['host'], args['host'])
            for j, name in enumerate(args.get('hosts', ())):
                host(where + ['hosts', j], name)


def _blocks(scenario: Scenario) -> typing.List[
        typing.Tuple[Where, typing.List[specs.ExpectationSpec]]]:
    """``(key path, expectation list)`` of the scenario and each variant."""
    blocks: typing.List[typing.Tuple[
        Where, typing.List[specs.ExpectationSpec]]] = [
            (['expectations'], scenario.common_expectations())]
    blocks += [(['variants', v, 'expectations'], scenario.own_expectations(v))
               for v in scenario.variants]
    return blocks


def _check_expectations(scenario: Scenario) -> None:
    """What decides a verdict must be able to fail: points and actions
    from the catalogues the rules use, bounds that some count meets."""
    from faultdriver import actions as actions_module
    from faultdriver import points
    catalogue = points.catalogue()
    actions = actions_module.load_all()

    def known(where: Where, name: str, choices: typing.Iterable[str],
              what: str, listing: str) -> None:
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


def _check_log_texts(scenario: Scenario) -> None:
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


def _check_cpu_spec(scenario: Scenario, where: Where, spec: str, cpus: int,
                    host: str, size: str) -> None:
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
                  spec, ', '.join(schemacheck.clip(n, 12) for n in beyond[:5]),
                  host, cpus - 1, size))


def _check_topology(scenario: Scenario) -> None:
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

    def where(host: str, key: str) -> Where:
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
        sets: typing.Dict[str, typing.Set[int]] = {}
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
