#!/bin/sh
# A streaming read replica of the compose file's PostgreSQL primary (docker-compose.replica.yml;
# docs/scaling.md, "Docker and compose").
#
# On the first start, with no cluster in PGDATA, it clones the primary with pg_basebackup -R: a copy
# of the whole cluster (roles and passwords included) plus standby.signal and a primary_conninfo, so
# PostgreSQL starts as a hot standby that streams from the primary through the replication slot
# made by postgres-primary-init.sh. On later starts the cluster is there and it only runs PostgreSQL.
# Either way it ends by running PostgreSQL in the foreground (exec), with this script's arguments.
#
# The clone is made in PGDATA.partial and renamed to PGDATA only once complete, so an interrupted
# first start leaves no half cluster behind: the next start removes the partial copy and clones
# again. A cluster already in PGDATA is never cloned over (nor one promoted to primary since).
#
# Runs as the user that owns the data (postgres in the image: the compose file sets `user:`); PGDATA
# must be a folder that user may create (the compose file uses a subfolder of the replica's volume).
#
# Settings (environment): PGDATA (default /var/lib/postgresql/data/pgdata), PRIMARY_HOST (default
# postgres), PRIMARY_PORT (default 5432), REPLICATION_USER (default replicator), REPLICATION_PASSWORD
# (required for the clone), REPLICATION_SLOT (default reglookup_replica), PRIMARY_WAIT_SECONDS (how
# long the first start waits for the primary to answer, default 120).
set -eu

PGDATA=${PGDATA:-/var/lib/postgresql/data/pgdata}
PRIMARY_HOST=${PRIMARY_HOST:-postgres}
PRIMARY_PORT=${PRIMARY_PORT:-5432}
REPLICATION_USER=${REPLICATION_USER:-replicator}
REPLICATION_SLOT=${REPLICATION_SLOT:-reglookup_replica}
PRIMARY_WAIT_SECONDS=${PRIMARY_WAIT_SECONDS:-120}

log() { echo "postgres-replica: $*"; }

if [ -s "$PGDATA/PG_VERSION" ]; then
  log "a cluster is already in $PGDATA: starting it, no clone"
else
  : "${REPLICATION_PASSWORD:?REPLICATION_PASSWORD must be set for the first start (the clone)}"
  # An empty PGDATA (made by hand, say) is fine; anything else that is not a cluster is not ours.
  if [ -d "$PGDATA" ]; then
    if [ -n "$(ls -A "$PGDATA")" ]; then
      log "$PGDATA holds files but no cluster (no PG_VERSION): not cloning over them; empty it, or the volume, first" >&2
      exit 1
    fi
    rmdir "$PGDATA"
  fi
  partial="$PGDATA.partial"
  rm -rf "$partial"

  # compose starts this after the primary's health check passed; outside compose, wait here.
  waited=0
  until pg_isready -q -h "$PRIMARY_HOST" -p "$PRIMARY_PORT"; do
    if [ "$waited" -ge "$PRIMARY_WAIT_SECONDS" ]; then
      log "the primary $PRIMARY_HOST:$PRIMARY_PORT did not answer within $PRIMARY_WAIT_SECONDS s" >&2
      exit 1
    fi
    sleep 1
    waited=$((waited + 1))
  done

  log "cloning $PRIMARY_HOST:$PRIMARY_PORT into $PGDATA (pg_basebackup -R, slot $REPLICATION_SLOT)"
  # -R writes standby.signal and primary_conninfo (with this password: the replica reconnects with
  # it after every restart) and primary_slot_name; -X stream copies the WAL made during the copy;
  # -c fast checkpoints at once instead of waiting for the primary's next checkpoint.
  PGPASSWORD=$REPLICATION_PASSWORD pg_basebackup \
    -h "$PRIMARY_HOST" -p "$PRIMARY_PORT" -U "$REPLICATION_USER" -w \
    -D "$partial" -R -X stream -S "$REPLICATION_SLOT" -c fast
  mv "$partial" "$PGDATA"
  log "clone complete"
fi

# PostgreSQL refuses a data folder others may read.
chmod 0700 "$PGDATA"
exec postgres -D "$PGDATA" "$@"
