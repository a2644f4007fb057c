#!/usr/bin/env bash
# Local stack health snapshot: GET /health of every service of the fleet (launcher or compose),
# one line each, and the monitoring probes on request. Exits 1 when a service is down or unhealthy.
set -euo pipefail
readonly PROG="${0##*/}"
# shellcheck source=lib/fleet.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/fleet.sh"

usage() {
  cat <<USAGE
Usage: $PROG [options]

Probes GET /health of every service the fleet runs and prints one line per service:
id, port, status (healthy, degraded, unhealthy or down), HTTP status and latency.

Options:
  -o, --only IDS        comma-separated service ids (default: every service)
  -t, --timeout SECS    per-probe time limit (default: 3)
      --json            print a JSON document instead of the table (needs jq)
      --monitoring      also probe the metrics server (7028 /-/healthy) and the log aggregator (7032 /ready)
  -h, --help            this help

Environment:
  FLEET_HOST            host the services listen on (default 127.0.0.1)
  FLEET_PORT_OFFSET     the launcher's port offset (default 0)
  <SERVICE_ID>_URL      a service's base URL, e.g. MEGA_ORCHESTRATOR_URL (overrides host and port)
  <SERVICE_ID>_PORT     a service's port
  METRICS_URL, LOGS_URL monitoring addresses (default http://FLEET_HOST:7028 and :7032, plus the offset)

Exit status: 0 when every probed service is healthy or degraded, 1 when one is down or unhealthy,
64 on a usage error, 69 when curl (or jq for --json) is missing.
USAGE
}

only=""
timeout=3
json=0
monitoring=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    -o | --only) need_value "$@"; only="$2"; shift 2 ;;
    -t | --timeout) need_value "$@"; timeout="$2"; shift 2 ;;
    --json) json=1; shift ;;
    --monitoring) monitoring=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) die 64 "unknown option: $1 (see --help)" ;;
  esac
done
[[ "$timeout" =~ ^[0-9]+([.][0-9]+)?$ ]] || die 64 "--timeout must be a number of seconds, got \"$timeout\""
need_program curl "apt-get install curl"
[[ $json == 0 ]] || need_program jq "apt-get install jq (or drop --json)"

body="$(mktemp)"
trap 'rm -f "$body"' EXIT

targets="$(fleet_services "$only")"
if [[ $monitoring == 1 ]]; then
  targets+=$'\n'"metrics $((7028 + FLEET_PORT_OFFSET)) monitoring ${METRICS_URL:-http://$FLEET_HOST:$((7028 + FLEET_PORT_OFFSET))}"
  targets+=$'\n'"logs $((7032 + FLEET_PORT_OFFSET)) monitoring ${LOGS_URL:-http://$FLEET_HOST:$((7032 + FLEET_PORT_OFFSET))}"
fi

failed=0
rows=()
while read -r id port pattern url; do
  [[ -z "$id" ]] && continue
  path=/health
  [[ $id == metrics ]] && path=/-/healthy
  [[ $id == logs ]] && path=/ready
  : >"$body"
  read -r code ms < <(probe "$url$path" "$timeout" "$body")
  if [[ $code == 000 ]]; then
    status=down
  elif [[ $pattern == monitoring ]]; then
    if [[ $code == 200 ]]; then status=healthy; else status=unhealthy; fi
  else
    status="$(grep -o '"status":"[a-z]*"' "$body" | head -n1 | cut -d'"' -f4 || true)"
    [[ -n "$status" ]] || status="$([[ $code == 200 ]] && echo healthy || echo unhealthy)"
  fi
  case "$status" in healthy | degraded) ;; *) failed=$((failed + 1)) ;; esac
  rows+=("$id $port $status $code $ms $url$path")
done <<<"$targets"

if [[ $json == 1 ]]; then
  printf '%s\n' "${rows[@]}" | jq -R -s --argjson failed "$failed" '
    [split("\n")[] | select(length > 0) | split(" ") |
      {service: .[0], port: (.[1] | tonumber), status: .[2], httpStatus: (.[3] | tonumber), latencyMs: (.[4] | tonumber), url: .[5]}]
    | {checkedAt: (now | todate), ok: ($failed == 0), failed: $failed, services: .}'
else
  printf '%-22s %-6s %-10s %-5s %s\n' SERVICE PORT STATUS HTTP LATENCY
  for row in "${rows[@]}"; do
    read -r id port status code ms _ <<<"$row"
    printf '%-22s %-6s %-10s %-5s %sms\n' "$id" "$port" "$status" "$code" "$ms"
  done
  printf '%d of %d up\n' "$((${#rows[@]} - failed))" "${#rows[@]}"
fi
if [[ $failed -gt 0 ]]; then
  log "$failed service(s) down or unhealthy"
  exit 1
fi
