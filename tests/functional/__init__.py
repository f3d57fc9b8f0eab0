# Nova's functional package applies (or not) eventlet patching according
# to OS_NOVA_DISABLE_EVENTLET_PATCHING; it must come before anything else
# imports eventlet.
import nova.tests.functional  # noqa: F401
