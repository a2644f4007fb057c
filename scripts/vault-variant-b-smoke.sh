#!/usr/bin/env bash
# Smoke test of variant B (the secrets overlay, compose.vault.yaml) and the core entry points:
# the token file, Vault itself, the secrets UI on its store, and the gateway's health, catalog and
# MCP entry point. Read-only unless --write-probe.
set -euo pipefail
readonly PROG="${0##*/}"
# shellcheck source=lib/fleet.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/fleet.sh"

usage() {
  cat <<USAGE
Usage: $PROG [options]

Checks, in order (each ok or FAIL; the first failure does not stop the others):
  token file      VAULT_TOKEN_FILE exists, is non-empty and is not readable by others
  vault           GET \$VAULT_ADDR/v1/sys/health: initialised and unsealed (skipped with --allow-file-store and no VAULT_ADDR)
  secrets-ui      GET /health healthy, GET /api/services answers with the admin token, and the store is Vault
  write probe     (--write-probe) PUT then read back a value of SERVICE's first secret variable, then restore it
  gateway         GET /health, GET /tools/list with tools, POST /mcp JSON-RPC tools/list

Options:
      --allow-file-store   accept the secrets UI on its encrypted file store (variant A) instead of Vault
      --write-probe ID     also write and restore one secret of service ID (changes its store version)
      --skip-gateway       do not check the gateway
  -t, --timeout SECS       per-request time limit (default: 5)
  -h, --help               this help

Environment:
  VAULT_ADDR               Vault base URL (default http://127.0.0.1:8200 when VAULT_TOKEN_FILE is set)
  VAULT_TOKEN_FILE         the token file compose mounts (default ./.secrets/vault-token)
  SECRETS_UI_URL           secrets UI (default http://FLEET_HOST:10000, plus FLEET_PORT_OFFSET)
  SECRETS_UI_ADMIN_TOKEN   its admin token (default: the content of SECRETS_UI_ADMIN_TOKEN_FILE, else of VAULT_TOKEN_FILE)
  MEGA_ORCHESTRATOR_URL    the gateway (default http://FLEET_HOST:7000, plus FLEET_PORT_OFFSET)

Exit status: 0 when every check passed, 1 when one failed, 64 usage, 69 curl or jq missing.
USAGE
}

allow_file=0
probe_service=""
skip_gateway=0
timeout=5
while [[ $# -gt 0 ]]; do
  case "$1" in
    --allow-file-store) allow_file=1; shift ;;
    --write-probe) need_value "$@"; probe_service="$2"; shift 2 ;;
    --skip-gateway) skip_gateway=1; shift ;;
    -t | --timeout) need_value "$@"; timeout="$2"; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) die 64 "unknown option: $1 (see --help)" ;;
  esac
done
[[ "$timeout" =~ ^[0-9]+([.][0-9]+)?$ ]] || die 64 "--timeout must be a number of seconds"
need_program curl "apt-get install curl"
need_program jq "apt-get install jq"

token_file="${VAULT_TOKEN_FILE:-$REPO_ROOT/.secrets/vault-token}"
secrets_url="$(service_url secrets-ui 10000)"
gateway_url="$(service_url mega-orchestrator 7000)"
failures=0
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

pass() { printf '%-14s ok    %s\n' "$1" "$2"; }
fail() {
  printf '%-14s FAIL  %s\n' "$1" "$2"
  failures=$((failures + 1))
}

# call METHOD URL [BODY] with the admin token on curl's stdin-read config (never on the command line).
admin_call() {
  local method="$1" url="$2" body="${3:-}"
  local -a args=(-sS -o "$tmp/body" -w '%{http_code}' --max-time "$timeout" -X "$method" -K -)
  [[ -n "$body" ]] && args+=(-H 'content-type: application/json' --data-binary "$body")
  printf 'header = "Authorization: Bearer %s"\n' "$admin_token" | curl "${args[@]}" "$url" 2>"$tmp/err" || echo 000
}

# 1. token file
if [[ ! -s "$token_file" ]]; then
  fail "token file" "$token_file is missing or empty; put the Vault token there (see .env.example)"
elif (($(stat -c '0%a' "$token_file") & 077)); then
  fail "token file" "$token_file is readable by others (mode $(stat -c %a "$token_file")); chmod 600 it"
else
  pass "token file" "$token_file ($(stat -c %a "$token_file"))"
fi

# 2. vault
vault_addr="${VAULT_ADDR:-}"
[[ -z "$vault_addr" && $allow_file == 0 ]] && vault_addr="http://127.0.0.1:8200"
if [[ -n "$vault_addr" ]]; then
  read -r code _ < <(probe "${vault_addr%/}/v1/sys/health" "$timeout" "$tmp/vault")
  if [[ $code == 200 ]]; then
    pass vault "${vault_addr%/} initialised, unsealed, active"
  elif [[ $code == 000 ]]; then
    fail vault "nothing answers at ${vault_addr%/}; start the overlay: docker compose -f compose.yaml -f compose.vault.yaml up -d"
  else
    fail vault "${vault_addr%/}/v1/sys/health answered $code ($(jq -c '{initialized, sealed, standby}' "$tmp/vault" 2>/dev/null || echo '?'))"
  fi
else
  pass vault "skipped: --allow-file-store and no VAULT_ADDR"
fi

# 3. secrets UI
admin_token="${SECRETS_UI_ADMIN_TOKEN:-}"
if [[ -z "$admin_token" && -n "${SECRETS_UI_ADMIN_TOKEN_FILE:-}" && -r "${SECRETS_UI_ADMIN_TOKEN_FILE}" ]]; then admin_token="$(tr -d '\n' <"$SECRETS_UI_ADMIN_TOKEN_FILE")"; fi
if [[ -z "$admin_token" && -r "$token_file" ]]; then admin_token="$(tr -d '\n' <"$token_file")"; fi
read -r code _ < <(probe "$secrets_url/health" "$timeout" "$tmp/health")
if [[ $code != 200 ]]; then
  detail="$(jq -c '[.checks // {} | to_entries[] | select(.value.status != "ok") | {(.key): .value.error}] | add // empty' "$tmp/health" 2>/dev/null || true)"
  fail secrets-ui "$secrets_url/health answered ${code/#000/nothing}${detail:+: $detail}"
elif [[ -z "$admin_token" ]]; then
  fail secrets-ui "no admin token: set SECRETS_UI_ADMIN_TOKEN (or SECRETS_UI_ADMIN_TOKEN_FILE)"
else
  code="$(admin_call GET "$secrets_url/api/services")"
  kind="$(jq -r '.result.store.kind // empty' "$tmp/body" 2>/dev/null || true)"
  if [[ $code != 200 ]]; then
    fail secrets-ui "GET /api/services answered $code: $(jq -r '.error // empty' "$tmp/body" 2>/dev/null || true)"
  elif [[ $kind != vault && $allow_file == 0 ]]; then
    fail secrets-ui "the secrets UI uses the $kind store, not Vault: set VAULT_ADDR on it (compose.vault.yaml does) or pass --allow-file-store"
  else
    pass secrets-ui "$secrets_url healthy, store $kind, $(jq '[.result.services[] | select(.variables | length > 0)] | length' "$tmp/body") services with secrets"
  fi
fi

# 4. write probe: set a marker, read it back through reveal, put the old value (or its absence) back.
if [[ -n "$probe_service" && -n "$admin_token" ]]; then
  code="$(admin_call GET "$secrets_url/api/secrets/$probe_service")"
  key="$(jq -r '.result.keys[0].name // empty' "$tmp/body" 2>/dev/null || true)"
  was_set="$(jq -r '.result.keys[0].set // false' "$tmp/body" 2>/dev/null || echo false)"
  if [[ $code != 200 || -z "$key" ]]; then
    fail "write probe" "$probe_service has no secret variable to probe (GET answered $code)"
  else
    old=null
    if [[ $was_set == true ]]; then
      admin_call POST "$secrets_url/api/secrets/$probe_service/reveal" "$(jq -nc --arg k "$key" '{key: $k}')" >/dev/null
      old="$(jq -c '.result.value' "$tmp/body")"
    fi
    marker="smoke-$(date +%s)-$RANDOM"
    code="$(admin_call PUT "$secrets_url/api/secrets/$probe_service" "$(jq -nc --arg k "$key" --arg v "$marker" '{values: {($k): $v}}')")"
    admin_call POST "$secrets_url/api/secrets/$probe_service/reveal" "$(jq -nc --arg k "$key" '{key: $k}')" >/dev/null
    back="$(jq -r '.result.value // empty' "$tmp/body" 2>/dev/null || true)"
    restore="$(admin_call PUT "$secrets_url/api/secrets/$probe_service" "$(jq -nc --arg k "$key" --argjson v "$old" '{values: {($k): $v}}')")"
    if [[ $code == 200 && "$back" == "$marker" && $restore == 200 ]]; then
      pass "write probe" "$probe_service $key written, read back and restored"
    else
      fail "write probe" "$probe_service $key: write $code, read back $([[ "$back" == "$marker" ]] && echo same || echo different), restore $restore"
    fi
  fi
fi

# 5. gateway
if [[ $skip_gateway == 0 ]]; then
  read -r code _ < <(probe "$gateway_url/health" "$timeout" "$tmp/gw")
  tools="$(curl -sS --max-time "$timeout" "$gateway_url/tools/list" 2>/dev/null | jq '.tools | length' 2>/dev/null || echo 0)"
  rpc="$(curl -sS --max-time "$timeout" -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \
    --data-binary '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}' "$gateway_url/mcp" 2>/dev/null |
    sed -n 's/^data: //p;/^{/p' | jq -r 'select(.id == 1) | (.result.tools | length)' 2>/dev/null | head -n1 || true)"
  if [[ $code == 200 && "$tools" -gt 0 && "${rpc:-0}" -gt 0 ]]; then
    pass gateway "$gateway_url healthy, $tools tools in /tools/list, $rpc over MCP tools/list"
  else
    fail gateway "$gateway_url: /health ${code/#000/no answer}, /tools/list $tools tools, MCP tools/list ${rpc:-no answer}"
  fi
fi

if [[ $failures -gt 0 ]]; then die 1 "$failures check(s) failed"; fi
