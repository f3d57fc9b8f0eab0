"""The sweep: every step of a workflow x every fault x each host, each
case checked against the cloud's invariants after an operator's recovery.

``trace`` finds the steps (a clean run's journal), ``cases`` turns them
into scenario files (one rule each), ``execute`` runs them and keeps
results on disk, ``findings`` groups what broke an invariant.
"""
