"""Sphinx extension: the reference pages faultdriver generates at build
time from its single sources of truth, so the docs cannot fall behind.

* ``faultdriver-actions``: the action plugins' docstrings (entry points
  ``faultdriver.actions``), as ``faultdriver actions`` prints them;
* ``faultdriver-points``: the points catalogue (``faultdriver.points``),
  as ``faultdriver points --raises`` prints it;
* ``faultdriver-fixes``: the candidate tracker fixes (entry points
  ``faultdriver.tracker_patches``) and their module docstrings;
* ``faultdriver-scenario-schema``: the scenario reference, from
  ``faultdriver/scenario/schema.yaml``;
* ``faultdriver-assumptions``: what faultdriver assumes about Nova
  (``faultdriver.novacompat.declared``), as ``faultdriver doctor`` checks;
* ``faultdriver-tiers``: what each tier provides and what needs it
  (``faultdriver.scenario.tiers``' declarations).

Nothing generated is written to the source tree.  Files included from
outside ``doc/source`` get one allowance (``includes``).
"""

from faultdriver_docs import catalogues
from faultdriver_docs import compat
from faultdriver_docs import includes
from faultdriver_docs import provisions
from faultdriver_docs import scenario_schema


def setup(app):
    app.add_directive('faultdriver-actions', catalogues.Actions)
    app.add_directive('faultdriver-points', catalogues.Points)
    app.add_directive('faultdriver-fixes', catalogues.Fixes)
    app.add_directive('faultdriver-scenario-schema',
                      scenario_schema.ScenarioSchema)
    app.add_directive('faultdriver-assumptions', compat.Assumptions)
    app.add_directive('faultdriver-tiers', provisions.Tiers)
    app.connect('include-read', includes.lengthen_underlines)
    return {'parallel_read_safe': True, 'parallel_write_safe': True}
