#!/usr/bin/env bash
# Write health and container snapshots to monitoring status files: one JSON file per service, a
# summary and the container (or launcher process) list, each replaced atomically.
set -euo pipefail
readonly PROG="${0##*/}"
# shellcheck source=lib/fleet.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/fleet.sh"

usage() {
  cat <<USAGE
Usage: $PROG [options]

Probes every service's GET /health and writes, atomically (temporary file + rename):
  DIR/<service-id>.json   {service, url, status, httpStatus, latencyMs, checkedAt, health}
  DIR/summary.json        {checkedAt, ok, healthy, total, services: {id: status}}
  DIR/containers.json     docker compose ps of the project when Docker is there, else the
                          launcher's processes from DATA_DIR/fleet.json
Runs once by default; --interval repeats until stopped (or --count rounds).

Options:
  -d, --dir DIR         where the status files go (default: \$MONITORING_DIR or DATA_DIR/monitoring/status)
  -o, --only IDS        comma-separated service ids (default: every service)
  -i, --interval SECS   repeat every SECS seconds
  -n, --count N         stop after N rounds (with --interval; default: forever)
  -t, --timeout SECS    per-probe time limit (default: 3)
  -h, --help            this help

Environment: FLEET_HOST, FLEET_PORT_OFFSET, <SERVICE_ID>_URL / _PORT (see health-check.sh --help),
FLEET_DATA_DIR or DATA_DIR (default \$XDG_STATE_HOME/mcp-fleet or ~/.local/state/mcp-fleet), MONITORING_DIR, COMPOSE_PROJECT_NAME (default mcp-fleet).

Exit status: 0 when the last round found every service healthy or degraded, 1 otherwise, 64 on a
usage error, 69 when curl or jq is missing, 73 when the directory cannot be written.
USAGE
}

dir="${MONITORING_DIR:-$(fleet_data_dir)/monitoring/status}"
only=""
interval=""
count=""
timeout=3
while [[ $# -gt 0 ]]; do
  case "$1" in
    -d | --dir) need_value "$@"; dir="$2"; shift 2 ;;
    -o | --only) need_value "$@"; only="$2"; shift 2 ;;
    -i | --interval) need_value "$@"; interval="$2"; shift 2 ;;
    -n | --count) need_value "$@"; count="$2"; shift 2 ;;
    -t | --timeout) need_value "$@"; timeout="$2"; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) die 64 "unknown option: $1 (see --help)" ;;
  esac
done
[[ -z "$interval" || "$interval" =~ ^[0-9]+([.][0-9]+)?$ ]] || die 64 "--interval must be a number of seconds"
[[ -z "$count" || "$count" =~ ^[1-9][0-9]*$ ]] || die 64 "--count must be a positive whole number"
[[ "$timeout" =~ ^[0-9]+([.][0-9]+)?$ ]] || die 64 "--timeout must be a number of seconds"
need_program curl "apt-get install curl"
need_program jq "apt-get install jq"
if ! mkdir -p "$dir" 2>/dev/null || [[ ! -w "$dir" ]]; then die 73 "cannot write to $dir; pick another with --dir"; fi

targets="$(fleet_services "$only")"
body="$(mktemp)"
trap 'rm -f "$body"' EXIT

containers_json() {
  local project="${COMPOSE_PROJECT_NAME:-mcp-fleet}" state
  if command -v docker >/dev/null 2>&1 && docker compose version >/dev/null 2>&1; then
    local ps
    if ps="$(docker compose -p "$project" ps --all --format json 2>/dev/null)"; then
      # Newer Compose prints one object per line, older ones an array: both become an array.
      printf '%s' "$ps" | jq -s --arg project "$project" '{source: "docker compose", project: $project, containers: (if length == 1 and (.[0] | type) == "array" then .[0] else . end)}'
      return
    fi
  fi
  state="$(fleet_data_dir)/fleet.json"
  if [[ -r "$state" ]]; then
    jq --arg file "$state" '{source: "launcher", file: $file, launcherPid: .pid, processes: [.services[] | {id, pid, port, state}]}' "$state"
  else
    jq -n '{source: "none", note: "no Docker Compose project and no launcher state file (DATA_DIR/fleet.json) found"}'
  fi
}

round() {
  local id port pattern url code ms status now healthy=0 total=0 statuses='{}'
  now="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  while read -r id port pattern url; do
    [[ -z "$id" ]] && continue
    : >"$body"
    read -r code ms < <(probe "$url/health" "$timeout" "$body")
    if [[ $code == 000 ]]; then status=down; else status="$(jq -r '.status // empty' "$body" 2>/dev/null || true)"; fi
    [[ -n "$status" ]] || status="$([[ $code == 200 ]] && echo healthy || echo unhealthy)"
    total=$((total + 1))
    case "$status" in healthy | degraded) healthy=$((healthy + 1)) ;; esac
    jq -n --arg service "$id" --arg url "$url" --arg status "$status" --arg pattern "$pattern" \
      --argjson port "$port" --argjson code "$((10#$code))" --argjson ms "$ms" --arg at "$now" \
      --slurpfile health <(jq -c . "$body" 2>/dev/null || echo null) \
      '{service: $service, url: $url, port: $port, pattern: $pattern, status: $status, httpStatus: $code, latencyMs: $ms, checkedAt: $at, health: ($health[0] // null)}' |
      atomic_write "$dir/$id.json"
    statuses="$(jq -c --arg id "$id" --arg s "$status" '. + {($id): $s}' <<<"$statuses")"
  done <<<"$targets"
  jq -n --arg at "$now" --argjson healthy "$healthy" --argjson total "$total" --argjson services "$statuses" \
    '{checkedAt: $at, ok: ($healthy == $total), healthy: $healthy, total: $total, services: $services}' | atomic_write "$dir/summary.json"
  containers_json | atomic_write "$dir/containers.json"
  log "$healthy/$total healthy; status files in $dir"
  [[ $healthy == "$total" ]]
}

rounds=0
while true; do
  ok=0
  round || ok=$?
  rounds=$((rounds + 1))
  [[ -n "$interval" ]] || break
  [[ -n "$count" && $rounds -ge $count ]] && break
  sleep "$interval"
done
[[ $ok == 0 ]] || exit 1
