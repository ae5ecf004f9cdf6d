#!/bin/sh
# The compose fleet's database owner: svc_owner, a login role that is not a
# superuser (CREATEROLE, so that `node scripts/db-deploy.mjs` can create and update
# the four services' login roles), owning the database. The migrate one-shot
# connects as svc_owner; no service and no migration uses the `postgres` superuser,
# whose password stays in the postgres container.
#
# The postgres image runs this on its first start (an empty data volume), from
# /docker-entrypoint-initdb.d, mounted read-only by docker/compose.yaml. It is
# idempotent, so on a volume created before svc_owner existed run it once by hand:
#   npm run compose -- exec postgres sh /docker-entrypoint-initdb.d/10-svc-owner.sh
# That also hands svc_owner the tables, sequences, types and functions the earlier
# migrations created as a superuser, and sets the password again from
# POSTGRES_OWNER_PASSWORD (docker/.env), which is also how to change it.
#
# Sourced by the image's entrypoint (not executed) when the file is not executable:
# no `set`, and `return` where a script would `exit`. The password reaches psql
# through its environment (\getenv), never its command line.
if [ "${#POSTGRES_OWNER_PASSWORD}" -lt 16 ]; then
  echo "10-svc-owner.sh: POSTGRES_OWNER_PASSWORD is not set (or shorter than 16 characters): svc_owner not created" >&2
  return 1 2>/dev/null || exit 1
fi
psql -v ON_ERROR_STOP=1 --no-psqlrc --quiet --username "${POSTGRES_USER:-postgres}" --dbname "${POSTGRES_DB:-svc_validate}" <<'SQL'
\getenv owner_password POSTGRES_OWNER_PASSWORD
SELECT NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'svc_owner') AS create_owner \gset
\if :create_owner
CREATE ROLE svc_owner;
\endif
ALTER ROLE svc_owner WITH LOGIN CREATEROLE NOSUPERUSER NOCREATEDB NOREPLICATION NOBYPASSRLS PASSWORD :'owner_password';
\unset owner_password
ALTER DATABASE :"DBNAME" OWNER TO svc_owner;
-- Objects an earlier `prisma migrate deploy` created as a superuser (none on a first
-- start); what another role owns (db-deploy's partition owner) stays as it is.
-- REASSIGN OWNED BY postgres is refused for the bootstrap superuser.
DO $$
DECLARE
  r record;
BEGIN
  FOR r IN
    SELECT c.oid::regclass AS name, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND c.relowner IN (SELECT oid FROM pg_roles WHERE rolsuper)
  LOOP
    EXECUTE format('ALTER %s %s OWNER TO svc_owner',
      CASE r.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW' WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END, r.name);
  END LOOP;
  -- Sequences of serial and identity columns went with their table.
  FOR r IN
    SELECT c.oid::regclass AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public' AND c.relkind = 'S' AND c.relowner IN (SELECT oid FROM pg_roles WHERE rolsuper)
      AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype IN ('a', 'i'))
  LOOP
    EXECUTE format('ALTER SEQUENCE %s OWNER TO svc_owner', r.name);
  END LOOP;
  -- Enums, domains, ranges (their multirange follows) and composite types of their
  -- own (a table's row type goes with the table).
  FOR r IN
    SELECT t.oid::regtype AS name, t.typtype FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
    WHERE n.nspname = 'public' AND t.typowner IN (SELECT oid FROM pg_roles WHERE rolsuper)
      AND (t.typtype IN ('e', 'd', 'r') OR (t.typtype = 'c' AND (SELECT relkind FROM pg_class WHERE oid = t.typrelid) = 'c'))
  LOOP
    EXECUTE format('ALTER %s %s OWNER TO svc_owner', CASE r.typtype WHEN 'd' THEN 'DOMAIN' ELSE 'TYPE' END, r.name);
  END LOOP;
  FOR r IN
    SELECT p.oid::regprocedure AS name, p.prokind FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname = 'public' AND p.proowner IN (SELECT oid FROM pg_roles WHERE rolsuper)
      AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
  LOOP
    EXECUTE format('ALTER %s %s OWNER TO svc_owner',
      CASE r.prokind WHEN 'p' THEN 'PROCEDURE' WHEN 'a' THEN 'AGGREGATE' ELSE 'FUNCTION' END, r.name);
  END LOOP;
END
$$;
SQL
