"""``faultdriver export --report``: a finding as the bug report filed
upstream.

Invariant: every step kind of the bundled scenarios either has a devstack
(CLI) form or is refused naming the step and its kind, never dropped;
the report has each section Launchpad asks for; its actual values are
the run's (F5's report from a saved run of F5's scenario); a run that did
not show the bug gives no report (exit 1); options of one form given to
the other are exit 2.  (Scenario files are checked against Nova's
driver class, so Nova is imported, never started; no scenario runs.)
"""

import copy
import glob
import json
import pathlib
import subprocess

import pytest

from faultdriver.cmd import main
from faultdriver.export import bugreport
from faultdriver.export import devstack
from faultdriver.export import Unsupported
from faultdriver.scenario import model
from faultdriver.scenario import runstate
from faultdriver.scenario import variant_report

ROOT = pathlib.Path(__file__).resolve().parents[2]
F5 = str(ROOT / 'nova-regressions' / 'scenarios' /
         'post-live-migration-at-destination-raise.yaml')
F5_RUN = str(ROOT / 'tests' / 'unit' / 'data' / 'F5-run.json')
#: Step kinds with no CLI form, and what the refusal names.
REFUSED = {'wait-queued': 'message bus'}
SECTIONS = ('# ', '## What happens', '## Steps to reproduce',
            '### With faultdriver', '### On devstack', '## Expected result',
            '## Actual result', '## Environment', '## Regression test',
            '## Candidate fix')


def cli(capsys, *argv):
    code = main.FaultDriverApp().run(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def bundled_steps():
    """``{kind: (scenario path, StepSpec)}``: one use of each step kind
    the bundled scenarios (and nova-regressions/'s) have."""
    found = {}
    for path in sorted(glob.glob(str(ROOT / 'faultdriver' / 'scenarios' /
                                     '*.yaml')) +
                       glob.glob(str(ROOT / 'nova-regressions' /
                                     'scenarios' / '*.yaml'))):
        for step in model.read(path).steps:
            found.setdefault(step.kind, (path, step))
    return found


def alone(path, step):
    """The scenario at ``path`` with only its boots and ``step``: the
    step's CLI form, on its own."""
    scenario = model.read(path)
    data = copy.deepcopy(scenario.data)
    boots = [s.to_json() for s in scenario.steps if s.kind == 'boot'
             and not s.args.get('pin-as')]
    data['steps'] = boots + [step.to_json()]
    return model.Scenario(path, data)


@pytest.mark.parametrize('kind', sorted(bundled_steps()))
def test_each_bundled_step_kind_maps_or_is_refused_by_name(kind):
    path, step = bundled_steps()[kind]
    scenario = alone(path, step)
    index = len(scenario.steps)
    if kind in REFUSED:
        with pytest.raises(Unsupported) as caught:
            devstack.recipe(scenario)
        assert str(caught.value).startswith('step %d `%s`' % (index, kind))
        assert REFUSED[kind] in str(caught.value)
        return
    _settings, commands = devstack.recipe(scenario)
    # The step is there, under its number (the last one), with at least
    # one command that is not a comment.
    at = commands.index('# %d. %s' % (index, step.describe().strip()))
    assert [line for line in commands[at + 1:]
            if line.strip() and not line.lstrip().startswith('#')]


def test_every_schema_step_kind_has_a_mapping_or_a_refusal():
    kinds = model.schema()['$defs']['step']['properties']
    missing = [k for k in kinds if not hasattr(
        devstack, '_step_' + k.replace('-', '_'))]
    assert missing == []


@pytest.mark.parametrize('args, named', [
    ({'server': 's2', 'host': 'src', 'pin-as': 's1'}, 'pin-as'),
])
def test_an_argument_with_no_cli_form_is_refused_naming_it(args, named):
    scenario = model.read(F5)
    data = copy.deepcopy(scenario.data)
    data['steps'] = [{'boot': {'server': 's1'}}, {'boot': args}]
    with pytest.raises(Unsupported) as caught:
        devstack.recipe(model.Scenario(F5, data))
    assert str(caught.value).startswith('step 2 `boot`')
    assert named in str(caught.value)


def test_f5_devstack_form_has_the_rules_and_the_cli_calls():
    settings, commands = devstack.recipe(model.read(F5))
    assert ("FAULTDRIVER_RULES='post_live_migration_at_destination.before: "
            "1*raise(MigrationError)'") in settings['dest']
    assert not any('FAULTDRIVER_RULES' in line for line in settings['src'])
    assert 'cpu_dedicated_set = 0-3' in settings['src']
    assert 'update_resources_interval = -1' in settings['dest']
    assert ('openstack --os-compute-api-version 2.30 server migrate '
            '--live-migration --host "$DEST" s1') in commands
    assert ('openstack server create --flavor fd-default --image "$IMAGE" '
            '--nic none --availability-zone nova:"$SRC" --wait s1') \
        in commands
    assert ('openstack flavor create --vcpus 2 --ram 2048 --disk 20 '
            '--property hw:cpu_policy=dedicated fd-default') in commands


def test_host_named_like_a_shell_variable_gets_its_own():
    assert devstack.node('path') == '"$NODE_PATH"'
    assert devstack.node('dest-2') == '"$DEST_2"'


def f5_report(run=None, tmp_path=None):
    scenario = model.load(F5)
    path = F5_RUN
    if run is not None:
        path = str(tmp_path / 'run.json')
        pathlib.Path(path).write_text(json.dumps(run))
    return bugreport.compose(scenario, 'stock', path, repository=str(ROOT))


def test_f5_report_has_every_section_in_order():
    text = f5_report()
    at = [text.index('\n' + s) if s != '# ' else text.index(s)
          for s in SECTIONS]
    assert at == sorted(at)
    assert text.startswith('# A failed `post_live_migration_at_destination`'
                           ' leaks the source allocation\n')
    assert '### On devstack (not yet run on devstack)' in text
    assert 'Nova under test: nova 34.0.0 (stock)' in text
    assert '`nova-fixes/F5-post-live-migration-failure-source-' \
        'allocation.patch`' in text
    assert 'Shipped: `nova-regressions/test_post_live_migration_at_' \
        'destination_raise.py`' in text
    assert 'faultdriver export nova-regressions/scenarios/post-live-' \
        'migration-at-destination-raise.yaml -o' in text


def test_f5_report_actual_values_come_from_the_run(tmp_path):
    run = json.loads(pathlib.Path(F5_RUN).read_text())
    text = ' '.join(f5_report().split())
    assert ('accounting-matches-placement broken (pinned pCPUs match '
            'placement on src, dest): src: 0 pinned / 2 PCPU; dest: 4 '
            'pinned / 4 PCPU') in text
    uuid = run['variants']['stock']['state']['migrations'][0]['uuid']
    assert ('allocation of migration 1 of s1 (live-migration), consumer '
            '%s: DISK_GB 20, MEMORY_MB 2048, PCPU 2' % uuid) in text
    # Another run's values, another report: nothing is taken from
    # elsewhere.
    stock = run['variants']['stock']
    for result in stock['expectations']:
        if result['kind'] == 'accounting-matches-placement':
            result['actual'] = {'src': '0 pinned / 6 PCPU',
                                'dest': '4 pinned / 4 PCPU'}
    stock['state']['hosts']['src']['allocations'] = {
        uuid: {'PCPU': 6}}
    text = ' '.join(f5_report(run, tmp_path).split())
    assert 'src: 0 pinned / 6 PCPU; dest: 4 pinned / 4 PCPU' in text
    assert '0 pinned / 2 PCPU' not in text
    assert 'consumer %s: PCPU 6' % uuid in text


def test_a_recorded_devstack_run_replaces_the_label(tmp_path):
    record = tmp_path / 'devstack-run.txt'
    record.write_text('2026-12-07 devstack master: reproduced\n')
    text = bugreport.compose(model.load(F5), 'stock', F5_RUN,
                             repository=str(ROOT),
                             devstack_run=str(record))
    assert 'not yet run on devstack' not in text
    assert '### On devstack (run on devstack: see %s)' % record in text


def test_run_that_did_not_show_the_bug_is_exit_1(tmp_path, capsys):
    run = json.loads(pathlib.Path(F5_RUN).read_text())
    for result in run['variants']['stock']['expectations']:
        if result['kind'] == 'accounting-matches-placement':
            result['met'] = False
    path = tmp_path / 'run.json'
    path.write_text(json.dumps(run))
    code, out, err = cli(capsys, 'export', '--report', F5, '--from-run',
                         str(path), '--repository', str(ROOT))
    assert code == 1
    assert out == ''
    assert 'did not show the bug (verdict: bug not reproduced)' in err


def test_run_of_another_scenario_version_is_exit_2(tmp_path, capsys):
    run = json.loads(pathlib.Path(F5_RUN).read_text())
    run['variants']['stock']['expectations'].pop()
    path = tmp_path / 'run.json'
    path.write_text(json.dumps(run))
    code, _out, err = cli(capsys, 'export', '--report', F5, '--from-run',
                          str(path), '--repository', str(ROOT))
    assert code == 2
    assert 'a run of another version of' in err


def test_run_of_another_scenario_is_exit_2(tmp_path, capsys):
    run = json.loads(pathlib.Path(F5_RUN).read_text())
    run['scenario'] = 'other'
    path = tmp_path / 'run.json'
    path.write_text(json.dumps(run))
    code, _out, err = cli(capsys, 'export', '--report', F5, '--from-run',
                          str(path))
    assert code == 2
    assert "a run of scenario 'other'" in err


@pytest.mark.parametrize('argv, named', [
    (['--report', '--fixed'], '--fixed: only without --report'),
    (['--report', '--bug', '1'], '--bug: only without --report'),
    (['--mode', 'eventlet'], '--mode: only with --report'),
])
def test_options_of_the_other_form_are_exit_2(capsys, argv, named):
    code, out, err = cli(capsys, 'export', F5, *argv)
    assert code == 2
    assert out == ''
    assert named in err


def test_a_step_with_no_devstack_form_is_exit_2_before_any_run(capsys):
    # No --from-run: the refusal comes before the run would start.
    code, out, err = cli(capsys, 'export', '--report',
                         'stale-error-migration-context')
    assert code == 2
    assert out == ''
    assert '`wait-queued`' in err


def test_a_variant_that_does_not_expect_the_bug_is_exit_2(tmp_path):
    scenario = model.load(F5)
    data = copy.deepcopy(scenario.data)
    data['variants']['fixed'] = {'description': 'ok'}
    with pytest.raises(Exception) as caught:
        bugreport.bug_variant(model.Scenario(F5, data), 'fixed')
    assert 'variant fixed does not expect the bug (expect: ok)' in str(
        caught.value)


def test_finding_entry_is_read_as_plain_text():
    entry = bugreport.finding(str(ROOT / 'doc' / 'findings.rst'), 'F5')
    assert entry.title == ('A failed `post_live_migration_at_destination` '
                           'leaks the source allocation')
    assert entry.fields['Code path'].startswith(
        '`nova/compute/manager.py` `_post_live_migration`')
    assert entry.fix[0].startswith('Candidate fix')
    assert not any('Candidate fix' in p for p in entry.happens)


def test_unknown_finding_is_named(tmp_path):
    path = tmp_path / 'findings.rst'
    path.write_text('F1. One\n======\n\ntext\n')
    with pytest.raises(Exception) as caught:
        bugreport.finding(str(path), 'F7')
    assert 'no entry F7' in str(caught.value)


def test_bug_expectations_are_the_broken_invariants_and_own():
    scenario = model.load(F5)
    data = copy.deepcopy(scenario.data)
    # The same expectation among every variant's and the variant's own:
    # only the variant's own is the bug's.
    data['expectations'].append({'log': {'text': 'Traceback', 'min': 1}})
    data['variants']['stock']['expectations'] = [
        {'log': {'text': 'Traceback', 'min': 1}}]
    scenario = model.Scenario(F5, data)
    results = [runstate.ExpectationResult(kind=e.kind, expectation=e.kind,
                                          met=True, actual=1)
               for e in scenario.expectations('stock')]
    results.sort(key=lambda r: r.kind in ('accounting-matches-placement',
                                          'moves-again', 'periodics-clean'))
    report = variant_report.VariantReport(variant='stock', mode='threading',
                                          backend='embedded',
                                          expectations=results)
    pairs = bugreport.paired(scenario, 'stock', report, 'run')
    bug = [(spec.kind, spec.args) for spec, _result, of_bug in pairs
           if of_bug]
    assert bug == [('log', {'text': 'Traceback', 'min': 1}),
                   ('accounting-matches-placement', {'broken': True})]


def bundled_recipes():
    """``{scenario path: commands}`` of every bundled scenario the
    recipe does not refuse."""
    found = {}
    for path in sorted(glob.glob(str(ROOT / 'faultdriver' / 'scenarios' /
                                     '*.yaml'))):
        try:
            found[path] = devstack.recipe(model.read(path))[1]
        except Unsupported:
            continue
    return found


def test_every_recipe_is_valid_bash(tmp_path):
    recipes = bundled_recipes()
    assert len(recipes) > 20
    for path, commands in recipes.items():
        script = tmp_path / 'recipe.sh'
        script.write_text('\n'.join(commands) + '\n')
        done = subprocess.run(['bash', '-n', str(script)],
                              capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, (path, done.stderr)


def test_fdctl_quotes_a_rule_for_the_nodes_shell(tmp_path):
    # ssh runs its command through the node's shell: a rule's spaces and
    # parentheses must reach faultdriver ctl as one argument.
    script = tmp_path / 'fdctl.sh'
    script.write_text('\n'.join(
        ['FD_SOCKET=/s', 'ssh() { bash -c "$2" -- ; }',
         'faultdriver() { printf "<%s>" "$FAULTDRIVER_SOCKET" "$@"; }',
         'export -f faultdriver'] +
        devstack.FUNCTIONS['fdctl'] +
        ["fdctl node add 'pre_live_migration: 1*hang(60, held)'"]) + '\n')
    done = subprocess.run(['bash', str(script)], capture_output=True,
                          text=True, timeout=30)
    assert done.stdout == \
        '</s><ctl><add><pre_live_migration: 1*hang(60, held)>', done.stderr


def test_report_from_a_saved_run_is_written_to_output(tmp_path, capsys):
    out_file = tmp_path / 'F5.md'
    code, out, _err = cli(capsys, 'export', '--report', F5, '--from-run',
                          F5_RUN, '--repository', str(ROOT), '-o',
                          str(out_file))
    assert code == 0
    assert out == ''
    assert out_file.read_text() == f5_report()
