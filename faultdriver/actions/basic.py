"""Actions that change nothing but the record: off and log."""

import logging

from faultdriver.actions import base

LOG = logging.getLogger(__name__)


class Off(base.Action):
    """off: let the call through; counts the hit.

    Used to skip hits in a chain: ``2*off -> crash`` crashes on the third
    matching hit.
    """

    name = 'off'

    def __call__(self, hit):
        pass


class Log(base.Action):
    """log(message): only log a WARNING line with the message.

    A marker to see in the logs when, and in which thread, a step runs.
    """

    name = 'log'
    params = (('message', str),)

    def __call__(self, hit):
        LOG.warning('faultdriver log at %s on %s: %s', hit.describe(),
                    hit.host, self.args.get('message', ''))
