#!/bin/bash
# Install the Debian packages the process tier starts by hand (MariaDB and
# RabbitMQ; OpenSSH's server for the cloud transport's tests, which start
# a key-only sshd on 127.0.0.1), if they are missing; with the argument "libvirt", also what
# the libvirt tier runs (libvirtd, QEMU, qemu-img) and what building
# libvirt-python needs (libvirt-dev, pkg-config).  No service is started
# and none is enabled: the tiers run their own daemons, on loopback, with
# temporary data (the packaged libvirt "default" network is not started).
set -euo pipefail
# One install at a time (CI starts one early, in the background: a later
# call waits for it, then finds the packages there).
exec 9>/tmp/faultdriver-install-deps.lock
flock 9
PACKAGES=(mariadb-server mariadb-client rabbitmq-server openssh-server
          openssh-client)
if [ "${1:-}" = libvirt ]; then
    PACKAGES+=(libvirt-daemon-system qemu-system-x86 qemu-utils
               libvirt-dev pkg-config mount iproute2)
fi
missing=()
for pkg in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" \
        || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "process tier: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# Do not start the packaged services (no init system needed or wanted):
# a policy-rc.d answering 101 ("action forbidden") for the install keeps
# the packages' postinst from starting MariaDB, RabbitMQ or a system
# sshd (the stack starts its own, by hand, on loopback).  One already
# there is the machine's and is left alone.
POLICY=/usr/sbin/policy-rc.d
if [ ! -e "$POLICY" ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$POLICY" >/dev/null
    $SUDO chmod 755 "$POLICY"
    trap '$SUDO rm -f "$POLICY"' EXIT
fi
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null \
    || { $SUDO apt-get update -q >/dev/null &&
         $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null; }
