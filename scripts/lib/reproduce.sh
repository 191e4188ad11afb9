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
# An `rsmc conform` stopped by Ctrl-C (exit 130, having cleaned up) stops the script too:
# bash itself acts on the terminal's SIGINT only when its child died of it.
conform_into() {
  local lines=$1 report=$2 codes
  shift 2
  set +e
  "$rsmc" conform --local --state-dir "$state" --report "$report" "$@" \
    | grep -E '(^| )(conforms|DOES NOT CONFORM|ERROR)  ' | tee -a "$lines" >&2
  codes=("${PIPESTATUS[@]}")
  set -e
  ((codes[0] != 130)) || exit 130
}

# cell LINES NAME ENTRY: how many runs of scenario NAME in LINES reproduced ENTRY, how
# many conformed, how many stopped short but conformed up to the stop, and how many of
# those stopped at an await the model stops at too: "took/ran, conforms c/ran[, up to a
# stop u/ran][, stopped as the model s/ran]".
cell() {
  local lines ran took conformed upto stopped
  lines=$(grep -E "  $2 " "$1" 2>/dev/null || true)
  ran=$(grep -c . <<<"$lines" || true)
  took=$(grep -c "reproduced $3" <<<"$lines" || true)
  conformed=$(grep -c "conforms  $2 " <<<"$lines" || true)
  upto=$(grep -c "(conforms up to the stop)" <<<"$lines" || true)
  stopped=$(grep -c "the model stops at too" <<<"$lines" || true)
  printf '%s' "$took/$ran, conforms $conformed/$ran"
  ((upto == 0)) || printf ', up to a stop %s/%s' "$upto" "$ran"
  ((stopped == 0)) || printf ', stopped as the model %s/%s' "$stopped" "$ran"
}
