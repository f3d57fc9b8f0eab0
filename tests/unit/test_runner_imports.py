"""The scenario runner decides Nova's concurrency mode before Nova is
imported (Nova refuses eventlet imported before its monkey patching):
importing the runner, and what its ``main`` uses before the run, must
import neither Nova nor eventlet."""

import os
import subprocess
import sys

#: The checkout under test: the child imports its faultdriver, not an
#: installed copy, whatever directory an earlier test left current.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def test_the_runner_imports_no_nova_before_the_run():
    code = ('import sys\n'
            'from faultdriver.harness import runner\n'
            'from faultdriver.scenario import launch, model\n'
            'from faultdriver import novaundertest\n'
            'novaundertest.current()\n'
            'print(sorted(m for m in ("nova", "eventlet") '
            'if m in sys.modules))\n')
    done = subprocess.run([sys.executable, '-c', code], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == '[]'
