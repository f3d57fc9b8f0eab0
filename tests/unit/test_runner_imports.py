"""The scenario runner decides Nova's concurrency mode before Nova is
imported (Nova refuses eventlet imported before its monkey patching):
importing the runner, and what its ``main`` uses before the run, must
import neither Nova nor eventlet."""

import subprocess
import sys


def test_the_runner_imports_no_nova_before_the_run():
    code = ('import sys\n'
            'from faultdriver.harness import runner\n'
            'from faultdriver.scenario import launch, model\n'
            'from faultdriver import novaundertest\n'
            'novaundertest.current()\n'
            'print(sorted(m for m in ("nova", "eventlet") '
            'if m in sys.modules))\n')
    done = subprocess.run([sys.executable, '-c', code], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == '[]'
