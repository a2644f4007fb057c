#!/usr/bin/env bash
# Resolve one skill in the marketplace, download it, check its sha256 and install it into an agent client's skills folder.
#
#   MARKETPLACE_JWT_TOKEN=... scripts/marketplace/install_skill_from_market.sh --skill NAME [--version RANGE] [--dest DIR]
#
# The archive is checked before anything is written where the client reads: its sha256 must equal the one the
# marketplace publishes (metadata and X-Checksum-Sha256 header), and every entry must be a regular file or folder
# with a relative path (no absolute path, "..", link or device). It is unpacked in a temporary folder next to the
# destination and moved into place; on any failure nothing is left behind. Re-running with the same version is a no-op.
set -euo pipefail

readonly PROG="${0##*/}"
# The folder of this script, in bash alone (clients may run it with a bare PATH).
here="${BASH_SOURCE[0]%/*}"
[[ "$here" == "${BASH_SOURCE[0]}" ]] && here=.
# shellcheck source=../lib/cli.sh
source "$here/../lib/cli.sh"
url="${MARKETPLACE_URL:-http://127.0.0.1:7034}"
skill=""
version="latest"
dest="${MARKET_SKILLS_DIR:-}"
client="claude-code"
token_file="${MARKETPLACE_JWT_TOKEN_FILE:-}"

usage() {
  cat <<USAGE
Usage: $PROG --skill NAME [options]

Installs one skill from the marketplace into a client's skills folder (<dest>/<name>).

Options:
  -s, --skill NAME       skill name (required)
  -v, --version RANGE    exact version, "latest" (default) or a semver range such as ^1.2
  -d, --dest DIR         the client's skills folder (default: \$MARKET_SKILLS_DIR or the client's own)
  -c, --client NAME      claude-code (~/.claude/skills, default), codex (~/.codex/skills), gemini-cli (~/.gemini/skills)
  -u, --url URL          marketplace base URL (default: \$MARKETPLACE_URL or http://127.0.0.1:7034)
      --token-file FILE  file holding the bearer token (default: \$MARKETPLACE_JWT_TOKEN_FILE)
  -h, --help             this help

Environment:
  MARKETPLACE_URL            marketplace base URL
  MARKETPLACE_JWT_TOKEN      bearer token (scope market:read) when the marketplace has JWT_SECRET set
  MARKETPLACE_JWT_TOKEN_FILE file holding that token
  MARKET_SKILLS_DIR          default destination folder

Exit codes: 0 installed or already installed, 64 usage, 65 refused archive or answer, 69 marketplace unreachable or tool missing, 73 cannot write.
USAGE
}

while [[ $# -gt 0 ]]; do
  case "$1" in
    -s | --skill) need_value "$@"; skill="$2"; shift 2 ;;
    -v | --version) need_value "$@"; version="$2"; shift 2 ;;
    -d | --dest) need_value "$@"; dest="$2"; shift 2 ;;
    -c | --client) need_value "$@"; client="$2"; shift 2 ;;
    -u | --url) need_value "$@"; url="$2"; shift 2 ;;
    --token-file) need_value "$@"; token_file="$2"; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) die 64 "unknown option: $1 (see --help)" ;;
  esac
done

[[ -n "$skill" ]] || die 64 "--skill is required (see --help)"
[[ "$skill" =~ ^[a-z0-9]+(-[a-z0-9]+)*$ && ${#skill} -le 64 ]] || die 64 "--skill must be lowercase letters, digits and single hyphens (at most 64)"
[[ "$version" =~ ^[A-Za-z0-9.+~^*\<\>=|\ -]{1,128}$ ]] || die 64 "--version must be a version, \"latest\" or a semver range"
[[ "$url" =~ ^https?://[^[:space:]]+$ ]] || die 64 "MARKETPLACE_URL must be an http(s) URL"
if [[ -z "$dest" ]]; then
  case "$client" in
    claude-code) dest="$HOME/.claude/skills" ;;
    codex) dest="$HOME/.codex/skills" ;;
    gemini-cli) dest="$HOME/.gemini/skills" ;;
    *) die 64 "--client must be claude-code, codex or gemini-cli (or give --dest)" ;;
  esac
fi

token="${MARKETPLACE_JWT_TOKEN:-}"
if [[ -z "$token" && -n "$token_file" ]]; then
  [[ -r "$token_file" ]] || die 66 "cannot read the token file ($token_file)"
  token="$(<"$token_file")"
  token="${token%"${token##*[![:space:]]}"}"
fi
[[ -z "$token" || "$token" =~ ^[A-Za-z0-9._~+/=-]{1,4096}$ ]] || die 64 "the bearer token holds characters a token cannot have"

for tool in curl tar mktemp; do
  command -v "$tool" >/dev/null 2>&1 || die 69 "$tool is required"
done

# sha256_of FILE: the hex digest, with sha256sum, shasum or openssl.
sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d' ' -f1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d' ' -f1
  elif command -v openssl >/dev/null 2>&1; then
    openssl dgst -sha256 -r "$1" | cut -d' ' -f1
  else
    die 69 "sha256sum, shasum or openssl is needed to check the download"
  fi
}

# urlencode STRING: percent-encodes everything but unreserved characters.
urlencode() {
  local s="$1" out="" c i
  for ((i = 0; i < ${#s}; i++)); do
    c="${s:i:1}"
    case "$c" in
      [A-Za-z0-9.~_-]) out+="$c" ;;
      *) printf -v c '%%%02X' "'$c"; out+="$c" ;;
    esac
  done
  printf '%s' "$out"
}

mkdir -p "$dest" 2>/dev/null || die 73 "cannot create the skills folder $dest"
[[ -d "$dest" && -w "$dest" && ! -L "$dest" ]] || die 73 "$dest is not a writable folder (or is a link)"
work="$(mktemp -d "$dest/.install-$skill.XXXXXX")" || die 73 "cannot write in $dest"
cleanup() { rm -rf -- "$work"; }
trap cleanup EXIT

# curl_market PATH OUT [HEADERS]: GET with the token sent on stdin (never on a command line); prints the HTTP status.
curl_market() {
  local path="$1" out="$2" headers="${3:-/dev/null}"
  {
    [[ -n "$token" ]] && printf 'header = "Authorization: Bearer %s"\n' "$token"
    true
  } | curl --silent --show-error --config - --max-time 60 --dump-header "$headers" --output "$out" --write-out '%{http_code}' "${url%/}$path"
}

# 1. Resolve the name and range to one version and its digest.
meta="$work/meta.json"
status="$(curl_market "/skills/v1/packages/$skill/$(urlencode "$version")" "$meta")" || die 69 "could not reach the marketplace at $url (is it running? set MARKETPLACE_URL)"
if [[ "$status" != 200 ]]; then
  die 65 "the marketplace answered HTTP $status for $skill@$version: $(json_get error <"$meta")"
fi
resolved="$(json_get result.version <"$meta")"
want="$(json_get result.dist.sha256 <"$meta")"
[[ "$resolved" =~ ^[0-9A-Za-z.+-]{1,128}$ ]] || die 65 "the marketplace answered without a usable version"
[[ "$want" =~ ^[a-f0-9]{64}$ ]] || die 65 "the marketplace answered without a sha256 digest"

target="$dest/$skill"
marker="$target/.market-install"
if [[ -f "$marker" && ! -L "$marker" && "$(<"$marker")" == "$skill $resolved $want" && -f "$target/SKILL.md" ]]; then
  printf '%s@%s is already installed in %s (sha256 %s)\n' "$skill" "$resolved" "$target" "$want"
  exit 0
fi

# 2. Download and check the digest against the metadata and the header.
archive="$work/archive.tgz"
headers="$work/headers"
status="$(curl_market "/skills/v1/packages/$skill/$(urlencode "$resolved")/download" "$archive" "$headers")" || die 69 "the download from $url failed"
[[ "$status" == 200 ]] || die 65 "the download answered HTTP $status"
got="$(sha256_of "$archive")"
header_sha="$(tr -d '\r' <"$headers" | sed -n 's/^[Xx]-[Cc]hecksum-[Ss]ha256:[[:space:]]*//p' | tail -n 1)"
[[ "$got" == "$want" ]] || die 65 "sha256 mismatch for $skill@$resolved: downloaded $got, the marketplace publishes $want; nothing was installed"
[[ -z "$header_sha" || "$header_sha" == "$want" ]] || die 65 "sha256 mismatch: the X-Checksum-Sha256 header says $header_sha, the metadata $want; nothing was installed"

# 3. Inspect every entry before unpacking: regular files and folders with relative paths only.
listing="$work/listing"
tar --absolute-names --numeric-owner -tvzf "$archive" >"$listing" 2>/dev/null || die 65 "the archive is not a readable tar.gz; nothing was installed"
while IFS= read -r line; do
  case "${line:0:1}" in
    - | d) ;;
    *) die 65 "the archive holds a link, device or other special entry ($line); nothing was installed" ;;
  esac
done <"$listing"
while IFS= read -r name; do
  case "/$name/" in
    //* | */../* | *\\*) die 65 "the archive entry \"$name\" escapes the skill folder; nothing was installed" ;;
  esac
done < <(tar --absolute-names -tzf "$archive")

# 4. Unpack in the temporary folder, check again what landed, then move it into place.
unpacked="$work/unpacked"
mkdir "$unpacked"
tar -xzf "$archive" -C "$unpacked" --no-same-owner --no-same-permissions 2>/dev/null || die 65 "the archive could not be unpacked; nothing was installed"
if [[ -n "$(find "$unpacked" ! -type f ! -type d -print -quit)" ]]; then
  die 65 "the archive unpacked to a link or special file; nothing was installed"
fi
[[ -f "$unpacked/SKILL.md" ]] || die 65 "the archive has no SKILL.md at its top; nothing was installed"
printf '%s %s %s\n' "$skill" "$resolved" "$want" >"$unpacked/.market-install"

if [[ -e "$target" || -L "$target" ]]; then
  mv -- "$target" "$work/previous" || die 73 "cannot replace $target"
fi
mv -- "$unpacked" "$target" || die 73 "cannot move the skill into $target"
printf 'installed %s@%s in %s (sha256 %s)\n' "$skill" "$resolved" "$target" "$want"
