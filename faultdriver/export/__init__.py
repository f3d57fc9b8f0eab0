"""Export a scenario as a functional test in the shape of Nova's own
regression tests (``nova/tests/functional/regressions/test_bug_NNNN.py``).

The exported module imports nothing of faultdriver: it runs with Nova's
test requirements and passes Nova's style checks.  Its class is built on
``nova.tests.functional.libvirt.base.ServersTestBase`` with the
scenario's hosts, CPU topology and pinned flavors; each step becomes
Nova's own test means (``mock.patch.object`` on the host's driver or
resource tracker, ``InterceptMethodFixture``, a direct
``update_available_resource``, ``restart_compute_service``); each
expectation an assertion, those of the bug marked ``FIXME`` as Nova marks
a known bug (``fixed=True``: the assertions of the correct state
instead).

* :mod:`.writer`: what the exported test accumulates while it is written;
* :mod:`.faults`: a rule becomes a fault installed on a host;
* :mod:`.steps`: each step kind;
* :mod:`.expectations`: each expectation kind, the stock and fixed forms;
* :mod:`.helpers`: the helper methods an exported class may need;
* :mod:`.module`: the module text around them.

What cannot be expressed raises :class:`Unsupported` (``faultdriver
export`` exits 2 naming the step or expectation), never a silent drop.
"""

from faultdriver import exception
from faultdriver.scenario import tiers


#: What an exported test's means provide
#: (:class:`faultdriver.scenario.tiers.Provision`), asked of the same
#: declarations a tier is (:mod:`faultdriver.scenario.provisions`):
#: the Nova options a scenario sets (the test's ``self.flags``).
#: Nova's functional-test base runs every service in one process on
#: fakelibvirt (no real hypervisor to ask, no guest transferred, no
#: process per host); its CinderFixture and NeutronFixture give a server
#: a volume to boot from and a port.  Not as faultdriver's embedded tier
#: corrects them (a second port binding for a host is a 409 in Neutron,
#: not in the fixture; an attachment's connector names the host started
#: last): the ``volume-attachments`` and ``port-bindings`` invariants,
#: which would need that, have no export form (exit 2 where one shows
#: the bug).
PROVIDES = frozenset({tiers.Provision.NOVA_OPTIONS,
                      tiers.Provision.BLOCK_STORAGE,
                      tiers.Provision.NETWORK})
#: How an export refusal says so.
LACKS = "needs %s; Nova's functional-test means as exported lack it"


def lacking(needed):
    """Why an export cannot express what needs ``needed`` (provisions),
    or None when it can."""
    from faultdriver.scenario import provisions
    missing = frozenset(needed) - PROVIDES
    return LACKS % provisions.describe(missing) if missing else None


class Unsupported(exception.ScenarioError):
    """A step, rule or expectation the export cannot express."""

    def __init__(self, where, why):
        self.where = where
        self.why = why
        super().__init__('%s: cannot be exported: %s' % (where, why))


def export(name_or_path, variant=None, fixed=False, bug=None,
           run_file=None):
    """The text of the exported test module of a scenario (a bundled
    name or a file); ``bug``: the Launchpad bug it reproduces;
    ``run_file``: a saved run of the scenario (``scenario run -f json``)
    whose values the bug's assertions state exactly."""
    from faultdriver.export import module
    from faultdriver.scenario import model
    scenario = model.load(name_or_path)
    run = None
    if run_file:
        from faultdriver.export import bugreport
        run, _where = bugreport.from_run_file(
            run_file, scenario, module.chosen_variant(scenario, variant))
    return module.render(scenario, variant, fixed, bug, run)
