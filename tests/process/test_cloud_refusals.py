"""Each refusal of the cloud tier, by its own test, through ``faultdriver
cloud check`` against a REAL key-only sshd on 127.0.0.1 (tests/sshd.py)
and a real faultdriver control server behind it: exit 2 naming the host
(its SSH target) and the fact -- host down, key refused, socket absent,
no opt-in, host or nodename mismatch, dirty host, FaultDriver not the
compute_driver, Nova not 34.x, a FaultDriver that knows other points --
and ``cloud restore`` leaving a clean host.

What a nova-compute adds to ``status`` (its host, nodenames, Nova
version, ``rpc_started``) is given by the control server's ComputeHooks
here, as FaultDriver's driver gives it (the process tier's own tests
check the driver's); a Nova that is not 34.x cannot be installed beside
the one faultdriver runs on.
"""

import os
import shutil
import tempfile

import pytest
import yaml

from faultdriver.cloud import checks
from faultdriver.cloud import computes as computes_module
from faultdriver.cloud import errors
from faultdriver.cloud import profile as profile_module
from faultdriver.cloud import survey
from faultdriver.cmd import cloud as cloud_cmd
from faultdriver.cmd import main
from faultdriver.control import ops
from faultdriver.control import server as server_module
from tests import sshd

pytestmark = pytest.mark.skipif(
    not sshd.available() and not os.environ.get('CI'), reason=sshd.MISSING)

COMPUTE = {'host': 'compute-a', 'nodenames': ['node-a'],
           'rpc_started': True, 'nova_version': '34.0.0',
           'faultdriver_version': '1.0', 'tracker_fixes': [],
           'timer': True, 'settings': {'report_interval': 2, 'debug': True,
                                       'rpc_response_timeout': 8}}


@pytest.fixture(scope='module')
def server_sshd():
    running = sshd.Sshd().start()
    yield running
    running.stop()


@pytest.fixture
def directory():
    path = tempfile.mkdtemp(prefix='fdr', dir='/tmp')
    yield path
    shutil.rmtree(path, ignore_errors=True)


def serve(engine, directory, facts=COMPUTE, catalogue=None):
    """A control server as FaultDriver's: this faultdriver's own points
    catalogue (``catalogue``: another's)."""
    from faultdriver import points
    from faultdriver import rules
    from tests.unit import fakes
    catalogue = catalogue or points.catalogue()
    compute = ops.ComputeHooks(facts=lambda: dict(facts)) if facts \
        else ops.NO_COMPUTE
    return server_module.ControlServer(
        os.path.join(directory, 'c.sock'), engine, catalogue,
        lambda text: rules.validate(rules.parse(text), catalogue,
                                    fakes.ACTIONS),
        compute=compute).start()


def write_profile(running, directory, ssh='fd-a', socket=None,
                  allowed=True):
    data = {'format': 1, 'cloud': 'fd-test-admin',
            'fault_injection_allowed': allowed,
            'ssh_config': running.path('ssh_config'),
            'hosts': {'src': {
                'ssh': ssh, 'host': 'compute-a', 'nodename': 'node-a',
                'manager': 'systemd', 'unit': 'nova-compute',
                'socket': socket or os.path.join(directory, 'c.sock'),
                'journal': os.path.join(directory, 'journal.jsonl'),
                'log': {'file': os.path.join(directory, 'compute.log')},
                'start_rules': os.path.join(directory, 'start.json')}}}
    path = os.path.join(directory, 'lab.yaml')
    with open(path, 'w') as f:
        yaml.safe_dump(data, f)
    return path


def check(capfd, path):
    app = main.FaultDriverApp()
    app.command_manager.add_command('cloud check', cloud_cmd.CloudCheck)
    code = app.run(['cloud', 'check', 'lab', '--profile', path])
    return code, capfd.readouterr().err


def refused(capfd, path, ssh, fact):
    code, err = check(capfd, path)
    assert code == 2, err
    assert '%s: %s' % (ssh, fact) in err
    return err


def test_host_down(capfd, server_sshd, directory):
    refused(capfd, write_profile(server_sshd, directory, ssh='fd-down'),
            'fd-down', errors.HOST_DOWN)


def test_key_refused(capfd, server_sshd, directory):
    refused(capfd, write_profile(server_sshd, directory, ssh='fd-badkey'),
            'fd-badkey', errors.KEY_REFUSED)


def test_socket_absent(capfd, server_sshd, directory):
    absent = os.path.join(directory, 'nobody.sock')
    err = refused(capfd, write_profile(server_sshd, directory,
                                       socket=absent),
                  'fd-a', errors.SOCKET_ABSENT)
    assert absent in err


def test_no_opt_in(capfd, server_sshd, directory):
    path = write_profile(server_sshd, directory, allowed=False)
    code, err = check(capfd, path)
    assert code == 2
    assert '%s: key fault_injection_allowed' % path in err


@pytest.mark.parametrize('facts, fact', [
    (dict(COMPUTE, host='compute-z'), checks.HOST_MISMATCH),
    (dict(COMPUTE, nodenames=['node-z']), checks.NODENAME_MISMATCH),
    (dict(COMPUTE, nova_version='33.0.2'), checks.NOT_NOVA_34),
    (None, checks.NOT_FAULTDRIVER),
], ids=['host-mismatch', 'nodename-mismatch', 'nova-not-34',
        'not-the-compute-driver'])
def test_what_the_compute_says_of_itself(capfd, server_sshd, directory,
                                         engine, facts, fact):
    served = serve(engine, directory, facts)
    try:
        refused(capfd, write_profile(server_sshd, directory), 'fd-a', fact)
    finally:
        served.stop()


def test_a_faultdriver_with_other_points(capfd, server_sshd, directory,
                                        engine):
    """A compute whose FaultDriver is another faultdriver, knowing five
    points: the runner's scenarios and sweeps name the rest."""
    from tests.unit import fakes
    served = serve(engine, directory, catalogue=fakes.CATALOGUE)
    try:
        err = refused(capfd, write_profile(server_sshd, directory), 'fd-a',
                      checks.POINTS_DIFFER)
        assert 'faultdriver 1.0' in err and 'lacks' in err
    finally:
        served.stop()


def test_dirty_host_then_restore_cleans_it(capfd, server_sshd, directory,
                                           engine):
    served = serve(engine, directory)
    try:
        path = write_profile(server_sshd, directory)
        engine.add_rule(served._ops.parse_rule('spawn: 1*off'))
        start_rules = os.path.join(directory, 'start.json')
        with open(start_rules, 'w') as f:
            f.write('{"run_id": "r-killed", "deadline": 0}')
        err = refused(capfd, path, 'fd-a', checks.DIRTY)
        assert '1 rules armed' in err and 'start rules file' in err
        profile = profile_module.load(path=path)
        said = survey.restore(profile)
        assert 'fd-a: removed %s' % start_rules in said
        assert 'fd-a: cleared 1 rules' in said
        assert engine.rules() == [] and not os.path.exists(start_rules)
        with computes_module.Computes(profile) as computes:
            [found] = survey.check_hosts(profile, computes)
        assert (found.host, found.nodename, found.reached_by) == (
            'compute-a', 'node-a', 'forward')
    finally:
        served.stop()


def test_init_writes_the_profile_from_the_compute_itself(server_sshd,
                                                         directory):
    from faultdriver import engine as engine_module
    from faultdriver import journal as journal_module
    from tests.unit import fakes
    journal = os.path.join(directory, 'journal.jsonl')
    engine = engine_module.Engine(
        'h1', fakes.ACTIONS, [], enabled=True,
        journal=journal_module.Journal(journal))
    served = serve(engine, directory)
    try:
        data = survey.init(
            'lab', 'lab-admin', {'src': 'fd-a'}, served.path, 'systemd',
            'devstack@n-cpu', ('journald', 'devstack@n-cpu'),
            os.path.join(directory, 'start.json'),
            ssh_config=server_sshd.path('ssh_config'), allowed=True,
            api=False)
    finally:
        served.stop()
        engine.close()
    path = os.path.join(directory, 'written.yaml')
    with open(path, 'w') as f:
        yaml.safe_dump(data, f)
    written = profile_module.load(path=path)
    assert written.hosts['src'] == profile_module.HostProfile(
        alias='src', ssh='fd-a', host='compute-a', nodename='node-a',
        manager='systemd', unit='devstack@n-cpu', socket=served.path,
        journal=journal, log=('journald', 'devstack@n-cpu'),
        start_rules=os.path.join(directory, 'start.json'))
    assert written.cloud == 'lab-admin' and written.fault_injection_allowed
