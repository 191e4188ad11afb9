# Shared by scripts/reproduce-findings and scripts/reproduce-catalogue (sourced, not run).
#
# A conform run's summary lines for one cell of a table go to a `.lines` file; `cell`
# counts them. The local cluster in "$state" is taken down on exit, also on Ctrl-C.

state=""
cleanup() {
  if [[ -n "$state" ]]; then
    "$rsmc" cluster down --state-dir "$state" >/dev/null 2>&1 || true
    rm -rf "$state"
  fi
}
trap cleanup EXIT
# Interrupted: clean up and stop (a trap that returned would let the script go on).
trap 'exit 130' INT
trap 'exit 143' TERM

# cluster_up RELEASE [FLAG ...]: a fresh local cluster of RELEASE in "$state".
cluster_up() {
  local release=$1
  shift
  scripts/provision-control-plane "$release" >/dev/null
  state=$(mktemp -d -t rsmc-reproduce-XXXXXX)
  rmdir "$state"
  "$rsmc" cluster up --kubernetes "${release#v}" --state-dir "$state" "$@" >/dev/null
}

cluster_down() {
  "$rsmc" cluster down --state-dir "$state" >/dev/null
  rm -rf "$state"
  state=""
}

# conform_into LINES REPORT ARG ...: one `rsmc conform` on the cluster in "$state", its
# summary lines appended to LINES (and shown).
conform_into() {
  local lines=$1 report=$2
  shift 2
  "$rsmc" conform --local --state-dir "$state" --report "$report" "$@" \
    | grep -E '(^| )(conforms|DOES NOT CONFORM|ERROR)  ' | tee -a "$lines" >&2 || true
}

# cell LINES NAME ENTRY: how many runs of scenario NAME in LINES reproduced ENTRY, how
# many conformed, and how many stopped at an await the model stops at too: "took/ran,
# conforms c/ran[, stopped as the model s/ran]".
cell() {
  local lines ran took conformed stopped
  lines=$(grep -E "  $2 " "$1" 2>/dev/null || true)
  ran=$(grep -c . <<<"$lines" || true)
  took=$(grep -c "reproduced $3" <<<"$lines" || true)
  conformed=$(grep -c "conforms  $2 " <<<"$lines" || true)
  stopped=$(grep -c "the model stops at too" <<<"$lines" || true)
  printf '%s' "$took/$ran, conforms $conformed/$ran"
  ((stopped == 0)) || printf ', stopped as the model %s/%s' "$stopped" "$ran"
}
