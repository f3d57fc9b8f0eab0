"""The migration and server statuses the checks and steps compare with:
Nova's, named once for the scenario layer."""

#: Migration statuses Nova never leaves by itself.
TERMINAL = ('completed', 'confirmed', 'reverted', 'error', 'failed',
            'cancelled')
#: Where a move waits for someone else: the user's confirm or revert
#: (finished), the evacuated source's return (done).
WAITING = ('finished', 'done')
#: Server statuses no task leaves it in by itself.
SETTLED_SERVER = ('ACTIVE', 'SHUTOFF', 'ERROR')
#: How a move that Nova gave up cleanly ends: never ``error``.
ROLLED_BACK = ('failed', 'cancelled', 'reverted')
