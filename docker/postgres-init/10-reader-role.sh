#!/bin/sh
# Runs once, when the postgres container initialises its data directory (docker-entrypoint-initdb.d).
# A login role that can only read: database-mcp and sql-mcp-wrapper refuse read-only service over a
# superuser such as the image's POSTGRES_USER (docs/security.md, "Read-only SQL, for any role").
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" -v pw="$POSTGRES_READER_PASSWORD" <<'SQL'
CREATE ROLE mcp_reader LOGIN PASSWORD :'pw' NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;
GRANT pg_read_all_data TO mcp_reader;
SQL
