"""``faultdriver export``: the code a scenario becomes.

Invariant: each fault becomes the fault helper or fixture on the host's
own service object (driver or resource tracker) with the hit and phase
of the rule; a bug's assertions carry FIXME and ``--fixed`` asserts the
correct state; the module imports nothing of faultdriver and compiles;
a step or expectation with no Nova test means is exit 2 naming it.
(Scenario files are checked against Nova's driver class, so Nova is
imported, never started.)
"""

import ast
import textwrap

import pytest

from faultdriver.cmd import main
from faultdriver import export

HEAD = '''\
name: t
description: F99 (test) a pinned server's live migration fails.
topology: {hosts: [src, dest], pinned: true}
variants:
  stock: {description: stock, expect: bug}
'''


def scenario(tmp_path, text):
    path = tmp_path / 't.yaml'
    path.write_text(HEAD + textwrap.dedent(text))
    return str(path)


def flat(text):
    """``text`` with every run of white space one space."""
    return ' '.join(text.split())


def cli(capsys, *argv):
    code = main.FaultDriverApp().run(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


STEPS = '''\
steps:
  - boot: {server: s1, host: src}
  - add-rule: {host: dest, rule: 'pre_live_migration: 1*crash'}
  - live-migrate: {server: s1, host: dest}
  - wait-migration: {server: s1, status: error}
'''


def test_crash_rule_becomes_the_fault_helper_on_the_hosts_driver(tmp_path):
    text = export.export(scenario(tmp_path, STEPS + '''\
expectations:
  - faults: {host: dest, point: pre_live_migration, action: crash, count: 1}
'''))
    assert ("self.faults.inject('dest', 'pre_live_migration', 'crash')"
            in text)
    # The proposed Nova fixture does it, set up before the computes
    # start; nothing of it is inlined.
    assert 'from nova.tests.fixtures import compute_fault' in text
    setup = text[text.index('def setUp'):text.index('def test_t')]
    assert setup.index('compute_fault.ComputeFaultFixture(self)') < \
        setup.index('self.start_compute(')
    assert 'def _die' not in text and 'ComputeDied' not in text
    # The commit message says what the fixture is; the test's
    # docstring speaks of Nova only.
    assert 'faultdriver export' not in text
    assert "self._wait_for_nth_migration(s1, 1, 'error')" in text
    assert "hostname='dest', point='pre_live_migration', action='crash'" \
        in text


def test_raise_rule_raises_the_nova_exception(tmp_path):
    text = export.export(scenario(tmp_path, '''\
rules:
  src: ['live_migration.after: 1*raise(MigrationError)']
''' + STEPS.replace("  - add-rule: {host: dest, rule: 'pre_live_migration: "
                    "1*crash'}\n", '')))
    assert ("self.faults.inject( 'src', 'live_migration', 'raise', "
            "after=True, error=exception.MigrationError(message='injected "
            "by the test'))") in flat(text)
    assert 'from nova import exception' in text
    assert 'A compute crashes' not in text     # no crash


def test_start_rules_skip_the_hits_of_the_start(tmp_path):
    # The start's resource update is the first get_available_resource:
    # the exported fault, installed once the compute runs, skips none.
    text = export.export(scenario(tmp_path, '''\
rules:
  src: ['get_available_resource: 1*off -> 1*crash']
  dest: ['spawn.before: 1*off -> 1*crash']
''' + STEPS.replace("  - add-rule: {host: dest, rule: 'pre_live_migration: "
                    "1*crash'}\n", '')))
    assert ("self.faults.inject('src', 'get_available_resource', 'crash')"
            in text)
    assert "self.faults.inject('dest', 'spawn', 'crash', skip=1)" in text
    setup = text[text.index('def setUp'):text.index('def test_t')]
    assert "self.faults.inject('src'" in setup


def test_hang_becomes_nova_intercept_fixture(tmp_path):
    text = export.export(scenario(tmp_path, '''\
steps:
  - boot: {server: s1, host: src}
  - add-rule: {host: dest, rule: 'pre_live_migration: 1*hang(60, away)'}
  - live-migrate: {server: s1, host: dest}
  - wait-point: {host: dest, point: pre_live_migration}
  - periodic: {host: src}
  - release: {host: dest, barrier: away}
'''))
    assert ('held = self.useFixture(nova_fixtures.InterceptMethodFixture(\n'
            "            self.computes['dest'].manager.driver, "
            "'pre_live_migration',\n            timeout=60))") in text
    assert 'self.assertTrue(held.started.wait(30))' in text
    assert "self.faults.periodic('src')" in text
    assert 'held.proceed.set()' in text


def test_wait_point_of_a_crash_waits_for_the_fault_to_fire(tmp_path):
    text = export.export(scenario(tmp_path, STEPS.replace(
        '  - wait-migration: {server: s1, status: error}\n',
        '  - wait-point: {host: dest, point: pre_live_migration}\n'
        '  - restart: {host: dest}\n')))
    body = text[text.index('def test_t'):]
    assert body.index(
        "self.faults.inject('dest', 'pre_live_migration', 'crash')") \
        < body.index("self.faults.wait_for('dest', 'pre_live_migration')") \
        < body.index("self.faults.restart('dest')")
    assert 'time.sleep' not in text


@pytest.mark.parametrize('rule', [
    # The fault fires after the call; "before" is an earlier moment the
    # exported test has no means to see.
    'pre_live_migration.after: 1*crash',
    # The first hit is not the fault's: nothing tells the test it came.
    'pre_live_migration: 1*off -> 1*crash',
])
def test_wait_point_on_a_hit_that_is_not_the_faults_is_exit_2(
        tmp_path, capsys, rule):
    path = scenario(tmp_path, STEPS.replace(
        'pre_live_migration: 1*crash', rule
    ).replace('  - wait-migration: {server: s1, status: error}\n',
              '  - wait-point: {host: dest, point: pre_live_migration}\n'))
    code, out, err = cli(capsys, 'export', path)
    assert code == 2
    assert 'step 4 `wait-point`: cannot be exported' in err


def test_a_decision_that_may_be_refused_tolerates_a_4xx(tmp_path):
    text = export.export(scenario(tmp_path, """\
steps:
  - boot: {server: s1, host: src}
  - migrate: {server: s1}
  - wait-server: {server: s1, status: VERIFY_RESIZE}
  - confirm: {server: s1}
  - confirm: {server: s1, may-be-refused: true}
"""))
    body = text[text.index('def test_t'):]
    assert body.count("self.api.post_server_action(s1['id'], "
                      "{'confirmResize': None})") == 2
    assert ('try:\n'
            "            self.api.post_server_action(s1['id'], "
            "{'confirmResize': None})\n"
            '        except client.OpenStackApiException as exc:\n'
            '            self.assertLess(exc.response.status_code, 500)'
            ) in body
    assert 'from nova.tests.functional.api import client' in text


def test_bug_assertions_are_fixme_and_fixed_asserts_correct(tmp_path):
    path = scenario(tmp_path, STEPS + '''\
  - recover: {}
expectations:
  - migrations: {server: s1, statuses: [running]}
  - migrations-terminal: {broken: true}
  - accounting-matches-placement: {broken: true}
  - servers-settled: {}
''')
    stock = export.export(path)
    # The migration's exact status shows the bug (and is marked so);
    # "some migration did not end" says less, left out of this form.
    assert '# FIXME(faultdriver): this is the bug (F99): the migrations' \
        in stock
    assert '_unfinished_migrations' not in stock
    assert "self.assertNotEqual({}, self._unaccounted(['src', 'dest']))" \
        in stock
    # Only what shows the bug: the invariant that holds is not asserted.
    assert '_unsettled_servers' not in stock
    assert "['running']," in stock
    fixed = export.export(path, fixed=True)
    assert 'FIXME' not in fixed
    assert "self.assertEqual({}, self._unaccounted(['src', 'dest']))" \
        in fixed
    assert 'self.assertEqual([], self._unfinished_migrations(' in fixed
    assert '_unsettled_servers' not in fixed
    # The running migration is the bug's state, not the scenario's.
    assert "['running']," not in fixed
    assert 'NOTE(faultdriver): the stock form asserts migrations' in fixed


def test_an_exact_migration_status_of_the_bug_replaces_the_vague_one(
        tmp_path):
    path = tmp_path / 't.yaml'
    path.write_text((HEAD + STEPS + '  - recover: {}\n').replace(
        '  stock: {description: stock, expect: bug}\n', '''\
  stock:
    expect: bug
    expectations:
      - migrations: {server: s1, statuses: [running]}
      - migrations-terminal: {broken: true}
'''))
    stock = export.export(str(path))
    # The status the bug leaves shows it; "some migration did not end"
    # says less and is left out of the stock form.
    assert "# FIXME(faultdriver): this is the bug (F99): the migrations" \
        in stock
    assert "['running']," in stock
    assert '_unfinished_migrations' not in stock
    # The fixed form states what is correct with it.
    fixed = export.export(str(path), fixed=True)
    assert 'self.assertEqual([], self._unfinished_migrations(' in fixed


def test_a_line_only_faultdriver_logs_is_not_asserted_absent(tmp_path):
    path = tmp_path / 't.yaml'
    path.write_text((HEAD + STEPS).replace(
        '  stock: {description: stock, expect: bug}\n', '''\
  stock:
    expect: bug
    expectations:
      - log: {text: not applying the migration context, count: 0}
      - log: {text: CPUPinningInvalid, min: 1}
'''))
    stock = export.export(str(path))
    # A tracker fix of faultdriver logs it, Nova never: its absence in
    # a Nova test shows nothing of the bug.
    assert 'not applying the migration context' not in stock
    assert "self.assertIn('CPUPinningInvalid', self.compute_log.output)" \
        in stock


def test_an_abort_deletes_the_migration_and_waits_for_the_source(tmp_path):
    text = flat(export.export(scenario(tmp_path, '''\
steps:
  - boot: {server: s1, host: src}
  - live-migrate: {server: s1, host: dest}
  - abort: {server: s1}
  - abort: {server: s1, index: 1}
expectations:
  - tasks-ended: {broken: true}
''')))
    # The migration of the server's newest move, as the scenario tier's.
    assert text.count("self._migrations(s1)[0]['id'])") == 2
    assert ("self._wait_for_instance_action_event( s1, "
            "'live_migration_cancel', 'compute_live_migration_abort', "
            "'Success')") in text
    # tasks-ended asserts what the managers still track: broken in the
    # stock form, empty in the fixed one.
    assert 'self.assertNotEqual({}, self._tracked_tasks(5))' in text
    fixed = export.export(scenario(tmp_path, '''\
steps:
  - boot: {server: s1, host: src}
expectations:
  - tasks-ended: {broken: true}
'''), fixed=True)
    assert 'self.assertEqual({}, self._tracked_tasks(5))' in fixed
    assert 'compute_fault.ComputeFaultFixture(self)' in fixed


def test_an_abort_with_a_timeout_nova_cannot_wait_is_exit_2(tmp_path,
                                                            capsys):
    path = scenario(tmp_path, '''\
steps:
  - boot: {server: s1, host: src}
  - live-migrate: {server: s1, host: dest}
  - abort: {server: s1, timeout: 60}
''')
    code, _out, err = cli(capsys, 'export', path)
    assert code == 2
    assert 'step 3 `abort`' in err and 'timeout 60' in err


def test_a_service_waits_as_long_as_the_step_says(tmp_path):
    text = flat(export.export(scenario(tmp_path, '''\
steps:
  - boot: {server: s1, host: src}
  - wait-service: {host: src, state: up}
  - wait-service: {host: dest, state: up, timeout: 60}
''')))
    assert ("self._wait_for_service_parameter( 'src', 'nova-compute', "
            "{'state': 'up'}, max_retries=60)") in text
    assert ("self._wait_for_service_parameter( 'dest', 'nova-compute', "
            "{'state': 'up'}, max_retries=120)") in text


def test_bug_variant_symptoms_invert_in_fixed_form(tmp_path):
    path = tmp_path / 't.yaml'
    path.write_text((HEAD + STEPS + '  - periodic: {host: dest}\n').replace(
        '  stock: {description: stock, expect: bug}\n', '''\
  stock:
    expect: bug
    expectations:
      - log: {text: CPUPinningInvalid, min: 1}
      - periodic-errors: {host: dest, min: 1}
'''))
    path = str(path)
    stock = export.export(path)
    assert "self.assertIn('CPUPinningInvalid', self.compute_log.output)" \
        in stock
    assert "self.assertGreaterEqual(self._failed_periodics('dest'), 1)" \
        in stock
    fixed = export.export(path, fixed=True)
    assert ("self.assertNotIn('CPUPinningInvalid', self.compute_log.output)"
            in fixed)
    assert "self.assertEqual(0, self._failed_periodics('dest'))" in fixed


def test_module_is_nova_only_and_compiles(tmp_path):
    text = export.export('stale-error-migration-context')
    tree = ast.parse(text)
    modules = [node.module if isinstance(node, ast.ImportFrom) else
               alias.name for node in ast.walk(tree)
               if isinstance(node, (ast.Import, ast.ImportFrom))
               for alias in node.names]
    assert not [m for m in modules if m and 'faultdriver' in m]
    assert text.startswith('# Licensed under the Apache License')
    assert 'base.ServersTestBase, integrated_helpers.InstanceHelperMixin' \
        in text
    assert "host_info=fakelibvirt.HostInfo(\n" \
        "                cpu_nodes=1, cpu_sockets=1, cpu_cores=4, " \
        "cpu_threads=1)" in text
    assert "cpu_dedicated_set='0-3'" in text
    assert all(len(line) <= 79 for line in text.splitlines())


@pytest.mark.parametrize('rule, call', [
    # A sweep's delay outlasts the embedded tier's RPC timeout (2 s): it
    # outlasts the exported test's (3 s) too.
    ("'live_migration: 1*delay(3)'",
     "self.faults.inject('src', 'live_migration', 'delay', wait=4)"),
    ("'live_migration.after: 1*off -> 1*delay(10)'",
     "self.faults.inject( 'src', 'live_migration', 'delay', skip=1, "
     "after=True, wait=10)"),
])
def test_a_delay_sleeps_in_the_hits_thread_through_the_fixture(
        tmp_path, rule, call):
    text = export.export(scenario(tmp_path, """\
steps:
  - boot: {server: s1, host: src}
  - add-rule: {host: src, rule: %s}
  - live-migrate: {server: s1, host: dest}
  - settle: {}
""" % rule))
    assert call in flat(text)
    assert 'time.sleep' not in text


@pytest.mark.parametrize('step,named', [
    ("  - crash: {host: src}\n",
     'step 2 `crash`: cannot be exported: a crash outside a call'),
    ("  - add-rule: {host: src, rule: 'live_migration: 1*shutdown'}\n",
     'step 2 `add-rule`: cannot be exported: rule \'live_migration: '
     '1*shutdown\': a graceful stop of one nova-compute'),
    ("  - restart: {host: src, rules: ['init_host: 1*crash']}\n",
     'step 2 `restart`: cannot be exported: rules of a restarted'),
])
def test_unsupported_step_is_exit_2_naming_it(tmp_path, capsys, step,
                                              named):
    path = scenario(tmp_path, 'steps:\n  - boot: {server: s1, host: src}\n'
                    + step)
    code, out, err = cli(capsys, 'export', path)
    assert code == 2
    assert named in err
    assert out == ''


def test_a_server_from_a_volume_with_a_port_boots_through_novas_fixtures(
        tmp_path, capsys):
    """CinderFixture's image-backed volume, NeutronFixture's network_1; a
    second server from a volume is exit 2 (one such volume)."""
    path = scenario(tmp_path, 'backends: [embedded, process]\nsteps:\n'
                    '  - boot: {server: s1, host: src, volume: true, '
                    'port: true}\n  - boot: {server: s2, port: true}\n')
    code, out, err = cli(capsys, 'export', path)
    assert code == 0, err
    # (Named by no later line: booted without a name.)
    assert ("self._boot_with('src', self.flavor_id, volume=True, "
            "port=True)") in out
    assert "self._boot_with('src', self.flavor_id, port=True)" in out
    assert "'uuid': self.cinder.IMAGE_BACKED_VOL," in out
    assert "networks=([{'uuid': self.neutron.network_1['id']}] if port" in out
    path = scenario(tmp_path, 'steps:\n'
                    '  - boot: {server: s1, host: src, volume: true}\n'
                    '  - boot: {server: s2, host: src, volume: true}\n')
    code, out, err = cli(capsys, 'export', path)
    assert code == 2 and out == ''
    assert 'step 2 `boot`: cannot be exported: a second server from a ' \
        'volume' in err


def test_what_needs_a_real_hypervisor_is_exit_2_naming_it(tmp_path, capsys):
    """The exporter asks the tiers' declarations (what Nova's
    functional-test means provide: no real hypervisor)."""
    path = scenario(tmp_path, '''\
backends: [libvirt]
steps:
  - boot: {server: s1, host: src}
  - wait-guest: {server: s1, host: src, state: running}
expectations:
  - guest: {server: s1, host: src, state: running}
''')
    code, _, err = cli(capsys, 'export', path)
    assert code == 2
    assert ("step 2 `wait-guest`: cannot be exported: needs a real "
            "hypervisor; Nova's functional-test means as exported lack "
            'it') in err
    path = scenario(tmp_path, '''\
backends: [libvirt]
steps:
  - boot: {server: s1, host: src}
expectations:
  - guest: {server: s1, host: src, state: running}
''')
    code, _, err = cli(capsys, 'export', path)
    assert code == 2
    assert ('expectation `guest` {server: s1, host: src, state: running}: '
            'cannot be exported: needs a real hypervisor') in err


def test_cli_writes_the_file(tmp_path, capsys):
    out = tmp_path / 'test_x.py'
    code, _, _ = cli(capsys, 'export', 'stale-error-migration-context',
                     '-o', str(out))
    assert code == 0
    assert out.read_text() == export.export('stale-error-migration-context')
    code, _, err = cli(capsys, 'export', 'stale-error-migration-context',
                       '--variant', 'fix')
    assert code == 2 and 'variant fix' in err


def test_bug_names_the_module_and_class_as_nova_does(tmp_path, capsys):
    path = scenario(tmp_path, STEPS)
    out = tmp_path / 'test_bug_2000001.py'
    message = tmp_path / 'msg'
    code, _, err = cli(capsys, 'export', path, '--bug', '2000001', '-o',
                       str(out), '--commit-message', str(message))
    assert code == 0, err
    text = out.read_text()
    assert 'class TestBug2000001(' in text
    assert '    def test_t(self):' in text
    lines = message.read_text().split('\n')
    assert lines[0] == 'Add functional reproducer for bug 2000001'
    assert 'Related-Bug: #2000001' in lines
    # STEPS crash a compute: the module imports the proposed fixture,
    # the commit message says the change adds it, stderr how to write it.
    assert 'It adds nova/tests/fixtures/compute_fault.py' in flat(
        message.read_text())
    assert '--fixture FILE' in err


def test_fixture_writes_the_nova_fixture_the_module_imports(tmp_path,
                                                            capsys):
    from faultdriver.export import novafixture
    fixture = tmp_path / 'compute_fault.py'
    code, out, err = cli(capsys, 'export', scenario(tmp_path, STEPS),
                         '--fixture', str(fixture))
    assert code == 0, err
    assert novafixture.IMPORT in out.splitlines()
    assert fixture.read_text() == novafixture.text()
    assert err == ''
    # A module that does not import it: nothing written, and said.
    other = tmp_path / 'other.py'
    code, out, err = cli(capsys, 'export', scenario(tmp_path, '''\
steps:
  - boot: {server: s1, host: src}
'''), '--fixture', str(other))
    assert code == 0 and not other.exists()
    assert 'not written' in err


def test_a_hashed_reproducer_name_is_read_from_its_rule(tmp_path):
    from faultdriver.export import module
    from faultdriver.scenario import model
    path = tmp_path / 'r.yaml'
    path.write_text(HEAD.replace(
        'name: t', 'name: allocations-consistent-pre-live-migration-'
        'dest-1f2e3d4c') + """\
rules:
  dest: ['pre_live_migration.before: 1*crash']
""" + STEPS.replace("  - add-rule: {host: dest, rule: 'pre_live_migration: "
                    "1*crash'}\n", ''))
    found = model.load(str(path))
    assert module.file_name(found) == \
        'test_pre_live_migration_before_crash_on_dest.py'
    assert module.class_name(found) == \
        'TestPreLiveMigrationBeforeCrashOnDest'


def test_bug_number_must_be_digits(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        cli(capsys, 'export', scenario(tmp_path, STEPS), '--bug', 'LP1')
    assert exc.value.code == 2
    assert 'Launchpad bug number' in capsys.readouterr().err


def test_a_sweep_reproducer_asserts_only_its_broken_invariant(tmp_path):
    """A sweep case carries every invariant, most holding, some vacuous
    (attachments of a server with no volume): the export asserts the
    broken one, and keeps the state-changing moves-again only where a
    later broken invariant (periodics-clean) sees its periodics."""
    path = tmp_path / 'r.yaml'
    path.write_text(HEAD + '''\
rules:
  dest: ['post_live_migration_at_destination: 1*raise(MigrationError)']
expectations:
- migrations-terminal: {}
- servers-settled: {}
- volume-attachments: {}
- port-bindings: {}
- accounting-matches-placement: {broken: true}
- moves-again: {}
- periodics-clean: {}
steps:
- boot: {server: s1, host: src}
- live-migrate: {server: s1, host: dest}
- settle: {}
- recover: {}
''')
    text = export.export(str(path))
    assert "self.assertNotEqual({}, self._unaccounted(['src', 'dest']))" \
        in text
    for absent in ('_unfinished_migrations', '_unsettled_servers',
                   '_moves_again', 'volume', 'port_binding',
                   'self.recovery_began'):
        assert absent not in text, absent
    # Nova's own form of a raise nothing counts: the call raises.
    assert ("fixtures.MockPatchObject( self.computes['dest'].driver, "
            "'post_live_migration_at_destination', autospec=True, "
            "side_effect=exception.MigrationError(") in flat(text)
    assert '_die' not in text and 'ComputeDied' not in text
    path.write_text(path.read_text().replace(
        '- periodics-clean: {}', '- periodics-clean: {broken: true}'))
    text = export.export(str(path))
    assert 'self.assertEqual([], self._moves_again(' in text
    assert 'self.recovery_began = self._periodic_errors_logged()' in text


def test_a_saved_run_makes_the_bugs_assertion_exact(capsys, tmp_path):
    """F5's run found src charged 2 PCPU with nothing pinned: the stock
    form asserts exactly that, the fixed form the invariant."""
    import os
    root = os.path.join(os.path.dirname(__file__), '..', '..')
    f5 = os.path.join(root, 'nova-regressions', 'scenarios',
                      'post-live-migration-at-destination-raise.yaml')
    run = os.path.join(root, 'tests', 'unit', 'data', 'F5-run.json')
    code, out, err = cli(capsys, 'export', f5, '--from-run', run)
    assert code == 0, err
    assert ("self.assertEqual({'src': (0, 2)}, "
            "self._unaccounted(['src', 'dest']))") in out
    assert 'assertNotEqual' not in out
    code, out, err = cli(capsys, 'export', f5, '--from-run', run,
                         '--fixed')
    assert "self.assertEqual({}, self._unaccounted(['src', 'dest']))" \
        in out
    other = tmp_path / 'other.yaml'
    other.write_text(open(f5).read().replace(
        'name: post-live-migration-at-destination-raise', 'name: other'))
    code, _, err = cli(capsys, 'export', str(other), '--from-run', run)
    assert code == 2
    assert "a run of scenario 'post-live-migration-at-destination-raise'" \
        in err


def test_decide_resize_confirms_or_reverts_what_waits():
    """The resize workflows' decide-resize step (before recover) is
    the helper that decides every resize waiting in VERIFY_RESIZE."""
    text = export.export('resize-revert')
    body = text.split('    def test_resize_revert(self):')[1]
    body = body.split('\n    def _')[0]
    assert body.index("self._decide_resizes([(s1, 1), (s2, 0)], 'revert', "
                      "timeout=60)") < body.index('# What an operator')
    assert 'def _decide_resizes(self, moves, decision, timeout=30):' in text


def test_a_hang_recover_finds_held_is_released_after_the_periodics(
        tmp_path):
    """As the scenario tier's recover: every compute's periodic starts
    while the call is held, then the hold is let go; a hang of the
    scenario's rules is installed in setUp and held on the test."""
    text = export.export(scenario(tmp_path, '''\
rules:
  dest: ['pre_live_migration: 1*hang']
steps:
  - boot: {server: s1, host: src}
  - live-migrate: {server: s1, host: dest}
  - settle: {}
  - recover: {}
'''))
    assert 'self.held = self.useFixture(nova_fixtures.' \
        'InterceptMethodFixture(' in text
    body = text.split('    def test_t(self):')[1].split('\n    def _')[0]
    assert body.index('periodics = self._periodics_while_held()') < \
        body.index('self.held.proceed.set()') < \
        body.index('thread.join(60)')
    # The fixture (its periodics) shortens the RPC timeouts.
    assert 'compute_fault.ComputeFaultFixture(self)' in text


@pytest.mark.parametrize('rule, call', [
    ("'pre_live_migration: 1*periodic'",
     "self.faults.inject('dest', 'pre_live_migration', 'periodic')"),
    ("'pre_live_migration.after: 1*periodic(host=src)'",
     "self.faults.inject( 'dest', 'pre_live_migration', 'periodic', "
     "peer='src', after=True)"),
])
def test_a_periodic_rule_runs_the_periodic_at_the_hit(tmp_path, rule,
                                                      call):
    text = export.export(scenario(tmp_path, """\
rules:
  dest: [%s]
steps:
  - boot: {server: s1, host: src}
  - live-migrate: {server: s1, host: dest}
  - settle: {}
""" % rule))
    assert call in flat(text)
    assert 'from nova.tests.fixtures import compute_fault' in text


def test_a_periodic_inside_the_tracker_lock_a_patch_cannot_reach_is_exit_2(
        tmp_path, capsys):
    code, _, err = cli(capsys, 'export', scenario(tmp_path, """\
rules:
  dest: ['tracker.resize_claim: 1*periodic']
steps:
  - boot: {server: s1, host: src}
"""))
    assert code == 2
    assert 'a periodic inside the tracker lock' in err
    assert 'tracker.resize_claim.unlocked' in err
