# shellcheck shell=bash
# Shared by the operator scripts (sourced, never run): messages, the inventory, service addresses,
# HTTP probes and atomic writes. Every script sets PROG before sourcing this file.
#
# Where a service is: <SERVICE_ID>_URL, else http://$FLEET_HOST:<port>, where <port> is
# <SERVICE_ID>_PORT, else the inventory port plus FLEET_PORT_OFFSET (as the launcher places it);
# with FLEET_PROFILE=reference, the reference's ports (8001-8008, 8011) where it has one.

FLEET_LIB_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck disable=SC2034 # read by the scripts that source this file
REPO_ROOT="$(cd "$FLEET_LIB_DIR/../.." && pwd)"
FLEET_HOST="${FLEET_HOST:-127.0.0.1}"
FLEET_PORT_OFFSET="${FLEET_PORT_OFFSET:-0}"
FLEET_SERVICES_FILE="${FLEET_SERVICES_FILE:-$FLEET_LIB_DIR/services.tsv}"
FLEET_PROFILE="${FLEET_PROFILE:-default}"

# shellcheck source=cli.sh
source "$FLEET_LIB_DIR/cli.sh"

[[ "$FLEET_PORT_OFFSET" =~ ^[0-9]+$ ]] || die 64 "FLEET_PORT_OFFSET must be a whole number, got \"$FLEET_PORT_OFFSET\""
[[ "$FLEET_PROFILE" == default || "$FLEET_PROFILE" == reference ]] || die 64 "FLEET_PROFILE must be default or reference, got \"$FLEET_PROFILE\""

# filesystem-mcp -> FILESYSTEM_MCP
env_prefix() {
  local s="${1^^}"
  printf '%s' "${s//[^A-Z0-9]/_}"
}

service_port() {
  local var
  var="$(env_prefix "$1")_PORT"
  if [[ -n "${!var:-}" ]]; then printf '%s' "${!var}"; else printf '%s' "$(($2 + FLEET_PORT_OFFSET))"; fi
}

service_url() {
  local var
  var="$(env_prefix "$1")_URL"
  if [[ -n "${!var:-}" ]]; then
    printf '%s' "${!var%/}"
  else
    printf 'http://%s:%s' "$FLEET_HOST" "$(service_port "$1" "$2")"
  fi
}

# fleet_services [ONLY]: "id port pattern url" for every running service of the inventory, or only
# those named in the comma-separated ONLY. An unknown name in ONLY is an error.
fleet_services() {
  local only="${1:-}" id port pattern ref name found
  [[ -r "$FLEET_SERVICES_FILE" ]] || die 66 "cannot read the service list $FLEET_SERVICES_FILE (run pnpm gen)"
  if [[ -n "$only" ]]; then
    local -a wanted
    IFS=',' read -r -a wanted <<<"$only"
    for name in "${wanted[@]}"; do
      found=0
      while IFS=$'\t' read -r id port pattern ref; do
        [[ "$id" == "$name" ]] && found=1
      done < <(grep -v '^#' "$FLEET_SERVICES_FILE")
      [[ $found == 1 ]] || die 64 "unknown service \"$name\"; known: $(grep -v '^#' "$FLEET_SERVICES_FILE" | cut -f1 | paste -sd, -)"
    done
  fi
  while IFS=$'\t' read -r id port pattern ref; do
    [[ -z "$id" ]] && continue
    [[ "$FLEET_PROFILE" == reference && -n "$ref" ]] && port="$ref"
    if [[ -n "$only" && ",$only," != *",$id,"* ]]; then continue; fi
    printf '%s %s %s %s\n' "$id" "$(service_port "$id" "$port")" "$pattern" "$(service_url "$id" "$port")"
  done < <(grep -v '^#' "$FLEET_SERVICES_FILE")
}

# probe URL TIMEOUT BODY_FILE: prints "HTTP_CODE MILLISECONDS" (code 000 when nothing answered).
probe() {
  local out code seconds
  out="$(curl -sS -o "$3" -w '%{http_code} %{time_total}' --max-time "$2" "$1" 2>/dev/null)" || true
  code="${out%% *}"
  seconds="${out##* }"
  [[ "$code" =~ ^[0-9]{3}$ ]] || code=000
  [[ "$seconds" =~ ^[0-9.]+$ ]] || seconds=0
  printf '%s %s\n' "$code" "$(awk -v s="$seconds" 'BEGIN { printf "%d", s * 1000 }')"
}

# atomic_write DEST [MODE]: stdin to DEST through a temporary file in the same directory and a
# rename, so a reader never sees half a file.
atomic_write() {
  local dest="$1" mode="${2:-644}" tmp
  tmp="$(mktemp "$(dirname "$dest")/.$(basename "$dest").XXXXXX")"
  if ! cat >"$tmp"; then
    rm -f "$tmp"
    return 1
  fi
  chmod "$mode" "$tmp"
  mv -f "$tmp" "$dest"
}

# The launcher's data directory (where fleet.json, logs/ and the SQLite stores live): FLEET_DATA_DIR,
# DATA_DIR, else $XDG_STATE_HOME/mcp-fleet (an absolute one), else ~/.local/state/mcp-fleet, as the launcher.
fleet_data_dir() {
  local state="${XDG_STATE_HOME:-}"
  [[ "$state" == /* ]] || state="${HOME:-}/.local/state"
  printf '%s' "${FLEET_DATA_DIR:-${DATA_DIR:-$state/mcp-fleet}}"
}
