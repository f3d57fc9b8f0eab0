#!/bin/bash
# Install the Debian packages the process tier starts by hand (MariaDB and
# RabbitMQ), if they are missing.  Their services are not started: the
# process tier runs its own servers, on 127.0.0.1, with temporary data.
set -euo pipefail
PACKAGES=(mariadb-server mariadb-client rabbitmq-server)
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
# Do not start the packaged services (no init system needed or wanted).
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null \
    || { $SUDO apt-get update -q >/dev/null &&
         $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null; }
