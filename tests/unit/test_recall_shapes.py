"""The recall benchmark's shapes (``benchmarks/recall/``) can run: every
shape's diff applies to the installed Nova as ``--ab-nova-patch`` applies
it (faultdriver.novaundertest: every hunk's context and removed lines
found, never fuzzed), says which bug it re-creates and why, and every
index entry names a bundled workflow, known action classes, points the
catalogue has and hosts of the workflow (the runner's own check, which
refuses bad input naming the key)."""

import importlib.util
import pathlib
import re

import pytest

from faultdriver.novaundertest import tree

ROOT = pathlib.Path(__file__).resolve().parents[2]
RECALL = ROOT / 'benchmarks' / 'recall'


def _runner():
    spec = importlib.util.spec_from_file_location('recall_run',
                                                  RECALL / 'run.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RUN = _runner()
SHAPES = RUN.load()


def test_at_least_ten_shapes_across_the_moves():
    assert len(SHAPES) >= 10
    workflows = {entry['workflow'] for entry in SHAPES.values()}
    assert {'live-migration', 'evacuation', 'resize-confirm',
            'resize-revert', 'cold-migration-confirm'} <= workflows
    assert any('periodic' in entry['actions'] for entry in SHAPES.values())
    assert [n for n, e in SHAPES.items() if e.get('ci')], 'none for CI'


def test_every_diff_in_shapes_is_in_the_index():
    listed = {pathlib.Path(e['diff']).name for e in SHAPES.values()}
    assert {p.name for p in (RECALL / 'shapes').glob('*.diff')} <= listed


@pytest.mark.parametrize('name', sorted(SHAPES))
def test_shape_applies_to_the_installed_nova(name):
    entry = SHAPES[name]
    edits, [record] = tree.apply_all(tree.installed_package(),
                                     [entry['diff']])
    assert record['changes'] and record['skipped'] == []
    assert sorted(edits) == record['changes']
    for path, text in edits.items():
        # A shape that Nova cannot import is every case's internal error.
        compile(text, path, 'exec')


@pytest.mark.parametrize('name', sorted(SHAPES))
def test_shape_names_its_bug_and_what_should_break(name):
    entry = SHAPES[name]
    text = pathlib.Path(entry['diff']).read_text(encoding='utf-8')
    header = text[:text.index('\n---\n')]
    assert re.search(r'\bbug[ #]*%d\b' % entry['bug'], header, re.I)
    assert name.startswith('bug-%d-' % entry['bug'])
    if 'nova-changes' not in entry['diff']:
        assert 'What should break' in header
        assert entry['finds'] in header


def _index(tmp_path, **changes):
    entry = dict(workflow='resize-confirm', actions=['raise'],
                 points=['confirm_migration'], hosts=['src'], bug=1,
                 area='x', finds='migrations-terminal',
                 diff=str(RECALL / 'shapes' /
                          'bug-1821594-confirm-failure-keeps-source-'
                          'allocation.diff'))
    entry.update(changes)
    entry = {k: v for k, v in entry.items() if v is not None}
    path = tmp_path / 'shapes.yaml'
    import yaml
    path.write_text(yaml.safe_dump({'shapes': {'bug-1-x': entry}}))
    return path


@pytest.mark.parametrize('changes,message', [
    ({'workflow': 'resize'}, 'shapes.bug-1-x.workflow: resize is not a '
                             'bundled workflow'),
    ({'actions': ['crash', 'explode']}, 'shapes.bug-1-x.actions: explode'),
    ({'points': ['confirm_migrate']}, 'confirm_migrate: no such point'),
    ({'hosts': ['c']}, 'c: not a host of workflow resize-confirm'),
    ({'finds': 'leaks'}, 'shapes.bug-1-x.finds: leaks is none of'),
    ({'diff': 'nothing.diff'}, 'shapes.bug-1-x.diff:'),
    ({'colour': 'red'}, 'unknown key colour'),
    ({'backend': 'libvirt'}, 'shapes.bug-1-x.backend: libvirt; expected '
                             'one of embedded, process'),
    ({'workflow': None}, 'missing key workflow'),
])
def test_bad_index_entries_are_refused_naming_the_key(tmp_path, changes,
                                                      message):
    path = _index(tmp_path, **changes)
    with pytest.raises(RUN.BadInput) as caught:
        RUN.load(str(path))
    assert str(path) in str(caught.value)
    assert message in str(caught.value)


def test_bad_index_is_exit_2(tmp_path, capsys):
    path = _index(tmp_path, workflow='resize')
    assert RUN.main(['--index', str(path)]) == 2
    assert 'not a bundled workflow' in capsys.readouterr().err


def test_shapes_of_one_workflow_and_actions_share_the_stock_sweep():
    one = dict(workflow='evacuation', actions=['raise', 'crash'])
    two = dict(workflow='evacuation', actions=['crash', 'raise'])
    assert RUN.stock_key(one) == RUN.stock_key(two) == \
        'evacuation--crash-raise'
    assert RUN.stock_key(dict(one, actions=['raise'])) != RUN.stock_key(one)


def test_a_shape_on_processes_has_its_own_stock_sweep_there():
    """A process-tier shape's sweeps run with ``--backend process`` and
    never share the embedded stock sweep of the same workflow."""
    entry = dict(workflow='live-migration', actions=['crash'],
                 points=['check_can_live_migrate_source'], hosts=['src'],
                 diff='x.diff')
    on_processes = dict(entry, backend='process')
    assert RUN.stock_key(on_processes) != RUN.stock_key(entry)
    argv = RUN.command(on_processes, '/tmp/r', 'threading')
    assert argv[argv.index('--backend') + 1] == 'process'
    assert '--backend' not in RUN.command(entry, '/tmp/r', 'threading')


def test_found_is_per_case_regressions_not_flaky():
    doc = {'b': {'cases': [{'id': 'x', 'broken': ['migrations-terminal']},
                           {'id': 'y', 'broken': ['moves-again']}]},
           'ab': {'regressions': ['x'], 'flaky': ['y']}}
    assert RUN.verdict(doc) == (
        True, [{'case': 'x', 'broken': ['migrations-terminal']}], ['y'])
    doc['ab'] = {'regressions': [], 'flaky': ['y']}
    assert RUN.verdict(doc) == (False, [], ['y'])


def test_found_counts_a_broken_case_at_a_step_only_the_shape_takes():
    doc = {'b': {'cases': [{'id': 'n', 'broken': ['servers-settled']}]},
           'ab': {'regressions': [], 'flaky': [], 'new_steps': ['n']}}
    found, caught, _ = RUN.verdict(doc)
    assert found and caught == [
        {'case': 'n', 'broken': ['servers-settled'], 'new': True}]
    row = {'status': 'found', 'shape': 's', 'caught': caught, 'flaky': []}
    assert 'n [a step only the shape takes] (servers-settled)' in \
        RUN.table([row])


def test_a_sweep_document_of_another_format_is_named_not_read():
    assert RUN.unreadable({'a': {}, 'b': {'format_version': 2}}) is None
    assert RUN.unreadable({'a': {'format_version': 2},
                           'b': {'format_version': 7}}) == (
        'sweep format version 7; this benchmark reads 1, 2')
