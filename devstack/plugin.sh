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
#   clean              remove the link made in nova's checkout at install
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

function install_faultdriver {
    # A normal install, not setup_develop: an editable install leaves
    # nova/virt/faultdriver outside every nova.virt package.
    local extras=""
    if [[ $VIRT_DRIVER == libvirt ]]; then
        extras=libvirt
    fi
    setup_install "$FAULTDRIVER_DIR" $extras
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
    for path in "$FAULTDRIVER_JOURNAL_PATH" "$FAULTDRIVER_CONTROL_SOCKET"; do
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

    _faultdriver_validate "$conf"
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
}

function cleanup_faultdriver {
    local link=$NOVA_DIR/nova/virt/faultdriver
    if [[ -L $link ]]; then
        rm -f "$link"
    fi
}

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
