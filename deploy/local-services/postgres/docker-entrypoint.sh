#!/bin/sh
# The local PostgreSQL image's entry point (deploy/local-services/postgres/Containerfile), named and behaving like
# the official image's for what deploy/compose.yaml uses: on the first start (an empty $PGDATA) it makes the cluster
# with the superuser POSTGRES_USER (default postgres) and password POSTGRES_PASSWORD (required), password
# authentication (scram-sha-256) for every network client, and the database POSTGRES_DB (default: the user's name);
# then `postgres [ARGS...]` runs the server listening on every address. Any other command runs as given.
set -eu
if [ "${1:-}" = postgres ]; then
  shift
  if [ ! -s "$PGDATA/PG_VERSION" ]; then
    : "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD: the superuser's password}"
    user="${POSTGRES_USER:-postgres}"
    db="${POSTGRES_DB:-$user}"
    pwfile="$(mktemp)"
    printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
    initdb -D "$PGDATA" -U "$user" --pwfile="$pwfile" -E UTF8 --no-locale \
      --auth-local=trust --auth-host=scram-sha-256 >/dev/null
    rm -f "$pwfile"
    printf 'host all all all scram-sha-256\n' >>"$PGDATA/pg_hba.conf"
    if [ "$db" != postgres ]; then
      # Single-user mode: no server (and no client program, which this distribution lacks) is needed.
      printf 'CREATE DATABASE "%s";\n' "$db" | postgres --single -D "$PGDATA" postgres >/dev/null
    fi
    echo "docker-entrypoint.sh: made the cluster in $PGDATA, user $user, database $db"
  fi
  exec postgres -D "$PGDATA" -c listen_addresses='*' "$@"
fi
exec "$@"
