#!/bin/bash
#
# devstack/plugin.sh: run nova-compute on faultdriver.
#
# On every node with n-cpu enabled:
#   stack install      install faultdriver into Nova's Python environment
#   stack post-config  [DEFAULT] compute_driver = faultdriver.FaultDriver and
#                      the [fault_injection] options from devstack/settings,
#                      then `faultdriver validate`; a bad rule fails the stack
#   stack extra        validate the nova-cpu.conf nova-compute was started with
#                      and write the cloud profile of this node's computes
#   clean              remove the link made in nova's checkout at install
#
# With VIRT_DRIVER=fake, each of the NUMBER_FAKE_NOVA_COMPUTE computes
# gets its own control socket, journal and start-rules file in the
# nova-fake.conf-N devstack gives it (else the second would stop with
# SocketInUse on the first one's socket).
#
# On every node with a Nova service, FAULTDRIVER_TEST_TIMINGS=True writes
# devstack/test-timings.conf (the process tier's timings) at post-config.
#
# Options go to $NOVA_CONF, not $NOVA_CPU_CONF: devstack rebuilds
# $NOVA_CPU_CONF from $NOVA_CONF when it starts n-cpu, after post-config
# (start_nova_compute in lib/nova), as it does for the compute_driver its
# hypervisor plugins set.  doc/source/install.rst, "On devstack", has the
# local.conf.

_XTRACE_FAULTDRIVER=$(set +o | grep xtrace)
set +o xtrace

# The interpreter nova-compute runs with: its console script's shebang.
function _faultdriver_python {
    local line=""
    if [[ -r $NOVA_BIN_DIR/nova-compute ]]; then
        read -r line < "$NOVA_BIN_DIR/nova-compute" || true
    fi
    if [[ $line == '#!'* ]]; then
        echo "${line#\#!}"
    else
        echo "${PYTHON:-python3}"
    fi
}

# Whether Nova's loader can find nova.virt.faultdriver (without importing it).
function _faultdriver_nova_finds_module {
    $(_faultdriver_python) -c 'import importlib.util, sys
sys.exit(importlib.util.find_spec("nova.virt.faultdriver") is None)'
}

# Nova loads compute drivers only from the nova.virt package.  devstack
# installs Nova editable from its checkout, so nova.virt is that checkout's
# directory and the nova/virt/faultdriver module pip installed into
# site-packages is not part of it: link the module into the checkout, and
# keep it out of `git status` so it never ends up in a Nova change.
function _faultdriver_link_into_nova {
    if _faultdriver_nova_finds_module; then
        return 0
    fi
    local virt_dir link prefix
    virt_dir=$($(_faultdriver_python) -c 'import importlib.util, os
print(os.path.dirname(importlib.util.find_spec("nova.virt").origin))') \
        || die $LINENO "cannot find Nova's nova.virt package"
    link=$virt_dir/faultdriver
    ln -sfn "$FAULTDRIVER_DIR/nova/virt/faultdriver" "$link"
    if prefix=$(git -C "$virt_dir" rev-parse --show-prefix 2>/dev/null); then
        (
            cd "$virt_dir"
            local exclude
            exclude=$(git rev-parse --git-path info/exclude)
            mkdir -p "$(dirname "$exclude")"
            if ! grep -qxF "/${prefix}faultdriver" "$exclude" 2>/dev/null; then
                echo "/${prefix}faultdriver" >> "$exclude"
            fi
        )
    fi
    echo "Linked $link -> $FAULTDRIVER_DIR/nova/virt/faultdriver"
    _faultdriver_nova_finds_module \
        || die $LINENO "nova.virt.faultdriver is not importable after linking $link"
}

# A faultdriver wheel installs nova/virt/faultdriver into site-packages as
# plain directories.  Where Nova is installed editable (devstack), that
# `nova` directory without __init__.py shadows Nova's checkout: Python
# takes site-packages/nova for a namespace package before setuptools'
# editable finder is asked, and `from nova.virt import arch` fails (seen
# in a real stack.sh: nova-manage died at import).  Remove it; the link
# into Nova's checkout is how Nova finds the module there.
function _faultdriver_unshadow_nova {
    local site
    site=$($(_faultdriver_python) -c 'import sysconfig
print(sysconfig.get_paths()["purelib"])') \
        || die $LINENO "cannot find nova-compute's site-packages"
    if [[ -d $site/nova && ! -e $site/nova/__init__.py ]]; then
        rm -rf "$site/nova/virt/faultdriver"
        rmdir "$site/nova/virt" "$site/nova" 2> /dev/null || true
        echo "Removed faultdriver's nova/virt/faultdriver from $site:" \
            "it shadowed Nova's editable checkout"
    fi
}

function install_faultdriver {
    # A normal install, not setup_develop: an editable install leaves
    # nova/virt/faultdriver outside every nova.virt package.
    local extras=""
    if [[ $VIRT_DRIVER == libvirt ]]; then
        extras=libvirt
    fi
    setup_install "$FAULTDRIVER_DIR" $extras
    _faultdriver_unshadow_nova
    _faultdriver_link_into_nova
}

# Print the rules in $1 one per line, trimmed.  Rules are separated by
# newlines or by ';' outside a double-quoted argument.
function _faultdriver_split_rules {
    local text=$1 rule="" char i quoted=0 escaped=0
    for (( i = 0; i <= ${#text}; i++ )); do
        char=${text:i:1}
        if (( escaped )); then
            escaped=0
        elif [[ $char == \\ ]] && (( quoted )); then
            escaped=1
        elif [[ $char == '"' ]]; then
            quoted=$(( !quoted ))
        elif [[ -z $char || $char == $'\n' ]] \
                || { [[ $char == ';' ]] && (( !quoted )); }; then
            rule=${rule#"${rule%%[![:space:]]*}"}
            rule=${rule%"${rule##*[![:space:]]}"}
            if [[ -n $rule ]]; then
                printf '%s\n' "$rule"
            fi
            rule=""
            quoted=0
            continue
        fi
        rule+=$char
    done
}

# iniset the option, or remove it when the value is empty.
function _faultdriver_iniset_or_delete {
    if [[ -n $4 ]]; then
        iniset "$1" "$2" "$3" "$4"
    else
        inidelete "$1" "$2" "$3"
    fi
}

# Run `faultdriver validate` on $1; die with its last line if it fails.
function _faultdriver_validate {
    local conf=$1 output
    if ! output=$("$NOVA_BIN_DIR/faultdriver" validate "$conf" 2>&1); then
        echo "$output"
        die $LINENO "faultdriver validate $conf: $(tail -n 1 <<< "$output")"
    fi
    echo "$output"
}

function configure_faultdriver {
    local conf=$NOVA_CONF inner=$FAULTDRIVER_INNER_DRIVER rules i path
    if [[ -z $inner ]]; then
        # Wrap the driver devstack configured for VIRT_DRIVER (kept when
        # post-config runs again on a file that is already ours).
        inner=$(iniget "$conf" DEFAULT compute_driver)
        if [[ $inner == faultdriver.FaultDriver ]]; then
            inner=$(iniget "$conf" fault_injection inner_driver)
        fi
    fi
    if [[ -z $inner ]]; then
        die $LINENO "FAULTDRIVER_INNER_DRIVER is empty and $conf has no" \
            "compute_driver to wrap; set it to a driver such as" \
            "libvirt.LibvirtDriver (faultdriver drivers lists the names)"
    fi

    iniset "$conf" DEFAULT compute_driver faultdriver.FaultDriver
    iniset "$conf" fault_injection inner_driver "$inner"
    iniset "$conf" fault_injection enabled "$FAULTDRIVER_ENABLED"
    _faultdriver_iniset_or_delete "$conf" fault_injection tracker_patches \
        "$FAULTDRIVER_TRACKER_PATCHES"
    _faultdriver_iniset_or_delete "$conf" fault_injection journal_path \
        "$FAULTDRIVER_JOURNAL_PATH"
    _faultdriver_iniset_or_delete "$conf" fault_injection control_socket \
        "$FAULTDRIVER_CONTROL_SOCKET"
    _faultdriver_iniset_or_delete "$conf" fault_injection start_rules_path \
        "$FAULTDRIVER_START_RULES_PATH"
    for path in "$FAULTDRIVER_JOURNAL_PATH" "$FAULTDRIVER_CONTROL_SOCKET" \
            "$FAULTDRIVER_START_RULES_PATH"; do
        if [[ -n $path ]]; then
            mkdir -p "$(dirname "$path")"
        fi
    done

    # rules is a multi-valued option: one `rules = ...` line per rule.
    # iniadd_literal, because iniadd/iniset_multiline split values at
    # spaces; it inserts right below the section header, so add the last
    # rule first, and double backslashes, which its sed would consume.
    inidelete "$conf" fault_injection rules
    mapfile -t rules < <(_faultdriver_split_rules "$FAULTDRIVER_RULES")
    for (( i = ${#rules[@]} - 1; i >= 0; i-- )); do
        iniadd_literal "$conf" fault_injection rules "${rules[i]//\\/\\\\}"
    done

    configure_faultdriver_fake_computes
    _faultdriver_validate "$conf"
}

# The host names devstack gives its fake computes (start_nova_compute in
# lib/nova): ${HOSTNAME}1 .. ${HOSTNAME}N.
function _faultdriver_fake_hosts {
    local i
    for (( i = 1; i <= ${NUMBER_FAKE_NOVA_COMPUTE:-1}; i++ )); do
        echo "${HOSTNAME}${i}"
    done
}

# $1 made per compute $2: /a/faultdriver.sock -> /a/faultdriver-HOST.sock
function _faultdriver_per_compute {
    local path=$1 host=$2 dir base
    if [[ -z $path ]]; then
        return 0
    fi
    dir=$(dirname "$path")
    base=$(basename "$path")
    if [[ $base == ?*.* ]]; then
        echo "$dir/${base%.*}-$host.${base##*.}"
    else
        echo "$dir/$base-$host"
    fi
}

# devstack starts fake compute N with --config-file $NOVA_CPU_CONF
# --config-file ${NOVA_FAKE_CONF}-N and only adds [DEFAULT] host and
# state_path to the second file, keeping what is there: its own paths go
# there, and the others' sockets as its peers (periodic(host=...)).
function configure_faultdriver_fake_computes {
    if [[ $VIRT_DRIVER != fake ]]; then
        return 0
    fi
    local base=${NOVA_FAKE_CONF:-$NOVA_CONF_DIR/nova-fake.conf}
    local hosts host peer peers i
    mapfile -t hosts < <(_faultdriver_fake_hosts)
    for (( i = 0; i < ${#hosts[@]}; i++ )); do
        host=${hosts[i]}
        local fake_conf="$base-$((i + 1))"
        _faultdriver_iniset_or_delete "$fake_conf" fault_injection \
            journal_path "$(_faultdriver_per_compute \
                "$FAULTDRIVER_JOURNAL_PATH" "$host")"
        _faultdriver_iniset_or_delete "$fake_conf" fault_injection \
            control_socket "$(_faultdriver_per_compute \
                "$FAULTDRIVER_CONTROL_SOCKET" "$host")"
        _faultdriver_iniset_or_delete "$fake_conf" fault_injection \
            start_rules_path "$(_faultdriver_per_compute \
                "$FAULTDRIVER_START_RULES_PATH" "$host")"
        peers=""
        if [[ -n $FAULTDRIVER_CONTROL_SOCKET ]]; then
            for peer in "${hosts[@]}"; do
                if [[ $peer != "$host" ]]; then
                    peers+="${peers:+,}$peer:$(_faultdriver_per_compute \
                        "$FAULTDRIVER_CONTROL_SOCKET" "$peer")"
                fi
            done
        fi
        _faultdriver_iniset_or_delete "$fake_conf" fault_injection \
            peer_control_sockets "$peers"
    done
}

# The cell conductors' own files: devstack starts them without $NOVA_CONF.
function _faultdriver_nova_confs {
    local i conf
    echo "$NOVA_CONF"
    for (( i = 1; i <= ${NOVA_NUM_CELLS:-1}; i++ )); do
        conf=${NOVA_CONF_DIR:-$(dirname "$NOVA_CONF")}/nova_cell${i}.conf
        if [[ -f $conf ]]; then
            echo "$conf"
        fi
    done
}

# "section key value" for each setting of devstack/test-timings.conf.
function _faultdriver_test_timings {
    local line section="" key value
    while IFS= read -r line; do
        line=${line%%#*}
        if [[ $line =~ ^\[(.*)\] ]]; then
            section=${BASH_REMATCH[1]}
        elif [[ $line =~ ^([a-z_]+)[[:space:]]*=[[:space:]]*(.*[^[:space:]]) ]]; then
            key=${BASH_REMATCH[1]}
            value=${BASH_REMATCH[2]}
            echo "$section $key $value"
        fi
    done < "$FAULTDRIVER_DIR/devstack/test-timings.conf"
}

function configure_faultdriver_test_timings {
    local conf section key value filters
    while read -r conf; do
        while read -r section key value; do
            if [[ $section == filter_scheduler && $key == enabled_filters ]]; then
                filters=$(iniget "$conf" filter_scheduler enabled_filters)
                if [[ -z $filters ]]; then
                    filters=$value
                elif [[ ,$filters, != *,NUMATopologyFilter,* ]]; then
                    filters+=,NUMATopologyFilter
                fi
                iniset "$conf" filter_scheduler enabled_filters "$filters"
            else
                iniset "$conf" "$section" "$key" "$value"
            fi
        done < <(_faultdriver_test_timings)
    done < <(_faultdriver_nova_confs)
}

# A compute of this node in the cloud profile: alias, host, unit, then
# the paths (control socket, journal, start rules) and the nodename.
function _faultdriver_profile_host {
    local alias=$1 host=$2 unit=$3 socket=$4 journal=$5 start_rules=$6
    local nodename=$7 uri
    cat <<EOF_HOST
  $alias:
    ssh: $STACK_USER@$HOST_IP
    host: $host
    nodename: $nodename
    manager: systemd
    unit: $unit
    socket: $socket
    journal: $journal
    log: {journald: $unit}
    start_rules: $start_rules
EOF_HOST
    # A libvirt compute's guests are asked of its libvirt (virsh over
    # SSH, as the stack user, a member of the libvirt group).
    if [[ $VIRT_DRIVER == libvirt ]]; then
        uri=$(iniget "$NOVA_CPU_CONF" libvirt connection_uri)
        echo "    libvirt: {uri: '${uri:-qemu:///system}'}"
    fi
}

# The cloud profile of this node's computes (doc/source/tiers.rst, the
# cloud tier): what `faultdriver scenario run X --cloud devstack` needs
# to reach them.  On a multinode devstack each node writes its own
# computes; `faultdriver cloud init` builds one profile from the API.
function write_faultdriver_cloud_profile {
    local path=$FAULTDRIVER_CLOUD_PROFILE allowed=false
    if [[ -z $path ]]; then
        return 0
    fi
    if [[ $FAULTDRIVER_ENABLED == True ]]; then
        allowed=true
    fi
    mkdir -p "$(dirname "$path")"
    {
        echo "# Written by faultdriver's devstack plugin (stack extra) on"
        echo "# $HOSTNAME; faultdriver cloud check devstack verifies it."
        echo "format: 1"
        echo "cloud: devstack-admin"
        echo "clouds_yaml: /etc/openstack/clouds.yaml"
        echo "fault_injection_allowed: $allowed"
        echo "hosts:"
        if [[ $VIRT_DRIVER == fake ]]; then
            local hosts i alias
            mapfile -t hosts < <(_faultdriver_fake_hosts)
            for (( i = 0; i < ${#hosts[@]}; i++ )); do
                case $i in
                    0) alias=src ;;
                    1) alias=dest ;;
                    *) alias=fake$((i + 1)) ;;
                esac
                _faultdriver_profile_host "$alias" "${hosts[i]}" \
                    "devstack@n-cpu-$((i + 1))" \
                    "$(_faultdriver_per_compute \
                        "$FAULTDRIVER_CONTROL_SOCKET" "${hosts[i]}")" \
                    "$(_faultdriver_per_compute \
                        "$FAULTDRIVER_JOURNAL_PATH" "${hosts[i]}")" \
                    "$(_faultdriver_per_compute \
                        "$FAULTDRIVER_START_RULES_PATH" "${hosts[i]}")" \
                    "${hosts[i]}"
            done
        else
            local alias=$FAULTDRIVER_CLOUD_ALIAS host
            if [[ -z $alias ]]; then
                alias=dest
                if is_service_enabled n-api; then
                    alias=src
                fi
            fi
            host=$(iniget "$NOVA_CPU_CONF" DEFAULT host)
            host=${host:-$(hostname)}
            _faultdriver_profile_host "$alias" "$host" devstack@n-cpu \
                "$FAULTDRIVER_CONTROL_SOCKET" "$FAULTDRIVER_JOURNAL_PATH" \
                "$FAULTDRIVER_START_RULES_PATH" "$(hostname)"
        fi
    } > "$path.new"
    mv "$path.new" "$path"
    echo "Wrote the cloud profile $path"
}

# devstack makes each fake compute's state_path with `sudo mkdir` (root's)
# and runs the compute as $STACK_USER, so a driver that keeps state there
# (fake_numa's guests) cannot write it: seen on a real stack.sh, every
# boot failed with PermissionError on $NOVA_STATE_PATH/HOST/fake_numa.
function _faultdriver_own_fake_state_paths {
    if [[ $VIRT_DRIVER != fake ]]; then
        return 0
    fi
    local host
    for host in $(_faultdriver_fake_hosts); do
        if [[ -d $NOVA_STATE_PATH/$host ]]; then
            sudo chown "$STACK_USER" "$NOVA_STATE_PATH/$host"
        fi
    done
}

# After n-cpu started: check the file it reads, which local.conf's
# [[post-config|$NOVA_CPU_CONF]] may have changed after our post-config.
function check_faultdriver {
    if [[ $(iniget "$NOVA_CPU_CONF" DEFAULT compute_driver) != \
            faultdriver.FaultDriver ]]; then
        warn $LINENO "$NOVA_CPU_CONF does not set compute_driver =\
 faultdriver.FaultDriver: nova-compute runs without faultdriver"
    fi
    _faultdriver_validate "$NOVA_CPU_CONF"
    _faultdriver_own_fake_state_paths
    write_faultdriver_cloud_profile
}

function cleanup_faultdriver {
    local link=$NOVA_DIR/nova/virt/faultdriver
    if [[ -L $link ]]; then
        rm -f "$link"
    fi
}

if [[ $FAULTDRIVER_TEST_TIMINGS == True && ${1:-} == stack \
        && ${2:-} == post-config ]] \
        && is_service_enabled n-api n-cond n-super-cond n-sch n-cpu; then
    echo_summary "Writing faultdriver's fault-test timings for Nova"
    configure_faultdriver_test_timings
fi

if is_service_enabled n-cpu; then
    if [[ ${1:-} == stack && ${2:-} == install ]]; then
        echo_summary "Installing faultdriver into Nova's environment"
        install_faultdriver
    elif [[ ${1:-} == stack && ${2:-} == post-config ]]; then
        echo_summary "Configuring nova-compute to run on faultdriver"
        configure_faultdriver
    elif [[ ${1:-} == stack && ${2:-} == extra ]]; then
        echo_summary "Checking nova-compute's faultdriver configuration"
        check_faultdriver
    elif [[ ${1:-} == clean ]]; then
        cleanup_faultdriver
    fi
fi

$_XTRACE_FAULTDRIVER
