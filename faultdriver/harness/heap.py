"""Python's cyclic garbage collector in a process that runs Nova again and
again.

A sweep worker (``runner --serve``) keeps Nova, its libraries and their
caches alive, about half a million objects, while it starts one embedded
Nova after another.  Every full collection walked all of them:
``gc.callbacks`` over five served cases counted 5.1 s of a worker's ~40 s
of CPU in the collector, 3.8 s of it in 13 full passes of ~0.3 s each.
Two changes, before each case, took that to 2.0 s:

* collect once and freeze what survives (``gc.freeze``): later full
  passes walk only what the case itself allocated (3.2 s);
* a young generation of 10,000 objects instead of 700: a case allocates
  millions of short-lived objects, and each young collection promotes the
  few it finds alive towards the full passes (2,800 young collections,
  24 full ones -> 220 and 5, the 5 being the freezes' own).

The case's own garbage is still collected as it is made.
"""

import gc

#: Allocations (minus deallocations) that start a young collection.
YOUNG_THRESHOLD = 10000


def ready_for_case() -> None:
    """Collect, exempt every surviving object from later collections, and
    collect the young generation less often.

    What is alive between two cases is imports, caches and what a finished
    embedded Nova still references (a thread unwinding): frozen, they are
    no longer walked.  The price: a frozen object that becomes cyclic
    garbage later is never freed (a served runner grew ~6 MB a case more);
    the sweep replaces its runners every ``served.RUNS`` cases.
    """
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, older, oldest)
    gc.collect()
    gc.freeze()
