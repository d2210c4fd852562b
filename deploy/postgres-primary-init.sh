#!/bin/sh
# Lets a streaming replica clone and follow this PostgreSQL primary (docs/scaling.md,
# "Docker and compose"). It makes three things, each only if missing, so it may run
# again on a primary that already has them:
#   - a login role with the REPLICATION attribute and a password (REPLICATION_USER, REPLICATION_PASSWORD);
#   - a physical replication slot (REPLICATION_SLOT) for the replica to stream through, so the primary
#     keeps the WAL the replica has not received yet and the replica cannot fall out of it;
#   - a pg_hba.conf line letting that role, and only it, open replication connections from
#     REPLICATION_NETWORK with a password (scram-sha-256); then the configuration is reloaded.
# wal_level=replica, max_wal_senders and hot_standby are PostgreSQL 16's defaults: nothing to set.
#
# In docker-compose.yml it is mounted into the primary's /docker-entrypoint-initdb.d/, which the
# postgres image runs once, as the postgres user, when it creates the database in an empty volume.
# It must stay executable there (the image sources files that are not, into its own shell). For a
# volume made before this script existed, run it once by hand:
#   docker compose exec -u postgres postgres sh /docker-entrypoint-initdb.d/10-replication.sh
#
# Settings (environment): POSTGRES_USER, a superuser it connects as (default postgres), over the
# socket or PGHOST/PGPORT as psql takes them; REPLICATION_USER (default replicator);
# REPLICATION_PASSWORD (required); REPLICATION_SLOT (default reglookup_replica); REPLICATION_NETWORK
# (default 172.28.0.0/24, the compose file's subnet).
set -eu

POSTGRES_USER=${POSTGRES_USER:-postgres}
REPLICATION_USER=${REPLICATION_USER:-replicator}
REPLICATION_SLOT=${REPLICATION_SLOT:-reglookup_replica}
REPLICATION_NETWORK=${REPLICATION_NETWORK:-172.28.0.0/24}
: "${REPLICATION_PASSWORD:?REPLICATION_PASSWORD must be set (the replica connects with it)}"

# psql with the names as psql variables, quoted by psql itself (:'name'), never pasted into SQL.
sql() {
  psql -v ON_ERROR_STOP=1 -X -q -t -A --username "$POSTGRES_USER" --dbname postgres \
    -v user="$REPLICATION_USER" -v password="$REPLICATION_PASSWORD" -v slot="$REPLICATION_SLOT" "$@"
}

# The role: created, or given this password and the attributes again if it exists.
sql <<'EOF'
SELECT format(CASE WHEN EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'user')
                   THEN 'ALTER ROLE %I WITH REPLICATION LOGIN PASSWORD %L'
                   ELSE 'CREATE ROLE %I WITH REPLICATION LOGIN PASSWORD %L' END,
              :'user', :'password')
\gexec
SELECT 'slot created' FROM pg_create_physical_replication_slot(:'slot')
 WHERE NOT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = :'slot');
EOF
# A slot made here reserves no WAL until the replica first streams from it. A replica removed for
# good must have its slot dropped, or the primary keeps WAL for it without end (docs/scaling.md).

# The pg_hba.conf line, once. The postgres image's own lines ("host all all all ...") do not cover
# replication connections, so the order of lines does not matter here.
hba=$(sql -c 'SHOW hba_file')
line="host replication $REPLICATION_USER $REPLICATION_NETWORK scram-sha-256"
if ! grep -qxF "$line" "$hba"; then
  printf '%s\n' "$line" >>"$hba"
  echo "postgres-primary-init: added to $hba: $line"
fi
sql -c 'SELECT pg_reload_conf()' >/dev/null
echo "postgres-primary-init: role $REPLICATION_USER and slot $REPLICATION_SLOT ready for a replica from $REPLICATION_NETWORK"
