"""``faultdriver.fixture.FaultInjection``, the name the docs use
(doc/source/tiers.rst).

The fixture lives in :mod:`faultdriver.harness.injection`, next to the
in-process crash it drives; this module only re-exports it, so the
harness never imports back from here.
"""

from faultdriver.harness.injection import ALL_HOSTS  # noqa: F401
from faultdriver.harness.injection import FaultInjection  # noqa: F401
from faultdriver.harness.injection import SHIM  # noqa: F401
