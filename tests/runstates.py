"""Run states for unit tests, written as the few keys a test is about:
the rest of each record is filled with neutral values, then read as the
records the expectations take (faultdriver.scenario.runstate)."""

from faultdriver.scenario import runstate


def state(data=None):
    """A RunState from a partial state dict (``{}``: an empty run)."""
    data = dict(data or {})
    data['servers'] = {
        alias: dict({'id': 'uuid-%s' % alias, 'status': 'ACTIVE',
                     'host': None, 'task_state': None, 'pinned_cpus': []},
                    **server)
        for alias, server in (data.get('servers') or {}).items()}
    data['migrations'] = [
        dict({'server': 's1', 'id': i, 'uuid': 'migration-%d' % i,
              'type': None, 'status': 'completed', 'source_compute': None,
              'dest_compute': None, 'created_at': None, 'updated_at': None},
             **m)
        for i, m in enumerate(data.get('migrations') or (), 1)]
    data['hosts'] = {
        host: dict({'pinned_cpus': [], 'placement_pcpu': 0,
                    'matches': True}, **info)
        for host, info in (data.get('hosts') or {}).items()}
    return runstate.RunState.from_json(data)
