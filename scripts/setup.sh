#!/usr/bin/env bash
# Prepare a fresh Debian machine for queuetop: the virtual environment with queuetop installed and,
# with --test, the system ODBC packages, a running PostgreSQL and the database the tests use.
# Idempotent: each step checks before it acts, so running it again is quick.
set -euo pipefail
cd "$(dirname "$0")/.."

want_test=0
[ "${1:-}" = "--test" ] && want_test=1
venv=.venv
say() { printf '[setup] %s\n' "$*" >&2; }

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

apt_install() {
  local missing=()
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  say "installing ${missing[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

if [ ! -x "$venv/bin/python" ]; then
  say "creating $venv"
  python3 -m venv "$venv" || { apt_install python3-venv; python3 -m venv "$venv"; }
fi
stamp="$venv/.installed-$(cat pyproject.toml | sha1sum | cut -c1-12)-$want_test"
# pip and setuptools talk a lot on a good day (setuptools warns about every editable install, a pip.conf may
# name index folders this machine lacks): their output goes to a log that is shown only when pip fails.
pip_log="$venv/pip-install.log"
pip_quietly() {
  if ! "$venv/bin/pip" "$@" >>"$pip_log" 2>&1; then
    say "pip $* failed; its output ($pip_log):"
    cat "$pip_log" >&2
    exit 1
  fi
}
if [ ! -f "$stamp" ]; then
  say "installing queuetop into $venv (pip's output: $pip_log)"
  : >"$pip_log"
  pip_quietly install --upgrade pip
  if [ $want_test = 1 ]; then
    pip_quietly install -e '.[dev,mssql]'
  else
    pip_quietly install -e .
  fi
  rm -f "$venv"/.installed-*; touch "$stamp"
  say "installed queuetop $("$venv/bin/python" -c 'import queuetop; print(queuetop.__version__)') into $venv"
fi

# Bytecode, once: where PYTHONDONTWRITEBYTECODE is set (this machine, CI) Python never caches what it compiles,
# so every `queuetop` started (and the suite starts hundreds) compiled all its modules again: `queuetop --version`
# 0.39 s, `stats` 0.42 s; with the bytecode 0.22 s and 0.25 s. A file edited later is compiled afresh, as ever.
"$venv/bin/python" -m compileall -q -j 0 queuetop tests bench >/dev/null

[ $want_test = 1 ] || exit 0

# The job libraries the tests run for real (tests/libraries/NAME): each pinned in a virtual environment of its
# own, so their dependencies never meet queuetop's.
for requirements in tests/libraries/*/requirements.txt; do
  name=$(basename "$(dirname "$requirements")")
  lib_venv=.venv-libraries/$name
  lib_stamp="$lib_venv/.installed-$(sha1sum <"$requirements" | cut -c1-12)"
  [ -f "$lib_stamp" ] && continue
  say "installing $name (tests/libraries/$name) into $lib_venv"
  rm -rf "$lib_venv"
  python3 -m venv "$lib_venv"
  : >"$pip_log"
  venv=$lib_venv pip_quietly install --no-deps -r "$requirements"
  touch "$lib_stamp"
done
# ... and the Node ones (graphile-worker) from their lock files, with the machine's Node.js
for lock in tests/libraries/*/package-lock.json; do
  dir=$(dirname "$lock")
  lib_stamp="$dir/node_modules/.installed-$(sha1sum <"$lock" | cut -c1-12)"
  [ -f "$lib_stamp" ] && continue
  command -v npm >/dev/null || apt_install nodejs npm
  say "installing $(basename "$dir") ($dir) with npm ci"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >>"$OLDPWD/$pip_log" 2>&1) || {
    say "npm ci failed in $dir; its output ($pip_log):"; cat "$pip_log" >&2; exit 1; }
  touch "$lib_stamp"
done

# The PostgreSQL and SQL Server tests go through pyodbc: unixODBC and the psqlODBC driver; the MariaDB driver
# lets a test check that an unsupported database is refused clearly.
apt_install unixodbc odbc-postgresql odbc-mariadb postgresql postgresql-client
# `queuetop alerts` is judged by Prometheus' own promtool (check rules, test rules): Debian's prometheus package.
apt_install prometheus

if ! pg_isready -q -h 127.0.0.1 -p 5432; then
  say "starting PostgreSQL"
  cluster=$(ls /etc/postgresql | sort -V | tail -n 1)
  as_root pg_ctlcluster --skip-systemctl-redirect "$cluster" main start || true
  for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
fi
pg_isready -q -h 127.0.0.1 -p 5432 || { say "PostgreSQL is not reachable on 127.0.0.1:5432"; exit 1; }

db=${QUEUETOP_TEST_PG_DB:-queuetop_test}
psql_admin() { if [ "$(id -u)" = 0 ]; then su postgres -c "psql -qAtX $*"; else psql -h 127.0.0.1 -U postgres -qAtX "$@"; fi; }
if [ "$(psql_admin "-c \"select 1 from pg_database where datname = '$db'\"")" != 1 ]; then
  say "creating database $db"
  psql_admin "-c \"create database $db\""
fi
