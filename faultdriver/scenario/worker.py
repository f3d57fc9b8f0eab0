"""The worker protocol every tier's runner speaks: run one scenario
variant and write its report as JSON, or serve such runs one after the
other (the sweep's workers).

``python -m faultdriver.harness.runner FILE VARIANT MODE OUT`` (the
embedded Nova) and ``python -m faultdriver.process.runner ...`` (the
process and libvirt tiers) both end here with their own ``run_variant``.
"""

import json
import os
import sys
import threading
import traceback
import typing
import warnings

from faultdriver import exception
from faultdriver import lifeline
from faultdriver import novaundertest
from faultdriver.scenario import model
from faultdriver.scenario import play
from faultdriver.scenario import variant_report

#: Concurrency mode -> ``OS_NOVA_DISABLE_EVENTLET_PATCHING``, which Nova
#: reads when first imported: set before a worker imports Nova.
MODES = {'eventlet': 'False', 'threading': 'True'}

#: A tier's ``run_variant(path, variant, mode)``: the variant's report.
RunVariant = typing.Callable[[str, str, str], variant_report.VariantReport]


def main(argv: typing.Sequence[str], run_variant: RunVariant,
         backend: str) -> int:
    """``FILE VARIANT MODE OUT``: run, then write the report to OUT (an
    internal error becomes a report too)."""
    warnings.simplefilter('ignore')
    path, variant, mode, out = argv
    nova = None
    try:
        # Which Nova this process runs, checked before anything starts.
        nova = novaundertest.current()
        scenario = model.read(path)
        novaundertest.check_includes(nova, scenario.nova_patches(variant),
                                     scenario.nova_tree(variant))
        report = run_variant(path, variant, mode)
        report.unavailable = unavailable(scenario.patches(variant))
    except (exception.ScenarioError, exception.MissingPrerequisite) as exc:
        # Bad input, not an internal error: the launcher read the file but
        # left the checks that import Nova to its variants, which import
        # it anyway (launch.run raises it).  A prerequisite the stack
        # finds missing (before it starts anything) is refused alike.
        report = variant_report.VariantReport.failed(
            variant, mode, backend, scenario_error=str(exc))
    except Exception:
        error = traceback.format_exc()
        report = variant_report.VariantReport.failed(
            variant, mode, backend, internal_error=error)
        play.progress_internal_error(variant, error)
    report.nova = nova
    _write(report, out)
    return 0


def _write(report: variant_report.VariantReport, out: str) -> None:
    # Whole or not at all: the launcher of forked variants takes a
    # report's existence for its variant's end.
    with open(out + '.part', 'w', encoding='utf-8') as stream:
        json.dump(report.to_json(), stream, indent=2, default=str)
    os.replace(out + '.part', out)


def read(path: str, variant: str, mode: str, backend: str,
         missing: str) -> variant_report.VariantReport:
    """The report a worker wrote to ``path``, checked; a report that is
    missing or malformed becomes an internal error (``missing`` says how
    the worker ended)."""
    try:
        with open(path, encoding='utf-8') as source:
            data = json.load(source)
    except (OSError, ValueError):
        return variant_report.VariantReport.failed(
            variant, mode, backend, internal_error=missing)
    try:
        return variant_report.VariantReport.from_json(
            data, 'the report of variant %s' % variant)
    except ValueError as exc:
        return variant_report.VariantReport.failed(
            variant, mode, backend,
            internal_error='the worker wrote a malformed report: %s'
            % exc)


def unavailable(fixes: typing.Iterable[str]) -> typing.Dict[str, str]:
    """``{feature or fix: why}``: what the changed Nova under test made
    unavailable (the run went on without it; the report says so)."""
    from faultdriver import novacompat
    from faultdriver.tracker import patches as tracker_patches
    # The tracker's patches are not annotated yet (they read stevedore's
    # plugin untyped).
    found = dict(novacompat.unavailable())
    fixes_gone = tracker_patches.unavailable(  # type: ignore[no-untyped-call]
        fixes)
    found.update(('fix %s' % name, why) for name, why in fixes_gone.items())
    return found


def serve(mode: str, run_variant: RunVariant, backend: str) -> None:
    """``--serve MODE``: run one scenario variant after another in this
    process (the sweep's workers: Nova's imports and its cached database
    schema are paid once, each run still gets a fresh Nova).

    Reads one JSON request per line on stdin, ``{"path", "variant",
    "out", "log"}``; the run's output goes to ``log``, its report to
    ``out``, then the line ``done`` on the original stdout.
    """
    warnings.simplefilter('ignore')
    replies = os.fdopen(os.dup(1), 'w')
    for line in sys.stdin:
        request = json.loads(line)
        with open(request['log'], 'a', encoding='utf-8') as log:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(log.fileno(), 1)
            os.dup2(log.fileno(), 2)
            main([request['path'], request['variant'], mode,
                  request['out']], run_variant, backend)
            sys.stdout.flush()
            sys.stderr.flush()
        replies.write('done\n')
        replies.flush()


def fork_each(argv: typing.Sequence[str],
              preload: typing.Callable[[str], None],
              run_variant: RunVariant, backend: str) -> None:
    """``MODE FILE VARIANT=OUT...``: prepare once (``preload(mode)``:
    import Nova in that mode, check its assumptions), then fork a child
    per variant that runs it as :func:`main` does; wait for them all.

    The variants of one scenario run the same Nova under test in the same
    mode, so the imports and checks each separate runner pays (~3 s of
    CPU on two cores that both variants share) are paid once.  Nothing
    runs at fork time: the preload starts no thread (Nova starts its
    services in each child); a preload that left a thread running (a
    child would inherit its locks, not the thread) fails every variant
    naming it.  A preload that fails leaves each child to fail the same
    way into its own report.  A child that ends without its report gets
    one from here, an internal error saying how it ended.
    """
    warnings.simplefilter('ignore')
    mode, path, *pairs = argv
    variants = dict(pair.split('=', 1) for pair in pairs)
    try:
        preload(mode)
    except Exception:
        pass        # each child fails alike, into its report
    # current_thread(), not main_thread(): once eventlet patched the
    # threading module its main thread is another object.
    threads = [thread.name for thread in threading.enumerate()
               if thread is not threading.current_thread()]

    def fail(variant: str, why: str) -> None:
        out = variants[variant]
        if not os.path.isdir(os.path.dirname(out) or '.'):
            # The launcher already ended the run (another variant's
            # scenario error) and removed its reports' directory: its
            # own message stands, nobody waits for this report.
            return
        _write(variant_report.VariantReport.failed(
            variant, mode, backend, internal_error=why), out)

    if threads:
        for variant in variants:
            fail(variant, 'cannot fork the variants: importing Nova left '
                 'threads running (%s)' % ', '.join(threads))
        return
    children = {}
    for variant, out in variants.items():
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            lifeline.die_with_parent()
            try:
                main([path, variant, mode, out], run_variant, backend)
            finally:
                exit_now()
        children[pid] = (variant, out)
    while children:
        pid, status = os.wait()
        variant, out = children.pop(pid)
        if not os.path.exists(out):
            fail(variant, 'the forked runner of variant %s ended with status '
                 '%d without a report' % (
                     variant, os.waitstatus_to_exitcode(status)))


def exit_now() -> typing.NoReturn:
    """End a worker once its reports are written: Nova's leftover
    threads and pools (whose shutdown logs after the test's logging
    fixtures are gone) need not be waited for."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
