#!/usr/bin/env bash
# Quick shell diagnostics of a fleet on this machine: tools and versions, dependencies, the
# launcher's state, which inventory ports answer or are taken by something else, disk and memory,
# the gateway's view, and the last error lines of every service log.
set -euo pipefail
readonly PROG="${0##*/}"
# shellcheck source=../lib/fleet.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/fleet.sh"

usage() {
  cat <<USAGE
Usage: $PROG [options]

Prints a short report in sections (tools, dependencies, launcher, services, resources, gateway,
recent errors), each line marked ok, warn or FAIL, and a one-line verdict.

Options:
  -o, --only IDS        comma-separated service ids to probe (default: every service)
  -e, --errors N        error lines shown per service log (default: 3)
  -t, --timeout SECS    per-probe time limit (default: 2)
  -h, --help            this help

Environment: FLEET_HOST, FLEET_PORT_OFFSET, <SERVICE_ID>_URL / _PORT (see health-check.sh --help),
FLEET_DATA_DIR or DATA_DIR (default \$XDG_STATE_HOME/mcp-fleet or ~/.local/state/mcp-fleet; the launcher's fleet.json and logs/ are read there).

Exit status: 0 when nothing failed (warnings allowed), 1 when something failed, 64 usage.
USAGE
}

only=""
errors=3
timeout=2
while [[ $# -gt 0 ]]; do
  case "$1" in
    -o | --only) need_value "$@"; only="$2"; shift 2 ;;
    -e | --errors) need_value "$@"; errors="$2"; shift 2 ;;
    -t | --timeout) need_value "$@"; timeout="$2"; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) die 64 "unknown option: $1 (see --help)" ;;
  esac
done
[[ "$errors" =~ ^[0-9]+$ ]] || die 64 "--errors must be a whole number"
[[ "$timeout" =~ ^[0-9]+([.][0-9]+)?$ ]] || die 64 "--timeout must be a number of seconds"

fails=0
warns=0
section() { printf '\n== %s\n' "$1"; }
ok() { printf '  ok    %s\n' "$*"; }
warn() {
  printf '  warn  %s\n' "$*"
  warns=$((warns + 1))
}
bad() {
  printf '  FAIL  %s\n' "$*"
  fails=$((fails + 1))
}
data_dir="$(fleet_data_dir)"
body="$(mktemp)"
trap 'rm -f "$body"' EXIT

section tools
if command -v node >/dev/null 2>&1; then
  v="$(node --version)"
  if [[ "${v#v}" =~ ^([0-9]+) ]] && ((BASH_REMATCH[1] >= 20)); then ok "node $v"; else bad "node $v is older than 20: install Node.js 20 or newer"; fi
else
  bad "node is not installed: install Node.js 20 or newer"
fi
for p in pnpm curl jq sqlite3 git; do
  if command -v "$p" >/dev/null 2>&1; then ok "$p $("$p" --version 2>/dev/null | head -n1)"; else warn "$p is not installed"; fi
done

section dependencies
if [[ -f "$REPO_ROOT/node_modules/.modules.yaml" ]]; then
  if [[ "$REPO_ROOT/pnpm-lock.yaml" -nt "$REPO_ROOT/node_modules/.modules.yaml" ]]; then warn "pnpm-lock.yaml is newer than node_modules: run pnpm install"; else ok "node_modules installed"; fi
else
  warn "node_modules missing in $REPO_ROOT: run ./fleet setup (not needed under compose)"
fi

section launcher
state="$data_dir/fleet.json"
if [[ -r "$state" ]] && command -v jq >/dev/null 2>&1; then
  pid="$(jq -r '.pid // empty' "$state")"
  if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then ok "launcher pid $pid running (state $state)"; else warn "state file $state names pid ${pid:-?}, which is not running (stale)"; fi
  jq -r '.services[] | "\(.id) \(.pid) \(.state)"' "$state" | while read -r id spid sstate; do
    if kill -0 "$spid" 2>/dev/null; then printf '  ok    %-22s pid %s %s\n' "$id" "$spid" "$sstate"; else printf '  warn  %-22s pid %s not running (%s)\n' "$id" "$spid" "$sstate"; fi
  done
else
  ok "no launcher state at $state (compose, or the launcher is not running)"
fi

section services
down=0
while read -r id port _pattern url; do
  [[ -z "$id" ]] && continue
  read -r code ms < <(probe "$url/health" "$timeout" "$body")
  if [[ $code == 000 ]]; then
    if (exec 3<>"/dev/tcp/$FLEET_HOST/$port") 2>/dev/null; then
      bad "$id: port $port is open but /health does not answer (something else on the port?)"
    else
      warn "$id: nothing listens on $port"
      down=$((down + 1))
    fi
  else
    status="$(grep -o '"status":"[a-z]*"' "$body" | head -n1 | cut -d'"' -f4 || true)"
    case "$status" in
      healthy) ok "$id :$port healthy (${ms}ms)" ;;
      degraded) warn "$id :$port degraded: $(grep -o '"error":"[^"]*"' "$body" | head -n2 | cut -d'"' -f4 | paste -sd';' - || true)" ;;
      *) bad "$id :$port answered $code ${status:-}" ;;
    esac
  fi
done < <(fleet_services "$only")

section resources
if avail="$(df -Pk "$( [[ -d "$data_dir" ]] && echo "$data_dir" || echo "$REPO_ROOT")" 2>/dev/null | awk 'NR==2 {print $4}')"; then
  if ((avail < 1048576)); then bad "only $((avail / 1024)) MiB free for $data_dir"; elif ((avail < 5242880)); then warn "$((avail / 1024)) MiB free for $data_dir"; else ok "$((avail / 1048576)) GiB free for $data_dir"; fi
fi
if [[ -r /proc/meminfo ]]; then
  mem="$(awk '/MemAvailable/ {print int($2 / 1024)}' /proc/meminfo)"
  if ((mem < 256)); then bad "only $mem MiB memory available"; else ok "$mem MiB memory available"; fi
fi
ok "load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"

section gateway
gw="$(service_url mega-orchestrator 7000)"
read -r code _ < <(probe "$gw/services" "$timeout" "$body")
if [[ $code == 200 ]] && command -v jq >/dev/null 2>&1; then
  jq -r '.services[]? | [.id, (.status | tostring), (.reason // "")] | @tsv' "$body" 2>/dev/null |
    awk -F'\t' '{printf "  %-5s %-22s %s%s\n", ($2 == "healthy") ? "ok" : "info", $1, $2, ($3 == "" ? "" : " (" $3 ")")}' || true
else
  warn "the gateway at $gw does not answer /services"
fi

section "recent errors"
shown=0
if [[ -d "$data_dir/logs" && $errors -gt 0 ]]; then
  for log in "$data_dir"/logs/*.log; do
    [[ -e "$log" ]] || continue
    lines="$(grep '"level":"error"' "$log" 2>/dev/null | tail -n "$errors" | cut -c1-240 || true)"
    [[ -n "$lines" ]] || continue
    printf '  %s:\n' "$(basename "$log" .log)"
    while IFS= read -r line; do printf '    %s\n' "$line"; done <<<"$lines"
    shown=$((shown + 1))
  done
fi
[[ $shown -gt 0 ]] || ok "no error lines in $data_dir/logs"

printf '\n%s: %d failure(s), %d warning(s), %d service(s) not running\n' "$([[ $fails == 0 ]] && echo OK || echo PROBLEMS)" "$fails" "$warns" "$down"
[[ $fails == 0 ]] || exit 1
