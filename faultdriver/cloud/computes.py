"""The profile's computes, reached: one SSH transport per host, its
control socket forwarded, the host helper and its service driver.

Only the hosts the profile names are ever reached (a host outside it is
never touched).  Every refusal on the way -- host down, key refused,
socket absent -- is the transport's HostRefused naming the host.
"""

import typing

from faultdriver.cloud import audit as audit_module
from faultdriver.cloud import errors
from faultdriver.cloud import helper as helper_module
from faultdriver.cloud import profile as profile_module
from faultdriver.cloud import services
from faultdriver.cloud import transport
from faultdriver.control import client as control_client


class Computes:
    """The profile's hosts by alias; a context manager (closing ends
    every SSH master and removes the forwarded sockets)."""

    def __init__(self, profile: profile_module.Profile,
                 audit: typing.Optional[audit_module.AuditLog] = None
                 ) -> None:
        self.profile = profile
        self.audit = audit
        self._transports: typing.Dict[str, transport.Transport] = {}

    def __enter__(self) -> 'Computes':
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        for each in self._transports.values():
            each.close()
        self._transports = {}

    def host(self, alias: str) -> profile_module.HostProfile:
        return self.profile.hosts[alias]

    def transport(self, alias: str) -> transport.Transport:
        """The open SSH transport to ``alias``'s host (one per SSH
        target: two hosts behind one machine share it)."""
        ssh = self.host(alias).ssh
        if ssh not in self._transports:
            reached = transport.Transport(transport.SshTarget(
                ssh, self.profile.ssh_config))
            self._transports[ssh] = reached.__enter__()
        return self._transports[ssh]

    def control(self, alias: str,
                timeout: typing.Optional[float] = None
                ) -> control_client.Client:
        """A control client of ``alias``'s FaultDriver, through the
        forwarded socket."""
        local = self.transport(alias).control_socket(self.host(alias).socket)
        if timeout is None:
            return control_client.Client(local)
        return control_client.Client(local, timeout=timeout)

    def helper(self, alias: str) -> helper_module.HostHelper:
        return helper_module.HostHelper(self.transport(alias))

    def service(self, alias: str) -> services.ServiceDriver:
        """``alias``'s nova-compute as its manager's unit, its changes
        written to the run's audit log."""
        host = self.host(alias)
        driver = services.DRIVERS.get(host.manager)
        if driver is None:
            raise errors.HostRefused(
                host.ssh, 'no service driver for manager %s' % host.manager,
                'expected one of %s' % ', '.join(sorted(services.DRIVERS)))
        if self.audit is None:
            raise ValueError('a service change needs the run\'s audit log')
        return driver(self.helper(alias), host.unit, self.audit)

    def put_file(self, alias: str, path: str, data: bytes) -> None:
        """Write ``data`` to ``path`` on ``alias``'s host (atomically:
        a temporary file renamed into place), mode 0600, owned by the
        owner of its directory: an SSH user who is root writes a file
        nova-compute's user (devstack's ``stack``, the owner of its
        state directory) must read (seen on a real devstack: a root-owned
        start-rules file stopped nova-compute's start)."""
        tmp = path + '.fdtmp'
        done = self.transport(alias).run(
            ['sh', '-c', 'umask 077 && cat > "$1" && '
             '{ [ "$(id -u)" != 0 ] || '
             'chown "$(stat -c %u:%g "$(dirname "$2")")" "$1"; } && '
             'mv -f "$1" "$2"',
             'sh', tmp, path], input=data)
        if done.returncode != 0:
            raise errors.HostRefused(
                self.host(alias).ssh, 'cannot write %s' % path,
                done.stderr.decode(errors='replace').strip())

    def remove_file(self, alias: str, path: str) -> bool:
        """Remove ``path`` on ``alias``'s host; whether it was there."""
        done = self.transport(alias).run(
            ['sh', '-c', 'test -e "$1" && rm -f "$1"', 'sh', path])
        return done.returncode == 0

    def exists(self, alias: str, path: str) -> bool:
        return self.transport(alias).run(['test', '-e', path]
                                         ).returncode == 0
