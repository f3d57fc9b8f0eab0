"""The resource tracker: injection points and candidate fixes.

Tracker points carry the ``tracker.`` prefix.  They are declared here so
the catalogue and the grammar know them; the tracker subclass that fires
them is installed by :mod:`faultdriver.tracker.install`.
"""

POINTS = {}
