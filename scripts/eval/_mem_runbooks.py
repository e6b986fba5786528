"""Runbooks of the Harbor project."""

from _mem_common import runbook

runbook(
    "rotate-stripe-webhook-secret", "Rotate the Stripe webhook signing secret", "2025-10-20 10:00",
    ["stripe", "webhooks", "secrets", "rotation"],
    trigger="Yearly rotation, an engineer with dashboard access leaves, or the secret may have leaked.",
    symptoms=[],
    steps=[
        "Stripe Dashboard > Developers > Webhooks > endpoint https://api.harbor.app/v1/webhooks/stripe > 'Roll secret', keep the old secret valid for 24 h.",
        "In AWS Secrets Manager `harbor/prod/api` set STRIPE_WEBHOOK_SECRETS to 'new,old' (comma-separated; the handler tries each) and STRIPE_WEBHOOK_SECRET to the new whsec_ value.",
        "Force External Secrets to sync: `kubectl annotate externalsecret harbor-api-env -n harbor-prod force-sync=$(date +%s) --overwrite`.",
        "`kubectl rollout restart deploy/harbor-api -n harbor-prod` and wait for the rollout.",
        "After 24 h remove the old value from STRIPE_WEBHOOK_SECRETS.",
        "Staging: same steps with the test-mode endpoint https://api.staging.harbor.app/v1/webhooks/stripe, secret path `harbor/staging/api` and namespace harbor-staging; `stripe trigger invoice.paid` works there.",
    ],
    verification="Stripe shows 200 responses for new deliveries; no SignatureVerificationError in Sentry for 1 h.",
    root_cause="",
    environment="production and staging",
    files=["api/harbor/payments/webhooks.py"],
    conf=0.9,
    changes=[("2026-03-04", "Added dual-secret overlap via STRIPE_WEBHOOK_SECRETS")],
)

runbook(
    "stripe-webhook-signature-errors", "Webhook 400s: signature verification failed", "2026-09-03 17:30",
    ["stripe", "webhooks", "debugging"],
    trigger="Stripe dashboard shows failing deliveries or Stripe emails that the endpoint is disabled soon.",
    symptoms=[
        "Deliveries to /v1/webhooks/stripe answered with 400",
        "Sentry: `stripe.error.SignatureVerificationError: No signatures found matching the expected signature for payload`",
        "Invoices stay 'open' in Harbor although Stripe shows them paid",
    ],
    steps=[
        "Compare the last 4 characters of STRIPE_WEBHOOK_SECRET in the pod (`kubectl exec ... -- printenv | grep WEBHOOK`) with the dashboard; a test-mode whsec_ in production is a classic.",
        "Check that nothing reads or re-serializes the body before verification: the handler must use `await request.body()`, and middlewares must skip paths in `RAW_BODY_PATHS`.",
        "Fix, deploy, then resend failed events: Dashboard > event > Resend, or `python -m harbor.jobs replay_stripe_events --since <time>` after fetching them with `stripe events list`.",
    ],
    verification="New deliveries return 200; `select count(*) from stripe_events where received_at > now() - interval '10 min'` grows.",
    root_cause="Sept 2026: the new request-logging middleware called `await request.json()` and re-encoded the payload, so the bytes differed from what Stripe signed.",
    files=["api/harbor/payments/webhooks.py", "api/harbor/middleware/request_logging.py"],
    conf=0.9,
)

runbook(
    "restore-postgres-database", "Restore the production database", "2025-09-10 14:00",
    ["postgres", "rds", "backup", "disaster-recovery"],
    trigger="Data loss (bad migration, accidental DELETE) or loss of the RDS instance.",
    symptoms=["Rows missing for one or more tenants", "RDS instance unavailable"],
    steps=[
        "Point-in-time restore to a new instance: `aws rds restore-db-instance-to-point-in-time --source-db-instance-identifier harbor-prod --target-db-instance-identifier harbor-prod-restore-$(date +%Y%m%d) --restore-time 2026-05-14T08:55:00Z`.",
        "Partial recovery: copy only the affected rows from the restored instance, e.g. `\\copy (select * from bookings where tenant_id = '...' and deleted_at is not null) to 'rows.csv' csv` and load them into prod in a transaction.",
        "Full failover: point `DATABASE_HOST` in Secrets Manager `harbor/prod/db` at the restored instance, force-sync, restart pgbouncer.",
        "Logical backups also exist: CronJob `pg-dump-nightly` writes `pg_dump -Fc` to s3://harbor-prod-backups/pg/ (35 days). Restore with `pg_restore -d harbor --no-owner -j 4 dump.pgdump` into an empty database.",
    ],
    verification="Row counts of bookings/invoices per affected tenant match expectations; `alembic current` equals head.",
    root_cause="",
    files=["deploy/charts/harbor-worker/templates/pg-dump-cronjob.yaml"],
    conf=0.85,
    changes=[("2026-05-15", "Partial recovery steps after the bookings deleted_at incident"),
             ("2026-06-05", "Failover step now restarts PgBouncer")],
)

runbook(
    "tenant-data-export-gdpr", "Tenant data export (GDPR requests)", "2026-07-16 11:20",
    ["gdpr", "export", "tenants", "privacy"],
    trigger="A tenant asks for all their data (portability, offboarding) or an end customer files an access request (Art. 15).",
    symptoms=[],
    steps=[
        "Whole tenant: `kubectl -n harbor-prod exec deploy/harbor-worker -- python -m harbor.jobs export_tenant --tenant-id <uuid> --format zip`. It writes JSON and CSV per table to s3://harbor-prod-exports/<tenant_id>/ and prints a presigned URL valid 7 days.",
        "Single end customer: `python -m harbor.jobs export_customer --tenant-id <uuid> --customer-id <uuid>`.",
        "Do not use pg_dump for this: it cannot filter rows by tenant_id and the file would contain other tenants' data.",
        "Paste the URL into the Zendesk ticket, never into Slack.",
    ],
    verification="Open the zip, check row counts against the admin page of the tenant.",
    root_cause="",
    files=["api/harbor/jobs/export_tenant.py"],
    conf=0.9,
)

runbook(
    "alembic-multiple-heads", "CI fails: 'Multiple head revisions are present'", "2025-10-14 09:10",
    ["alembic", "migrations", "ci"],
    trigger="`migrations-check` job fails on a PR or on main.",
    symptoms=[
        "`FAILED: Multiple head revisions are present for given argument 'head'; please specify a specific target revision`",
        "`alembic heads` lists two revisions",
    ],
    steps=[
        "Rebase your branch on main.",
        "`cd api && alembic heads` to see both revisions.",
        "In your migration set `down_revision` to the other head and bump the timestamp prefix of the file so the order reads correctly.",
        "`make db-reset` (drops the local DB and runs `alembic upgrade head`) to prove the chain works.",
        "Do not run `alembic merge`.",
        "If both are already on main: open a fix PR changing the later migration's down_revision; production is safe because the deploy waits for green CI.",
    ],
    verification="`alembic heads` prints exactly one revision and CI is green.",
    root_cause="Two PRs created migrations from the same parent and both merged before either rebased.",
    environment="CI and local",
    files=["api/migrations/versions/"],
    conf=0.95,
)

runbook(
    "run-migrations-production", "Running migrations on production", "2026-02-22 10:00",
    ["migrations", "alembic", "deploy", "production"],
    trigger="A release contains new files in api/migrations/versions/.",
    symptoms=[],
    steps=[
        "Normally nothing to do: the Argo CD PreSync hook Job `harbor-migrate-<sha>` runs `alembic upgrade head` before pods roll. It connects to RDS directly, not through PgBouncer.",
        "Follow it: `kubectl -n harbor-prod get jobs | grep migrate` and `kubectl -n harbor-prod logs job/harbor-migrate-<sha>`.",
        "If it fails with `canceling statement due to lock timeout`, find the blocker (see the blocking query runbook) and re-sync off-peak.",
        "Backfills are not migrations: run them as `python -m harbor.jobs backfill_<name>` after the deploy.",
        "Never `alembic downgrade` in production without a second engineer; fix forward instead.",
    ],
    verification="`alembic current` inside an api pod equals the head in the release.",
    root_cause="",
    files=["deploy/charts/harbor-api/templates/migrate-job.yaml"],
    conf=0.9,
    changes=[("2026-06-04", "Migrate job connects to RDS directly since PgBouncer rollout")],
)

runbook(
    "nightly-job-flakiness", "Nightly job flakiness", "2026-10-22 16:40",
    ["celery", "nightly", "flaky"],
    trigger="Some nightly reminders or invoice emails are missing in the morning; Sentry shows a burst around 02:00-02:30 UTC.",
    symptoms=[
        "`redis.exceptions.ConnectionError: Too many connections` in worker logs",
        "`kombu.exceptions.OperationalError` in the `billing` workers",
        "About 3% of `send_payment_reminder` tasks fail, only on nights when the invoice batch overlaps",
    ],
    steps=[
        "Confirm in Grafana 'Redis / connected clients' that the spike matches the batch window.",
        "Billing workers run the gevent pool with concurrency 200, but `harbor.cache` used a BlockingConnectionPool with max_connections=20 per process: set `CACHE_REDIS_MAX_CONNECTIONS=100` for the billing worker deployment and keep `timeout=5` so greenlets wait instead of erroring.",
        "Set `broker_pool_limit=10` in celeryconfig so the broker pool does not grow per greenlet.",
        "The recurring invoice job was moved to 02:45 UTC so it no longer overlaps reminders at 02:00.",
        "Re-run missed reminders: `kubectl -n harbor-prod create job --from=cronjob/send-payment-reminders rerun-$(date +%s)`; the job skips rows with reminder_sent_at set.",
    ],
    verification="No ConnectionError in Sentry for 7 consecutive nights; connected_clients stays under 2,000.",
    root_cause="Celery gevent workers exhausted the per-process Redis connection pool of the cache client.",
    files=["api/harbor/cache.py", "api/harbor/worker/celeryconfig.py", "deploy/charts/harbor-worker/values.yaml"],
    conf=0.85,
    changes=[("2026-11-12", "Re-run step updated: reminders are a CronJob now, no longer Celery beat")],
)

runbook(
    "celery-queue-backlog", "Draining a Celery queue backlog", "2026-01-30 08:30",
    ["celery", "queues", "workers", "redis"],
    trigger="Alert 'CeleryQueueLength > 5000 for 10m' or tenants report delayed confirmation emails.",
    symptoms=["Booking confirmations arrive 20+ minutes late", "Grafana 'Celery queue length' climbing on notifications or sync"],
    steps=[
        "See what is running: `kubectl -n harbor-prod exec deploy/harbor-worker -- celery -A harbor.worker inspect active`.",
        "Queue lengths: `redis-cli -h harbor-prod-broker... -n 1 llen notifications` (also billing, sync, documents, default).",
        "Look for a poison task retrying in a loop in Sentry (often Google Calendar sync or a Postmark outage).",
        "Scale the affected deployment: `kubectl -n harbor-prod scale deploy/harbor-worker-notifications --replicas=12` (HPA max is 16).",
        "Purging a queue needs approval from the on-call lead: `celery -A harbor.worker purge -Q sync`; never purge billing.",
    ],
    verification="Queue length back under 100 and confirmation latency panel below 1 min.",
    root_cause="Varies; most often a downstream outage with aggressive retries.",
    files=["api/harbor/worker/celeryconfig.py"],
    conf=0.8,
)

runbook(
    "rollback-a-release", "Rolling back a bad release", "2026-02-21 12:00",
    ["deploy", "rollback", "argocd"],
    trigger="Error rate or latency jumps after a production sync.",
    symptoms=["Sentry regression alerts tagged with the new release SHA", "5xx rate above 1% on the API dashboard"],
    steps=[
        "Argo CD UI > harbor-prod-api (and harbor-prod-worker if it changed) > History and rollback > previous revision > Rollback. CLI: `argocd app rollback harbor-prod-api <history-id>`.",
        "Then revert the bot commit in `deploy/apps/production/values-image.yaml` so git matches the cluster; otherwise the next sync brings the bad image back.",
        "Do not downgrade the database: thanks to expand/contract the previous release works with the new schema.",
        "Post in #releases with the SHA and the reason.",
    ],
    verification="`kubectl -n harbor-prod get deploy harbor-api -o jsonpath='{..image}'` shows the previous SHA; error rate back to baseline.",
    root_cause="",
    files=["deploy/apps/production/values-image.yaml"],
    conf=0.9,
)

runbook(
    "rollback-with-kubectl", "Roll back with kubectl rollout undo", "2025-08-05 11:00",
    ["deploy", "rollback", "kubectl"],
    trigger="Bad release in production.",
    symptoms=["Errors after deploy"],
    steps=[
        "`kubectl -n harbor-prod rollout history deploy/harbor-api`",
        "`kubectl -n harbor-prod rollout undo deploy/harbor-api --to-revision=<n>`",
        "Same for harbor-worker and harbor-beat if they changed.",
        "Then re-run the deploy workflow with the previous SHA so the next deploy from CI does not bring the bad image back.",
    ],
    verification="Pods running the old image.",
    root_cause="",
    conf=0.5,
    retired=("2026-02-20", "Deploys moved to Argo CD; a kubectl rollout undo is reverted on the next sync. See runbooks/rollback-a-release."),
)

runbook(
    "crashloop-after-config-change", "Pods in CrashLoopBackOff after a config change", "2026-04-09 15:00",
    ["kubernetes", "config", "secrets", "crashloop"],
    trigger="A new release adds or renames a setting and the new pods never become ready.",
    symptoms=[
        "`kubectl get pods` shows CrashLoopBackOff for harbor-api or harbor-worker",
        "Logs: `pydantic_core._pydantic_core.ValidationError: 1 validation error for HarborSettings POSTMARK_SERVER_TOKEN Field required`",
    ],
    steps=[
        "`kubectl -n harbor-prod logs deploy/harbor-api --previous | head -50` to see the missing field.",
        "`kubectl -n harbor-prod describe externalsecret harbor-api-env`: the ExternalSecret lists keys explicitly, so a key that exists in Secrets Manager but not in the template is not synced.",
        "Add the key in Secrets Manager `harbor/prod/api` (and to the ExternalSecret template if needed), then force-sync and `kubectl rollout restart`.",
        "Frontend: NEXT_PUBLIC_* values are baked in at build time from `web/.env.production`; changing them needs a rebuild, a restart does nothing.",
    ],
    verification="Pods Ready, no restarts for 10 minutes.",
    root_cause="April 2026: POSTMARK_SERVER_TOKEN became required in HarborSettings but was only added to the staging secret.",
    files=["api/harbor/settings.py", "deploy/charts/harbor-api/templates/externalsecret.yaml"],
    conf=0.9,
)

runbook(
    "stale-availability-after-edits", "Stale availability after calendar edits", "2026-07-02 13:30",
    ["availability", "cache", "redis"],
    trigger="Support ticket: the public widget shows wrong free times.",
    symptoms=[
        "Widget offers times the staff blocked minutes ago, or hides slots that were freed by a cancellation",
        "End customers get 409 slot_taken when they click a slot that looked free",
    ],
    steps=[
        "Flush the tenant's keys: `kubectl -n harbor-prod exec deploy/harbor-worker -- python -m harbor.jobs flush_availability_cache --tenant-id <uuid>` (uses SCAN on `avail:<tenant_id>:*`; never KEYS in production).",
        "Ask the tenant to reload; if fixed, find the write path that skipped `invalidate_availability()`.",
        "Known gaps fixed so far: CSV vacation import (`import_schedules` task), Google Calendar busy-block sync.",
    ],
    verification="Availability endpoint returns the expected slots with `X-Cache: MISS` then HIT.",
    root_cause="A write path that changes schedules does not invalidate the availability cache; entries then live up to their TTL.",
    files=["api/harbor/availability/cache.py", "api/harbor/schedules/tasks.py"],
    conf=0.85,
)

runbook(
    "calendar-sync-stopped", "Calendar sync stops for one tenant", "2026-09-25 10:45",
    ["google", "calendar", "integrations", "sync"],
    trigger="A tenant says private appointments from their calendar no longer block booking slots.",
    symptoms=[
        "Sentry: `google.auth.exceptions.RefreshError: ('invalid_grant: Token has been expired or revoked.')` from the token endpoint",
        "`calendar_connections.status = 'error'` for that staff member",
    ],
    steps=[
        "`select id, staff_id, status, last_synced_at, last_error from calendar_connections where tenant_id = :t;`",
        "invalid_grant means the user revoked access, changed the Google password, or (staging only) the OAuth app is in testing mode where tokens expire after 7 days. Set status `needs_reauth`; `notify_calendar_reauth` emails the staff member.",
        "Ask the tenant to reconnect under Settings > Integrations. Nothing else can fix a revoked token.",
        "403 `rateLimitExceeded` is a different problem: back off, see the Google quota constraint.",
        "Push channels expire after 7 days and are renewed by the CronJob `renew-calendar-watches`; if that failed, all tenants are affected, not one.",
    ],
    verification="`last_synced_at` updates within 5 minutes after reconnecting.",
    root_cause="Revoked or expired OAuth refresh token.",
    files=["api/harbor/integrations/google_calendar.py"],
    conf=0.85,
)

runbook(
    "invoice-pdf-missing-glyphs", "Blank squares in invoices", "2026-05-06 16:00",
    ["invoices", "weasyprint", "fonts"],
    trigger="Tenants report broken characters in downloaded documents.",
    symptoms=[
        "Müller GmbH: 'Straße' and 'ü' appear as empty boxes (tofu) in the rendered document",
        "French accents (é, ç) and the € sign missing",
    ],
    steps=[
        "Exec into a documents worker and run `fc-list | grep -iE 'inter|noto|dejavu'`; if empty, the image lost its fonts.",
        "The worker Dockerfile must install `fonts-noto-core fonts-dejavu-core`; Inter is shipped in `api/harbor/invoices/fonts/` and referenced with @font-face in `base.css`.",
        "Render a sample locally: `make render-invoice-sample` (customer 'Müller GmbH, Hauptstraße 5', total €1.234,50).",
        "Regenerate affected documents: `python -m harbor.jobs regenerate_invoice_pdfs --since 2026-04-10`. This writes a new PDF version; issued invoice data is unchanged and old versions stay in S3.",
    ],
    verification="Sample and one regenerated customer document show all glyphs.",
    root_cause="In April 2026 the worker image switched to python:3.12-slim, which has no fonts; WeasyPrint fell back to a font without Latin-1 glyphs.",
    files=["api/Dockerfile.worker", "api/harbor/invoices/templates/pdf/base.css"],
    conf=0.9,
)

runbook(
    "reconcile-stripe-payouts", "Reconciling Stripe payouts with invoices", "2026-03-02 09:15",
    ["stripe", "payouts", "accounting", "invoicing"],
    trigger="Monthly close, or a tenant says the money on their bank account does not match their paid invoices.",
    symptoms=["Payout amount differs from the sum of paid invoices in the Harbor report"],
    steps=[
        "`python -m harbor.jobs reconcile_payouts --tenant-id <uuid> --month 2026-10` fetches balance transactions per payout on the connected account (`stripe.BalanceTransaction.list(payout=po_..., stripe_account=acct_...)`) and matches them to invoices via `metadata.invoice_id`.",
        "It writes a CSV of mismatches to s3://harbor-prod-exports/reconcile/.",
        "Usual explanations: refunds deducted from a later payout, Stripe fees, disputes (EUR 20 fee), CHF payments converted to EUR.",
        "Send the CSV to the tenant with the explanation; never edit invoices to make numbers match.",
    ],
    verification="Every balance transaction is either matched or explained in the CSV.",
    root_cause="",
    files=["api/harbor/jobs/reconcile_payouts.py"],
    conf=0.8,
)

runbook(
    "refund-duplicate-charge", "Refund a duplicate charge", "2025-08-06 12:00",
    ["stripe", "refunds", "payments", "support"],
    trigger="An end customer or tenant reports being charged twice for the same booking.",
    symptoms=["Two succeeded PaymentIntents with the same metadata.booking_id"],
    steps=[
        "Search the connected account in the Stripe dashboard for `metadata['booking_id']:'bkg_...'`, confirm both succeeded.",
        "Refund the later one: `stripe refunds create --payment-intent pi_... --reason duplicate --stripe-account acct_...`.",
        "Harbor picks it up through the `charge.refunded` webhook; check the payment row shows `refunded`.",
        "If an invoice was already issued for both payments, issue a credit note for the duplicate; never edit the issued invoice.",
        "Reply to the tenant with the refund id; refunds take 5-10 business days to reach the card.",
    ],
    verification="Payment row status refunded, Stripe refund succeeded.",
    root_cause="Before idempotency keys, retried PaymentIntent creation; since 2026 mostly double clicks in old widget versions.",
    files=["api/harbor/payments/refunds.py"],
    conf=0.85,
    changes=[("2026-09-11", "Note about double clicks in old widget embeds")],
)

runbook(
    "rotate-postgres-app-password", "Rotating the Postgres app password", "2026-06-20 10:30",
    ["postgres", "rds", "secrets", "credentials"],
    trigger="Quarterly rotation or suspected credential leak.",
    symptoms=[],
    steps=[
        "We use two login roles, `harbor_app_a` and `harbor_app_b`; check which one is active in Secrets Manager `harbor/prod/db`.",
        "`ALTER ROLE harbor_app_b WITH PASSWORD '...'` on the inactive role (via the bastion, as harbor_admin).",
        "Switch DB_USER/DB_PASSWORD in `harbor/prod/db` to the rotated role; External Secrets updates the PgBouncer userlist.",
        "`kubectl -n harbor-prod rollout restart deploy/pgbouncer`; apps talk to PgBouncer, so API and workers need no restart.",
        "Update the migrate job secret as well (it connects directly).",
    ],
    verification="`select usename, count(*) from pg_stat_activity group by 1;` shows connections from the new role only after a few minutes.",
    root_cause="",
    files=["deploy/charts/pgbouncer/templates/externalsecret.yaml"],
    conf=0.85,
)

runbook(
    "pgbouncer-connection-errors", "PgBouncer: 'no more connections allowed (max_client_conn)'", "2026-06-12 09:00",
    ["pgbouncer", "postgres", "connections"],
    trigger="API 5xx spike with database connection errors.",
    symptoms=[
        "`asyncpg.exceptions.TooManyConnectionsError: no more connections allowed (max_client_conn)`",
        "`prepared statement \"__asyncpg_stmt_1a__\" does not exist` errors after a deploy",
        "Requests hang for seconds waiting on a connection",
    ],
    steps=[
        "`kubectl -n harbor-prod exec deploy/pgbouncer -- psql -p 6432 -U pgbouncer pgbouncer -c 'SHOW POOLS;'`: cl_waiting > 0 with sv_active = pool size means server connections are busy.",
        "Look for long or idle-in-transaction sessions on RDS: `select pid, state, now()-xact_start as age, query from pg_stat_activity where state <> 'idle' order by age desc;`",
        "Prepared statement errors: a client is using the asyncpg statement cache through transaction pooling; make sure `statement_cache_size=0` is in the DSN options of the new service.",
        "Temporary relief: raise default_pool_size to 60 (stays within RDS max_connections budget), roll pgbouncer.",
    ],
    verification="SHOW POOLS shows cl_waiting 0; API p95 normal.",
    root_cause="Usually a long transaction holding server connections, or a new service with its own asyncpg settings.",
    files=["deploy/charts/pgbouncer/values.yaml"],
    conf=0.85,
)

runbook(
    "find-and-kill-blocking-query", "Find and kill a blocking query", "2025-11-18 19:20",
    ["postgres", "locks", "incident"],
    trigger="Requests hang, the DB shows many sessions waiting on locks, or a migration fails with a lock timeout.",
    symptoms=[
        "`ERROR: canceling statement due to lock timeout` in the migrate job",
        "`pg_stat_activity` shows wait_event_type = 'Lock' for API sessions",
        "DB CPU normal but API latency through the roof",
    ],
    steps=[
        "`select pid, pg_blocking_pids(pid) as blocked_by, state, now()-xact_start as age, left(query, 80) from pg_stat_activity where wait_event_type = 'Lock';`",
        "Inspect the blocker: usually a human session left 'idle in transaction' in DBeaver, or a long reporting query.",
        "`select pg_cancel_backend(<pid>);` first; if it stays, `select pg_terminate_backend(<pid>);`.",
        "Human roles have `idle_in_transaction_session_timeout = '60s'`; check that the person used their personal role, not harbor_app.",
    ],
    verification="No sessions waiting on Lock; migrate job re-run succeeds.",
    root_cause="Long-running or idle transactions holding locks that a DDL statement needs.",
    conf=0.9,
)

runbook(
    "playwright-e2e-flakes", "Playwright e2e flakes in CI", "2026-10-09 18:00",
    ["e2e", "playwright", "ci", "testing"],
    trigger="The `e2e` job fails on a spec unrelated to the PR and passes on re-run.",
    symptoms=[
        "Timeout waiting for `getByRole('button', { name: 'Book' })`",
        "Specs that book 'tomorrow' fail on Saturdays because the seeded salon is closed on Sunday",
    ],
    steps=[
        "Download the `playwright-report` artifact from the GitHub Actions run and open it: `npx playwright show-trace trace.zip`.",
        "Date-dependent specs: use `page.clock.setFixedTime(new Date('2026-03-10T09:00:00+01:00'))`.",
        "Shared state: each spec must create its own tenant through the API fixture `seedTenant()`, not reuse 'Salon Lumière'.",
        "Disable CSS animations via `reducedMotion: 'reduce'` in the config.",
        "If you can't fix it now, mark it `test.fixme()` with a ticket link. Do not raise retries above 1.",
    ],
    verification="The spec passes 20 times in a row: `npx playwright test booking.spec.ts --repeat-each=20`.",
    root_cause="Mostly shared seeded data and wall-clock dependent test data.",
    environment="CI (GitHub Actions, ubuntu-22.04, 4 shards)",
    files=["e2e/playwright.config.ts", "e2e/fixtures/seed.ts"],
    conf=0.8,
)

runbook(
    "dev-machine-setup", "Setting up a dev machine", "2025-09-22 10:00",
    ["onboarding", "local-dev", "docker"],
    trigger="New team member or a wiped laptop.",
    symptoms=[],
    steps=[
        "Install Docker Desktop (or colima), uv, Python 3.12, Node 20 and pnpm 9.",
        "`cp .env.example .env.local` and fill in the Stripe test keys from 1Password 'Harbor Dev'.",
        "`docker compose up -d postgres redis mailpit unleash`",
        "`make bootstrap` (uv sync, pnpm install), then `make db-reset` which runs `alembic upgrade head` and seeds the demo tenants 'Salon Lumière' and 'Physiotherapie Müller GmbH'.",
        "`make dev` starts uvicorn on :8000, a Celery worker and `next dev` on :3000.",
        "Stripe webhooks locally: `stripe listen --forward-to localhost:8000/v1/webhooks/stripe` and put the printed whsec_ into STRIPE_WEBHOOK_SECRET in .env.local.",
        "Mail goes to Mailpit at http://localhost:8025.",
    ],
    verification="`make test-fast` passes and you can book an appointment on http://localhost:3000/b/salon-lumiere.",
    root_cause="",
    environment="local",
    files=["docker-compose.yml", ".env.example", "Makefile"],
    conf=0.85,
    changes=[("2026-03-28", "Unleash added to docker compose"), ("2026-08-01", "Switched from pip-tools to uv")],
)

runbook(
    "custom-domain-certificate", "TLS certificate not issued for a custom booking domain", "2026-01-12 14:10",
    ["tls", "cert-manager", "custom-domains", "ingress"],
    trigger="A tenant set up their own domain for the booking page and browsers show a certificate warning.",
    symptoms=[
        "NET::ERR_CERT_AUTHORITY_INVALID on e.g. termine.mueller-physio.de",
        "Browser shows 'Kubernetes Ingress Controller Fake Certificate'",
    ],
    steps=[
        "`kubectl -n harbor-prod get certificate,certificaterequest,challenge | grep mueller`",
        "Check DNS: the host must be a CNAME to custom.harbor.app; a CAA record must allow letsencrypt.org.",
        "HTTP-01 challenge returning 404 usually means the tenant proxies through Cloudflare (orange cloud); ask them to switch to DNS only until issued.",
        "Delete the failed CertificateRequest to trigger a retry. Let's Encrypt allows 5 failed validations per hostname per hour.",
    ],
    verification="`curl -vI https://termine.mueller-physio.de 2>&1 | grep issuer` shows Let's Encrypt.",
    root_cause="Tenant DNS misconfiguration in almost every case.",
    files=["deploy/charts/harbor-web/templates/custom-domain-ingress.yaml"],
    conf=0.85,
)

runbook(
    "terraform-state-lock-stuck", "Terraform state lock stuck", "2026-08-28 11:00",
    ["terraform", "infra", "aws"],
    trigger="`terraform plan` or the terraform.yml workflow fails to acquire the lock.",
    symptoms=[
        "`Error acquiring the state lock: ConditionalCheckFailedException: The conditional request failed` with Lock Info ID, Path harbor-terraform-state/stacks/rds/terraform.tfstate, Who runner@fv-az...",
    ],
    steps=[
        "Make sure no terraform workflow is running for that stack (GitHub Actions tab) and nobody is applying with the break-glass role.",
        "From the same stack directory, assume `harbor-terraform-admin` and run `terraform force-unlock <LOCK_ID>`.",
        "Never delete the item in the DynamoDB table `terraform-locks` by hand.",
        "Re-run the plan and read it carefully: a crashed apply can leave resources half-changed.",
    ],
    verification="`terraform plan` runs and shows only the expected changes.",
    root_cause="A cancelled or timed-out CI job does not release the lock.",
    environment="infra (all stacks)",
    files=["infra/terraform/backend.tf"],
    conf=0.9,
)

runbook(
    "add-new-locale", "Adding a new language", "2026-11-08 10:00",
    ["i18n", "localization", "frontend", "email"],
    trigger="Product decides to support a new language (Italian planned for Ticino and South Tyrol customers).",
    symptoms=[],
    steps=[
        "Web: add the code to `locales` in `web/src/i18n/config.ts` and create `web/messages/it.json`; translators work in the Crowdin project 'harbor-web', synced by the Crowdin GitHub action.",
        "`pnpm i18n:extract` then `pnpm i18n:check`; missing keys fall back to English at runtime but fail CI on main.",
        "Emails: templates in `api/harbor/notifications/templates/<locale>/`, strings via gettext: `pybabel extract -F babel.cfg -o messages.pot . && pybabel update -i messages.pot -d harbor/locale -l it && pybabel compile -d harbor/locale`.",
        "Invoice PDFs use the same gettext catalog for labels; legal footer text is per country, not per language (`invoices/legal/<country>.html`).",
        "Dates, numbers and currency come from Intl (web) and Babel (backend); never hand-format.",
        "Add the locale to `SUPPORTED_LOCALES` in HarborSettings and enable the flag `i18n.locale-it` per tenant.",
    ],
    verification="Pseudo-check with a tenant set to the new locale: widget, confirmation email, reminder and invoice PDF all translated.",
    root_cause="",
    environment="all",
    files=["web/src/i18n/config.ts", "api/harbor/locale/", "api/babel.cfg"],
    conf=0.8,
)

runbook(
    "booking-emails-not-arriving", "Customers not receiving booking emails", "2026-02-05 15:40",
    ["email", "postmark", "deliverability", "support"],
    trigger="Tenant forwards a complaint that an end customer got no confirmation or reminder.",
    symptoms=["No confirmation email", "Emails arrive hours late at GMX/web.de", "Reminder shows 'sent' in Harbor but customer saw nothing"],
    steps=[
        "Search Postmark Activity for the recipient (outbound stream).",
        "Check our suppression table: `select * from email_suppressions where email = lower(:email);` hard bounces and spam complaints are suppressed.",
        "Reactivate only if the customer confirms the address is correct: Postmark > Suppressions > Reactivate, then delete our row.",
        "Tenant custom sender domain: `dig TXT <selector>._domainkey.salon-lumiere.fr` must match the DKIM value shown in Postmark; unverified domains fall back to mail.harbor.app.",
        "GMX and web.de greylist new senders; delays up to 30 minutes are normal.",
    ],
    verification="Test email to the address shows 'Delivered' in Postmark.",
    root_cause="Mostly typos in addresses (hard bounce) or suppressed recipients.",
    files=["api/harbor/notifications/suppressions.py"],
    conf=0.85,
    changes=[("2026-10-28", "GMX greylisting note added")],
)

runbook(
    "sendgrid-bounce-handling", "Handling SendGrid bounces and blocks", "2025-09-02 10:00",
    ["email", "sendgrid", "bounces"],
    trigger="Customer did not get a booking email.",
    symptoms=["Email shows as 'blocked' or 'bounced' in SendGrid activity"],
    steps=[
        "SendGrid > Activity > search recipient.",
        "Suppressions > Bounces: remove the address if it was a temporary problem.",
        "Check the `sendgrid_events` table for the message id.",
    ],
    verification="Resend confirmation from the booking page.",
    root_cause="Shared IP reputation and recipient typos.",
    conf=0.5,
    retired=("2026-02-01", "SendGrid replaced by Postmark; see runbooks/booking-emails-not-arriving."),
)

runbook(
    "ship-a-hotfix", "Shipping a hotfix to production", "2026-02-25 09:30",
    ["deploy", "release", "hotfix"],
    trigger="A production bug needs a fix before the next regular release.",
    symptoms=[],
    steps=[
        "Branch `hotfix/<ticket>` from main (trunk-based; main is always deployable).",
        "Open a PR with the label `hotfix`: CI runs unit tests plus the smoke e2e subset instead of the full suite.",
        "After merge the release bot bumps staging; verify the fix there.",
        "Sync harbor-prod in Argo CD (deployers group). After 15:00 on Fridays the on-call lead must approve.",
        "Post in #releases and link the Sentry issue.",
    ],
    verification="Sentry issue marked resolved in the new release and does not reappear for 24 h.",
    root_cause="",
    files=[".github/workflows/ci.yml"],
    conf=0.85,
)

runbook(
    "cronjob-did-not-run", "A scheduled CronJob didn't run", "2026-11-05 09:20",
    ["cronjob", "kubernetes", "scheduling"],
    trigger="Expected output of a nightly job is missing (reminders not sent, invoices not issued).",
    symptoms=[
        "`kubectl get cronjob -n harbor-prod` shows an old LAST SCHEDULE",
        "Event: `Cannot determine if job needs to be started: too many missed start times (> 100)`",
        "Job exists but pod failed with OOMKilled or a Python traceback",
    ],
    steps=[
        "`kubectl -n harbor-prod get cronjob send-payment-reminders -o wide` and check `suspend` (staging values set suspend: true for some jobs).",
        "`kubectl -n harbor-prod get jobs --sort-by=.metadata.creationTimestamp | grep reminders` and `kubectl logs job/<name>`.",
        "Missing startingDeadlineSeconds plus a controller outage causes the 'too many missed start times' error; our chart sets 600.",
        "Run it now by hand: `kubectl -n harbor-prod create job --from=cronjob/send-payment-reminders manual-reminders-$(date +%s)`. Jobs are idempotent (reminder_sent_at), so this is safe.",
    ],
    verification="New Job completes; the job's summary log line `job_finished` shows the expected item count.",
    root_cause="Suspended CronJob, schedule typo (schedules are UTC) or a failing container.",
    files=["deploy/charts/harbor-worker/templates/cronjobs.yaml"],
    conf=0.85,
    changes=[("2026-11-12", "Updated after the last Celery beat schedules moved")],
)

runbook(
    "restart-celery-beat", "Scheduled tasks stopped: restart Celery beat", "2025-12-03 08:00",
    ["celery", "celery-beat", "scheduling"],
    trigger="Nightly reminders or invoices were not sent.",
    symptoms=["Beat pod is Running but logs show no 'Scheduler: Sending due task' lines", "`_gdbm.error: [Errno 11] Resource temporarily unavailable` on start"],
    steps=[
        "`kubectl -n harbor-prod logs deploy/harbor-beat --tail=100`",
        "Delete the pod so the `celerybeat-schedule` shelve file on the emptyDir is recreated: `kubectl -n harbor-prod delete pod -l app=harbor-beat`.",
        "Make sure only ONE beat pod exists afterwards, otherwise reminders go out twice.",
        "Trigger the missed task manually: `celery -A harbor.worker call harbor.billing.tasks.send_payment_reminders`.",
    ],
    verification="'Sending due task' lines reappear.",
    root_cause="Corrupt schedule file or lost Redis connection after failover.",
    conf=0.5,
    retired=("2026-11-12", "Celery beat is gone; scheduled jobs are k8s CronJobs. See runbooks/cronjob-did-not-run."),
)

runbook(
    "pods-evicted-disk-pressure", "Pods evicted with DiskPressure", "2026-06-25 13:00",
    ["kubernetes", "nodes", "karpenter"],
    trigger="Many pods on one node Evicted; alert 'KubeNodeDiskPressure'.",
    symptoms=["Pod status Evicted: `The node was low on resource: ephemeral-storage`", "Documents workers restarting during month-end invoice runs"],
    steps=[
        "`kubectl get pods -A --field-selector=status.phase=Failed -o wide` to find the node.",
        "`kubectl cordon <node>`; Karpenter replaces it once drained.",
        "The documents workers write temporary PDFs to /tmp: the chart now sets an emptyDir with `sizeLimit: 2Gi` so they are evicted alone instead of filling the node.",
        "The Karpenter NodePool uses 100Gi gp3 root volumes since June 2026 (was 50Gi).",
    ],
    verification="No DiskPressure condition: `kubectl describe node <node> | grep -A5 Conditions`.",
    root_cause="Temp files from PDF rendering plus image layer cache on small root volumes.",
    files=["infra/terraform/stacks/eks/karpenter.tf", "deploy/charts/harbor-worker/values.yaml"],
    conf=0.8,
)

runbook(
    "seed-staging-tenant-for-qa", "Seeding a staging tenant for QA", "2026-08-12 14:00",
    ["staging", "qa", "seed-data", "testing"],
    trigger="QA needs a realistic tenant for a release test or a bug reproduction.",
    symptoms=[],
    steps=[
        "`kubectl -n harbor-staging exec deploy/harbor-worker -- python -m harbor.jobs seed_tenant --name 'QA Friseur Weiß' --locale de --with-stripe-test --bookings 500`",
        "This creates staff, services, a Stripe test connected account and 500 bookings spread over the last and next 30 days.",
        "Logins for QA users are in the 1Password vault 'QA'.",
        "The staging database is replaced every Sunday night with an anonymized production snapshot, so seeded tenants disappear; reseed on Monday.",
    ],
    verification="Tenant appears in staging admin and the booking widget at https://staging.harbor.app/b/qa-friseur-weiss works.",
    root_cause="",
    environment="staging",
    files=["api/harbor/jobs/seed_tenant.py"],
    conf=0.85,
)
