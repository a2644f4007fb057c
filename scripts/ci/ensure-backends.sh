#!/usr/bin/env bash
# Make sure the engines the tests talk to are installed and running on loopback:
# PostgreSQL 5432 (trust auth, database test), Redis 6379, Mosquitto 1883; and that the programs
# tests start themselves (Dovecot, Postfix, ffmpeg, pocketsphinx, espeak-ng, sox, Prometheus,
# ShellCheck, bats, Chromium; bubblewrap, the sandbox every program the fleet runs goes into; sqlite3, jq, curl and pg_dump for the operator scripts) are installed. (Grafana Loki has no Debian package: Debian's `loki` is
# an unrelated genetics program, so the Loki tests run only against a LOKI URL given to them.)
# Installs from Debian's packages when missing (CI may run on a new machine), then starts the servers.
set -euo pipefail

log() { printf 'ci: %s\n' "$*" >&2; }
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
wait_port() {
  for _ in $(seq 1 60); do port_open "$1" && return 0; sleep 0.5; done
  log "port $1 did not open"; return 1
}
apt_updated=0
apt_install() {
  if [ "$apt_updated" = 0 ]; then apt-get update -qq >/dev/null; apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

ensure_postgres() {
  port_open 5432 && return 0
  if ! ls /etc/postgresql >/dev/null 2>&1; then
    log "installing PostgreSQL"; apt_install postgresql
  fi
  local ver; ver=$(find /etc/postgresql -mindepth 1 -maxdepth 1 -printf "%f\n" | sort -V | tail -n1)
  local hba="/etc/postgresql/$ver/main/pg_hba.conf"
  if ! grep -q '^host all all 127.0.0.1/32 trust' "$hba"; then
    sed -i '1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust\nlocal all all trust' "$hba"
  fi
  log "starting PostgreSQL $ver"
  pg_ctlcluster --skip-systemctl-redirect "$ver" main start || true
  wait_port 5432
  psql -h 127.0.0.1 -U postgres -tc "SELECT 1 FROM pg_database WHERE datname='test'" | grep -q 1 \
    || psql -h 127.0.0.1 -U postgres -c 'CREATE DATABASE test' >/dev/null
}

ensure_redis() {
  port_open 6379 && return 0
  command -v redis-server >/dev/null || { log "installing Redis"; apt_install redis-server; }
  mkdir -p /var/lib/redis /var/log/redis
  log "starting Redis"
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log
  wait_port 6379
}

ensure_mosquitto() {
  port_open 1883 && return 0
  command -v mosquitto >/dev/null || { log "installing Mosquitto"; apt_install mosquitto; }
  log "starting Mosquitto"
  if [ -f /etc/mosquitto/mosquitto.conf ]; then mosquitto -d -c /etc/mosquitto/mosquitto.conf; else mosquitto -d -p 1883; fi
  wait_port 1883
}

# program on the PATH (or file) -> Debian package that provides it
ensure_tools() {
  local missing=() pair
  for pair in \
    dovecot:dovecot-imapd /usr/lib/dovecot/lmtp:dovecot-lmtpd /usr/sbin/postfix:postfix \
    ffmpeg:ffmpeg ffprobe:ffmpeg pocketsphinx_continuous:pocketsphinx /usr/share/pocketsphinx/model/en-us:pocketsphinx-en-us \
    espeak-ng:espeak-ng sox:sox prometheus:prometheus promtool:prometheus \
    shellcheck:shellcheck bats:bats chromium:chromium bwrap:bubblewrap sqlite3:sqlite3 jq:jq curl:curl pg_dump:postgresql-client; do
    local what=${pair%%:*} pkg=${pair#*:}
    if [[ $what == /* ]]; then [ -e "$what" ] && continue; else command -v "$what" >/dev/null && continue; fi
    [[ " ${missing[*]} " == *" $pkg "* ]] || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing ${missing[*]}"
  apt_install "${missing[@]}"
}

ensure_tools
ensure_postgres
ensure_redis
ensure_mosquitto
log "backends ready: postgres 5432, redis 6379, mosquitto 1883"
