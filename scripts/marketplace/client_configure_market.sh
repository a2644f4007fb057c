#!/usr/bin/env bash
# Write the marketplace URL and a bearer token into an agent client's environment file.
#
#   MARKETPLACE_JWT_TOKEN=... scripts/marketplace/client_configure_market.sh [--env-file FILE] [--url URL]
#   scripts/marketplace/get_market_token.sh | scripts/marketplace/client_configure_market.sh --token-stdin
#
# The file keeps every other line; MARKETPLACE_URL and MARKETPLACE_JWT_TOKEN lines are replaced (or added). It is
# written to a temporary file in the same folder and renamed, with mode 600. The token is never printed.
set -euo pipefail

readonly PROG="${0##*/}"
# The folder of this script, in bash alone (clients may run it with a bare PATH).
here="${BASH_SOURCE[0]%/*}"
[[ "$here" == "${BASH_SOURCE[0]}" ]] && here=.
# shellcheck source=../lib/cli.sh
source "$here/../lib/cli.sh"
env_file="${MARKET_CLIENT_ENV_FILE:-$HOME/.config/mcp-fleet/market.env}"
url="${MARKETPLACE_URL:-http://127.0.0.1:7034}"
token_stdin=0
token_file=""
check=0

usage() {
  cat <<USAGE
Usage: $PROG [options]

Writes MARKETPLACE_URL and MARKETPLACE_JWT_TOKEN into a client's environment file (mode 600, other lines kept).

Options:
  -f, --env-file FILE   the environment file (default: \$MARKET_CLIENT_ENV_FILE or ~/.config/mcp-fleet/market.env)
  -u, --url URL         marketplace base URL (default: \$MARKETPLACE_URL or http://127.0.0.1:7034)
      --token-stdin     read the token from stdin (e.g. piped from get_market_token.sh)
      --token-file FILE read the token from a file
      --check           call the marketplace's /skills/v1/index with the token before writing
  -h, --help            this help

The token comes from --token-stdin, --token-file or \$MARKETPLACE_JWT_TOKEN; without one only MARKETPLACE_URL is
written (for a marketplace without JWT_SECRET). It is never taken from the command line, where ps would show it.
USAGE
}

while [[ $# -gt 0 ]]; do
  case "$1" in
    -f | --env-file) need_value "$@"; env_file="$2"; shift 2 ;;
    -u | --url) need_value "$@"; url="$2"; shift 2 ;;
    --token-stdin) token_stdin=1; shift ;;
    --token-file) need_value "$@"; token_file="$2"; shift 2 ;;
    --check) check=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) die 64 "unknown option: $1 (see --help)" ;;
  esac
done

[[ "$url" =~ ^https?://[A-Za-z0-9._~:/?#@!\$\&\'()*+,\;=%-]+$ ]] || die 64 "the URL must be an http(s) URL without spaces or quotes"
url="${url%/}"

token="${MARKETPLACE_JWT_TOKEN:-}"
if [[ "$token_stdin" == 1 ]]; then
  IFS= read -r token || [[ -n "$token" ]] || die 64 "--token-stdin: nothing on stdin"
elif [[ -n "$token_file" ]]; then
  [[ -r "$token_file" ]] || die 66 "cannot read the token file ($token_file)"
  token="$(<"$token_file")"
fi
token="${token#"${token%%[![:space:]]*}"}"
token="${token%"${token##*[![:space:]]}"}"
[[ -z "$token" || "$token" =~ ^[A-Za-z0-9._~+/=-]{1,4096}$ ]] || die 64 "the token holds characters a bearer token cannot have"

if [[ "$check" == 1 ]]; then
  command -v curl >/dev/null 2>&1 || die 69 "curl is required for --check"
  status="$(
    {
      [[ -n "$token" ]] && printf 'header = "Authorization: Bearer %s"\n' "$token"
      true
    } | curl --silent --config - --max-time 15 --output /dev/null --write-out '%{http_code}' "$url/skills/v1/index?limit=1"
  )" || die 69 "could not reach the marketplace at $url"
  [[ "$status" == 200 ]] || die 65 "the marketplace answered HTTP $status with this token; nothing was written"
fi

dir="$(dirname -- "$env_file")"
mkdir -p -- "$dir" 2>/dev/null || die 73 "cannot create $dir"
[[ ! -L "$env_file" ]] || die 73 "$env_file is a symbolic link; give the real file"
[[ ! -e "$env_file" || -f "$env_file" ]] || die 73 "$env_file is not a regular file"

tmp="$(umask 077 && mktemp "$dir/.market-env.XXXXXX")" || die 73 "cannot write in $dir"
trap 'rm -f -- "$tmp"' EXIT
if [[ -f "$env_file" ]]; then
  # Keep every line but the ones this script owns (also their "export " forms).
  grep -v -E '^[[:space:]]*(export[[:space:]]+)?MARKETPLACE_(URL|JWT_TOKEN)=' -- "$env_file" >"$tmp" || true
  # A last line without a newline must not swallow ours.
  [[ ! -s "$tmp" || "$(tail -c 1 -- "$tmp" | od -An -c | tr -d ' ')" == '\n' ]] || printf '\n' >>"$tmp"
fi
printf 'MARKETPLACE_URL=%s\n' "$url" >>"$tmp"
[[ -n "$token" ]] && printf 'MARKETPLACE_JWT_TOKEN=%s\n' "$token" >>"$tmp"
chmod 600 -- "$tmp"
mv -f -- "$tmp" "$env_file" || die 73 "cannot replace $env_file"
trap - EXIT
printf 'wrote MARKETPLACE_URL%s to %s (mode 600)\n' "$([[ -n "$token" ]] && printf ' and MARKETPLACE_JWT_TOKEN')" "$env_file"
