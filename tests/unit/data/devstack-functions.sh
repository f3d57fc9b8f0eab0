# Stand-ins for the devstack functions devstack/plugin.sh and
# devstack/settings call, written for tests/unit/test_devstack_plugin.py.
#
# The ini functions behave as devstack's inc/ini-config does for the
# values the plugin writes: iniset adds a missing section at the end and a
# missing option right below the section header; iniadd_literal adds a
# line right below the header (so repeated calls come out in reverse
# order) and, being sed's `a\` text, drops one level of backslashes;
# inidelete removes every line of the option in the section.  With
# FAULTDRIVER_DEVSTACK_INI=/path/to/devstack/inc/ini-config the test uses
# devstack's own functions instead.

function die {
    local line=$1
    shift
    echo "[ERROR] plugin.sh:$line $*" >&2
    exit 1
}

function warn {
    echo "[WARNING] plugin.sh:$1 $2"
}

function echo_summary {
    echo "$*"
}

function define_plugin {
    :
}

function is_service_enabled {
    local service
    for service in "$@"; do
        if [[ ,$ENABLED_SERVICES, == *,$service,* ]]; then
            return 0
        fi
    done
    return 1
}

function trueorfalse {
    case "${!2:-}" in
        1 | [yY]es | YES | [tT]rue | TRUE) echo True ;;
        0 | [nN]o | NO | [fF]alse | FALSE) echo False ;;
        *) echo "$1" ;;
    esac
}

# sudo (a command devstack's functions and the plugin call) is recorded,
# not run: the tests are not devstack's stack user.
function sudo {
    echo "sudo $*" >> "$DEVSTACK_CALLS"
}

# Installs are recorded, not run.
function setup_install {
    echo "setup_install $*" >> "$DEVSTACK_CALLS"
}

function setup_develop {
    echo "setup_develop $*" >> "$DEVSTACK_CALLS"
}

function pip_install {
    echo "pip_install $*" >> "$DEVSTACK_CALLS"
}

function ini_has_option {
    sed -n "/^\[$2\]/,/^\[/ p" "$1" 2>/dev/null | grep -q "^$3[ \t]*="
}

function iniget {
    sed -n "/^\[$2\]/,/^\[/ s/^$3[ \t]*=[ \t]*//p" "$1" | head -n 1
}

function iniset {
    local file=$1 section=$2 option=$3 value=$4
    if ! grep -q "^\[$section\]" "$file" 2>/dev/null; then
        printf '\n[%s]\n' "$section" >> "$file"
    fi
    # Escaped for sed: its replacement and its `a\` text both unescape.
    value=${value//\\/\\\\}
    value=${value//&/\\&}
    value=${value//|/\\|}
    if ini_has_option "$file" "$section" "$option"; then
        sed -i "/^\[$section\]/,/^\[/ s|^\($option[ \t]*=[ \t]*\).*|\1$value|" \
            "$file"
    else
        sed -i "/^\[$section\]/ a\\
$option = $value
" "$file"
    fi
}

function iniadd_literal {
    sed -i "/^\[$2\]/ a\\
$3 = $4
" "$1"
}

function inidelete {
    sed -i "/^\[$2\]/,/^\[/ { /^$3[ \t]*=/ d; }" "$1"
}

if [[ -n ${FAULTDRIVER_DEVSTACK_INI:-} ]]; then
    source "$FAULTDRIVER_DEVSTACK_INI"
fi
