# shellcheck shell=bash
# Messages, option checks and JSON reading every script may use (sourced, never run; no side effects). Scripts set PROG
# before sourcing; scripts/lib/fleet.sh sources this and adds the fleet's addresses and probes.

log() { printf '%s: %s\n' "${PROG:-fleet}" "$*" >&2; }

# die EXIT_CODE MESSAGE...: the message names what failed and what to do.
die() {
  local code="$1"
  shift
  printf '%s: %s\n' "${PROG:-fleet}" "$*" >&2
  exit "$code"
}

need_value() { [[ $# -ge 2 && -n "$2" ]] || die 64 "$1 needs a value (see --help)"; }

# need_program NAME HINT: exits 69 naming how to install NAME when it is missing.
need_program() { command -v "$1" >/dev/null 2>&1 || die 69 "$1 is not installed: $2"; }

# json_get PATH < json: prints the field at a dotted PATH (result.dist.sha256, error), empty when absent or the
# input is not JSON; with jq, node or python3, whichever is installed.
json_get() {
  local field="$1"
  if command -v jq >/dev/null 2>&1; then
    jq -r --arg f "$field" 'getpath($f | split(".")) // empty | tostring' 2>/dev/null || true
  elif command -v node >/dev/null 2>&1; then
    node -e '
      let s = ""; process.stdin.on("data", (c) => (s += c)).on("end", () => {
        try { let v = JSON.parse(s); for (const k of process.argv[1].split(".")) v = v == null ? undefined : v[k];
              if (v !== undefined && v !== null) process.stdout.write(String(v) + "\n"); } catch {}
      });' "$field"
  elif command -v python3 >/dev/null 2>&1; then
    python3 -c '
import json, sys
try:
    v = json.load(sys.stdin)
    for k in sys.argv[1].split("."):
        v = v.get(k) if isinstance(v, dict) else None
    if v is not None: print(v)
except Exception:
    pass' "$field"
  else
    die 69 "jq, node or python3 is needed to read the JSON answer"
  fi
}
