#!/usr/bin/env bash
# Validate the monitoring stack: the Prometheus configuration, alert rules and rule unit tests
# (promtool), the Grafana dashboards and provisioning files, the Loki configuration when Grafana
# Loki is installed, and the running probes: metrics server /-/healthy and log aggregator /ready.
set -euo pipefail
readonly PROG="${0##*/}"
# shellcheck source=lib/fleet.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/fleet.sh"

usage() {
  cat <<USAGE
Usage: $PROG [options]

Checks, each reported as ok, FAIL or skip:
  prometheus config   promtool check config monitoring/prometheus/prometheus.yml
  alert rules         promtool check rules monitoring/prometheus/rules/*.yml
  rule tests          promtool test rules monitoring/prometheus/tests/*.yml
  dashboards          every Grafana dashboard is JSON with panels (jq)
  loki config         loki -verify-config -config.file \$LOKI_CONFIG (Grafana Loki only; Debian's "loki" is another program)
  metrics probe       GET \$METRICS_URL/-/healthy (port 7028)
  logs probe          GET \$LOGS_URL/ready (port 7032)

Options:
      --config-only     only the file checks
      --probes-only     only the probes
      --skip-logs       do not probe the log aggregator (e.g. Loki not deployed)
      --strict          a check that cannot run (program missing) fails instead of being skipped
  -t, --timeout SECS    per-probe time limit (default: 3)
  -h, --help            this help

Environment:
  METRICS_URL   metrics server (default http://FLEET_HOST:7028, plus FLEET_PORT_OFFSET)
  LOGS_URL      log aggregator (default http://FLEET_HOST:7032, plus FLEET_PORT_OFFSET)
  LOKI_CONFIG   Loki configuration file to verify (default monitoring/loki/loki.yml when present)
  LOKI_BIN      Grafana Loki binary (default: loki on the PATH)

Exit status: 0 when every check that ran passed, 1 when one failed, 64 on a usage error.
USAGE
}

config=1
probes=1
strict=0
skip_logs=0
timeout=3
while [[ $# -gt 0 ]]; do
  case "$1" in
    --config-only) probes=0; shift ;;
    --probes-only) config=0; shift ;;
    --skip-logs) skip_logs=1; shift ;;
    --strict) strict=1; shift ;;
    -t | --timeout) need_value "$@"; timeout="$2"; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) die 64 "unknown option: $1 (see --help)" ;;
  esac
done
[[ "$timeout" =~ ^[0-9]+([.][0-9]+)?$ ]] || die 64 "--timeout must be a number of seconds"

mon="$REPO_ROOT/monitoring"
failures=0
out="$(mktemp)"
trap 'rm -f "$out"' EXIT

report() { printf '%-20s %-5s %s\n' "$1" "$2" "$3"; }
pass() { report "$1" ok "$2"; }
fail() {
  report "$1" FAIL "$2"
  failures=$((failures + 1))
}
skip() {
  if [[ $strict == 1 ]]; then fail "$1" "$2 (--strict)"; else report "$1" skip "$2"; fi
}
# run NAME COMMAND...: ok when the command succeeds, else FAIL with its last output lines.
run() {
  local name="$1"
  shift
  if "$@" >"$out" 2>&1; then
    pass "$name" "$(grep -v '^[[:space:]]*$' "$out" | tail -n1 | cut -c1-100 || true)"
  else
    fail "$name" "$(tail -n3 "$out" | tr '\n' ' ' | cut -c1-300)"
  fi
}

if [[ $config == 1 ]]; then
  if command -v promtool >/dev/null 2>&1; then
    run "prometheus config" promtool check config "$mon/prometheus/prometheus.yml"
    shopt -s nullglob
    rules=("$mon"/prometheus/rules/*.yml)
    tests=("$mon"/prometheus/tests/*.yml)
    if [[ ${#rules[@]} -gt 0 ]]; then run "alert rules" promtool check rules "${rules[@]}"; else skip "alert rules" "no rule files"; fi
    if [[ ${#tests[@]} -gt 0 ]]; then
      # promtool resolves rule_files in a test file relative to that file.
      run "rule tests" promtool test rules "${tests[@]}"
    else
      skip "rule tests" "no rule test files"
    fi
  else
    skip "prometheus config" "promtool is not installed (apt-get install prometheus)"
  fi
  if command -v jq >/dev/null 2>&1; then
    bad=""
    for f in "$mon"/grafana/dashboards/*.json; do
      [[ -e "$f" ]] || continue
      jq -e '.panels | length > 0' "$f" >/dev/null 2>&1 || bad+=" ${f#"$mon"/}"
    done
    if [[ -z "$bad" ]]; then pass "dashboards" "every dashboard parses and has panels"; else fail "dashboards" "invalid:$bad"; fi
  else
    skip "dashboards" "jq is not installed (apt-get install jq)"
  fi
  loki_bin="${LOKI_BIN:-$(command -v loki || true)}"
  loki_config="${LOKI_CONFIG:-$mon/loki/loki.yml}"
  if [[ -n "$loki_bin" ]] && "$loki_bin" -version 2>&1 | grep -qi 'loki, version'; then
    if [[ -r "$loki_config" ]]; then
      run "loki config" "$loki_bin" -verify-config -config.file "$loki_config"
    else
      skip "loki config" "no Loki configuration at $loki_config (compose runs the image's built-in one)"
    fi
  else
    skip "loki config" "Grafana Loki is not installed (Debian's loki package is an unrelated program)"
  fi
fi

if [[ $probes == 1 ]]; then
  need_program curl "apt-get install curl"
  metrics="${METRICS_URL:-http://$FLEET_HOST:$((7028 + FLEET_PORT_OFFSET))}"
  logs="${LOGS_URL:-http://$FLEET_HOST:$((7032 + FLEET_PORT_OFFSET))}"
  read -r code ms < <(probe "${metrics%/}/-/healthy" "$timeout" /dev/null)
  if [[ $code == 200 ]]; then pass "metrics probe" "${metrics%/}/-/healthy ${ms}ms"; else fail "metrics probe" "${metrics%/}/-/healthy answered ${code/#000/nothing}"; fi
  if [[ $skip_logs == 1 ]]; then
    skip "logs probe" "--skip-logs"
  else
    read -r code ms < <(probe "${logs%/}/ready" "$timeout" /dev/null)
    if [[ $code == 200 ]]; then pass "logs probe" "${logs%/}/ready ${ms}ms"; else fail "logs probe" "${logs%/}/ready answered ${code/#000/nothing}"; fi
  fi
fi

if [[ $failures -gt 0 ]]; then die 1 "$failures check(s) failed"; fi
