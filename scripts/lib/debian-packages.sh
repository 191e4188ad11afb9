# Sourced by scripts/kind-engine, scripts/provision-kind and scripts/provision-python.
#
# need_packages PKG...: installs from Debian (as root, without recommends) the packages that
# are not installed yet. Their maintainer scripts may not start services (a policy-rc.d
# answering 101 while they run): docker.io's would start dockerd as a system service, and the
# project runs its engine itself (scripts/kind-engine).
need_packages() {
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
    done
    ((${#missing[@]})) || return 0
    if [[ $(id -u) != 0 ]]; then
        printf '%s: error: need root to install Debian packages: %s\n' "${0##*/}" "${missing[*]}" >&2
        exit 1
    fi
    printf '%s: installing Debian packages: %s\n' "${0##*/}" "${missing[*]}" >&2
    local policy=/usr/sbin/policy-rc.d ours= status=0
    if [[ ! -e $policy ]]; then
        printf '#!/bin/sh\nexit 101\n' >"$policy"
        chmod +x "$policy"
        ours=1
    fi
    apt-get update -qq >&2 &&
        env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 ||
        status=$?
    [[ -z $ours ]] || rm -f "$policy"
    if ((status)); then
        printf '%s: error: apt-get install %s failed (above)\n' "${0##*/}" "${missing[*]}" >&2
        exit 1
    fi
}
