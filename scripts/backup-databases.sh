#!/usr/bin/env bash
# Back up every embedded SQLite store under DATA_DIR through SQLite's online backup API (safe while
# the services run), check each copy's integrity, dump PostgreSQL with pg_dump when one is
# configured, keep the newest N backups, and write the restore instructions beside them.
set -euo pipefail
readonly PROG="${0##*/}"
# shellcheck source=lib/fleet.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/fleet.sh"

usage() {
  cat <<USAGE
Usage: $PROG [options]

Finds every SQLite database under the data directory (by its file header, whatever its name),
copies it with the online backup API (sqlite3 ".backup", or the sqlite3 npm package when the
command-line tool is missing), runs PRAGMA integrity_check on the copy, and dumps PostgreSQL with
pg_dump --format=custom when a PostgreSQL URL is configured. Each run is one folder
BACKUP_DIR/<UTC time>/ with manifest.json and RESTORE.md; older runs beyond --keep are removed.

Options:
  -d, --data-dir DIR    the fleet's data directory (default: \$FLEET_DATA_DIR, \$DATA_DIR or ~/.local/state/mcp-fleet)
  -o, --out DIR         where backups go (default: \$BACKUP_DIR or DATA_DIR/backups)
  -k, --keep N          keep the newest N runs (default: \$BACKUP_KEEP or 7)
      --pg-url URL      PostgreSQL to dump (default: \$BACKUP_DATABASE_URL, else \$DATABASE_URL when it is postgres://)
      --no-postgres     do not dump PostgreSQL even when configured
  -h, --help            this help

Exit status: 0 when every copy passed its integrity check (and the dump, if any, succeeded);
1 when one failed (the run folder is kept, manifest.json says which); 64 usage; 66 no data
directory; 69 a needed program is missing; 73 the backup folder cannot be written.
USAGE
}

data_dir="$(fleet_data_dir)"
out="${BACKUP_DIR:-}"
keep="${BACKUP_KEEP:-7}"
pg_url="${BACKUP_DATABASE_URL:-}"
if [[ -z "$pg_url" && "${DATABASE_URL:-}" =~ ^postgres(ql)?:// ]]; then pg_url="$DATABASE_URL"; fi
while [[ $# -gt 0 ]]; do
  case "$1" in
    -d | --data-dir) need_value "$@"; data_dir="$2"; shift 2 ;;
    -o | --out) need_value "$@"; out="$2"; shift 2 ;;
    -k | --keep) need_value "$@"; keep="$2"; shift 2 ;;
    --pg-url) need_value "$@"; pg_url="$2"; shift 2 ;;
    --no-postgres) pg_url=""; shift ;;
    -h | --help) usage; exit 0 ;;
    *) die 64 "unknown option: $1 (see --help)" ;;
  esac
done
[[ "$keep" =~ ^[1-9][0-9]*$ ]] || die 64 "--keep must be a positive whole number, got \"$keep\""
[[ -d "$data_dir" ]] || die 66 "no data directory at $data_dir; pass --data-dir or set FLEET_DATA_DIR"
data_dir="$(cd "$data_dir" && pwd)"
out="${out:-$data_dir/backups}"
need_program jq "apt-get install jq"
if [[ "${BACKUP_SQLITE_TOOL:-}" == node ]] || ! command -v sqlite3 >/dev/null 2>&1; then
  tool=node
  need_program node "install Node.js 20, or apt-get install sqlite3"
else
  tool=sqlite3
fi
if [[ -n "$pg_url" ]]; then
  [[ "$pg_url" =~ ^postgres(ql)?:// ]] || die 64 "--pg-url must be a postgres:// URL"
  need_program pg_dump "apt-get install postgresql-client (or pass --no-postgres)"
fi

stamp="$(date -u +%Y%m%dT%H%M%SZ)"
if ! mkdir -p "$out" 2>/dev/null; then die 73 "cannot create $out; pick another folder with --out"; fi
# Two runs within one second get -2, -3, ...
n=1
base="$stamp"
while ! mkdir "$out/$stamp" 2>/dev/null; do
  [[ -d "$out/$stamp" ]] || die 73 "cannot create $out/$stamp; pick another folder with --out"
  n=$((n + 1))
  stamp="$base-$n"
done
run="$out/$stamp"
mkdir -p "$run/sqlite"
chmod 700 "$out" "$run" 2>/dev/null || true
out="$(cd "$out" && pwd)"
run="$out/$stamp"
entries="$run/.entries"
: >"$entries"
failures=0

# The password of a postgres:// URL, so it travels in PGPASSWORD rather than on pg_dump's command line.
redact_url() { sed -E 's#(://[^:/@]+):[^@]*@#\1:[redacted]@#' <<<"$1"; }

backup_sqlite() {
  local src="$1" rel="$2" dest="$run/sqlite/$2" result bytes sum
  mkdir -p "$(dirname "$dest")"
  if [[ $tool == sqlite3 ]]; then
    # .backup is SQLite's online backup API; the copy is then checked on its own.
    if sqlite3 -bail -readonly "$src" ".timeout 10000" ".backup '${dest//\'/\'\'}'" 2>"$run/.err" \
      && result="$(sqlite3 "$dest" 'PRAGMA integrity_check' 2>>"$run/.err")"; then :; else result="backup failed: $(head -c 300 "$run/.err")"; fi
  else
    result="$(node "$FLEET_LIB_DIR/sqlite-backup.cjs" "$src" "$dest" 2>&1)" || true
  fi
  result="$(tr '\n' ' ' <<<"$result" | sed 's/ *$//')"
  bytes="$(stat -c %s "$dest" 2>/dev/null || echo 0)"
  sum="$( (sha256sum "$dest" 2>/dev/null || echo -) | cut -d' ' -f1)"
  [[ "$result" == ok ]] || failures=$((failures + 1))
  jq -nc --arg kind sqlite --arg source "$src" --arg file "sqlite/$rel" --arg integrity "$result" --argjson bytes "$bytes" --arg sha256 "$sum" \
    '{kind: $kind, source: $source, file: $file, bytes: $bytes, sha256: $sha256, integrity: $integrity, ok: ($integrity == "ok")}' >>"$entries"
  printf '%-6s %-60s %s\n' "$([[ "$result" == ok ]] && echo ok || echo FAIL)" "$rel" "$result"
}

found=0
while IFS= read -r -d '' f; do
  [[ "$(head -c 15 "$f" 2>/dev/null)" == "SQLite format 3" ]] || continue
  found=$((found + 1))
  backup_sqlite "$f" "${f#"$data_dir"/}"
done < <(find "$data_dir" \( -path "$out" -o -path "$data_dir/backups" \) -prune -o -type f ! -name '*-wal' ! -name '*-shm' ! -name '*-journal' -size +0 -print0 | sort -z)

if [[ -n "$pg_url" ]]; then
  mkdir -p "$run/postgres"
  shown="$(redact_url "$pg_url")"
  password=""
  if [[ "$pg_url" =~ ^(postgres(ql)?://[^:/@]+):([^@]*)@(.*)$ ]]; then
    password="$(printf '%b' "${BASH_REMATCH[3]//%/\\x}")"
    pg_url="${BASH_REMATCH[1]}@${BASH_REMATCH[4]}"
  fi
  dbname="$(sed -E 's#^[^/]*//[^/]*/?([^?]*).*#\1#' <<<"$pg_url")"
  dump="$run/postgres/${dbname:-postgres}.dump"
  if PGPASSWORD="$password" pg_dump --format=custom --no-owner --dbname="$pg_url" --file="$dump" 2>"$run/.err" \
    && pg_restore --list "$dump" >/dev/null 2>>"$run/.err"; then
    result=ok
  else
    result="pg_dump failed: $(head -c 300 "$run/.err" | tr '\n' ' ')"
    failures=$((failures + 1))
  fi
  jq -nc --arg source "$shown" --arg file "postgres/$(basename "$dump")" --arg result "$result" --argjson bytes "$(stat -c %s "$dump" 2>/dev/null || echo 0)" \
    '{kind: "postgres", source: $source, file: $file, bytes: $bytes, integrity: $result, ok: ($result == "ok")}' >>"$entries"
  printf '%-6s %-60s %s\n' "$([[ $result == ok ]] && echo ok || echo FAIL)" "postgres $shown" "$result"
fi

jq -s --arg at "$stamp" --arg dataDir "$data_dir" --arg tool "$tool" --argjson failures "$failures" \
  '{createdAt: $at, dataDir: $dataDir, sqliteTool: $tool, ok: ($failures == 0), failures: $failures, files: .}' "$entries" | atomic_write "$run/manifest.json" 600
rm -f "$entries" "$run/.err"

{
  printf '# Restoring backup %s\n\nTaken from %s. manifest.json lists every file with its size, SHA-256 and integrity check.\n\n' "$stamp" "$data_dir"
  cat <<'STEPS'
1. Stop the fleet (Ctrl-C the launcher, or `docker compose stop`), so nothing writes while you restore.
2. SQLite stores: copy each file under sqlite/ back to the same place under the data directory and
   remove its stale `-wal` and `-shm` files:

   ```sh
STEPS
  # shellcheck disable=SC2016 # "$f" is for the operator's shell, not this one.
  printf '   cd %q && find . -type f | while read -r f; do cp -p "$f" %q/"$f"; rm -f %q/"$f"-wal %q/"$f"-shm; done\n' \
    "$run/sqlite" "$data_dir" "$data_dir" "$data_dir"
  cat <<'STEPS'
   ```

   Check one with `sqlite3 FILE "PRAGMA integrity_check"` (answers ok).
3. PostgreSQL (when postgres/ exists): `pg_restore --clean --if-exists --no-owner --dbname=URL postgres/NAME.dump`.
4. Start the fleet again and run scripts/health-check.sh.
STEPS
} | atomic_write "$run/RESTORE.md" 600

# Retention: the newest --keep run folders stay.
mapfile -t runs < <(find "$out" -mindepth 1 -maxdepth 1 -type d -regextype posix-extended -regex '.*/[0-9]{8}T[0-9]{6}Z(-[0-9]+)?' -printf '%f\n' | sort)
removed=0
while [[ ${#runs[@]} -gt $keep ]]; do
  rm -rf "${out:?}/${runs[0]}"
  runs=("${runs[@]:1}")
  removed=$((removed + 1))
done

log "$found SQLite store(s)$([[ -n "$pg_url" ]] && echo ' and PostgreSQL') backed up to $run ($failures failure(s)); $removed old run(s) removed; restore: $run/RESTORE.md"
[[ $failures == 0 ]] || exit 1
