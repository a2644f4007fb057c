#!/usr/bin/env bash
# Prints the gateway's view of every downstream's health.
set -euo pipefail
curl --silent --show-error --max-time 10 "${GATEWAY_URL:-http://127.0.0.1:7000}/health"
