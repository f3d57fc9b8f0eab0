"""What each tier provides (``Tier.provides``) and what needs it: a
scenario that needs what a tier lacks is refused when it loads, naming
the step (or rule, expectation, topology key), before anything starts;
where the tier provides it, the scenario loads.

Only loads: no tier is started.
"""

import dataclasses
import pathlib
import re

import pytest

from faultdriver.cmd import main
from faultdriver import exception
from faultdriver.export import module as export_module
from faultdriver.harness import injection
from faultdriver.scenario import model
from faultdriver.scenario import provisions
from faultdriver.scenario import tiers

P = tiers.Provision
ROOT = pathlib.Path(__file__).resolve().parents[2]
HEAD = '''\
name: needs
description: d
variants: {stock: {description: d}}
'''
BOOT = 'steps:\n  - boot: {server: s1}\n'

#: Per provision: a scenario (after HEAD) that needs it, and the key
#: path of what needs it.
NEEDING = {
    P.REAL_HYPERVISOR: (
        BOOT + '  - wait-guest: {server: s1, host: src, state: running}\n',
        'steps[1].wait-guest'),
    P.TRANSFERS_GUEST: (
        'topology: {live-migration-bandwidth: 8}\n' + BOOT,
        'topology.live-migration-bandwidth'),
    P.PROCESS_PER_HOST: (
        BOOT + "  - add-rule: {host: src, rule: 'live_migration: "
        "shutdown(kill_after=5)'}\n",
        'steps[1].add-rule.rule'),
    P.CALL_HEARTBEATS: (
        BOOT + "  - add-rule: {host: dest, rule: 'rpc.pre_live_migration: "
        "drop'}\n", 'steps[1].add-rule.rule'),
    P.BLOCK_STORAGE: (
        BOOT + '  - attach-volume: {server: s1, volume: v1}\n',
        'steps[1].attach-volume'),
    P.NETWORK: (
        'steps:\n  - boot: {server: s1, port: true}\n', 'steps[0].boot'),
    P.NOVA_OPTIONS: (
        'topology: {shelved-offload-time: -1}\n' + BOOT,
        'topology.shelved-offload-time'),
    P.NEUTRON_REQUESTS: (
        BOOT + "  - add-rule: {host: src, rule: 'network.setup_networks_"
        "on_host: 1*http(500)'}\n", 'steps[1].add-rule.rule'),
    P.SERVICE_SIDE: (
        "rules: {neutron: ['network.bind_ports_to_host: 1*http(500)']}\n" +
        BOOT, 'rules.neutron'),
    P.CINDER_REQUESTS: (
        "rules: {src: ['volume.attachment_update.after: connfail']}\n" +
        BOOT, 'rules.src[0]'),
    P.CONTROL_PLANE: (
        BOOT + '  - stop-service: {service: rabbitmq}\n',
        'steps[1].stop-service'),
}


def write(tmp_path, text, backends=None):
    path = tmp_path / 'needs.yaml'
    path.write_text(HEAD + ('backends: [%s]\n' % ', '.join(backends)
                            if backends else '') + text)
    return str(path)


def without(provision, name='embedded'):
    """Tier ``name`` as if it lacked ``provision``."""
    tier = tiers.get(name)
    return dataclasses.replace(tier, provides=tier.provides - {provision})


def test_every_provision_has_a_test():
    assert set(NEEDING) == set(P)


@pytest.mark.parametrize('provision', list(P), ids=lambda p: p.id)
def test_a_scenario_needing_it_is_refused_where_lacking(tmp_path,
                                                        provision):
    text, where = NEEDING[provision]
    lacking = [t for t in tiers.NAMES if provision not in
               tiers.get(t).provides]
    providing = tiers.providing({provision})
    # Loaded (schema only), then checked against each tier.
    scenario = model.read(write(tmp_path, text, providing))
    assert provisions.needed(scenario) == {provision}
    for name in lacking:
        with pytest.raises(exception.ScenarioError) as refused:
            model.check_tier(scenario, name)
        assert '%s: %s' % (scenario.path, where) in str(refused.value)
        assert 'needs %s; backend %s lacks it' % (
            provision.text, name) in str(refused.value)
    # A tier without it (one that would lack it, as the next tier may).
    parts, message = provisions.refusal(scenario, without(provision))
    assert model.key_path(parts) == where
    assert message.endswith('needs %s; backend embedded lacks it%s'
                            % (provision.text, provisions.reasons(
                                {provision})))
    # Accepted, in full, where it is provided.
    assert model.load(scenario.path).backends == providing
    for name in providing:
        model.check_tier(scenario, name)


@pytest.mark.parametrize('provision', [
    p for p in P if set(tiers.LOCAL) - set(tiers.providing({p}))],
    ids=lambda p: p.id)
def test_a_scenario_without_backends_is_refused_when_it_loads(tmp_path,
                                                              provision):
    """It would run on every tier: refused, naming what needs it and the
    ``backends`` that would do."""
    text, where = NEEDING[provision]
    path = write(tmp_path, text)
    with pytest.raises(exception.ScenarioError) as refused:
        model.load(path)
    assert str(refused.value).startswith('%s: %s' % (path, where))
    assert str(refused.value).endswith('write "backends: [%s]"' % ', '.join(
        tiers.providing({provision})))


def test_periodic_of_another_host_under_the_tracker_lock(tmp_path):
    """The periodic action's declaration: another host's periodic under
    the tracker lock needs a process per host; in the unlocked phase, or
    this host's, nothing."""
    locked = BOOT + ("  - add-rule: {host: dest, rule: 'tracker.drop_move_"
                     "claim_at_dest.after: periodic(host=src)'}\n")
    with pytest.raises(exception.ScenarioError, match=(
            r'steps\[1\]\.add-rule\.rule: periodic\(host=src\) needs a '
            'nova-compute process per host; backend embedded lacks it')):
        model.load(write(tmp_path, locked))
    for text in (locked.replace('.after:', '.unlocked:'),
                 locked.replace('periodic(host=src)', 'periodic')):
        assert 'embedded' in model.load(write(tmp_path, text)).backends


@pytest.mark.parametrize('key', ['rules', 'restart', 'recover'])
def test_rules_are_checked_wherever_they_are_written(tmp_path, key):
    rule = "'live_migration: shutdown(kill_after=5)'"
    text, where = {
        'rules': ('rules: {src: [%s]}\n' % rule + BOOT, 'rules.src[0]'),
        'restart': (BOOT + '  - restart: {host: src, rules: [%s]}\n' % rule,
                    'steps[1].restart.rules[0]'),
        'recover': (BOOT + '  - recover: {rules: {src: [%s]}}\n' % rule,
                    'steps[1].recover.rules.src[0]'),
    }[key]
    with pytest.raises(exception.ScenarioError) as refused:
        model.load(write(tmp_path, text, ['embedded', 'process']))
    assert ': %s: shutdown(kill_after=5) needs a nova-compute process per ' \
        'host; backend embedded lacks it' % where in str(refused.value)


def test_expectations_of_a_variant_are_checked(tmp_path):
    text = BOOT.join(HEAD.split('variants: {stock: {description: d}}\n'))
    path = tmp_path / 'needs.yaml'
    path.write_text(text + 'backends: [process]\nvariants:\n  stock:\n'
                    '    description: d\n    expectations:\n'
                    '      - guest: {server: s1, host: src, state: running}\n')
    with pytest.raises(exception.ScenarioError, match=(
            r'variants\.stock\.expectations\[0\]\.guest: needs a real '
            'hypervisor; backend process lacks it')):
        model.load(str(path))


def test_scenario_show_and_run_exit_2_naming_the_step(tmp_path, capsys):
    path = write(tmp_path, NEEDING[P.REAL_HYPERVISOR][0])
    assert main.FaultDriverApp().run(['scenario', 'show', path]) == 2
    assert 'steps[1].wait-guest: needs a real hypervisor; backend ' \
        'embedded lacks it' in capsys.readouterr().err
    path = write(tmp_path, NEEDING[P.REAL_HYPERVISOR][0], ['libvirt'])
    assert main.FaultDriverApp().run(
        ['scenario', 'run', path, '--backend', 'both']) == 2
    err = capsys.readouterr().err
    assert 'steps[1].wait-guest: needs a real hypervisor; backend ' \
        'embedded lacks it; it runs on backends libvirt (its "backends" ' \
        'key); use --backend libvirt' in err


def test_the_embedded_harness_refuses_what_its_tier_lacks():
    """The FaultInjection fixture asks its tier's declaration too."""
    with pytest.raises(exception.ConfigError, match=(
            r"shutdown\(kill_after=5\) needs a nova-compute process per "
            'host, which the embedded Nova lacks')):
        injection.FaultInjection.parse(
            'live_migration: shutdown(kill_after=5)')
    injection.FaultInjection.parse('live_migration: shutdown(hold=5)')


def test_the_exporter_asks_the_same_declarations(tmp_path):
    """Nova's functional-test means, as exported, provide none: the
    topology key is refused, not silently dropped."""
    text, _ = NEEDING[P.TRANSFERS_GUEST]
    scenario = model.load(write(tmp_path, text, ['libvirt']))
    with pytest.raises(exception.ScenarioError, match=(
            'topology `live-migration-bandwidth`: cannot be exported: '
            'needs a live migration that transfers the guest')):
        export_module.render(scenario)


def test_declarations_name_provisions():
    with pytest.raises(TypeError, match="'libvirt' is not a tiers"):
        tiers.needs('libvirt')
    declared = tiers.needs(P.REAL_HYPERVISOR, volume=P.BLOCK_STORAGE)(
        lambda: None).needs
    assert declared.of({}) == {P.REAL_HYPERVISOR}
    assert declared.of({'volume': True}) == {P.REAL_HYPERVISOR,
                                             P.BLOCK_STORAGE}
    assert declared.of({'volume': False}) == {P.REAL_HYPERVISOR}
    # A number given is given, 0 too.
    assert tiers.needs(kill_after=P.PROCESS_PER_HOST)(
        lambda: None).needs.of({'kill-after': 0.0}) == {P.PROCESS_PER_HOST}


def test_no_tier_provides_what_is_not_a_provision():
    for tier in tiers.TIERS.values():
        assert tier.provides <= tiers.EVERY_PROVISION
    assert tiers.get('libvirt').provides == tiers.EVERY_PROVISION


@pytest.mark.parametrize('name', sorted(model.bundled()))
def test_bundled_scenarios_load_on_every_tier_they_declare(name):
    """Behaviour unchanged: every bundled scenario still loads on each
    tier its ``backends`` names (the tiers the functional, process and
    libvirt suites run it on), and needs nothing any of them lacks."""
    scenario = model.load(name)
    for tier in scenario.backends:
        model.check_tier(scenario, tier)
        assert not tiers.get(tier).lacks(provisions.needed(scenario))


def test_each_tier_runner_refuses_before_it_starts(tmp_path):
    """A runner started on a tier the scenario's ``backends`` do not
    list (a sweep's workflow, a runner started by hand) checks its own
    tier before it starts anything."""
    from faultdriver.harness import scenario_case
    from faultdriver.process import runner
    path = write(tmp_path, NEEDING[P.REAL_HYPERVISOR][0], ['libvirt'])
    for run, name in ((scenario_case.run, 'embedded'),
                      (runner.run, 'process')):
        with pytest.raises(exception.ScenarioError, match=(
                r'steps\[1\]\.wait-guest: needs a real hypervisor; '
                'backend %s lacks it' % name)):
            run(path, 'stock', 'threading')


def test_a_bad_rule_is_left_to_the_rule_check(tmp_path):
    """``scenario run`` reads a file without the full check: what needs
    a provision is looked for in its rules, a bad one is not an internal
    error but the rule check's refusal."""
    for rule in ('live_migration: shutdown(kill_after=x)', 'nonsense ::'):
        text = "rules: {src: ['%s']}\n" % rule + BOOT
        scenario = model.read(write(tmp_path, text, ['libvirt']))
        assert provisions.demands(scenario) == []
        with pytest.raises(exception.ScenarioError,
                           match=r'rules\.src\[0\]: invalid rule'):
            model.load(scenario.path)


#: ``scenario run NAME ... --backend TIER`` as CI's tier runs write it.
CI_RUN = re.compile(r'scenario run ([a-z0-9-]+)\b[^"\n]*?--backend ([a-z]+)')


def test_the_scenarios_ci_runs_on_a_tier_still_load_there():
    """Behaviour unchanged: each ``scenario run NAME --backend TIER`` of
    tests/tier-runs.sh (the process and libvirt tiers' CI runs) still
    passes the check of that tier; the embedded ones are those
    tests/functional/test_bundled_scenarios.py picks (above)."""
    text = (ROOT / 'tests' / 'tier-runs.sh').read_text(encoding='utf-8')
    runs = set(CI_RUN.findall(text))
    assert {tier for _name, tier in runs} == {'process', 'libvirt'}
    for name, tier in sorted(runs):
        scenario = model.load(name)
        assert tier in scenario.backends, name
        model.check_tier(scenario, tier)


def test_rules_for_a_stand_in_are_checked_as_its_service_takes_them(
        tmp_path):
    """A stand-in's pseudo-host takes rules at its service's points
    with a request there, without role or filter."""
    for rule, why in (
            ('placement.move_allocations: http(500)', 'fails only the '
             'requests of network.setup_networks_on_host'),
            ('network.bind_ports_to_host@dest: http(500)', 'no role'),
            ('network.bind_ports_to_host: nonsense', 'invalid rule')):
        path = write(tmp_path, "rules: {neutron: ['%s']}\n" % rule + BOOT,
                     ['process'])
        with pytest.raises(exception.ScenarioError, match=why):
            model.load(path)
    path = write(tmp_path, "rules: {cinder: ['volume.attachment_delete"
                 ".after: 1*http(504)']}\n" + BOOT, ['process'])
    assert model.load(path).backends == ('process',)
