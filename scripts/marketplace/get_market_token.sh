#!/usr/bin/env bash
# Mint a marketplace bearer token through security-mcp (POST /tools/jwt_token) and print only the token.
#
#   SECURITY_ADMIN_TOKEN=... scripts/marketplace/get_market_token.sh [--subject NAME] [--scope "market:read"] [--ttl SECONDS]
#
# The admin credential comes from SECURITY_ADMIN_TOKEN or the file named by SECURITY_ADMIN_TOKEN_FILE; it is
# sent to curl on stdin (never on a command line) and never printed.
set -euo pipefail

readonly PROG="${0##*/}"
url="${SECURITY_MCP_URL:-http://127.0.0.1:7008}"
subject="${MARKET_TOKEN_SUBJECT:-market-client}"
scope="market:read"
ttl=""
audience=""

usage() {
  cat <<USAGE
Usage: $PROG [options]

Mints a bearer token for the marketplace through security-mcp and prints it on stdout.

Options:
  -s, --subject NAME    token subject (default: \$MARKET_TOKEN_SUBJECT or "market-client")
      --scope SCOPES    space-separated scopes (default: "market:read")
  -t, --ttl SECONDS     lifetime in seconds (default: security-mcp's JWT_DEFAULT_TTL_SECONDS)
      --audience AUD    "aud" claim (optional)
  -u, --url URL         security-mcp base URL (default: \$SECURITY_MCP_URL or http://127.0.0.1:7008)
  -h, --help            this help

Environment:
  SECURITY_ADMIN_TOKEN        the admin credential (required, or SECURITY_ADMIN_TOKEN_FILE)
  SECURITY_ADMIN_TOKEN_FILE   file holding the admin credential
  SECURITY_MCP_URL            security-mcp base URL

Example:
  export MARKETPLACE_JWT_TOKEN="\$($PROG --subject ci-runner)"
USAGE
}

die() {
  local code="$1"
  shift
  printf '%s: %s\n' "$PROG" "$*" >&2
  exit "$code"
}

need_value() {
  [[ $# -ge 2 && -n "$2" ]] || die 64 "$1 needs a value (see --help)"
}

while [[ $# -gt 0 ]]; do
  case "$1" in
    -s | --subject) need_value "$@"; subject="$2"; shift 2 ;;
    --scope) need_value "$@"; scope="$2"; shift 2 ;;
    -t | --ttl) need_value "$@"; ttl="$2"; shift 2 ;;
    --audience) need_value "$@"; audience="$2"; shift 2 ;;
    -u | --url) need_value "$@"; url="$2"; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) die 64 "unknown option: $1 (see --help)" ;;
  esac
done

admin="${SECURITY_ADMIN_TOKEN:-}"
if [[ -z "$admin" && -n "${SECURITY_ADMIN_TOKEN_FILE:-}" ]]; then
  [[ -r "$SECURITY_ADMIN_TOKEN_FILE" ]] || die 66 "cannot read SECURITY_ADMIN_TOKEN_FILE ($SECURITY_ADMIN_TOKEN_FILE)"
  admin="$(<"$SECURITY_ADMIN_TOKEN_FILE")"
  admin="${admin%"${admin##*[![:space:]]}"}"
fi
[[ -n "$admin" ]] || die 64 "set SECURITY_ADMIN_TOKEN (or SECURITY_ADMIN_TOKEN_FILE) to the security-mcp admin credential"
case "$admin" in
  *[[:space:][:cntrl:]\"\\]*) die 64 "SECURITY_ADMIN_TOKEN holds spaces, quotes or backslashes, which cannot be sent in a header" ;;
esac

# Inputs are restricted to characters that need no JSON escaping.
[[ "$subject" =~ ^[A-Za-z0-9._:@/+-]{1,256}$ ]] || die 64 "--subject may hold letters, digits and . _ : @ / + - (1-256 chars)"
[[ "$scope" =~ ^[A-Za-z0-9._:*/-]+( [A-Za-z0-9._:*/-]+)*$ ]] || die 64 "--scope must be space-separated tokens of letters, digits and . _ : * / -"
[[ -z "$ttl" || "$ttl" =~ ^[0-9]{1,9}$ ]] || die 64 "--ttl must be a number of seconds"
[[ -z "$audience" || "$audience" =~ ^[A-Za-z0-9._:@/+-]{1,256}$ ]] || die 64 "--audience may hold letters, digits and . _ : @ / + -"
[[ "$url" =~ ^https?://[^[:space:]]+$ ]] || die 64 "SECURITY_MCP_URL must be an http(s) URL"
command -v curl >/dev/null 2>&1 || die 69 "curl is required"

body="{\"subject\":\"$subject\",\"scope\":\"$scope\""
[[ -n "$ttl" ]] && body+=",\"ttlSeconds\":$ttl"
[[ -n "$audience" ]] && body+=",\"audience\":\"$audience\""
body+="}"

# json_field FIELD < json: prints result.token or error (empty when absent), with jq, node or python3.
json_field() {
  local field="$1"
  if command -v jq >/dev/null 2>&1; then
    jq -r --arg f "$field" 'if $f == "token" then (.result.token // empty) else (.error // empty) end' 2>/dev/null || true
  elif command -v node >/dev/null 2>&1; then
    node -e '
      let s = ""; process.stdin.on("data", (c) => (s += c)).on("end", () => {
        try { const j = JSON.parse(s); const v = process.argv[1] === "token" ? j.result && j.result.token : j.error;
              if (typeof v === "string") process.stdout.write(v + "\n"); } catch {}
      });' "$field"
  elif command -v python3 >/dev/null 2>&1; then
    python3 -c '
import json, sys
try:
    j = json.load(sys.stdin)
    v = (j.get("result") or {}).get("token") if sys.argv[1] == "token" else j.get("error")
    if isinstance(v, str): print(v)
except Exception:
    pass' "$field"
  else
    die 69 "jq, node or python3 is needed to read the JSON answer"
  fi
}

response="$(mktemp)"
trap 'rm -f "$response"' EXIT

status="$(
  printf 'header = "Authorization: Bearer %s"\n' "$admin" |
    curl --silent --show-error --config - \
      --max-time 30 \
      --header 'Content-Type: application/json' \
      --data-binary "$body" \
      --output "$response" \
      --write-out '%{http_code}' \
      "${url%/}/tools/jwt_token"
)" || die 69 "could not reach security-mcp at $url (is it running? set SECURITY_MCP_URL)"

if [[ "$status" != 200 ]]; then
  message="$(json_field error <"$response")"
  die 65 "security-mcp answered HTTP $status: ${message:-no error message}"
fi

token="$(json_field token <"$response")"
[[ -n "$token" ]] || die 65 "security-mcp answered without a token"
printf '%s\n' "$token"
