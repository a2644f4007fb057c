#!/usr/bin/env bash
# Smoke test of a running `docker compose up`: the gateway answers MCP, every composed service's
# /health is 200, and the monitoring probes answer (Prometheus /-/healthy, Loki /ready, Grafana).
# Usage: scripts/ci/compose-smoke.sh [--help]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then
  sed -n '2,4p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi

fail=0
check() { # name url
  local code
  code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$2" || true)
  if [ "$code" = "200" ]; then printf 'ok    %-22s %s\n' "$1" "$2"; else printf 'FAIL  %-22s %s (HTTP %s)\n' "$1" "$2" "$code"; fail=1; fi
}

# Every composed service publishes its documented port on 127.0.0.1 (compose.yaml, generated from the inventory).
while read -r id port; do
  check "$id" "http://127.0.0.1:${port}/health"
done < <(awk '/^  [a-z0-9-]+:$/{svc=$1; sub(":","",svc)} /- .127\.0\.0\.1:[0-9]+:[0-9]+./{split($0,a,":"); print svc, a[2]}' compose.yaml | grep -Ev '^(prometheus|grafana|loki) ')

check prometheus http://127.0.0.1:7028/-/healthy
check loki http://127.0.0.1:7032/ready
check grafana http://127.0.0.1:7031/api/health

reply=$(curl -s --max-time 10 http://127.0.0.1:7000/mcp -H 'content-type: application/json' \
  -d '{"jsonrpc":"2.0","id":1,"method":"tools/list"}')
if printf '%s' "$reply" | grep -q '"tools"'; then echo "ok    gateway tools/list"; else echo "FAIL  gateway tools/list: $reply"; fail=1; fi
reply=$(curl -s --max-time 10 http://127.0.0.1:7000/mcp -d '{"tool":"system_info","arguments":{}}')
if printf '%s' "$reply" | grep -q '"success":true'; then echo "ok    gateway system_info"; else echo "FAIL  gateway system_info: $reply"; fail=1; fi

exit "$fail"
