"""Actions that stretch time: delay and hang."""

import logging
import time

from faultdriver.actions import base

LOG = logging.getLogger(__name__)


class Delay(base.Action):
    """delay(seconds): sleep, then let the call go on.

    Widens a race window.  Sleeps with ``time.sleep``, which is cooperative
    under eventlet, so other green threads keep running.
    """

    name = 'delay'
    params = (('seconds', base.seconds),)
    required = 1

    def __call__(self, hit):
        time.sleep(self.args['seconds'])


class Hang(base.Action):
    """hang(timeout=300, name=<point>): hold the thread until released.

    The thread waits at a barrier called ``name`` (the point's name unless
    given) until a test, the fixture or ``faultdriver ctl release`` releases
    it, or until ``timeout`` seconds pass; then the call goes on.  The wait
    is on a ``threading.Event``, so it works with native threads and, when
    nova-compute runs under eventlet, as a green wait.  Hanging at a point
    that runs under the resource tracker's lock stalls every claim and the
    periodic on that host; faultdriver warns about such rules at start.
    """

    name = 'hang'
    params = (('timeout', base.seconds), ('name', str))

    def prepare(self, hit):
        barrier = self.args.get('name', hit.point)
        hit.token = (barrier, hit.engine.hold(barrier))

    def cancel(self, hit):
        hit.token[1].set()

    def __call__(self, hit):
        barrier, event = hit.token
        timeout = self.args.get('timeout', 300.0)
        LOG.warning('faultdriver holding %s on %s at barrier %r for up to '
                    '%ss', hit.describe(), hit.host, barrier, timeout)
        if event.wait(timeout):
            LOG.warning('faultdriver released barrier %r on %s', barrier,
                        hit.host)
        else:
            # Only this thread gives up; others held at the barrier stay.
            event.set()
            LOG.warning('faultdriver hang at barrier %r on %s timed out '
                        'after %ss; going on', barrier, hit.host, timeout)
