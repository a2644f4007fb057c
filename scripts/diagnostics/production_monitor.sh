#!/usr/bin/env bash
# Lightweight production health monitor: probes every service's /health on an interval, logs each
# change of state as one JSON line, and posts an alert to a webhook when a service has failed
# --threshold rounds in a row and again when it recovers.
set -euo pipefail
readonly PROG="${0##*/}"
# shellcheck source=../lib/fleet.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/fleet.sh"

usage() {
  cat <<USAGE
Usage: $PROG [options]

Every --interval seconds, probes GET /health of each service. A service that fails --threshold
rounds in a row is "down": one JSON line {at, event: "down", service, url, httpStatus, failures}
goes to the log and, with --webhook, is POSTed there; its return is logged (and posted) as
"recovered". Each round also prints one summary line on stdout.

Options:
  -i, --interval SECS   seconds between rounds (default: \$MONITOR_INTERVAL or 30)
  -n, --count N         stop after N rounds (default: run until stopped)
      --threshold N     failed rounds in a row before a service is down (default: 2)
  -l, --log FILE        JSON-lines event log (default: DATA_DIR/monitoring/production-monitor.log)
  -w, --webhook URL     POST each event as JSON to URL (default: \$ALERT_WEBHOOK_URL; unset: no alerts)
  -o, --only IDS        comma-separated service ids (default: every service)
  -t, --timeout SECS    per-probe time limit (default: 5)
  -h, --help            this help

Environment: FLEET_HOST, FLEET_PORT_OFFSET, <SERVICE_ID>_URL / _PORT (see health-check.sh --help).

Exit status: 0 after --count rounds with every service up, 1 when one is down at the end,
64 usage, 69 curl or jq missing, 73 the log cannot be written. SIGINT/SIGTERM stop it with 0.
USAGE
}

interval="${MONITOR_INTERVAL:-30}"
count=""
threshold=2
logfile="$(fleet_data_dir)/monitoring/production-monitor.log"
webhook="${ALERT_WEBHOOK_URL:-}"
only=""
timeout=5
while [[ $# -gt 0 ]]; do
  case "$1" in
    -i | --interval) need_value "$@"; interval="$2"; shift 2 ;;
    -n | --count) need_value "$@"; count="$2"; shift 2 ;;
    --threshold) need_value "$@"; threshold="$2"; shift 2 ;;
    -l | --log) need_value "$@"; logfile="$2"; shift 2 ;;
    -w | --webhook) need_value "$@"; webhook="$2"; shift 2 ;;
    -o | --only) need_value "$@"; only="$2"; shift 2 ;;
    -t | --timeout) need_value "$@"; timeout="$2"; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) die 64 "unknown option: $1 (see --help)" ;;
  esac
done
[[ "$interval" =~ ^[0-9]+([.][0-9]+)?$ ]] || die 64 "--interval must be a number of seconds"
[[ -z "$count" || "$count" =~ ^[1-9][0-9]*$ ]] || die 64 "--count must be a positive whole number"
[[ "$threshold" =~ ^[1-9][0-9]*$ ]] || die 64 "--threshold must be a positive whole number"
[[ "$timeout" =~ ^[0-9]+([.][0-9]+)?$ ]] || die 64 "--timeout must be a number of seconds"
[[ -z "$webhook" || "$webhook" =~ ^https?:// ]] || die 64 "--webhook must be an http(s) URL"
need_program curl "apt-get install curl"
need_program jq "apt-get install jq"
if ! mkdir -p "$(dirname "$logfile")" 2>/dev/null || ! touch "$logfile" 2>/dev/null; then die 73 "cannot write the log $logfile; pick another with --log"; fi

targets="$(fleet_services "$only")"
declare -A streak=() down=()
body="$(mktemp)"
trap 'rm -f "$body"' EXIT
trap 'log "stopped"; exit 0' INT TERM

event() {
  local line
  line="$(jq -nc --arg at "$(date -u +%Y-%m-%dT%H:%M:%SZ)" --arg event "$1" --arg service "$2" --arg url "$3" \
    --argjson code "$((10#$4))" --argjson failures "$5" '{at: $at, event: $event, service: $service, url: $url, httpStatus: $code, failures: $failures}')"
  printf '%s\n' "$line" >>"$logfile"
  printf '%s\n' "$line"
  if [[ -n "$webhook" ]]; then
    curl -sS -o /dev/null --max-time "$timeout" -H 'content-type: application/json' --data-binary "$line" "$webhook" 2>/dev/null ||
      log "could not deliver the $1 alert for $2 to the webhook"
  fi
}

rounds=0
while true; do
  up=0
  total=0
  while read -r id _port _pattern url; do
    [[ -z "$id" ]] && continue
    total=$((total + 1))
    read -r code _ms < <(probe "$url/health" "$timeout" "$body")
    # 200 is healthy or degraded; anything else (503 unhealthy, no answer) is a failed round.
    if [[ $code == 200 ]]; then
      up=$((up + 1))
      if [[ -n "${down[$id]:-}" ]]; then event recovered "$id" "$url" "$code" "${streak[$id]}"; fi
      streak[$id]=0
      unset "down[$id]"
    else
      streak[$id]=$((${streak[$id]:-0} + 1))
      if [[ ${streak[$id]} -ge $threshold && -z "${down[$id]:-}" ]]; then
        down[$id]=1
        event down "$id" "$url" "$code" "${streak[$id]}"
      fi
    fi
  done <<<"$targets"
  rounds=$((rounds + 1))
  log "round $rounds: $up/$total up${down[*]:+; down: ${!down[*]}}"
  [[ -n "$count" && $rounds -ge $count ]] && break
  sleep "$interval"
done
[[ ${#down[@]} == 0 ]] || exit 1
