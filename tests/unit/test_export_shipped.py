"""The exported tests shipped in nova-regressions/ are what ``faultdriver
export`` writes for the scenarios nova-regressions/exports.txt lists:
regenerate them (tools/export-nova-regressions.sh) when this fails, so
they never drift from the scenarios and the exporter."""

import os

from faultdriver.export import shipped

FOLDER = os.path.join(os.path.dirname(__file__), '..', '..',
                      'nova-regressions')


def test_shipped_exports_are_regenerated():
    expected = shipped.written(FOLDER)
    present = {name for name in os.listdir(FOLDER)
               if name.startswith('test_') and name.endswith('.py')}
    assert present == set(expected)
    for name, text in expected.items():
        with open(os.path.join(FOLDER, name), encoding='utf-8') as stream:
            assert stream.read() == text, (
                '%s differs from what faultdriver export writes: run '
                'tools/export-nova-regressions.sh' % name)


def test_a_bad_exports_line_names_the_file_and_line(tmp_path):
    import pytest

    from faultdriver import exception
    (tmp_path / 'exports.txt').write_text(
        '# comment\nstale-error-migration-context --from run.json\n')
    with pytest.raises(exception.ScenarioError) as exc:
        shipped.entries(str(tmp_path))
    assert 'exports.txt:2: expected SCENARIO [--from-run RUN.json]' in \
        str(exc.value)
