"""The embedded tier's worker: run a scenario variant on an embedded Nova
in this process.

Started by :mod:`faultdriver.scenario.launch` as ``python -m
faultdriver.harness.runner FILE VARIANT MODE OUT``, as ``--fork MODE
FILE VARIANT=OUT...`` when the variants run side by side on one Nova
under test (one import of Nova, a forked process per variant), or as
``--serve MODE`` by the sweep: the mode decides
``OS_NOVA_DISABLE_EVENTLET_PATCHING`` before Nova is first imported, and
each variant gets a process (and a fresh embedded Nova) of its own.  The
protocol is
:mod:`faultdriver.scenario.worker`'s; the run itself is
:mod:`faultdriver.harness.scenario_case`'s.
"""

import logging
import os
import sys
import types
import typing

from faultdriver.scenario import tiers
from faultdriver.scenario import worker

if typing.TYPE_CHECKING:
    from faultdriver.scenario import variant_report

BACKEND = tiers.DEFAULT     # the embedded Nova


def run(path: str, variant: str,
        mode: str) -> 'variant_report.VariantReport':
    """Run ``variant`` of the scenario at ``path``; returns the report."""
    report: variant_report.VariantReport = _imported(mode).run(
        path, variant, mode)
    return report


def preload(mode: str) -> None:
    """What every variant's run needs before its Nova starts, done once
    for variants forked from this process (``--fork``): Nova imported in
    ``mode``, its assumptions checked, what survives frozen for the
    collector (and shared with the children)."""
    from faultdriver.harness import heap
    from faultdriver import novacompat
    _imported(mode)
    novacompat.remember(novacompat.SCENARIO_GROUPS)
    heap.ready_for_case()


def _imported(mode: str) -> types.ModuleType:
    os.environ['OS_NOVA_DISABLE_EVENTLET_PATCHING'] = worker.MODES[mode]
    # A previous run in this process (serve) left logging disabled.
    logging.disable(logging.NOTSET)
    # Nova decides eventlet patching on this first import (before the
    # loader checks rules, which imports Nova's driver module).
    from faultdriver.harness import scenario_case
    return scenario_case


def main(argv: typing.Optional[typing.Sequence[str]] = None) -> None:
    """``FILE VARIANT MODE OUT``, ``--serve MODE`` or ``--fork MODE FILE
    VARIANT=OUT...``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ['--serve']:
        worker.serve(args[1], run, BACKEND)
    elif args[:1] == ['--fork']:
        worker.fork_each(args[1:], preload, run, BACKEND)
    else:
        worker.main(args, run, BACKEND)


if __name__ == '__main__':
    main()
    worker.exit_now()
