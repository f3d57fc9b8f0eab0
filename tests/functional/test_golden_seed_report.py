"""The seed scenario's JSON report keeps its shape (issue 39, item 7).

Invariant: ``scenario run stale-error-migration-context -f json`` on the
embedded Nova writes the document saved in
``data/seed-report.golden.json`` (taken before the run state became
records), modulo what differs from run to run (:mod:`tests.golden`:
uuids, times, durations, paths, the concurrency mode).  A change to the
records behind the report that renames, reorders, drops or retypes a
key fails here with the diff.

To take it again after a change of the report that is meant (say why
in the commit)::

    python -m faultdriver.cmd.main scenario run \\
        stale-error-migration-context -f json > run.json
    python -c "import json, sys; from tests import golden; \\
        sys.stdout.write(golden.dumps(json.load(open('run.json'))))" \\
        > tests/functional/data/seed-report.golden.json
"""

import json
import os

from tests.functional import test_scenario_cli
from tests import golden

GOLDEN = os.path.join(os.path.dirname(__file__), 'data',
                      'seed-report.golden.json')


def test_seed_report_as_golden():
    mode = ('threading' if os.environ.get(
        'OS_NOVA_DISABLE_EVENTLET_PATCHING', 'True') == 'True'
        else 'eventlet')
    done = test_scenario_cli.run_cli(
        'scenario', 'run', 'stale-error-migration-context', '--mode', mode,
        '-f', 'json')
    assert done.returncode == 0, done.stderr[-3000:]
    with open(GOLDEN, encoding='utf-8') as saved:
        diff = golden.differences(saved.read(), json.loads(done.stdout))
    assert not diff, '\n'.join(diff[:200])
