"""Which helper methods an exported test class may need, and what each
needs itself.

The methods are real Python, in :mod:`faultdriver.export.novahelpers`
(linted and unit-tested there); the exporter copies in the source of
the ones the steps and expectations use (read with
:func:`inspect.getsource`, so what lands in a Nova tree is what the
tests here import), with the helpers and imports they need.
``needs`` names other helpers, ``imports`` keys of
:data:`faultdriver.export.module.IMPORTS`.

What Nova's test means lack (a compute that dies in a call, a fault
or periodic at the N-th call, a dead compute restarted) is not copied:
it is the proposed Nova fixture, ``nova/tests/fixtures/compute_fault.py``
(:mod:`faultdriver.export.novafixture`), the ``faults`` helper: the
test's ``self.faults``.
"""

import dataclasses
import functools
import inspect

from faultdriver.export import novahelpers


@dataclasses.dataclass(frozen=True)
class Helper:
    #: Methods of novahelpers.NovaHelpers it copies, in this order.
    methods: tuple
    needs: tuple = ()           # other helpers
    imports: tuple = ()         # keys of module.IMPORTS

    @functools.cached_property
    def source(self):
        """The methods' source, as the exported class holds them."""
        return '\n'.join(inspect.getsource(
            getattr(novahelpers.NovaHelpers, name))
            for name in self.methods)


def _helper(*methods, needs=(), imports=()):
    return Helper(tuple(methods), tuple(needs), tuple(imports))


HELPERS = {
    'migrate_stub': _helper('_migrate_stub', imports=('urllib.parse',)),
    'migrations': _helper('_migrations'),
    'wait_for_nth_migration': _helper(
        '_wait_for_nth_migration', needs=('migrations',)),
    'pinning': _helper('_pinning',
                       imports=('nova.exception', 'nova.objects')),
    'boot_pinned_as': _helper('_boot_pinned_as', needs=('pinning',)),
    'boot_with': _helper('_boot_with'),
    'pinned_cpus': _helper('_pinned_cpus', imports=('nova.objects',)),
    'placement_pcpus': _helper('_placement_pcpus'),
    # The proposed fixture (self.faults): no method copied.
    'faults': _helper(imports=('compute_fault',)),
    'failed_periodics': _helper('_failed_periodics', needs=('faults',)),
    'watch_rpc': _helper('_watch_rpc', imports=(
        'threading', 'oslo_messaging', 'nova.compute.rpcapi')),
    'settle': _helper('_settle', needs=('migrations',),
                      imports=('time', 'nova.conf')),
    'decide_resizes': _helper('_decide_resizes', '_decision_handled',
                              needs=('migrations', 'faults')),
    'periodic_errors_logged': _helper('_periodic_errors_logged'),
    'reset_stuck': _helper('_reset_stuck'),
    'periodics_while_held': _helper('_periodics_while_held',
                                    needs=('faults',),
                                    imports=('threading', 'time',
                                             'nova.conf')),
    'unfinished_migrations': _helper('_unfinished_migrations',
                                     needs=('migrations',)),
    'unsettled_servers': _helper('_unsettled_servers'),
    'unsettled_servers_but': _helper('_unsettled_servers_but',
                                     needs=('unsettled_servers',)),
    'shared_pcpus': _helper('_shared_pcpus', needs=('pinning',)),
    'misplaced_allocations': _helper('_misplaced_allocations',
                                     needs=('migrations',)),
    'accounting': _helper('_unaccounted', needs=(
        'faults', 'pinned_cpus', 'placement_pcpus')),
    'moves_again': _helper(
        '_moves_again', '_live_migrate_with_periodic',
        needs=('migrations', 'faults', 'wait_for_nth_migration'),
        imports=('unittest.mock',)),
    'failed_periodics_since': _helper('_failed_periodics_since',
                                      needs=('periodic_errors_logged',)),
    'tracked_tasks': _helper('_tracked_tasks', needs=('faults',)),
}

#: Helpers that use module-level names the module then defines.
TERMINAL_USERS = ('settle', 'decide_resizes', 'unfinished_migrations',
                  'misplaced_allocations')
CONF_USERS = ('settle', 'periodics_while_held')


def closure(names):
    """``names`` and every helper they need, in HELPERS' order."""
    wanted, stack = set(), list(names)
    while stack:
        name = stack.pop()
        if name not in wanted:
            wanted.add(name)
            stack.extend(HELPERS[name].needs)
    return [name for name in HELPERS if name in wanted]
