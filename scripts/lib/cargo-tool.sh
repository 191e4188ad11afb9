# Sourced by scripts/provision-mdbook and scripts/provision-nextest: installs a tool the
# project pins from crates.io with the machine's cargo, once, into a cache outside the
# checkout beside the control planes (…/.cache/rsmc/NAME-VERSION/bin/BINARY).
#
#   install_cargo_tool NAME VERSION BINARY VERSION_LINE [CARGO INSTALL ARGS…]
#
# Idempotent: when the first line of the cached binary's `--version` is VERSION_LINE (or
# VERSION_LINE, a space and more, such as a commit) nothing is built.
# One provisioner at a time per cache (CI and a user's shell may race). Built in a target
# directory of its own, removed after (a tool's objects are a gigabyte we do not keep).
# Prints the binary's path on the last line of stdout; progress and errors go to stderr.

install_cargo_tool() {
    local name=$1 version=$2 binary=$3 version_line=$4
    shift 4
    local cache="${RSMC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rsmc}/$name-$version"
    local bin="$cache/bin/$binary"
    local log line
    log=$(basename "$0")
    cached() {
        [[ -x "$bin" ]] || return 1
        line=$("$bin" --version 2>/dev/null | head -1)
        [[ "$line" == "$version_line" || "$line" == "$version_line "* ]]
    }
    if cached; then
        printf '%s: cached: %s\n' "$log" "$bin" >&2
        echo "$bin"
        return 0
    fi
    command -v cargo >/dev/null || {
        printf '%s: error: cargo is needed to build %s (rustup, as for the project)\n' "$log" "$name" >&2
        return 1
    }
    mkdir -p "$cache"
    exec 9>"$cache/.lock"
    flock 9
    if ! cached; then
        printf '%s: building %s %s into %s (once; minutes on two cores)\n' "$log" "$name" "$version" "$cache" >&2
        local target
        target=$(mktemp -d)
        # shellcheck disable=SC2064 # the directory is known now
        trap "rm -rf '$target'" EXIT
        # Unoptimised: the tools' own speed hardly counts (mdBook builds the book in under a
        # second, nextest's work is the tests'), their build on a fresh machine does:
        # cargo-nextest built back to back on one machine in 270 s at opt-level 0 against
        # 516 s at opt-level 1 (the book, measurements/ci.md).
        CARGO_PROFILE_RELEASE_OPT_LEVEL=0 CARGO_TARGET_DIR="$target" \
            cargo install "$name" --version "=$version" --locked --force \
            --root "$cache" "$@" >&2
        rm -rf "$target"
        cached || {
            printf '%s: error: the built %s does not report %s\n' "$log" "$bin" "$version_line" >&2
            return 1
        }
    fi
    exec 9>&-
    echo "$bin"
}
