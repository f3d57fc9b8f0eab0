"""The resource tracker: injection points and candidate fixes.

Tracker points carry the ``tracker.`` prefix and live in the same
catalogue and grammar as driver points.  Where Nova's method holds the
tracker lock (``COMPUTE_RESOURCE_SEMAPHORE``), the points fire inside it
(the lock is re-entrant, so Nova's own locking is unchanged); elsewhere
they fire outside.  :mod:`faultdriver.tracker.install` puts the tracker
subclass on a compute service.
"""

_CLAIM_RAISES = ['ComputeResourcesUnavailable', 'InternalError']
_DROP_RAISES = ['CPUUnpinningInvalid', 'InternalError']
_MOVES = ['live-migration', 'migration', 'resize', 'evacuation']

#: Point name -> facts (as in data/points.yaml) plus the tracker method.
POINTS = {
    'tracker.instance_claim': dict(
        method='instance_claim', tracker_lock=True, raises=_CLAIM_RAISES,
        doc='claim for a new instance on this host (build, unshelve)'),
    'tracker.resize_claim': dict(
        method='resize_claim', tracker_lock=True, roles=['dest'],
        operations=['migration', 'resize'], raises=_CLAIM_RAISES,
        doc='move claim of a cold migration or resize on the destination'),
    'tracker.live_migration_claim': dict(
        method='live_migration_claim', tracker_lock=True, roles=['dest'],
        operations=['live-migration'], raises=_CLAIM_RAISES,
        doc='NUMA live-migration claim on the destination'),
    'tracker.rebuild_claim': dict(
        method='rebuild_claim', tracker_lock=True, roles=['dest'],
        operations=['evacuation'], raises=_CLAIM_RAISES,
        doc='evacuation claim on the destination'),
    'tracker.abort_instance_claim': dict(
        method='abort_instance_claim', tracker_lock=True,
        raises=['InternalError'],
        doc='undo an instance claim after a failed build or unshelve'),
    'tracker.drop_move_claim': dict(
        method='drop_move_claim', tracker_lock=True, operations=_MOVES,
        raises=_DROP_RAISES,
        doc='drop a move claim (claim abort, live-migration rollback)'),
    'tracker.drop_move_claim_at_source': dict(
        method='drop_move_claim_at_source', tracker_lock=True,
        roles=['source'], operations=['migration', 'resize'],
        raises=_DROP_RAISES,
        doc='confirm: migration set confirmed, old usage dropped'),
    'tracker.drop_move_claim_at_dest': dict(
        method='drop_move_claim_at_dest', tracker_lock=True, roles=['dest'],
        operations=['migration', 'resize'], raises=_DROP_RAISES,
        doc='revert: migration set reverted, new usage dropped'),
    'tracker.update_available_resource': dict(
        method='update_available_resource', tracker_lock=False,
        raises=['InternalError', 'HypervisorUnavailable'],
        doc='the periodic (outer part, before it takes the lock)'),
    'tracker.apply_migration_context': dict(
        method=None, tracker_lock=True, roles=['dest'], operations=_MOVES,
        raises=['CPUPinningInvalid', 'InternalError'],
        doc='inside the periodic: an incoming migration context is about '
            'to be applied to an instance of this host'),
}
