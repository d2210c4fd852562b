#!/bin/sh
# The daily refresh of one national register in the store (docs/data.md, "Daily refresh"), as run by
# deploy/reglookup-refresh@.service (instance rdw or ua-mvs) or docker-compose.refresh.yml:
#
#   refresh.sh rdw        the Dutch register (RDW's vehicles export, and its fuel export)
#   refresh.sh ua-mvs     Ukraine's register (the Ministry of Internal Affairs' yearly ZIPs)
#
# 1. Downloads the register's files into $REFRESH_DIR/<register>/, each only when the server has a
#    newer copy than the one there (deploy/download.mjs).
# 2. Stops there, successfully, when no file is newer than the last import this script made.
# 3. Checks each file: at least REFRESH_MIN_BYTES, the shape of its first bytes, and that the import
#    reads all of it: `reglookup import --dry-run`, which also prints what the refresh would change
#    (records added, changed, unchanged and removed, per operation).
# 4. Replaces the register's operation with the files: `reglookup import --replace` (the other
#    operations untouched), refused with nothing written when it would leave fewer than
#    REFRESH_MIN_KEEP per cent of the records the operation holds now.
# Any failure exits non-zero with a line saying what, and leaves the store as it was.
#
# Settings (environment; the unit reads /etc/reglookup/reglookup.env and /etc/reglookup/refresh.env):
#   DATABASE_URL          the store, as for `reglookup serve`
#   REGLOOKUP             the command that runs reglookup (node /opt/reglookup/bin/reglookup.js)
#   REFRESH_DIR           where downloads are kept ($CACHE_DIRECTORY under systemd, else /var/cache/reglookup-refresh)
#   REFRESH_MIN_BYTES     the least size of a downloaded file (1048576)
#   REFRESH_MIN_KEEP      --min-keep of the import, per cent (90)
#   REFRESH_MODE          replace (the register's operation), or replace-all (the whole store holds exactly the register)
#   REFRESH_FORCE         1: import even when no file changed
#   RDW_VEHICLES_URL, RDW_FUEL_URL   RDW's exports (empty RDW_FUEL_URL: no fuel data, and no 8 GB fuel map)
#   MVS_URLS              the yearly ZIPs, separated by spaces (default: 2013-2026, from data.gov.ua)
set -eu

register=${1:-}
reglookup=${REGLOOKUP:-node /opt/reglookup/bin/reglookup.js}
here=$(dirname "$0")
base=${REFRESH_DIR:-${CACHE_DIRECTORY:-/var/cache/reglookup-refresh}}
dir=$base/$register
min_bytes=${REFRESH_MIN_BYTES:-1048576}
min_keep=${REFRESH_MIN_KEEP:-90}
mode=${REFRESH_MODE:-replace}

say() { printf 'refresh %s: %s\n' "$register" "$*"; }
fail() {
  printf 'refresh %s: %s\n' "$register" "$*" >&2
  exit 1
}

DATA_GOV_UA=https://data.gov.ua/dataset/0ffd8b75-0628-48cc-952a-9302f9799ec0/resource
MVS_DEFAULT="$DATA_GOV_UA/86a9548b-8323-4fa2-972e-0692edf6959f/download/tz_opendata_z01012013_po31122013.zip
$DATA_GOV_UA/80a115ae-61df-4a13-8771-36c2826268df/download/tz_opendata_z01012014_po31122014.zip
$DATA_GOV_UA/09c606dc-d740-40db-96f0-e679eeca6ace/download/tz_opendata_z01012015_po31122015.zip
$DATA_GOV_UA/7bdc2a1b-5399-4ab0-97e0-633e68837b04/download/tz_opendata_z01012016_po31122016.zip
$DATA_GOV_UA/9ce32352-bd11-4324-a2b4-5addbd228b1b/download/tz_opendata_z01012017_po31122017.zip
$DATA_GOV_UA/01323740-88df-46c2-b06e-fbb58c89fe17/download/tz_opendata_z01012018_po01012019.zip
$DATA_GOV_UA/7a58e8f7-9323-47d4-a21d-19486e014eb4/download/tz_opendata_z01012019_po01012020.zip
$DATA_GOV_UA/ebeb92fe-424c-41d1-aacf-288e91049dc9/download/tz_opendata_z01012020_po01012021.zip
$DATA_GOV_UA/c5cb530d-0533-40be-b9ad-f03e06c94b10/download/tz_opendata_z01012021_po01012022.zip
$DATA_GOV_UA/b1bcb4a9-8e60-4a1c-91c0-00faae008816/download/reestrTZ2022.zip
$DATA_GOV_UA/c3a12388-55c2-4546-8b71-b4b7ff0d8b16/download/reestrtz2023.zip
$DATA_GOV_UA/c3ffecc4-bb5c-4102-b761-6dcfeb60b4fe/download/reestrtz2024.zip
$DATA_GOV_UA/b7e72d22-55f5-4545-87dc-94e6c8ee03ef/download/reestrtz2025.zip
$DATA_GOV_UA/3f13166f-090b-499e-8e23-e9851c5a5f67/download/reestrtz2026.zip"

case $register in
  rdw)
    format=rdw
    vehicles_url=${RDW_VEHICLES_URL:-https://opendata.rdw.nl/api/views/m9d7-ebf2/rows.csv?accessType=DOWNLOAD}
    fuel_url=${RDW_FUEL_URL-https://opendata.rdw.nl/api/views/8ys7-d773/rows.csv?accessType=DOWNLOAD}
    ;;
  ua-mvs)
    format=ua-mvs
    urls=${MVS_URLS:-$MVS_DEFAULT}
    ;;
  *) fail "give the register to refresh: rdw or ua-mvs (not '$register')" ;;
esac
case $mode in
  replace | replace-all) ;;
  *) fail "REFRESH_MODE must be replace or replace-all, not '$mode'" ;;
esac
mkdir -p "$dir"
# One refresh at a time: two registers' imports at once would wait on each other's write lock.
exec 9>"$base/.lock"
if command -v flock >/dev/null; then flock 9; fi

# fetch URL NAME: the file, downloaded when the server has a newer copy; its path on stdout.
fetch() {
  out="$dir/$2"
  note=$(node "$here/download.mjs" "$1" "$out") || fail "download failed: $1"
  say "$2: $note" >&2
  [ -f "$out" ] || fail "$2: not downloaded"
  size=$(wc -c <"$out")
  [ "$size" -ge "$min_bytes" ] || fail "$2 is $size bytes, less than REFRESH_MIN_BYTES ($min_bytes): cut short, or not the export"
  echo "$out"
}

# The first bytes of a file, for a check of its shape.
head_of() { head -c 2048 "$1" | head -n 1; }

set --
if [ "$format" = rdw ]; then
  vehicles=$(fetch "$vehicles_url" vehicles.csv)
  head_of "$vehicles" | grep -qi 'kenteken' || fail "vehicles.csv does not begin with RDW's header (no Kenteken column)"
  if [ -n "$fuel_url" ]; then
    fuel=$(fetch "$fuel_url" fuel.csv)
    head_of "$fuel" | grep -qi 'brandstof' || fail "fuel.csv does not begin with RDW's fuel header"
    set -- --fuel "$fuel"
  fi
  set -- "$@" "$vehicles"
else
  for url in $urls; do
    name=$(basename "${url%%\?*}")
    file=$(fetch "$url" "$name")
    [ "$(head -c 2 "$file")" = PK ] || fail "$name is not a ZIP archive"
    set -- "$@" "$file"
  done
fi

stamp="$dir/.imported"
if [ -f "$stamp" ] && [ "${REFRESH_FORCE:-0}" != 1 ]; then
  newer=$(find "$dir" -maxdepth 1 -type f ! -name '.*' -newer "$stamp" | head -n 1)
  if [ -z "$newer" ]; then
    say "no file is newer than the last import: nothing to do"
    exit 0
  fi
fi

say "checking (import --dry-run)"
# shellcheck disable=SC2086 # $reglookup is a command and its arguments
$reglookup import --dry-run --quiet --"$mode" --min-keep "$min_keep" --format "$format" "$@" ||
  fail "the files were not imported: the check above says why; the store is as it was"
say "importing (import --$mode --min-keep $min_keep)"
# shellcheck disable=SC2086
$reglookup import --"$mode" --min-keep "$min_keep" --format "$format" "$@" ||
  fail "the import failed: the store is as it was"
touch "$stamp"
say "done"
