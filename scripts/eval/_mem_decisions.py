"""Decisions of the Harbor project."""

from _mem_common import decision

decision(
    "multi-tenant-shared-schema", "Shared schema, tenant_id on every table", "2025-06-12 10:20",
    ["multi-tenancy", "postgres", "data-model"],
    context="Harbor serves small businesses (hair salons, physio practices, yoga studios); about 1,800 "
            "tenants by mid 2026. A schema-per-tenant prototype in June 2025 needed 40+ minutes for one "
            "alembic run across all schemas and did not work with PgBouncer transaction pooling "
            "(search_path is session state).",
    decision="All tenant-owned tables live in the public schema and carry a non-null `tenant_id uuid` "
             "column with a FK to `tenants.id`. Repositories go through `TenantScopedSession`, which adds "
             "`WHERE tenant_id = :current_tenant` to every ORM query. Raw SQL must filter by tenant_id "
             "explicitly and is flagged in review.",
    alternatives=[
        ("Schema per tenant", "migration time grows with tenant count; search_path breaks with PgBouncer"),
        ("Database per tenant", "cost and ops overhead for tenants paying EUR 29/month"),
    ],
    rationale=["One migration run and one set of indexes", "Support and reporting queries across tenants stay plain SQL"],
    consequences=[
        "Every composite index starts with tenant_id",
        "A forgotten filter leaks data between tenants; Postgres RLS was added later as a second guard",
    ],
    files=["api/harbor/db/session.py", "api/harbor/db/base.py"],
    conf=0.95,
    changes=[("2025-09-03 16:00", "Added note on raw SQL review after support export bug")],
)

decision(
    "postgres-row-level-security", "Row-level security as a second tenant guard", "2026-04-20 11:05",
    ["multi-tenancy", "postgres", "security", "rls"],
    context="In March 2026 the support endpoint `GET /v1/admin/bookings/export` built its query by hand and "
            "forgot the tenant filter; QA caught it returning another salon's bookings before release. "
            "Application-level filtering alone is one bug away from a cross-tenant leak.",
    decision="Enable RLS on tenant-owned tables with the policy "
             "`USING (tenant_id = current_setting('harbor.tenant_id')::uuid)`. The API runs "
             "`SET LOCAL harbor.tenant_id = ...` at the start of each transaction (transaction-scoped, so it "
             "is safe behind PgBouncer). Migrations and the support tooling use the `harbor_admin` role with "
             "BYPASSRLS. Rollout is table by table behind the tenant filter that already exists.",
    alternatives=[
        ("Lint rule + code review only", "the March bug passed review"),
        ("One DB role per tenant", "1,800 roles and per-role pools are not manageable with PgBouncer"),
    ],
    rationale=["Defence in depth for the worst class of bug we can have", "Policies are visible in the schema and testable"],
    consequences=[
        "Celery tasks must wrap DB work in `tenant_context(tenant_id)` or they silently see zero rows",
        "As of Oct 2026: bookings, customers, invoices, payments enabled; audit_log blocked by rows with NULL tenant_id",
    ],
    files=["api/harbor/db/rls.py", "api/migrations/versions/2026_05_04_0900_enable_rls_bookings.py"],
    conf=0.9,
    changes=[("2026-06-10", "bookings and customers enabled in production"),
             ("2026-10-14", "invoices and payments enabled; audit_log pending backfill")],
)

decision(
    "jwt-access-tokens-refresh-rotation", "JWT access tokens with rotating refresh tokens", "2025-12-02 14:30",
    ["auth", "jwt", "security", "mobile"],
    context="The Harbor Staff iOS app and the Next.js dashboard need the same login. Cookie sessions in Redis "
            "did not work for the mobile client, and every ElastiCache failover logged all users out.",
    decision="Access tokens are RS256 JWTs valid 15 minutes with claims sub=user_id, tid=tenant_id, role. "
             "Refresh tokens are opaque, valid 30 days, stored hashed in `refresh_tokens`, and rotated on every "
             "use; presenting an already-used refresh token revokes the whole token family. The web app keeps "
             "the refresh token in an httpOnly SameSite=Lax cookie scoped to /v1/auth; the access token lives "
             "only in memory. Public keys are served at /v1/auth/.well-known/jwks.json.",
    alternatives=[
        ("Keep server-side sessions in Redis", "breaks the mobile app and logs everyone out on failover"),
        ("Auth0", "per-MAU pricing and EU data residency review"),
    ],
    rationale=["Stateless verification in API pods", "Token family revocation limits damage of a stolen refresh token"],
    consequences=[
        "Logout and role changes take effect within 15 minutes, not instantly",
        "Two tabs refreshing at once can trip reuse detection; a 30 s grace window was added in Nov 2026",
    ],
    files=["api/harbor/auth/tokens.py", "web/src/lib/auth.ts"],
    conf=0.9,
    changes=[("2026-02-11", "Signing key rotation via JWKS documented"),
             ("2026-11-16", "Added 30 s reuse grace window after random logout reports")],
)

decision(
    "redis-server-side-sessions", "Server-side sessions in Redis", "2025-06-18 09:40",
    ["auth", "sessions", "redis", "cookies"],
    status="superseded",
    context="The first dashboard was server-rendered and only used by salon staff in a browser.",
    decision="Login creates a random session id in the `harbor_sid` cookie (Secure, HttpOnly, SameSite=Lax). "
             "Session data (user_id, tenant_id, role, csrf token) is stored in Redis under `sess:{session_id}` "
             "with a sliding 7-day TTL. Logout deletes the key; admins can kill all sessions of a user with "
             "`DEL` on the index set `user_sessions:{user_id}`.",
    alternatives=[("JWT in localStorage", "XSS exposure")],
    rationale=["Simple", "Instant logout"],
    consequences=["Redis becomes critical for login", "Mobile clients need a separate mechanism"],
    files=["api/harbor/auth/sessions.py"],
    conf=0.6,
    retired=("2025-12-10", "Replaced by JWT access tokens with rotating refresh tokens (decisions/jwt-access-tokens-refresh-rotation)."),
)

decision(
    "scheduled-jobs-as-k8s-cronjobs", "Scheduled jobs run as k8s CronJobs", "2026-10-28 15:10",
    ["scheduling", "kubernetes", "cronjob", "celery"],
    context="Celery beat ran as a singleton deployment. In Feb and Sep 2026 a rolling update left two beat pods "
            "alive for several minutes and payment reminders went out twice; in July beat silently stopped "
            "scheduling after a Redis failover and nobody noticed for 20 hours.",
    decision="Every scheduled job is a Kubernetes CronJob rendered from the `cronjobs:` list in "
             "`deploy/charts/harbor-worker/values.yaml` (template `templates/cronjobs.yaml`). The container runs "
             "`python -m harbor.jobs <job_name>`, which either does the work directly or fans out Celery tasks. "
             "Defaults: `concurrencyPolicy: Forbid`, `startingDeadlineSeconds: 600`, `timeZone: Etc/UTC`, "
             "`successfulJobsHistoryLimit: 3`, `failedJobsHistoryLimit: 5`.",
    alternatives=[
        ("Celery beat with RedBeat lock", "still a hidden singleton; lock lives in a Redis that may evict"),
        ("EventBridge Scheduler to SQS", "second broker and IAM plumbing for nine jobs"),
    ],
    rationale=["Schedules visible in kubectl and Argo CD", "Job history and failures alert through kube-state-metrics",
               "No long-lived singleton process"],
    consequences=[
        "Adding a job = register it in `api/harbor/jobs/__init__.py` and add an entry to values.yaml",
        "Jobs must be idempotent: a manual `kubectl create job --from=cronjob/...` may overlap a scheduled run",
        "Minimum granularity is one minute; sub-minute work stays in Celery",
    ],
    files=["deploy/charts/harbor-worker/templates/cronjobs.yaml", "api/harbor/jobs/__init__.py"],
    conf=0.9,
    changes=[("2026-11-12", "All nine schedules migrated; beat deployment scaled to zero")],
)

decision(
    "celery-beat-for-scheduled-jobs", "Use Celery beat for scheduled jobs", "2025-06-20 13:00",
    ["scheduling", "celery", "celery-beat"],
    status="superseded",
    context="We needed nightly invoice runs, payment reminders and calendar watch renewals.",
    decision="Periodic tasks are declared in the `beat_schedule` of `api/harbor/worker/celeryconfig.py` and "
             "scheduled by `celery.beat`. Beat runs as its own deployment `harbor-beat` with replicas: 1 and "
             "strategy Recreate, storing state in the `celerybeat-schedule` shelve file on an emptyDir.",
    alternatives=[("cron on a VM", "another machine to maintain")],
    rationale=["Already using Celery", "Schedules live next to the task code"],
    consequences=["Beat must never run twice", "Schedule changes need a worker deploy"],
    files=["api/harbor/worker/celeryconfig.py"],
    conf=0.5,
    changes=[("2025-08-15", "Moved beat out of the worker pod (-B flag) into its own deployment after duplicate reminders")],
    retired=("2026-11-12", "Replaced by Kubernetes CronJobs after duplicate-reminder incidents; see decisions/scheduled-jobs-as-k8s-cronjobs."),
)

decision(
    "stripe-idempotency-keys", "Stripe idempotency keys", "2025-08-05 10:00",
    ["stripe", "idempotency", "retries"],
    context="In July 2025 Stripe timed out on `PaymentIntent.create`; Celery autoretry created a second "
            "PaymentIntent and 14 end customers paid their appointment deposit twice.",
    decision="Every mutating Stripe call passes `idempotency_key`, built as `{operation}:{object_id}:{attempt}` "
             "(e.g. `pi-create:bkg_8f3a21:1`). The key is written to the row (`payments.stripe_idempotency_key`) "
             "before the call so that any retry - Celery, HTTP client or a human pressing the button again - "
             "reuses it. A new attempt number is only issued when the payer explicitly starts a new payment.",
    alternatives=[("Search for an existing PaymentIntent by metadata before creating one",
                   "the Search API is eventually consistent, up to a minute behind")],
    rationale=["Stripe guarantees the same response for the same key for 24 h"],
    consequences=[
        "`harbor/payments/stripe_client.py` refuses mutating calls without a key",
        "Retries later than 24 h must re-read the PaymentIntent state first",
    ],
    files=["api/harbor/payments/stripe_client.py"],
    conf=0.95,
    changes=[("2026-05-19", "Extended to refunds and transfers on connected accounts")],
)

decision(
    "stripe-webhooks-processed-async", "Stripe webhooks: verify, store, ack, process later", "2025-09-15 16:45",
    ["stripe", "webhooks", "celery"],
    context="Stripe gives a webhook endpoint 10 seconds. Our handler finalized invoices, rendered the PDF and "
            "sent email inline, so slow runs timed out, Stripe retried, and customers got duplicate receipts.",
    decision="`POST /v1/webhooks/stripe` reads the raw body, verifies the `Stripe-Signature` header with "
             "STRIPE_WEBHOOK_SECRET, inserts the event into `stripe_events` (unique on the event id, duplicates "
             "ignored), returns 200, and enqueues `process_stripe_event` on the `billing` queue. Handlers are "
             "keyed by event type (`invoice.paid`, `payment_intent.succeeded`, `charge.refunded`, "
             "`account.updated`) and are idempotent per event id.",
    alternatives=[("Process inline but faster", "PDF rendering alone takes 2-6 s")],
    rationale=["Ack within milliseconds", "Events are replayable from our own table"],
    consequences=[
        "Events can arrive out of order; handlers that care re-fetch the object from Stripe",
        "Replay: `python -m harbor.jobs replay_stripe_events --since 2026-09-01T00:00Z`",
    ],
    files=["api/harbor/payments/webhooks.py", "api/harbor/payments/tasks.py"],
    conf=0.9,
)

decision(
    "money-as-integer-minor-units", "Money stored as integer cents", "2025-09-01 09:30",
    ["money", "invoicing", "data-model"],
    context="The first invoice code used floats. A Müller GmbH invoice with 19% VAT showed EUR 1.234,51 on the PDF "
            "while Stripe charged EUR 1.234,50, and their accountant complained.",
    decision="All amounts are stored as `bigint` minor units next to a `currency char(3)` column. Python code uses "
             "the `Money` value object (`harbor/money.py`): Decimal for intermediate math, ROUND_HALF_UP per line, "
             "then sum the rounded lines. The API returns `{\"amount\": 123450, \"currency\": \"EUR\"}`; the frontend "
             "formats with Intl.NumberFormat and the tenant locale.",
    alternatives=[("numeric(12,2) columns", "still tempting to do float math in Python; currencies with 0 or 3 decimals")],
    rationale=["Exact sums that match Stripe, which also uses minor units"],
    consequences=["Old invoice_lines rows still carry a float unit price (tracked as tech debt)"],
    files=["api/harbor/money.py", "web/src/lib/format.ts"],
    conf=0.95,
)

decision(
    "invoice-pdfs-weasyprint", "Invoice PDFs rendered with WeasyPrint", "2025-11-04 11:00",
    ["invoices", "pdf", "weasyprint"],
    context="wkhtmltopdf is unmaintained (repository archived Jan 2023), needed a patched-Qt binary that added "
            "180 MB to the image, and crashed on the CSS grid layout of the new invoice template.",
    decision="Invoices, credit notes and payout statements are rendered from Jinja2 templates in "
             "`api/harbor/invoices/templates/pdf/` with WeasyPrint 62, in the Celery `documents` queue. Page "
             "headers, footers and page numbers use CSS `@page` margin boxes. Fonts are bundled with the app "
             "instead of relying on system fonts.",
    alternatives=[
        ("Headless Chromium (Playwright)", "300 MB+ image and a browser process per worker"),
        ("ReportLab", "layout in Python code; designers cannot touch it"),
    ],
    rationale=["Pure Python package, HTML/CSS templates the designer can edit"],
    consequences=["Rendering moved out of the API request into Celery", "Missing fonts show up as empty boxes"],
    files=["api/harbor/invoices/render.py", "api/harbor/invoices/templates/pdf/invoice.html"],
    conf=0.9,
    changes=[("2025-11-20", "Rollout complete, wkhtmltopdf removed from the image")],
)

decision(
    "wkhtmltopdf-for-invoice-pdfs", "Generate invoice PDFs with wkhtmltopdf", "2025-06-25 15:20",
    ["invoices", "pdf", "wkhtmltopdf"],
    status="superseded",
    context="Tenants need downloadable invoice PDFs from day one.",
    decision="Render the invoice HTML with Jinja2 and convert it with pdfkit + wkhtmltopdf 0.12.6 (patched Qt) "
             "inside the API request. Footer via `--footer-html api/harbor/invoices/footer.html`, A4, "
             "margins 20mm.",
    alternatives=[("WeasyPrint", "team unfamiliar; some CSS differences")],
    rationale=["Known quantity", "Fast for single invoices"],
    consequences=["Binary must be installed in the Docker image"],
    files=["api/harbor/invoices/pdf.py"],
    conf=0.5,
    retired=("2025-11-20", "Replaced by WeasyPrint (decisions/invoice-pdfs-weasyprint)."),
)

decision(
    "invoice-pdfs-in-s3", "Invoice PDFs live in S3, served via presigned URLs", "2025-11-06 10:15",
    ["invoices", "s3", "storage", "documents"],
    context="Rendered invoices must be retained for 10 years (German and French rules) and downloaded by tenants "
            "and their customers.",
    decision="PDFs are stored in the bucket `harbor-prod-documents` (eu-central-1) under "
             "`tenants/{tenant_id}/invoices/{invoice_id}/v{version}.pdf`, encrypted with SSE-KMS and protected by "
             "S3 Object Lock in governance mode for 10 years. The API never streams the file; it returns a presigned "
             "GET URL valid for 5 minutes from `GET /v1/invoices/{id}/pdf`.",
    alternatives=[("bytea in Postgres", "bloats the DB and every backup"), ("CloudFront signed URLs", "no benefit at our volume")],
    rationale=["Cheap, durable, retention enforced by the storage layer"],
    consequences=["Regenerating an issued invoice writes a new version; old versions stay",
                  "Staging uses harbor-staging-documents without object lock"],
    files=["api/harbor/invoices/storage.py", "infra/terraform/stacks/s3/documents.tf"],
    conf=0.9,
)

decision(
    "alembic-single-linear-head", "Alembic migrations with a single linear head", "2025-07-08 12:00",
    ["migrations", "alembic", "postgres"],
    context="Two merge migrations in the first month made `alembic downgrade` unpredictable and the order of "
            "migrations hard to read.",
    decision="Migrations live in `api/migrations/versions/` with a timestamp prefix "
             "(`2026_03_14_1200_add_booking_notes.py`). There is always exactly one head: the CI job "
             "`migrations-check` fails if `alembic heads` prints more than one revision. When two PRs collide, the "
             "later one re-points its `down_revision`; we do not use `alembic merge`. Autogenerate output is "
             "always edited by hand.",
    alternatives=[("alembic merge revisions", "non-linear history, confusing downgrades")],
    rationale=["Readable history", "Deterministic order across environments"],
    consequences=["Occasional CI failures after concurrent merges; the fix is a one-line change"],
    files=["api/migrations/env.py", ".github/workflows/ci.yml"],
    conf=0.9,
)

decision(
    "expand-contract-migrations", "Zero-downtime schema changes: expand, migrate, contract", "2026-05-22 17:00",
    ["migrations", "postgres", "deploy", "zero-downtime"],
    context="API pods roll one by one, so old and new code run side by side for about three minutes. Renaming "
            "`bookings.note` to `bookings.internal_note` in one release caused four minutes of 500s in May 2026.",
    decision="Schema changes are split over at least two releases. Expand: add nullable columns or new tables, "
             "write to both. Backfill: a separate job in batches of 5,000 rows, never inside the migration. "
             "Contract: enforce NOT NULL via a `CHECK (...) NOT VALID` constraint followed by `VALIDATE CONSTRAINT`, "
             "drop old columns one release later. Indexes are created with `CREATE INDEX CONCURRENTLY` inside "
             "`op.get_context().autocommit_block()`.",
    alternatives=[("Maintenance window", "salons book 24/7 through the widget; no good window")],
    rationale=["Every release can be rolled back without touching the schema"],
    consequences=["No column renames in a single step", "More PRs per schema change"],
    files=["api/migrations/README.md"],
    conf=0.9,
)

decision(
    "redis-cache-for-availability", "Cache availability lookups in Redis", "2025-10-09 14:00",
    ["cache", "redis", "performance", "availability"],
    context="`GET /v1/public/{tenant_slug}/availability` is called by embedded booking widgets about 600 times per "
            "second at the Monday 08:00 peak. Each call joins staff schedules, bookings, resources and holidays "
            "(p50 80 ms, p99 900 ms).",
    decision="Cache-aside in Redis: key `avail:{tenant_id}:{resource_id}:{date}`, msgpack value, TTL 60 s. Writes "
             "that change availability (booking create/cancel/move, schedule edits, closures) call "
             "`invalidate_availability(tenant_id, dates)` after commit. The cache is never the source of truth: "
             "creating a booking is re-checked by the database exclusion constraint.",
    alternatives=[
        ("Materialized view refreshed every minute", "refresh cost grows with all tenants"),
        ("CDN caching of the public endpoint", "per-tenant invalidation not possible"),
    ],
    rationale=["90%+ hit rate at peak", "Stale data is bounded to 60 s"],
    consequences=["Any new write path must remember to invalidate", "Evicted keys just cost a recompute"],
    files=["api/harbor/availability/cache.py"],
    conf=0.85,
    changes=[("2026-07-02", "Invalidation added for vacation/closure imports")],
)

decision(
    "feature-flags-unleash", "Feature flags with self-hosted Unleash", "2026-03-09 10:30",
    ["feature-flags", "unleash", "rollout"],
    context="The LaunchDarkly bill reached USD 1,450/month on seat pricing, and we only use boolean flags with "
            "gradual rollout per tenant.",
    decision="Unleash OSS 5 runs in the cluster (namespace `unleash`, database `unleash` on the same RDS). The "
             "backend uses UnleashClient with `tenantId` and `plan` in the context; the Next.js app reads flags "
             "through `unleash-edge` at flags.harbor.app. Naming: `area.short-name`, e.g. `billing.stripe-tax`. "
             "Each flag has an owner and a planned removal date in its description.",
    alternatives=[("Stay on LaunchDarkly", "cost"), ("Flags in our own DB table", "no UI, no gradual rollout")],
    rationale=["Per-tenant rollout covers 95% of our use", "Data stays in eu-central-1"],
    consequences=["We operate it ourselves; clients fall back to the bootstrap file `flags-bootstrap.json` if Unleash is down"],
    files=["api/harbor/flags.py", "web/src/lib/flags.ts"],
    conf=0.9,
    changes=[("2026-03-30", "All flags migrated, LaunchDarkly SDK removed")],
)

decision(
    "launchdarkly-feature-flags", "LaunchDarkly for feature flags", "2025-07-01 11:00",
    ["feature-flags", "launchdarkly"],
    status="superseded",
    context="We want to ship the new calendar gradually per tenant.",
    decision="Use LaunchDarkly (EU instance) with server-side SDK in the API and client-side ID in the dashboard. "
             "Flag keys kebab-case (`new-calendar-view`); targeting by tenant key.",
    alternatives=[("Unleash self-hosted", "another service to run")],
    rationale=["Mature UI", "Fast to start"],
    consequences=["Seat-based pricing"],
    conf=0.5,
    retired=("2026-03-30", "Migrated to self-hosted Unleash for cost (decisions/feature-flags-unleash)."),
)

decision(
    "postmark-transactional-email", "Transactional email via Postmark", "2026-01-15 09:50",
    ["email", "postmark", "deliverability"],
    context="On SendGrid shared IPs we landed on a Microsoft blocklist in December 2025; booking confirmations to "
            "outlook.de and hotmail.fr addresses went to junk or bounced for a week.",
    decision="Postmark with two message streams: `outbound` for transactional mail (confirmations, reminders, "
             "invoices, password resets) and `broadcasts` for tenant newsletters. Sending domain mail.harbor.app "
             "with DKIM, SPF and DMARC p=quarantine; tenants may verify their own sender domain. Bounce and spam "
             "complaint webhooks write to the `email_suppressions` table.",
    alternatives=[("SendGrid dedicated IP", "needs warm-up and volume we don't have"), ("Amazon SES", "we'd own reputation and bounce handling")],
    rationale=["Best inbox placement in our tests with GMX, web.de, Outlook and Orange"],
    consequences=["Marketing content is not allowed on the transactional stream", "Message size limit 10 MB"],
    files=["api/harbor/notifications/email.py"],
    conf=0.9,
)

decision(
    "sendgrid-transactional-email", "SendGrid for all outgoing email", "2025-06-15 10:00",
    ["email", "sendgrid"],
    status="superseded",
    context="Need to send booking confirmations and invoices.",
    decision="Send all email (booking confirmations, reminders, invoices, password resets) through SendGrid's v3 "
             "API with dynamic templates maintained in the SendGrid UI; the event webhook posts bounces and blocks "
             "to `/v1/webhooks/sendgrid`, stored in `sendgrid_events`.",
    alternatives=[("Mailgun", "pricing")],
    rationale=["Free tier", "Template editor"],
    consequences=["Shared IP reputation"],
    conf=0.5,
    retired=("2026-02-01", "Replaced by Postmark after blocklist incident (decisions/postmark-transactional-email)."),
)

decision(
    "argo-cd-gitops-deploys", "Deploy through Argo CD (GitOps)", "2026-02-03 13:15",
    ["deploy", "argocd", "kubernetes", "gitops"],
    context="CI used to run `kubectl apply` with a cluster-admin kubeconfig stored as a GitHub secret. The cluster "
            "drifted from git, there was no audit trail, and rolling back meant re-running an old workflow.",
    decision="CI builds images tagged with the git SHA, pushes them to ECR, and the `harbor-release-bot` commits the "
             "new tag to `deploy/apps/<env>/values-image.yaml`. Argo CD syncs staging automatically; production "
             "needs a manual sync by a member of the `deployers` group. A PreSync hook Job runs "
             "`alembic upgrade head`.",
    alternatives=[("Flux", "team already knew Argo CD UI"), ("Keep kubectl from CI", "credentials in CI, drift")],
    rationale=["Git is the record of what runs", "CI no longer holds cluster credentials"],
    consequences=["Rollback = Argo CD history rollback, then revert the image commit", "Manual kubectl edits are reverted on sync"],
    files=["deploy/apps/production/values-image.yaml", ".github/workflows/release.yml"],
    conf=0.9,
    changes=[("2026-02-20", "Production cut over; kubectl deploy step deleted")],
)

decision(
    "deploy-with-kubectl-from-ci", "CI deploys with kubectl apply", "2025-07-10 15:00",
    ["deploy", "kubectl", "ci"],
    status="superseded",
    context="First EKS deploy pipeline.",
    decision="After tests pass on main, `.github/workflows/deploy.yml` renders Helm templates and runs "
             "`kubectl apply -f rendered/` against harbor-staging, then waits for manual approval (GitHub "
             "environment) before applying to harbor-prod. Kubeconfig in secret `KUBECONFIG_PROD`.",
    alternatives=[("Argo CD", "one more system to learn")],
    rationale=["Fast to set up"],
    consequences=["Rollback via `kubectl rollout undo`"],
    conf=0.5,
    retired=("2026-02-20", "Replaced by GitOps deploys (decisions/argo-cd-gitops-deploys)."),
)

decision(
    "pgbouncer-transaction-pooling", "PgBouncer in transaction pooling mode", "2026-06-02 10:40",
    ["postgres", "pgbouncer", "connections"],
    context="During autoscaling in May 2026 the API (12 pods x 4 uvicorn workers x pool 10) plus 30 Celery "
            "processes hit the RDS limit: `FATAL: remaining connection slots are reserved for non-replication "
            "superuser connections`.",
    decision="PgBouncer 1.22 (2 replicas, service `pgbouncer.harbor-prod.svc:6432`) in front of RDS with "
             "pool_mode=transaction, default_pool_size=40, max_client_conn=4000. Apps connect through it with "
             "asyncpg `statement_cache_size=0`. Alembic migrations and the nightly pg_dump connect to RDS directly.",
    alternatives=[("RDS Proxy", "pinning with our SET LOCAL usage and extra cost"), ("Bigger instance", "memory-bound, 2x cost")],
    rationale=["Server connections stay at ~80 regardless of pod count"],
    consequences=["No session state: no plain SET, LISTEN/NOTIFY, session advisory locks or WITH HOLD cursors through PgBouncer"],
    files=["deploy/charts/pgbouncer/values.yaml", "api/harbor/db/engine.py"],
    conf=0.9,
)

decision(
    "api-versioning-url-prefix", "Public API versioned by URL prefix", "2025-08-19 11:30",
    ["api", "versioning"],
    context="Tenants and integrators (Zapier, a few PMS vendors) call our REST API directly.",
    decision="All public routes live under `/v1`. Additive changes (new fields, new endpoints) are fine within a "
             "version; breaking changes go to `/v2` with at least 12 months overlap. Deprecated endpoints send "
             "`Deprecation` and `Sunset` headers and are listed in the changelog.",
    alternatives=[("Header versioning (Accept-Version)", "harder to test with curl, invisible in logs")],
    rationale=["Obvious in logs and docs"],
    consequences=["The old unversioned /api routes used by the Zapier app are still served"],
    files=["api/harbor/main.py"],
    conf=0.85,
)

decision(
    "openapi-generated-ts-client", "Generate the TS API client from OpenAPI", "2026-01-08 16:00",
    ["api", "typescript", "frontend", "openapi"],
    context="Hand-written fetch wrappers in the dashboard drifted from the backend; a renamed field "
            "(`start_time` to `starts_at`) broke the calendar silently.",
    decision="FastAPI's `/openapi.json` is the contract. `pnpm api:gen` runs openapi-typescript to produce "
             "`web/src/api/schema.d.ts`, used with openapi-fetch. CI regenerates and fails on a diff. Field names "
             "stay snake_case on the TypeScript side.",
    alternatives=[("orval with generated hooks", "too much generated code"), ("tRPC", "backend is Python")],
    rationale=["Type errors at build time instead of runtime bugs"],
    consequences=["Backend response models must be precise; `dict` returns produce `unknown` types"],
    files=["web/src/api/schema.d.ts", "web/package.json"],
    conf=0.85,
)

decision(
    "tanstack-query-server-state", "TanStack Query for server state", "2026-01-20 10:00",
    ["frontend", "react", "state", "tanstack-query"],
    context="Redux Toolkit slices mirrored API data through hand-written thunks. The booking list did not refresh "
            "after a cancel, and about 30% of the dashboard code was slice boilerplate.",
    decision="Server data is read with TanStack Query v5 hooks in `web/src/api/queries/` (keys like "
             "`['bookings', tenantId, filters]`), mutations invalidate the affected keys. Redux is removed. Local "
             "UI state uses useState/useReducer; the few cross-page stores (calendar view settings) use Zustand.",
    alternatives=[("RTK Query", "still Redux"), ("SWR", "weaker mutation/invalidation story")],
    rationale=["Caching, dedupe, retries and cancellation for free"],
    consequences=["No fetching inside useEffect in new code", "Server components prefetch and pass state via HydrationBoundary"],
    files=["web/src/api/queries/bookings.ts"],
    conf=0.9,
)

decision(
    "opentelemetry-request-id", "OpenTelemetry tracing and X-Request-ID propagation", "2026-03-18 14:20",
    ["observability", "tracing", "opentelemetry", "logging"],
    context="Support tickets say 'booking failed at 10:14'. Without a shared id we could not connect the ingress "
            "log, the API error and the Celery task that sent the email.",
    decision="ingress-nginx sets `X-Request-ID` when the client did not send one. `RequestContextMiddleware` binds "
             "it to the structlog context, sets the OTel span attribute `http.request_id`, tags the Sentry scope "
             "and echoes it in the response header. Celery tasks receive it in the task headers and bind it too. "
             "Traces go via OTLP to Grafana Alloy and Tempo, 10% head sampling, 100% for errors.",
    alternatives=[("Datadog APM", "cost at our host count")],
    rationale=["One id to grep across ingress, API, worker logs and Sentry"],
    consequences=["Any new entry point (webhooks, CronJobs) must create a request id itself"],
    files=["api/harbor/middleware/request_context.py", "api/harbor/worker/signals.py"],
    conf=0.85,
)

decision(
    "sentry-error-tracking", "Sentry for errors, 20% transaction sampling", "2025-07-20 09:00",
    ["sentry", "observability", "errors"],
    context="We need error alerts for API, workers and the web app.",
    decision="sentry-sdk with FastAPI, Celery and SQLAlchemy integrations, EU region (de.sentry.io). "
             "traces_sample_rate 0.2 (0 for /healthz), send_default_pii=False, a `before_send` scrubber for "
             "emails and phone numbers. Release = git SHA, environments staging/production. Web uses "
             "@sentry/nextjs with session replay disabled for privacy. Alerts go to #harbor-alerts.",
    alternatives=[("Self-hosted Sentry", "operational burden"), ("Only logs + Loki alerts", "no grouping")],
    rationale=["Grouping, releases and regressions out of the box"],
    consequences=["Quota: 500k errors/month; noisy issues must be fixed or ignored"],
    files=["api/harbor/observability.py", "web/sentry.client.config.ts"],
    conf=0.85,
    changes=[("2026-03-18", "Added request_id tag")],
)

decision(
    "terraform-remote-state", "Terraform remote state in S3 + DynamoDB lock", "2025-07-12 10:00",
    ["terraform", "infra", "aws"],
    context="Infra is managed with Terraform by three people; local state files were overwritten twice.",
    decision="State lives in the versioned bucket `harbor-terraform-state` (eu-central-1), one state per stack in "
             "`infra/terraform/stacks/{network,eks,rds,redis,s3,iam}`, locking through the DynamoDB table "
             "`terraform-locks`. Applies only run from the `terraform.yml` workflow after merge, with the plan "
             "posted on the PR; local apply only with the break-glass role.",
    alternatives=[("Terraform Cloud", "per-resource pricing"), ("Single big state", "slow plans, large blast radius")],
    rationale=["Reviewable plans, no concurrent applies"],
    consequences=["A crashed CI run can leave a stale lock"],
    files=["infra/terraform/backend.tf", ".github/workflows/terraform.yml"],
    conf=0.9,
)

decision(
    "eks-on-aws", "Run on EKS in eu-central-1", "2025-07-15 12:00",
    ["kubernetes", "aws", "eks", "infra"],
    context="Heroku EU was fine for the MVP but private spaces were too expensive, worker dynos were capped at "
            "512 MB, and customers asked for a data processing location in Germany.",
    decision="Move to EKS in eu-central-1 with managed node groups and Karpenter for autoscaling, ingress-nginx, "
             "cert-manager and External Secrets Operator. Namespaces `harbor-prod` and `harbor-staging` run in "
             "separate clusters. Kubernetes 1.29 at launch, 1.30 since August 2026.",
    alternatives=[("ECS Fargate", "no CronJob/Helm ecosystem; team already knew k8s"), ("Stay on Heroku", "cost and residency")],
    rationale=["Frankfurt region", "Flexible worker sizing"],
    consequences=["We own cluster upgrades twice a year"],
    files=["infra/terraform/stacks/eks/main.tf"],
    conf=0.9,
    changes=[("2026-08-20", "Upgraded to 1.30")],
)

decision(
    "booking-overlap-exclusion-constraint", "Prevent double bookings with an exclusion constraint", "2025-10-02 15:30",
    ["bookings", "postgres", "concurrency"],
    context="Two widgets could book the same staff member at the same time: the SELECT-then-INSERT check raced. "
            "23 overlapping appointments in September 2025, mostly at the Monday peak.",
    decision="`bookings` has `EXCLUDE USING gist (tenant_id WITH =, resource_id WITH =, "
             "tstzrange(starts_at, ends_at, '[)') WITH &&) WHERE (status <> 'cancelled')`, which needs the "
             "btree_gist extension. The API catches SQLSTATE 23P01 (ExclusionViolation) and returns 409 with "
             "code `slot_taken`; the widget then reloads availability.",
    alternatives=[("SELECT ... FOR UPDATE on the resource row", "serializes all bookings of a resource, easy to forget"),
                  ("Redis lock per slot", "Redis may evict, not transactional")],
    rationale=["The database guarantees it regardless of code path"],
    consequences=["Moving a cancelled booking back to confirmed can fail with 23P01 and must be handled"],
    files=["api/harbor/bookings/models.py", "api/migrations/versions/2025_10_03_1000_bookings_no_overlap.py"],
    conf=0.95,
)

decision(
    "secrets-from-secrets-manager", "Secrets come from AWS Secrets Manager via External Secrets", "2025-08-02 10:10",
    ["secrets", "kubernetes", "config", "aws"],
    context="Heroku config vars had to move somewhere when we went to EKS; nobody wanted secrets in git.",
    decision="Backend secrets live in AWS Secrets Manager under `harbor/<env>/api` and `harbor/<env>/db`. External "
             "Secrets Operator renders them into the k8s Secret `harbor-api-env` (refresh every hour), mounted as env "
             "vars and read by `HarborSettings`. The web app's `web/.env.production` is committed but may only hold "
             "public build-time values (`NEXT_PUBLIC_API_URL`, `NEXT_PUBLIC_SENTRY_DSN`); anything secret there ends "
             "up in the browser bundle. Locally, `.env.local` is created from `.env.example` and is gitignored.",
    alternatives=[("Sealed Secrets in git", "rotation requires commits"), ("SOPS", "key handling on laptops")],
    rationale=["Rotation without redeploying manifests", "IAM-scoped access"],
    consequences=["A new required setting must be added to Secrets Manager before the code ships"],
    files=["deploy/charts/harbor-api/templates/externalsecret.yaml", "web/.env.production", ".env.example"],
    conf=0.9,
)

decision(
    "customer-search-postgres-fts", "Customer search on Postgres full-text, not Elasticsearch", "2026-04-28 11:00",
    ["search", "postgres", "customers"],
    context="Tenants search their customer list by name, phone or email; the ILIKE query took 2-4 s for tenants "
            "with 60k customers. An OpenSearch spike worked but added a cluster and a sync pipeline.",
    decision="`customers.search_vector` is a generated tsvector column (config `simple` + unaccent, so "
             "'Muller' finds 'Müller') with a GIN index; phone and email prefixes use a pg_trgm index. The "
             "endpoint `GET /v1/customers?q=` ranks with ts_rank and limits to 50.",
    alternatives=[("OpenSearch", "extra cluster, sync lag, cost"), ("Meilisearch", "same sync problem")],
    rationale=["p95 under 60 ms in the spike", "No second source of truth"],
    consequences=["Fuzzy typo tolerance is weaker than a search engine"],
    files=["api/harbor/customers/search.py"],
    conf=0.85,
)

decision(
    "evaluate-opensearch", "Evaluate OpenSearch for customer and booking search", "2026-04-02 10:00",
    ["search", "opensearch"],
    status="proposed",
    context="Slow customer search for large tenants; product wants search across bookings and notes.",
    decision="Proposed: run a 2-week spike with Amazon OpenSearch Service (t3.medium x2) fed from Postgres via a "
             "Celery outbox consumer.",
    alternatives=[("Postgres FTS", "unclear if fast enough")],
    rationale=["Typo tolerance", "Faceting"],
    consequences=["New cluster to operate"],
    conf=0.4,
    archived=("2026-05-05", "Spike done; decided to stay on Postgres full-text search (decisions/customer-search-postgres-fts)."),
)

decision(
    "stripe-tax-for-subscriptions", "Use Stripe Tax for VAT on our subscriptions", "2026-09-24 09:20",
    ["vat", "stripe", "billing", "tax"],
    context="Harbor bills tenants monthly (EUR 29 / EUR 79 plans) via Stripe Billing. With tenants in DE, AT, FR, "
            "BE and CH we hand-maintained VAT rates and reverse-charge rules, and a French société was charged 20% "
            "although it had a valid intra-EU VAT number registered in Belgium.",
    decision="Our own subscription invoices use Stripe Tax (automatic_tax enabled, tax IDs validated via VIES). "
             "Invoices that tenants issue to their own customers keep using the per-tenant `tax_rates` table; "
             "Stripe Tax is not involved there. Rollout behind the flag `billing.stripe-tax`.",
    alternatives=[("Keep manual rate table for subscriptions", "error-prone, reverse-charge logic scattered")],
    rationale=["Correct B2B reverse charge", "Registration thresholds monitored by Stripe"],
    consequences=["0.5% fee per transaction", "Tenant billing address must be complete before checkout"],
    files=["api/harbor/billing/subscriptions.py"],
    conf=0.8,
)

decision(
    "api-rate-limiting-redis", "Per-API-key rate limiting in Redis", "2026-02-25 16:10",
    ["api", "redis", "rate-limit"],
    context="A tenant's misconfigured integration polled `/v1/bookings` 300 times per second for an hour and "
            "slowed the whole API.",
    decision="Token bucket implemented as a Lua script in Redis: 20 req/s with burst 40 per API key, 10 req/s per IP "
             "on unauthenticated widget endpoints. Exceeding returns 429 with `Retry-After`. Limits per plan are in "
             "`harbor/ratelimit/plans.py`.",
    alternatives=[("ingress-nginx limit_req", "per pod, not per API key")],
    rationale=["Fair per-tenant limits", "Cheap, one round trip"],
    consequences=["If Redis evicts or fails, requests are allowed (fail open)"],
    files=["api/harbor/ratelimit/bucket.lua", "api/harbor/ratelimit/middleware.py"],
    conf=0.85,
)
