"""Output formats of the ``faultdriver`` commands, through the cliff app.

Invariant: every command with tabular output prints the same rows as a
table, JSON, YAML and bare values; ``scenario report`` prints a saved run
in each format, writes the HTML page, and refuses a file that is not a
run with exit code 2.  (``scenario list`` and ``show`` check rules against
Nova's driver class, so Nova is imported, never started.)
"""

import csv
import io
import json
import os

import pytest
import yaml

from faultdriver.cmd import main

FIXTURE = os.path.join(os.path.dirname(__file__), 'data',
                       'stale-context-run.json')
BUNDLED = {'bug-1879878', 'crash-dest-pre-live-migration',
           'stale-error-migration-context'}


def cli(capsys, *argv):
    code = main.FaultDriverApp().run(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_scenario_list_in_every_format(capsys):
    code, out, _ = cli(capsys, 'scenario', 'list', '-f', 'json')
    assert code == 0
    rows = json.loads(out)
    assert BUNDLED <= {row['Name'] for row in rows}
    seed = [row for row in rows
            if row['Name'] == 'stale-error-migration-context'][0]
    assert seed['Variants'] == 'stock, fix'
    assert seed['Description'].endswith('.')       # a whole sentence

    code, out, _ = cli(capsys, 'scenario', 'list', '-f', 'yaml')
    assert code == 0 and yaml.safe_load(out) == rows

    code, out, _ = cli(capsys, 'scenario', 'list', '-f', 'value',
                       '-c', 'Name')
    assert code == 0 and set(out.split()) == {r['Name'] for r in rows}

    code, out, _ = cli(capsys, 'scenario', 'list', '-f', 'csv')
    assert [r['Name'] for r in csv.DictReader(io.StringIO(out))] == [
        r['Name'] for r in rows]

    code, out, _ = cli(capsys, 'scenario', 'list', '-f', 'table')
    assert code == 0
    assert out.splitlines()[1].split('|')[1].strip() == 'Name'
    assert all(name in out for name in BUNDLED)


def test_drivers_in_every_format(capsys):
    _, out, _ = cli(capsys, 'drivers', '-f', 'json')
    rows = json.loads(out)
    assert {'Name': 'fake', 'Driver': 'nova.virt.fake:FakeDriver'} in rows
    _, out, _ = cli(capsys, 'drivers', '-f', 'yaml')
    assert yaml.safe_load(out) == rows
    _, out, _ = cli(capsys, 'drivers', '-f', 'value')
    assert 'fake nova.virt.fake:FakeDriver' in out.splitlines()


def test_scenario_show_gives_data_to_machine_formats(capsys):
    _, out, _ = cli(capsys, 'scenario', 'show',
                    'stale-error-migration-context', '-f', 'json')
    shown = json.loads(out)
    assert shown['hosts'] == ['src', 'dest']
    assert shown['steps'][0] == {'boot': {'server': 's1', 'host': 'src'}}
    assert shown['variant fix']['patches'] == ['stale_migration_context']
    _, out, _ = cli(capsys, 'scenario', 'show',
                    'stale-error-migration-context', '-f', 'yaml')
    assert yaml.safe_load(out) == shown
    _, out, _ = cli(capsys, 'scenario', 'show',
                    'stale-error-migration-context', '-f', 'table')
    assert 'boot server=s1 host=src' in out


@pytest.fixture
def run():
    with open(FIXTURE, encoding='utf-8') as stream:
        return json.load(stream)


def test_scenario_report_in_every_format(capsys, run, tmp_path):
    # Saved before the state had move_end: written as a run now is.
    for report in run['variants'].values():
        report['state'].setdefault('move_end', None)
    code, out, _ = cli(capsys, 'scenario', 'report', FIXTURE, '-f', 'json')
    assert code == 0 and json.loads(out) == run
    code, out, _ = cli(capsys, 'scenario', 'report', FIXTURE, '-f', 'yaml')
    assert code == 0 and yaml.safe_load(out) == run
    code, out, _ = cli(capsys, 'scenario', 'report', FIXTURE, '-f', 'value')
    assert out.splitlines() == ['stock bug reproduced', 'fix ok']
    page = tmp_path / 'report.html'
    code, out, err = cli(capsys, 'scenario', 'report', FIXTURE,
                         '--html', str(page))
    assert code == 0
    assert 'Side by side' in out and 'Variant stock' in out
    assert 'HTML report: %s' % page in err
    assert page.read_text().count('class="sequence-diagram"') == 2


@pytest.mark.parametrize('content', ['not json', '[1, 2]', '{"a": 1}'])
def test_scenario_report_refuses_what_is_not_a_run(capsys, tmp_path,
                                                   content):
    path = tmp_path / 'x.json'
    path.write_text(content)
    code, out, err = cli(capsys, 'scenario', 'report', str(path))
    assert code == main.EXIT_BAD_INPUT
    assert 'expected the JSON of a scenario run' in err


def test_points_give_lists_to_machine_formats(capsys):
    _, out, _ = cli(capsys, 'points', '--operation', 'live-migration',
                    '--raises', '-f', 'json')
    rows = {row['Point']: row for row in json.loads(out)}
    pre = rows['pre_live_migration']
    assert pre['Roles'] == ['dest'] and 'live-migration' in pre['Operations']
    assert pre['Tracker lock'] is False
    assert rows['get_host_ip_addr']['Tracker lock'] is True
    _, out, _ = cli(capsys, 'points', '--operation', 'live-migration',
                    '-f', 'yaml')
    assert {r['Point'] for r in yaml.safe_load(out)} == set(rows)
    _, out, _ = cli(capsys, 'points', '--operation', 'live-migration',
                    '-f', 'value', '-c', 'Point', '-c', 'Tracker lock')
    assert 'get_host_ip_addr yes' in out.splitlines()
