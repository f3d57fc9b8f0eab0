"""A tier runner that speaks the worker protocol's ``--fork`` without
Nova, for tests/unit/test_launch_fork.py.

Its preload and its runs leave marks in ``$FORKING_RUNNER_MARKS`` (a
folder): ``preload-PID`` and ``ran-VARIANT-PARENTPID``, so a test sees
which process prepared and which ran each variant.  A variant named in
``$FORKING_RUNNER_DIE`` ends its process without a report; with
``$FORKING_RUNNER_THREAD`` set the preload leaves a thread running.
"""

import os
import sys
import threading

from faultdriver.scenario import model
from faultdriver.scenario import variant_report
from faultdriver.scenario import worker

BACKEND = 'embedded'     # the tier whose runner the test replaces


def _mark(name):
    with open(os.path.join(os.environ['FORKING_RUNNER_MARKS'], name), 'w'):
        pass


def preload(mode):
    _mark('preload-%d' % os.getpid())
    if os.environ.get('FORKING_RUNNER_THREAD'):
        threading.Thread(target=threading.Event().wait, name='left-behind',
                         daemon=True).start()


def run(path, variant, mode):
    _mark('ran-%s-%d' % (variant, os.getppid()))
    if variant == os.environ.get('FORKING_RUNNER_DIE'):
        os._exit(7)
    report = variant_report.VariantReport.begin(
        model.read(path), variant, mode, BACKEND)
    report.expectations = []
    report.ended()
    return report


if __name__ == '__main__':
    args = sys.argv[1:]
    if args[:1] == ['--fork']:
        worker.fork_each(args[1:], preload, run, BACKEND)
    else:
        worker.main(args, run, BACKEND)
    worker.exit_now()
