#!/bin/bash
#
# tools/devstack-node.sh: devstack nodes in systemd-nspawn containers, for
# a real stack.sh with faultdriver's plugin (issue 44).  Never run in CI.
#
#   tools/devstack-node.sh prepare   root file system, checkouts, local.conf
#   tools/devstack-node.sh boot      boot the container (systemd as PID 1)
#   tools/devstack-node.sh stack     run devstack's stack.sh in it
#   tools/devstack-node.sh run CMD   run CMD in it as the stack user
#   tools/devstack-node.sh halt      stop the container
#
# FAULTDRIVER_DEVSTACK_LAYOUT picks the cloud:
#   fake     one node (devstack0a), two fake computes under faultdriver
#            over fake_numa: the cheapest form the issue names;
#   libvirt  two nodes, devstack0a (controller and compute) and devstack0b
#            (compute), libvirt/QEMU (TCG) under faultdriver, live
#            migration over qemu+ssh between them.
# FAULTDRIVER_DEVSTACK_NODE names the node a command acts on (devstack0a).
#
# Why containers: devstack runs every service as a systemd unit, and this
# machine kind has no systemd as PID 1; systemd does boot as PID 1 of an
# nspawn container here (`systemctl is-system-running` says running).
#
# Nothing is cloned from a git server (none is reachable): devstack and
# openstack/requirements come from local git snapshots (DEVSTACK_GIT,
# REQUIREMENTS_GIT), the 2026.2 services from their sdists on the package
# index, made git repositories tagged with their version (pbr then gives
# that version), faultdriver from this checkout; ERROR_ON_CLONE=True makes
# stack.sh stop rather than reach out.  The requirements checkout is
# synthesised: the snapshot's upper-constraints.txt with this project's
# constraints.txt merged over it, committed on top (recorded as such).
#
# Network: every node has its own namespace on one bridge of the host
# (10.199.0.1 on the host, nodes from 10.199.0.11), masqueraded so that
# apt and pip reach the package indexes; it opens no port on the host.
# The nodes share one SSH key (root and stack), which the host's root
# may also use: libvirt's qemu+ssh between nodes and the cloud tier's
# runner on the host.

set -o errexit -o nounset -o pipefail

HERE=$(cd "$(dirname "$0")/.." && pwd)
WORK=${FAULTDRIVER_DEVSTACK_DIR:-/var/lib/faultdriver-devstack}
NAME=${FAULTDRIVER_DEVSTACK_NODE:-devstack0a}
LAYOUT=${FAULTDRIVER_DEVSTACK_LAYOUT:-fake}
ROOTFS=$WORK/$NAME
BASE=$WORK/base
DEVSTACK_GIT=${DEVSTACK_GIT:-/work/.mirror/openstack+devstack/repo}
REQUIREMENTS_GIT=${REQUIREMENTS_GIT:-/work/.mirror/openstack+requirements/repo}
SUITE=bookworm
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
HOST_ADDR=10.199.0.1
BRIDGE=fdds-br
# The nodes of a layout, the first its controller, and their addresses.
case $LAYOUT in
    fake) NODES=(devstack0a) ;;
    libvirt) NODES=(devstack0a devstack0b) ;;
    *) echo "FAULTDRIVER_DEVSTACK_LAYOUT: fake or libvirt, not $LAYOUT" >&2
       exit 2 ;;
esac
NODE_ADDR=""
for (( i = 0; i < ${#NODES[@]}; i++ )); do
    if [[ ${NODES[i]} == "$NAME" ]]; then
        NODE_ADDR=10.199.0.$(( 11 + i ))
        NODE_INDEX=$i
    fi
done
if [[ -z $NODE_ADDR ]]; then
    echo "FAULTDRIVER_DEVSTACK_NODE: one of ${NODES[*]}, not $NAME" >&2
    exit 2
fi
# The 2026.2 series: Nova 34.0.0 and the services released with it.
SERVICES="nova==34.0.0 keystone==30.0.0 openstack-placement==16.0.0
glance==33.0.0 neutron==29.0.0"
PACKAGES=systemd,systemd-sysv,dbus,sudo,git,python3,python3-venv,iproute2,ca-certificates,lsb-release,procps,iptables,curl,uuid-runtime,openssh-server,openssh-client

function in_root {
    chroot "$ROOTFS" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

function leader_pid {
    cat "$WORK/$NAME.pid"
}

function in_node {
    nsenter -t "$(leader_pid)" -a "$@"
}

# A service's sdist unpacked as a git repository tagged with its version.
function service_checkout {
    local spec=$1 name=${1%%==*} version=${1##*==} dest sdist
    dest=$ROOTFS/opt/stack/${name#openstack-}
    if [[ -d $dest/.git ]]; then
        return 0
    fi
    mkdir -p "$WORK/sdists"
    python3 -m pip download -q --no-deps --no-binary :all: \
        -d "$WORK/sdists" "$spec"
    sdist=$(ls "$WORK/sdists/"*"${version}".tar.gz | grep -i \
        "/${name//-/[-_]}-${version}.tar.gz")
    mkdir -p "$dest"
    tar -xzf "$sdist" -C "$dest" --strip-components=1
    git -C "$dest" init -q -b master
    git -C "$dest" add -A
    git -C "$dest" -c user.name=faultdriver -c user.email=faultdriver@localhost \
        commit -q -m "$spec from its sdist (package index)"
    git -C "$dest" tag "$version"
}

function prepare {
    mkdir -p "$WORK"
    # One debootstrap for every node: each copies the base.
    if [[ ! -x $BASE/usr/bin/systemctl ]]; then
        debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" \
            "$BASE" "$MIRROR"
    fi
    if [[ ! -x $ROOTFS/usr/bin/systemctl ]]; then
        cp -a "$BASE" "$ROOTFS"
    fi
    echo "$NAME" > "$ROOTFS/etc/hostname"
    {
        echo '127.0.0.1 localhost'
        for (( i = 0; i < ${#NODES[@]}; i++ )); do
            echo "10.199.0.$(( 11 + i )) ${NODES[i]}"
        done
    } > "$ROOTFS/etc/hosts"
    cp /etc/resolv.conf "$ROOTFS/etc/resolv.conf"
    # The host's own CAs (a TLS-intercepting proxy to the package indexes
    # signs with one): apt and pip inside must trust what the host trusts.
    if compgen -G '/usr/local/share/ca-certificates/*.crt' > /dev/null; then
        mkdir -p "$ROOTFS/usr/local/share/ca-certificates"
        cp /usr/local/share/ca-certificates/*.crt \
            "$ROOTFS/usr/local/share/ca-certificates/"
        in_root update-ca-certificates > /dev/null
    fi
    if ! in_root id stack > /dev/null 2>&1; then
        in_root useradd -m -d /opt/stack -s /bin/bash stack
    fi
    echo 'stack ALL=(ALL) NOPASSWD: ALL' > "$ROOTFS/etc/sudoers.d/stack"
    mkdir -p "$ROOTFS/opt/stack/images"
    # devstack restarts iscsid on every compute (lib/nova install_nova),
    # and iscsid cannot start on a kernel without iSCSI: a unit that does
    # nothing takes its place (fake computes never attach over iSCSI; a
    # libvirt node here has no LIO target either).
    mkdir -p "$ROOTFS/etc/systemd/system/iscsid.service.d"
    printf '%s\n' '[Service]' 'Type=oneshot' 'PIDFile=' 'ExecStartPre=' \
        'ExecStart=' 'ExecStart=/bin/true' 'RemainAfterExit=yes' \
        > "$ROOTFS/etc/systemd/system/iscsid.service.d/faultdriver.conf"

    if [[ ! -d $ROOTFS/opt/stack/devstack/.git ]]; then
        git clone -q "$DEVSTACK_GIT" "$ROOTFS/opt/stack/devstack"
    fi
    if [[ ! -d $ROOTFS/opt/stack/requirements/.git ]]; then
        git clone -q "$REQUIREMENTS_GIT" "$ROOTFS/opt/stack/requirements"
        python3 "$HERE/tools/merge-constraints.py" \
            "$ROOTFS/opt/stack/requirements/upper-constraints.txt" \
            "$HERE/constraints.txt"
        git -C "$ROOTFS/opt/stack/requirements" -c user.name=faultdriver \
            -c user.email=faultdriver@localhost commit -q -am \
            "faultdriver's constraints.txt merged over upper-constraints"
    fi
    local spec
    for spec in $SERVICES; do
        service_checkout "$spec"
    done
    rm -rf "$ROOTFS/opt/stack/faultdriver"
    git clone -q "$HERE" "$ROOTFS/opt/stack/faultdriver"
    PYTHONPATH=$HERE python3 -c 'import sys
from faultdriver.process import guest_image
sys.stdout.buffer.write(guest_image.disk(1 << 20))' \
        > "$ROOTFS/opt/stack/images/faultdriver-guest.img"
    install -m 0644 "$(local_conf)" "$ROOTFS/opt/stack/devstack/local.conf"
    if [[ $LAYOUT == libvirt ]]; then
        install -m 0755 "$HERE/tools/devstack/local.sh" \
            "$ROOTFS/opt/stack/devstack/local.sh"
    fi
    sed -i "s/^HOST_IP=.*/HOST_IP=$NODE_ADDR/" \
        "$ROOTFS/opt/stack/devstack/local.conf"
    share_ssh_key
    in_root chown -R stack:stack /opt/stack
    echo "prepared $ROOTFS"
}

# The node's local.conf: the layout's, the controller's or a compute's.
function local_conf {
    case $LAYOUT in
        fake) echo "$HERE/tools/devstack/local.conf" ;;
        libvirt)
            if (( NODE_INDEX == 0 )); then
                echo "$HERE/tools/devstack/libvirt-controller.conf"
            else
                echo "$HERE/tools/devstack/libvirt-compute.conf"
            fi ;;
    esac
}

# One key pair for every node's root and stack (libvirt's qemu+ssh from
# one node's libvirtd to stack@ the other), also authorised for the
# host's root key (the cloud tier's runner on the host).
function share_ssh_key {
    local key=$WORK/ssh/id_ed25519 home user
    if [[ ! -f $key ]]; then
        mkdir -p "$WORK/ssh"
        ssh-keygen -q -t ed25519 -N '' -C faultdriver-devstack -f "$key"
    fi
    for home in root opt/stack; do
        mkdir -p "$ROOTFS/$home/.ssh"
        install -m 0600 "$key" "$ROOTFS/$home/.ssh/id_ed25519"
        install -m 0644 "$key.pub" "$ROOTFS/$home/.ssh/id_ed25519.pub"
        cat "$key.pub" /root/.ssh/id_*.pub 2> /dev/null \
            > "$ROOTFS/$home/.ssh/authorized_keys" || true
        chmod 0600 "$ROOTFS/$home/.ssh/authorized_keys"
    done
    in_root chown -R root:root /root/.ssh
    printf '%s\n' 'Host devstack0*' '    StrictHostKeyChecking accept-new' \
        > "$ROOTFS/etc/ssh/ssh_config.d/faultdriver.conf"
}

function bridge_up {
    if ! ip link show "$BRIDGE" > /dev/null 2>&1; then
        ip link add "$BRIDGE" type bridge
    fi
    ip addr replace "$HOST_ADDR/24" dev "$BRIDGE"
    ip link set "$BRIDGE" up
}

function boot {
    sysctl -q -w net.ipv4.ip_forward=1
    bridge_up
    SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=0 systemd-nspawn -q -D "$ROOTFS" -b \
        -M "$NAME" --register=no --keep-unit --network-bridge="$BRIDGE" \
        --console=pipe > "$WORK/$NAME.console" 2>&1 &
    local pid i
    for (( i = 0; i < 60; i++ )); do
        pid=$(pgrep -P $! -f /usr/lib/systemd/systemd || true)
        if [[ -n $pid ]]; then
            break
        fi
        sleep 1
    done
    echo "$pid" > "$WORK/$NAME.pid"
    iptables -t nat -C POSTROUTING -s "$HOST_ADDR/24" -j MASQUERADE \
        2> /dev/null || iptables -t nat -A POSTROUTING \
        -s "$HOST_ADDR/24" -j MASQUERADE
    in_node ip addr replace "$NODE_ADDR/24" dev host0
    in_node ip link set host0 up
    in_node ip route replace default via "$HOST_ADDR"
    for (( i = 0; i < 60; i++ )); do
        case $(in_node systemctl is-system-running 2>/dev/null || true) in
            running | degraded) echo "booted $NAME (PID $pid)"; return 0 ;;
        esac
        sleep 1
    done
    echo "$NAME did not finish booting" >&2
    return 1
}

function run {
    in_node su - stack -c "$*"
}

case ${1:-} in
    prepare) prepare ;;
    boot) boot ;;
    stack) run 'cd devstack && ./stack.sh' ;;
    run) shift; run "$@" ;;
    # SIGTERM to nspawn halts the container's systemd cleanly.
    halt) kill "$(ps -o ppid= -p "$(leader_pid)")" ;;
    *) sed -n '3,10p' "$0"; exit 2 ;;
esac
