"""The resource tracker: injection points and candidate fixes.

Tracker points carry the ``tracker.`` prefix and live in the same
catalogue and grammar as driver points; their facts (the method each
wraps, the arguments it reads, whether Nova holds the tracker lock
there) are in ``data/points.yaml`` under ``tracker``.  Where Nova's
method holds the tracker lock (``COMPUTE_RESOURCE_SEMAPHORE``), the points
fire inside it (the lock is re-entrant, so Nova's own locking is
unchanged); elsewhere they fire outside.  :mod:`faultdriver.tracker.install`
puts the tracker subclass on a compute service.
"""

import functools

PREFIX = 'tracker.'


@functools.lru_cache(maxsize=None)
def points():
    """Point name (``tracker.<key>``) -> its facts from points.yaml."""
    from faultdriver import points as points_module
    return {PREFIX + key: dict(facts, method=facts.get('method'))
            for key, facts in points_module.facts()['tracker'].items()}
