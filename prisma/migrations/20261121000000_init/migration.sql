-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateEnum
CREATE TYPE "KeyMode" AS ENUM ('test', 'live', 'agent');

-- CreateTable
CREATE TABLE "accounts" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "balance_micros" BIGINT NOT NULL DEFAULT 0,
    "reserved_micros" BIGINT NOT NULL DEFAULT 0,
    "low_balance_threshold_micros" BIGINT,
    "low_balance_notified_at" TIMESTAMPTZ(3),
    "daily_identifiers_cap" INTEGER,
    "daily_spend_cap_micros" BIGINT,
    "retention_days" INTEGER NOT NULL DEFAULT 30,
    "realtime_enabled" BOOLEAN NOT NULL DEFAULT true,
    "require_ip_allowlist" BOOLEAN NOT NULL DEFAULT false,
    "is_sandbox" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "accounts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_keys" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "mode" "KeyMode" NOT NULL,
    "is_sandbox" BOOLEAN NOT NULL DEFAULT false,
    "key_hash" BYTEA NOT NULL,
    "hint" TEXT NOT NULL,
    "scopes" TEXT[],
    "allow_ips" TEXT[],
    "daily_spend_cap_micros" BIGINT,
    "expires_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMPTZ(3),

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "check_prices" (
    "check_code" TEXT NOT NULL,
    "mode" "KeyMode" NOT NULL,
    "unit_price_micros" BIGINT NOT NULL,

    CONSTRAINT "check_prices_pkey" PRIMARY KEY ("check_code","mode")
);

-- CreateTable
CREATE TABLE "account_check_settings" (
    "account_id" TEXT NOT NULL,
    "check_code" TEXT NOT NULL,
    "enabled" BOOLEAN,
    "live_unit_price_micros" BIGINT,

    CONSTRAINT "account_check_settings_pkey" PRIMARY KEY ("account_id","check_code")
);

-- CreateTable
CREATE TABLE "lookups" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "api_key_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "status" TEXT NOT NULL,
    "checks" TEXT[],
    "row_count" INTEGER NOT NULL,
    "checks_total" INTEGER NOT NULL,
    "checks_done" INTEGER NOT NULL DEFAULT 0,
    "webhook_endpoint_id" TEXT,
    "reservation_id" TEXT,
    "request_id" TEXT NOT NULL,
    "completes_at" TIMESTAMPTZ(3),
    "announced_pending" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "lookups_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "jobs" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "api_key_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "status" TEXT NOT NULL,
    "checks" TEXT[],
    "total" INTEGER NOT NULL,
    "checks_total" INTEGER NOT NULL,
    "done" INTEGER NOT NULL DEFAULT 0,
    "conclusive" INTEGER NOT NULL DEFAULT 0,
    "non_billable" INTEGER NOT NULL DEFAULT 0,
    "chunk_count" INTEGER NOT NULL DEFAULT 0,
    "max_cost_micros" BIGINT,
    "charged_micros" BIGINT NOT NULL DEFAULT 0,
    "estimate" JSONB NOT NULL,
    "webhook_endpoint_id" TEXT,
    "progress_events" BOOLEAN NOT NULL DEFAULT false,
    "last_progress_at" TIMESTAMPTZ(3),
    "reservation_id" TEXT,
    "failure_code" TEXT,
    "failure_message" TEXT,
    "request_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),
    "cancelled_at" TIMESTAMPTZ(3),
    "purged_at" TIMESTAMPTZ(3),
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "jobs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "job_chunks" (
    "job_id" TEXT NOT NULL,
    "chunk_no" INTEGER NOT NULL,
    "first_row" INTEGER NOT NULL,
    "last_row" INTEGER NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'queued',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "leased_until" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "job_chunks_pkey" PRIMARY KEY ("job_id","chunk_no")
);

-- CreateTable
CREATE TABLE "result_rows" (
    "id" BIGSERIAL NOT NULL,
    "lookup_id" TEXT,
    "job_id" TEXT,
    "row_no" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "input_masked" TEXT NOT NULL,
    "e164" TEXT,
    "country" TEXT,
    "number_status" TEXT,
    "email" TEXT,
    "email_status" TEXT,
    "checks" JSONB NOT NULL,
    "pending_checks" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "result_rows_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "check_cache" (
    "check_code" TEXT NOT NULL,
    "identifier_hash" BYTEA NOT NULL,
    "status" TEXT NOT NULL,
    "registered" BOOLEAN,
    "attributes" JSONB,
    "checked_at" TIMESTAMPTZ(3) NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "check_cache_pkey" PRIMARY KEY ("check_code","identifier_hash")
);

-- CreateTable
CREATE TABLE "ledger_transactions" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "reference" TEXT NOT NULL,
    "reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ledger_transactions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ledger_entries" (
    "id" BIGSERIAL NOT NULL,
    "transaction_id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "book" TEXT NOT NULL,
    "amount_micros" BIGINT NOT NULL,
    "check_code" TEXT,
    "livemode" BOOLEAN NOT NULL DEFAULT true,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ledger_entries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "reservations" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "api_key_id" TEXT NOT NULL,
    "lookup_id" TEXT,
    "job_id" TEXT,
    "amount_micros" BIGINT NOT NULL,
    "charged_micros" BIGINT NOT NULL DEFAULT 0,
    "released_micros" BIGINT NOT NULL DEFAULT 0,
    "status" TEXT NOT NULL DEFAULT 'open',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "closed_at" TIMESTAMPTZ(3),
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "reservations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "settlements" (
    "reservation_id" TEXT NOT NULL,
    "row_no" INTEGER NOT NULL,
    "check_code" TEXT NOT NULL,
    "outcome" TEXT NOT NULL,
    "amount_micros" BIGINT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "settlements_pkey" PRIMARY KEY ("reservation_id","row_no","check_code")
);

-- CreateTable
CREATE TABLE "daily_usage" (
    "account_id" TEXT NOT NULL,
    "api_key_id" TEXT NOT NULL,
    "day" DATE NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "check_code" TEXT NOT NULL,
    "identifiers" INTEGER NOT NULL DEFAULT 0,
    "checks" INTEGER NOT NULL DEFAULT 0,
    "conclusive" INTEGER NOT NULL DEFAULT 0,
    "cached" INTEGER NOT NULL DEFAULT 0,
    "billed_units" INTEGER NOT NULL DEFAULT 0,
    "cost_micros" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "daily_usage_pkey" PRIMARY KEY ("account_id","api_key_id","day","livemode","check_code")
);

-- CreateTable
CREATE TABLE "webhook_endpoints" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "url" TEXT NOT NULL,
    "events" TEXT[],
    "status" TEXT NOT NULL DEFAULT 'pending_verification',
    "secret_encrypted" BYTEA NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "verified_at" TIMESTAMPTZ(3),
    "url_changed_at" TIMESTAMPTZ(3),
    "next_verification_at" TIMESTAMPTZ(3),
    "deleted_at" TIMESTAMPTZ(3),

    CONSTRAINT "webhook_endpoints_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "events" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "type" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "endpoint_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "dispatched_at" TIMESTAMPTZ(3),

    CONSTRAINT "events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_deliveries" (
    "id" BIGSERIAL NOT NULL,
    "event_id" TEXT NOT NULL,
    "endpoint_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3),
    "leased_until" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "delivery_attempts" (
    "id" BIGSERIAL NOT NULL,
    "delivery_id" BIGINT NOT NULL,
    "attempt_no" INTEGER NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "duration_ms" INTEGER NOT NULL,
    "status_code" INTEGER,
    "error" TEXT,
    "succeeded" BOOLEAN NOT NULL,

    CONSTRAINT "delivery_attempts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "idempotency_records" (
    "account_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "response_status" INTEGER,
    "response_headers" JSONB,
    "response_body" BYTEA,
    "locked_until" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "idempotency_records_pkey" PRIMARY KEY ("account_id","key")
);

-- CreateTable
CREATE TABLE "test_key_requests" (
    "id" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "company" TEXT NOT NULL,
    "use_case" TEXT NOT NULL,
    "network" TEXT NOT NULL,
    "outcome" TEXT NOT NULL,
    "api_key_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "test_key_requests_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "spam_reports" (
    "id" BIGSERIAL NOT NULL,
    "e164" TEXT NOT NULL,
    "signal_class" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "category" TEXT,
    "reported_on" DATE NOT NULL,
    "dedupe_key" TEXT NOT NULL,
    "import_id" TEXT,

    CONSTRAINT "spam_reports_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "spam_imports" (
    "id" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "file_sha256" TEXT NOT NULL,
    "rows_read" INTEGER NOT NULL,
    "rows_added" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "spam_imports_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_key_hash_key" ON "api_keys"("key_hash");

-- CreateIndex
CREATE INDEX "api_keys_account_id_idx" ON "api_keys"("account_id");

-- CreateIndex
CREATE INDEX "lookups_account_id_created_at_idx" ON "lookups"("account_id", "created_at");

-- CreateIndex
CREATE INDEX "lookups_status_completes_at_idx" ON "lookups"("status", "completes_at");

-- CreateIndex
CREATE INDEX "lookups_expires_at_idx" ON "lookups"("expires_at");

-- CreateIndex
CREATE INDEX "jobs_account_id_created_at_idx" ON "jobs"("account_id", "created_at");

-- CreateIndex
CREATE INDEX "jobs_status_idx" ON "jobs"("status");

-- CreateIndex
CREATE INDEX "jobs_expires_at_idx" ON "jobs"("expires_at");

-- CreateIndex
CREATE INDEX "job_chunks_status_leased_until_idx" ON "job_chunks"("status", "leased_until");

-- CreateIndex
CREATE UNIQUE INDEX "result_rows_lookup_id_row_no_key" ON "result_rows"("lookup_id", "row_no");

-- CreateIndex
CREATE UNIQUE INDEX "result_rows_job_id_row_no_key" ON "result_rows"("job_id", "row_no");

-- CreateIndex
CREATE INDEX "check_cache_expires_at_idx" ON "check_cache"("expires_at");

-- CreateIndex
CREATE UNIQUE INDEX "ledger_transactions_reference_key" ON "ledger_transactions"("reference");

-- CreateIndex
CREATE INDEX "ledger_transactions_account_id_created_at_idx" ON "ledger_transactions"("account_id", "created_at");

-- CreateIndex
CREATE INDEX "ledger_entries_account_id_book_idx" ON "ledger_entries"("account_id", "book");

-- CreateIndex
CREATE INDEX "ledger_entries_account_id_created_at_idx" ON "ledger_entries"("account_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "reservations_lookup_id_key" ON "reservations"("lookup_id");

-- CreateIndex
CREATE UNIQUE INDEX "reservations_job_id_key" ON "reservations"("job_id");

-- CreateIndex
CREATE INDEX "reservations_status_expires_at_idx" ON "reservations"("status", "expires_at");

-- CreateIndex
CREATE INDEX "reservations_account_id_status_idx" ON "reservations"("account_id", "status");

-- CreateIndex
CREATE INDEX "daily_usage_account_id_day_idx" ON "daily_usage"("account_id", "day");

-- CreateIndex
CREATE INDEX "webhook_endpoints_account_id_livemode_idx" ON "webhook_endpoints"("account_id", "livemode");

-- CreateIndex
CREATE INDEX "events_dispatched_at_created_at_idx" ON "events"("dispatched_at", "created_at");

-- CreateIndex
CREATE INDEX "events_account_id_created_at_idx" ON "events"("account_id", "created_at");

-- CreateIndex
CREATE INDEX "webhook_deliveries_status_next_attempt_at_idx" ON "webhook_deliveries"("status", "next_attempt_at");

-- CreateIndex
CREATE UNIQUE INDEX "webhook_deliveries_event_id_endpoint_id_key" ON "webhook_deliveries"("event_id", "endpoint_id");

-- CreateIndex
CREATE UNIQUE INDEX "delivery_attempts_delivery_id_attempt_no_key" ON "delivery_attempts"("delivery_id", "attempt_no");

-- CreateIndex
CREATE INDEX "idempotency_records_expires_at_idx" ON "idempotency_records"("expires_at");

-- CreateIndex
CREATE INDEX "test_key_requests_email_created_at_idx" ON "test_key_requests"("email", "created_at");

-- CreateIndex
CREATE INDEX "test_key_requests_network_created_at_idx" ON "test_key_requests"("network", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "spam_reports_dedupe_key_key" ON "spam_reports"("dedupe_key");

-- CreateIndex
CREATE INDEX "spam_reports_e164_idx" ON "spam_reports"("e164");

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "account_check_settings" ADD CONSTRAINT "account_check_settings_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "lookups" ADD CONSTRAINT "lookups_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "lookups" ADD CONSTRAINT "lookups_api_key_id_fkey" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_api_key_id_fkey" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "job_chunks" ADD CONSTRAINT "job_chunks_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "result_rows" ADD CONSTRAINT "result_rows_lookup_id_fkey" FOREIGN KEY ("lookup_id") REFERENCES "lookups"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "result_rows" ADD CONSTRAINT "result_rows_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ledger_transactions" ADD CONSTRAINT "ledger_transactions_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_transaction_id_fkey" FOREIGN KEY ("transaction_id") REFERENCES "ledger_transactions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "reservations" ADD CONSTRAINT "reservations_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "reservations" ADD CONSTRAINT "reservations_api_key_id_fkey" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "settlements" ADD CONSTRAINT "settlements_reservation_id_fkey" FOREIGN KEY ("reservation_id") REFERENCES "reservations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "daily_usage" ADD CONSTRAINT "daily_usage_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "events" ADD CONSTRAINT "events_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "events"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoints"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "delivery_attempts" ADD CONSTRAINT "delivery_attempts_delivery_id_fkey" FOREIGN KEY ("delivery_id") REFERENCES "webhook_deliveries"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "idempotency_records" ADD CONSTRAINT "idempotency_records_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "test_key_requests" ADD CONSTRAINT "test_key_requests_api_key_id_fkey" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE SET NULL ON UPDATE CASCADE;


-- Hand-written: constraints and data Prisma's schema language cannot express.

-- A result row belongs to exactly one lookup or one job.
ALTER TABLE "result_rows" ADD CONSTRAINT "result_rows_one_parent" CHECK (num_nonnulls("lookup_id", "job_id") = 1);

-- Money never goes below what is held: reservations cannot exceed what they hold.
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_reserved_non_negative" CHECK ("reserved_micros" >= 0);
ALTER TABLE "reservations" ADD CONSTRAINT "reservations_settled_within_amount" CHECK ("charged_micros" + "released_micros" <= "amount_micros" AND "charged_micros" >= 0 AND "released_micros" >= 0);
ALTER TABLE "check_prices" ADD CONSTRAINT "check_prices_non_negative" CHECK ("unit_price_micros" >= 0);
ALTER TABLE "check_prices" ADD CONSTRAINT "check_prices_test_is_free" CHECK ("mode" <> 'test' OR "unit_price_micros" = 0);
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_retention_positive" CHECK ("retention_days" BETWEEN 1 AND 3650);

-- Default prices per conclusive answer, in micro-dollars (1 USD = 1,000,000). Test mode is free.
INSERT INTO "check_prices" ("check_code", "mode", "unit_price_micros") VALUES
  ('number.spam', 'live', 2000), ('number.spam', 'agent', 2000), ('number.spam', 'test', 0),
  ('number.hlr', 'live', 6000), ('number.hlr', 'agent', 6000), ('number.hlr', 'test', 0),
  ('whatsapp', 'live', 4000), ('whatsapp', 'agent', 4000), ('whatsapp', 'test', 0),
  ('carrier', 'live', 1000), ('carrier', 'agent', 1000), ('carrier', 'test', 0),
  ('signal.registered', 'live', 4000), ('signal.registered', 'agent', 4000), ('signal.registered', 'test', 0),
  ('email', 'live', 3000), ('email', 'agent', 3000), ('email', 'test', 0);

-- Marks this migration's own _prisma_migrations row finished inside the migration's
-- transaction: if the script commits, so does its record, even when `migrate deploy`
-- is killed right after. scripts/prisma.mjs relies on it to retry an interrupted run
-- (docs/operations.md, "Rolling out a migration"). No-op where the table is absent.
DO $$ BEGIN
  IF to_regclass('_prisma_migrations') IS NOT NULL THEN
    UPDATE "_prisma_migrations" SET "finished_at" = now()
    WHERE "migration_name" = '20261121000000_init' AND "finished_at" IS NULL AND "rolled_back_at" IS NULL;
  END IF;
END $$;
