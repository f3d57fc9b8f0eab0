"""The unit suite's one concurrency mode (the control-socket fixtures
it shares with the process tier's tests are in tests/conftest.py).

The unit tests run in one process.  Importing Nova's functional test
package (``nova.tests.fixtures``, which some tests need for fakelibvirt
or the embedded harness) monkey-patches the process with eventlet unless
``OS_NOVA_DISABLE_EVENTLET_PATCHING`` says not to; every test after it
would then run green, with modules imported before the patch still
blocking for real (a stand-in's HTTP server thread and its client hung
each other that way), so a test's outcome depended on which tests ran
before it.  The suite runs on native threads throughout, as Nova 34's
services do (the functional suites run both modes).
"""

import os

from nova import monkey_patch

# Nova settles the mode once, before anything imports eventlet (futurist
# does, with nova.context), as its services do at start.
os.environ.setdefault('OS_NOVA_DISABLE_EVENTLET_PATCHING', 'True')
monkey_patch.patch()
