#!/usr/bin/env bash
# Scaffolds a new MCP service on the kit: the package under services/<id>, its docs page, its inventory
# entry, and (through `pnpm gen`) its compose service, Prometheus target and README row. A thin,
# checked front to `pnpm new-service`, which does the work (scripts/gen/new-service.ts).
set -euo pipefail
readonly PROG="${0##*/}"
# shellcheck source=lib/fleet.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/fleet.sh"

usage() {
  cat <<USAGE
Usage: $PROG [options] SERVICE_ID

Scaffolds services/SERVICE_ID in the fleet's one service shape (config schema, app, server, one file
per tool built by createTools, a supertest test), docs/services/SERVICE_ID.md and its inventory
entry, regenerates compose, the Prometheus targets and the README table, and links the package.
A service the inventory already plans keeps its port, tools and description. Nothing existing is
overwritten; a taken port or an existing folder stops it before any file is written.

Options:
  -p, --port PORT           the service's port (required unless the inventory plans the service)
  -t, --tools NAMES         comma-separated tool names in snake_case (default: <name>_echo)
  -d, --description TEXT    one line saying what the service does
      --pattern PATTERN     tool-oriented (default) or route-oriented
      --no-install          write the files only; run pnpm install && pnpm gen yourself
      --test                run the new service's tests and the static checks afterwards
  -h, --help                this help

Exit status: 0 when scaffolded (and, with --test, its tests pass), 1 when the request is refused
or the tests fail, 64 on a usage error, 69 when node or pnpm is missing.

Example:
  $PROG --port 7090 --tools weather_now,weather_forecast -d "Weather from a configured API." weather-mcp
USAGE
}

id="" args=() run_tests=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    -p | --port) need_value "$@"; [[ "$2" =~ ^[0-9]+$ ]] || die 64 "--port must be a whole number"; args+=(--port "$2"); shift 2 ;;
    -t | --tools) need_value "$@"; args+=(--tools "$2"); shift 2 ;;
    -d | --description) need_value "$@"; args+=(--description "$2"); shift 2 ;;
    --pattern) need_value "$@"; args+=(--pattern "$2"); shift 2 ;;
    --no-install) args+=(--no-install); shift ;;
    --test) run_tests=1; shift ;;
    -*) die 64 "unknown option: $1 (see --help)" ;;
    *) [[ -z "$id" ]] || die 64 "give one SERVICE_ID (got \"$id\" and \"$1\")"; id="$1"; shift ;;
  esac
done
[[ -n "$id" ]] || die 64 "SERVICE_ID is required (see --help)"
need_program node "install Node.js 20 (https://nodejs.org) or your distribution's nodejs package"
need_program pnpm "run: npm install -g pnpm@10"

cd "$REPO_ROOT"
node --import tsx scripts/gen/new-service.ts "$id" "${args[@]}" || die 1 "scaffolding $id failed (see the message above)"
if ((run_tests)); then
  log "running services/$id's tests and the static checks"
  pnpm exec jest "services/$id" test/static/service-shape.test.ts test/static/inventory-agreement.test.ts ||
    die 1 "the tests of $id failed; see the output above"
fi
log "scaffolded $id; edit services/$id/src/tools/ and docs/services/$id.md"
