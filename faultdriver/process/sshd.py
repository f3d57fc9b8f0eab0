"""Key-only OpenSSH servers on 127.0.0.1, started by hand.

What the standing cloud (``faultdriver stack up``: one per compute) and
the cloud transport's tests (``tests/sshd.py``) both start: never a
system service, its own config, host key, authorized_keys and
known_hosts in a private directory; password and keyboard-interactive
logins off; stream-local forwarding allowed (the cloud tier forwards
each compute's control socket), optionally forbidden on some ports.
"""

import os
import pwd
import subprocess
import typing

SSHD = '/usr/sbin/sshd'


def keygen(path: str) -> str:
    """A new ed25519 key pair at ``path`` (and ``.pub``); the public
    key's line."""
    subprocess.run(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C',
                    os.path.basename(path), '-f', path], check=True,
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    with open(path + '.pub') as f:
        return f.read().strip()


def user() -> str:
    """Who logs in: whoever runs the servers (an sshd started by a user
    other than root can only let that user in)."""
    return pwd.getpwuid(os.getuid()).pw_name


def known_host(port: int, host_key: str) -> str:
    """A known_hosts line for ``127.0.0.1:port``."""
    return '[127.0.0.1]:%d %s\n' % (port, ' '.join(host_key.split()[:2]))


def server_config(ports: typing.Sequence[int], host_key: str,
                  authorized_keys: str, pid_file: str,
                  no_forwarding: typing.Sequence[int] = ()) -> str:
    """sshd_config's text: key-only, on 127.0.0.1 ``ports``; stream-local
    forwarding allowed except on ``no_forwarding``."""
    lines = ['Port %d' % port for port in ports] + [
        'ListenAddress 127.0.0.1',
        'HostKey %s' % host_key,
        'PidFile %s' % pid_file,
        'AuthorizedKeysFile %s' % authorized_keys,
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'PubkeyAuthentication yes',
        'PermitRootLogin prohibit-password',
        'StrictModes no', 'UsePAM no', 'PrintMotd no',
        'AllowStreamLocalForwarding yes']
    for port in no_forwarding:
        lines += ['Match LocalPort %d' % port,
                  '    AllowStreamLocalForwarding no']
    return '\n'.join(lines) + '\n'


def client_entry(alias: str, port: int, login: str, identity: str,
                 known_hosts: str) -> str:
    """One ``Host`` block of an ssh_config."""
    return '\n    '.join([
        'Host %s' % alias, 'HostName 127.0.0.1',
        'Port %d' % port, 'User %s' % login,
        'IdentityFile %s' % identity,
        'IdentitiesOnly yes',
        'UserKnownHostsFile %s' % known_hosts,
        'GlobalKnownHostsFile /dev/null',
        'StrictHostKeyChecking yes']) + '\n'


def command(config: str) -> list[str]:
    """The sshd command line (in the foreground, logging to stderr)."""
    if os.geteuid() == 0:
        # sshd run by root separates privileges into this empty
        # directory, which the Debian service makes at start.
        os.makedirs('/run/sshd', mode=0o755, exist_ok=True)
    return [SSHD, '-D', '-e', '-f', config]
