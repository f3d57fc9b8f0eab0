"""Bad input, surface 2: nova.conf files (``faultdriver validate FILE``
and what FaultDriver checks at start).

Invariant: ``validate`` exits 2 with one line naming the file and what is
wrong for anything FaultDriver would refuse at start (the same checks,
:mod:`faultdriver.confcheck`), for files that are not a nova.conf at all,
and for a misspelt [fault_injection] section that oslo.config would
silently ignore; it writes nothing (no journal, no socket directory).
"""

import os
import stat

from oslo_config import cfg
import pytest

from faultdriver import conf
from faultdriver import confcheck
from faultdriver import exception
from tests.unit import badinput

UUID = '3f2504e0-4f89-41d3-9a0c-0305e82c3301'


def write(tmp_path, content, name='nova.conf'):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding='utf-8')
    return path


def section(**options):
    return '[DEFAULT]\ndebug = true\n\n[fault_injection]\n' + ''.join(
        '%s = %s\n' % item for item in options.items())


# (file content, what the message must say after "<file>: ")
REFUSED = [
    (b'\x7fELF\x02\x01\x01\x00\x00' + bytes(range(256)),
     'a binary file (NUL byte at 7); expected a nova.conf (INI) file'),
    (b'[fault_injection]\nrules = spawn: log("\xe9t\xe9")\n',
     'line 2 is not UTF-8 text (byte 38); expected a nova.conf (INI) file'),
    ('hello world\n', "not a nova.conf (INI) file: Failed to parse"),
    ('{"fault_injection": {"enabled": true}}\n',
     'not a nova.conf (INI) file'),
    ('[fault-injection]\nenabled = true\n', 'line 1: section '
     '[fault-injection] is not [fault_injection]; did you mean '
     '[fault_injection]? oslo.config ignores unknown sections'),
    ('[faultinjection]\nenabled = true\n', 'section [faultinjection] is '
     'not [fault_injection]'),
    ('[DEFAULT]\n[Fault_Injection]\nenabled = true\n', 'line 2: section '
     '[Fault_Injection] is not'),
    ('[fault_injections]\nenabled = true\n', 'section [fault_injections]'),
    (section(enabled='maybe'), "invalid [fault_injection] enabled: "
     "Unexpected boolean value 'maybe'"),
    (section(seed='9' * 5000), 'invalid [fault_injection] seed: expected a '
     'whole number from 0 to 18446744073709551615 in ASCII digits'),
    (section(seed='\u0663'), 'invalid [fault_injection] seed: expected a '
     'whole number'),
    (section(seed='-1'), 'invalid [fault_injection] seed'),
    (section(seed=str(2 ** 64)), 'invalid [fault_injection] seed'),
    (section(rules='spawn[instance=ABC]: off'), "invalid [fault_injection] "
     "rules: rule 'spawn[instance=ABC]: off': instance 'ABC' is not a UUID"),
    (section(rules='spawn: \u0663*crash'), "invalid [fault_injection] "
     "rules: rule 'spawn: \u0663*crash' at column 8: expected an action "
     'name'),
    (section(rules='spawn: crash(exit_code=256)'), 'expected an exit status '
     'from 1 to 255'),
    (section(rules='spawn: crash(0)'), 'signal 0 does not end the process'),
    (section(control_socket='/tmp/' + 'a' * 110 + '/c.sock'),
     '[fault_injection] control_socket /tmp/aaaa'),
    (section(control_socket='/tmp/' + 'a' * 90 + '/c.sock'),
     'is too long: the temporary path next to it'),
    (section(rules='spawn: periodic(host=nowhere)'), 'rule [spawn: '
     "periodic(host=nowhere)]: periodic(host=nowhere) needs nowhere's "
     'control socket in [fault_injection] peer_control_sockets (has: '
     'none)'),
    (section(peer_control_sockets='src:src.sock'), '[fault_injection] '
     'peer_control_sockets src:src.sock: expected '
     'host:/absolute/path/of/its/control_socket'),
]


@pytest.mark.parametrize('content, problem', REFUSED,
                         ids=[str(i) for i in range(len(REFUSED))])
def test_validate_refuses_naming_the_file(capsys, tmp_path, content,
                                          problem):
    path = write(tmp_path, content)
    message = badinput.refused(capsys, 'validate', path, root=tmp_path)
    assert message.startswith('%s: ' % path)
    assert problem in message


@pytest.mark.parametrize('make, problem', [
    (lambda tmp: tmp / 'missing.conf', 'cannot read: No such file'),
    (lambda tmp: tmp, 'is a directory; expected a nova.conf file'),
    (lambda tmp: tmp / 'no' / 'such' / 'dir', 'cannot read: No such file'),
])
def test_validate_refuses_what_is_not_a_file(capsys, tmp_path, make,
                                             problem):
    path = make(tmp_path)
    message = badinput.refused(capsys, 'validate', path, root=tmp_path)
    assert message == '%s: %s' % (path, problem) or (
        message.startswith('%s: ' % path) and problem in message)


def test_validate_refuses_a_fifo_without_blocking(capsys, tmp_path):
    path = tmp_path / 'fifo.conf'
    os.mkfifo(path)
    message = badinput.refused(capsys, 'validate', path)
    assert message == '%s: not a regular file' % path


def test_journal_and_socket_paths_are_checked_without_creating_them(
        capsys, tmp_path):
    shared = tmp_path / 'shared'
    shared.mkdir()
    shared.chmod(0o777)           # no sticky bit: anyone can replace it
    path = write(tmp_path, section(
        journal_path=tmp_path / 'j' / 'journal.jsonl',
        control_socket=shared / 'sub' / 'c.sock'))
    message = badinput.refused(capsys, 'validate', path, root=tmp_path)
    assert message == (
        '%s: [fault_injection] control_socket %s: directory %s is writable '
        'by everyone (mode 777): they could replace the socket; use a '
        "directory only nova-compute's user can write"
        % (path, shared / 'sub' / 'c.sock', shared))
    assert not (tmp_path / 'j').exists()


def test_sticky_and_symlinked_socket_directories_are_warned_about(
        capsys, tmp_path):
    sticky = tmp_path / 'sticky'
    sticky.mkdir()
    sticky.chmod(0o1777)
    real = tmp_path / 'real'
    real.mkdir(mode=0o700)
    (tmp_path / 'link').symlink_to(real)
    for directory, warning in ((sticky, 'a directory others can write '
                                '(mode 1777)'),
                               (tmp_path / 'link', 'is reached through a '
                                'symbolic link (%s is %s)' % (
                                    tmp_path / 'link', real))):
        path = write(tmp_path, section(control_socket=directory / 'c.sock',
                                       rules='spawn: off'))
        code, out, err = badinput.cli(capsys, 'validate', path, '-f',
                                      'value')
        assert code == 0, err
        assert out == '%s spawn: off\n' % path
        assert '%s: warning: ' % path in err and warning in err
        assert not (directory / 'c.sock').exists()


def test_a_good_file_passes_with_its_rules(capsys, tmp_path):
    path = write(tmp_path, section(
        enabled='true', seed='18446744073709551615',
        journal_path=tmp_path / 'journal.jsonl',
        rules='spawn[instance=%s]: 1000000000*crash(TERM, 1)' % UUID))
    code, out, err = badinput.cli(capsys, 'validate', path, '-f', 'value')
    assert code == 0, err
    assert out == '%s spawn[instance=%s]: 1000000000*crash(TERM, 1)\n' % (
        path, UUID)
    assert not (tmp_path / 'journal.jsonl').exists()


def test_another_hosts_periodic_passes_with_its_socket_or_own_name(
        capsys, tmp_path):
    path = write(tmp_path, '[DEFAULT]\nhost = dest\n' + section(
        peer_control_sockets='src:/run/fd/src.sock',
        rules='spawn: 1*periodic(host=src) -> 1*periodic(host=dest)')[
            len('[DEFAULT]\ndebug = true\n'):])
    code, out, err = badinput.cli(capsys, 'validate', path, '-f', 'value')
    assert code == 0, err
    assert 'periodic(host=src)' in out


def test_an_argument_without_colon_is_a_file_not_a_rule(
        capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    message = badinput.refused(capsys, 'validate', 'nova-cpu.conf')
    assert message == 'nova-cpu.conf: cannot read: No such file or directory'


# -- the driver at start makes the same checks -----------------------------

def group_of(tmp_path, **options):
    config = cfg.ConfigOpts()
    conf.register_opts(config)
    config([], default_config_files=[str(write(tmp_path, section(
        **options)))])
    return config.fault_injection


@pytest.mark.parametrize('options, problem', [
    ({'enabled': 'maybe'}, 'invalid [fault_injection] enabled'),
    ({'seed': '9' * 5000}, 'invalid [fault_injection] seed'),
    ({'journal_path': '{tmp}'}, 'journal_path {tmp} is a directory'),
    ({'control_socket': '/' + 'x' * 120}, 'control_socket /xxx'),
    ({'rules': 'spawn: periodic(host=src)'}, 'peer_control_sockets'),
])
def test_driver_start_checks_are_the_validate_checks(tmp_path, options,
                                                     problem):
    options = {k: v.format(tmp=tmp_path) for k, v in options.items()}
    with pytest.raises(exception.ConfigError) as caught:
        confcheck.check(group_of(tmp_path, **options))
    assert problem.format(tmp=tmp_path) in str(caught.value)


@pytest.mark.skipif(os.geteuid() == 0, reason='root may write anywhere')
def test_driver_start_refuses_an_unwritable_journal(tmp_path):
    locked = tmp_path / 'locked'
    locked.mkdir()
    locked.chmod(stat.S_IRUSR | stat.S_IXUSR)
    with pytest.raises(exception.ConfigError, match='journal_path'):
        confcheck.check(group_of(tmp_path,
                                 journal_path=locked / 'journal'))
