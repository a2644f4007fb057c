#!/usr/bin/env bash
# Mint a marketplace bearer token through security-mcp (POST /tools/jwt_token) and print only the token.
#
#   SECURITY_ADMIN_TOKEN=... scripts/marketplace/get_market_token.sh [--subject NAME] [--scope "market:read"] [--ttl SECONDS]
#
# The admin credential comes from SECURITY_ADMIN_TOKEN or the file named by SECURITY_ADMIN_TOKEN_FILE; it is
# sent to curl on stdin (never on a command line) and never printed.
set -euo pipefail

readonly PROG="${0##*/}"
# The folder of this script, in bash alone (clients may run it with a bare PATH).
here="${BASH_SOURCE[0]%/*}"
[[ "$here" == "${BASH_SOURCE[0]}" ]] && here=.
# shellcheck source=../lib/cli.sh
source "$here/../lib/cli.sh"
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
  message="$(json_get error <"$response")"
  die 65 "security-mcp answered HTTP $status: ${message:-no error message}"
fi

token="$(json_get result.token <"$response")"
[[ -n "$token" ]] || die 65 "security-mcp answered without a token"
printf '%s\n' "$token"
