# Nova loads compute_driver = faultdriver.FaultDriver as
# nova.virt.faultdriver.FaultDriver; the driver itself lives in the
# independent faultdriver package.
from faultdriver.driver import FaultDriver  # noqa: F401
