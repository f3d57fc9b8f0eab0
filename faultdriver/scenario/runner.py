"""The embedded tier's worker: run a scenario variant on an embedded Nova
in this process.

Started by :mod:`faultdriver.scenario.launch` as ``python -m
faultdriver.scenario.runner FILE VARIANT MODE OUT`` (or ``--serve MODE``
by the sweep): the mode decides ``OS_NOVA_DISABLE_EVENTLET_PATCHING``
before Nova is first imported, so each variant gets a process (and a
fresh embedded Nova) of its own.  The protocol is
:mod:`faultdriver.scenario.worker`'s; the run itself is
:mod:`faultdriver.harness.scenario_case`'s.
"""

import logging
import os
import sys

from faultdriver.scenario import tiers
from faultdriver.scenario import worker

BACKEND = tiers.DEFAULT     # the embedded Nova


def run(path, variant, mode):
    """Run ``variant`` of the scenario at ``path``; returns the report."""
    os.environ['OS_NOVA_DISABLE_EVENTLET_PATCHING'] = worker.MODES[mode]
    # A previous run in this process (serve) left logging disabled.
    logging.disable(logging.NOTSET)
    # Nova decides eventlet patching on this first import (before the
    # loader checks rules, which imports Nova's driver module).
    from faultdriver.harness import scenario_case
    return scenario_case.run(path, variant, mode)


def main(argv=None):
    """``FILE VARIANT MODE OUT`` or ``--serve MODE``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ['--serve']:
        worker.serve(args[1], run, BACKEND)
    else:
        worker.main(args, run, BACKEND)


if __name__ == '__main__':
    main()
    worker.exit_now()
