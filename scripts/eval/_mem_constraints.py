"""Constraints of the Harbor project."""

from _mem_common import constraint

constraint(
    "rds-max-connections", "RDS max_connections is 400", "2026-05-28 10:00",
    ["postgres", "rds", "connections"],
    kind="technical",
    rule="The production instance (db.r6g.xlarge, PostgreSQL 16.3, parameter group `harbor-pg16`) allows 400 "
         "connections, 3 of them reserved for superusers. Budget: PgBouncer 2 x 40 = 80 server connections, "
         "migrate job 5, Unleash 10, nightly pg_dump 2, humans via bastion 20. Anything that connects directly "
         "must be added to this budget in the PR description.",
    impact=["New services must go through PgBouncer", "Raising the limit means a bigger instance (memory-bound), ~2x cost"],
    workarounds=["Reporting and Metabase use the read replica `harbor-prod-ro`, which has its own limit"],
    severity="high",
    conf=0.9,
    changes=[("2026-06-02", "Budget rewritten after PgBouncer rollout")],
)

constraint(
    "stripe-api-rate-limits", "Stripe API rate limits", "2025-10-30 11:00",
    ["stripe", "rate-limit", "api"],
    kind="limitation",
    rule="Live mode allows about 100 read and 100 write requests per second; test mode 25 per second; the Search "
         "API 20 per second. Requests made on behalf of connected accounts count against the platform.",
    impact=["Month-start subscription invoicing and tenant invoice finalization (~1,800 tenants) must be throttled",
            "Load tests against test mode hit 429 quickly"],
    workarounds=["The `billing` queue tasks that call Stripe have `rate_limit='50/s'`",
                 "stripe-python `max_network_retries=2` handles 429 `rate_limit` errors with backoff"],
    severity="medium",
    conf=0.85,
)

constraint(
    "eu-data-residency", "Customer data stays in the EU", "2025-07-15 12:30",
    ["gdpr", "compliance", "aws", "data-residency"],
    kind="policy",
    rule="All personal data is stored and processed in AWS eu-central-1 (Frankfurt); backups may be copied to "
         "eu-west-1 only. Vendors that receive personal data need a DPA on file and an EU region where offered "
         "(Sentry de.sentry.io, Stripe, Postmark with SCCs). Adding a vendor that sees customer data requires "
         "review by the data protection officer first.",
    impact=["No US-only SaaS for anything with end-customer data (e.g. AI summarization of booking notes)",
            "Physio tenants store health-related notes, which raises the bar further"],
    workarounds=["Use self-hosted or EU-hosted alternatives (Unleash, Grafana stack in cluster)"],
    severity="high",
    conf=0.95,
)

constraint(
    "no-pii-in-logs", "No PII in logs or Sentry", "2025-08-11 10:00",
    ["privacy", "gdpr", "logging", "sentry"],
    kind="policy",
    rule="Logs, traces and error events must not contain names, email addresses, phone numbers, postal addresses "
         "or free-text booking notes (physio tenants write health data there). Log ids instead: customer_id, "
         "booking_id, tenant_id, invoice_id.",
    impact=["Debugging a customer complaint means looking up ids in the admin first",
            "The structlog processor `redact_pii` drops keys listed in PII_KEYS; Sentry's before_send scrubs emails and phone numbers"],
    workarounds=["Support staff can use the read-only impersonation view in the admin"],
    severity="high",
    conf=0.95,
    changes=[("2026-03-10", "API keys in query strings (legacy /api) are redacted too")],
)

constraint(
    "gobd-invoice-immutability", "Issued invoices can't be changed (GoBD)", "2025-09-08 14:00",
    ["invoicing", "germany", "compliance", "retention"],
    kind="policy",
    rule="Once an invoice has status `issued`, its number, date, lines, amounts and recipient are immutable "
         "(German GoBD; we apply it to all tenants). Corrections go through a cancellation invoice "
         "(Stornorechnung / credit note) referencing the original, plus a new invoice if needed. Documents are "
         "retained for 10 years.",
    impact=["`PATCH /v1/invoices/{id}` returns 409 `invoice_immutable` after issue",
            "A typo in the customer's street (Straße) means cancel and reissue",
            "Regenerating a PDF only changes the rendering, never the data"],
    workarounds=["Drafts can be edited freely until issued"],
    severity="high",
    conf=0.95,
)

constraint(
    "french-invoice-numbering", "French invoices need gapless sequential numbering", "2026-09-15 09:00",
    ["invoicing", "france", "compliance", "sequences"],
    kind="policy",
    rule="French rules (CGI art. 242 nonies A) require a unique, chronological, continuous number series with no "
         "gaps. Numbers are allocated at issue time from the `invoice_number_sequences` row for tenant + series, "
         "locked with `SELECT ... FOR UPDATE` inside the issuing transaction. A Postgres SEQUENCE is not allowed "
         "because rolled-back transactions leave holes. Drafts have no number. Format `{prefix}-{YYYY}-{seq:05d}`, "
         "e.g. F-2026-00412.",
    impact=["Issuing is serialized per tenant, bulk issue is slower",
            "An auditor of a French société (Salon Lumière SARL) checked the series in 2026"],
    workarounds=["Separate series per tenant location to reduce lock contention"],
    severity="high",
    conf=0.9,
)

constraint(
    "email-attachment-size-limit", "Email attachments max 10 MB", "2026-01-20 10:00",
    ["email", "postmark", "attachments", "invoices"],
    kind="limitation",
    rule="Postmark rejects messages over 10 MB total, including base64 overhead (~7.5 MB of raw attachments). "
         "Monthly collective invoices (Sammelrechnung) with many pages exceed this.",
    impact=["`send_invoice_email` fails with Postmark error 300 'Invalid attachment'"],
    workarounds=["Above 5 MB we send a link to the customer portal instead of attaching the PDF"],
    severity="medium",
    conf=0.85,
)

constraint(
    "worker-pod-memory-limit", "Worker pods limited to 2Gi memory", "2025-08-30 16:00",
    ["kubernetes", "celery", "memory", "resources"],
    kind="technical",
    rule="harbor-worker pods request 1Gi and are limited to 2Gi; the harbor-prod namespace quota caps "
         "limits.memory at 96Gi. Celery prefork children share that limit.",
    impact=["WeasyPrint rendering of 200+ page payout statements can get OOMKilled",
            "Tenant exports must stream rows, not load whole tables"],
    workarounds=["The `documents` deployment has 4Gi limits and concurrency 2"],
    severity="medium",
    conf=0.85,
    changes=[("2026-06-25", "documents deployment split out with 4Gi")],
)

constraint(
    "heroku-worker-memory", "Workers capped at 512 MB (Heroku standard-1x)", "2025-06-14 10:00",
    ["heroku", "celery", "memory"],
    kind="limitation",
    rule="Celery worker dynos on Heroku are standard-1x with 512 MB of RAM. Above that Heroku logs R14 (memory "
         "quota exceeded) and starts swapping; at 1 GB the dyno is killed with R15.",
    impact=["PDF generation must stay small", "Celery concurrency 2"],
    workarounds=["Use performance-m dynos for the invoice batch"],
    severity="medium",
    conf=0.6,
    retired=("2025-08-30", "Moved from Heroku to EKS; see constraints/worker-pod-memory-limit."),
)

constraint(
    "celery-task-time-limits", "Celery task time limits", "2025-11-25 11:30",
    ["celery", "timeouts", "workers"],
    kind="technical",
    rule="Global soft_time_limit is 240 s and time_limit 300 s. Billing tasks use acks_late=True; the Redis "
         "broker's visibility_timeout is 3600 s, and a task still unacknowledged after that is delivered again "
         "to another worker.",
    impact=["Long work (exports, bulk invoicing) must be chunked into tasks of a few seconds each",
            "Anything that can be redelivered must be idempotent"],
    workarounds=["Raise the limit per task with `@app.task(time_limit=900)` only for documented exceptions like export_tenant"],
    severity="medium",
    conf=0.85,
)

constraint(
    "google-calendar-api-quotas", "Google Calendar API quotas", "2026-03-12 13:00",
    ["google", "calendar", "rate-limit", "integrations"],
    kind="limitation",
    rule="Our Google Cloud project has 1,000,000 Calendar API queries per day and 600 queries per minute per user. "
         "A full resync of a large tenant (40 staff, two years of events) can exceed the per-user limit.",
    impact=["403 rateLimitExceeded / userRateLimitExceeded during full resyncs", "Sync falls behind for that tenant"],
    workarounds=["Use incremental sync tokens; full resync only on 410 Gone", "Exponential backoff with jitter in the sync task"],
    severity="low",
    conf=0.8,
)

constraint(
    "supported-browsers", "Supported browsers", "2025-10-06 10:00",
    ["frontend", "browsers", "compatibility"],
    kind="policy",
    rule="Dashboard: last two versions of Chrome, Edge, Firefox and Safari 16+. Public booking widget: Safari 15+, "
         "Samsung Internet, because many salons use old iPads at the front desk. No Internet Explorer.",
    impact=["No CSS `:has()` in the widget", "structuredClone needs a polyfill in the widget bundle"],
    workarounds=["browserslist config per app in web/package.json"],
    severity="medium",
    conf=0.8,
)

constraint(
    "no-late-friday-deploys", "No production deploys Friday after 15:00", "2025-11-01 09:00",
    ["deploy", "release", "policy"],
    kind="policy",
    rule="No production syncs on Fridays after 15:00 CET and not on German public holidays unless the on-call lead "
         "approves. Staging can be deployed any time.",
    impact=["Weekend on-call is one person", "Monday 08:00 is the booking peak, bad time to find a Friday bug"],
    workarounds=["Hotfixes with approval in #releases"],
    severity="low",
    conf=0.9,
)

constraint(
    "card-data-never-on-our-servers", "Card data never touches our servers", "2025-07-05 10:00",
    ["pci", "stripe", "payments", "security"],
    kind="policy",
    rule="We stay in PCI SAQ A scope: card details are only entered in Stripe Elements / Payment Element iframes. "
         "Never proxy, log or store card numbers, and no custom card input fields. SEPA debit also goes through "
         "Stripe.",
    impact=["No own card validation UI", "Phone bookings where staff type card numbers are not supported"],
    workarounds=["Staff send a payment link (Stripe Checkout) instead"],
    severity="high",
    conf=0.95,
)

constraint(
    "migrations-lock-timeout", "Migrations must set lock_timeout", "2025-11-19 10:00",
    ["migrations", "postgres", "locks"],
    kind="technical",
    rule="`api/migrations/env.py` sets `lock_timeout = '5s'` and `statement_timeout = '15min'` for every migration. "
         "A migration that waits for an ACCESS EXCLUSIVE lock on bookings, invoices or customers would otherwise "
         "queue behind a long query and block all traffic to that table.",
    impact=["Migrations fail fast with `canceling statement due to lock timeout` instead of causing an outage",
            "Deploy must be retried off-peak in that case"],
    workarounds=["Use CREATE INDEX CONCURRENTLY and NOT VALID constraints to avoid long exclusive locks"],
    severity="high",
    conf=0.9,
)

constraint(
    "ci-minutes-budget", "GitHub Actions minutes budget", "2026-09-30 10:00",
    ["ci", "github-actions", "cost"],
    kind="limitation",
    rule="The org plan includes 50,000 Linux minutes per month. Usage is ~42,000 since e2e sharding went from 2 to "
         "4 shards in September 2026. Larger runners (8-core) bill at 4x.",
    impact=["Adding jobs to every PR needs a cost estimate", "Overage is billed per minute"],
    workarounds=["Path filters: docs-only and infra-only PRs skip the backend and e2e jobs",
                 "Self-hosted runners on EKS (actions-runner-controller) are being evaluated"],
    severity="medium",
    conf=0.8,
)

constraint(
    "s3-no-public-buckets", "S3 buckets block public access", "2025-07-18 15:00",
    ["s3", "aws", "security"],
    kind="policy",
    rule="Account-level S3 Block Public Access is on and an SCP denies bucket policies with Principal '*'. Share "
         "objects with presigned URLs (max 7 days) or serve static assets through CloudFront with origin access "
         "control.",
    impact=["Invoice PDFs, exports and backups are never public", "Marketing assets needed a CloudFront distribution"],
    workarounds=["Presigned URLs generated by the API"],
    severity="high",
    conf=0.9,
)

constraint(
    "redis-cache-eviction", "Redis may evict anything", "2026-02-26 10:00",
    ["redis", "cache", "elasticache"],
    kind="technical",
    rule="The cache cluster `harbor-prod-cache` (cache.r7g.large) runs with `maxmemory-policy allkeys-lru`. Any key "
         "can disappear under memory pressure. Durable state (idempotency records, invoice numbers, anything you "
         "cannot recompute) must live in Postgres. The Celery broker is a separate cluster `harbor-prod-broker` "
         "with noeviction.",
    impact=["Rate-limit counters and availability cache entries can vanish", "Locks in Redis must tolerate loss"],
    workarounds=["Use Postgres advisory locks or rows for anything that must not be lost"],
    severity="medium",
    conf=0.85,
)

constraint(
    "no-enterprise-sso", "No SAML/SSO for enterprise tenants", "2026-06-18 11:00",
    ["auth", "sso", "enterprise", "gap"],
    kind="gap",
    rule="Login supports email + password and 'Sign in with Google' only. There is no SAML or OIDC enterprise SSO "
         "and no SCIM provisioning.",
    impact=["Chains like 'Physio Netzwerk Süd' (40 locations) cannot enforce their IdP and must offboard staff by hand",
            "Two enterprise deals are on hold"],
    workarounds=["Tenant admins can require Google login for their domain"],
    severity="medium",
    expires="2027-03-31",
    conf=0.8,
)

constraint(
    "booking-widget-wcag", "Booking widget must meet WCAG 2.1 AA", "2025-12-15 10:00",
    ["accessibility", "frontend", "widget"],
    kind="policy",
    rule="Public booking pages and the embeddable widget must meet WCAG 2.1 AA; the German BFSG applies to online "
         "booking services since June 2025. Playwright runs `@axe-core/playwright` on the widget flows and fails on "
         "serious or critical violations.",
    impact=["Custom date pickers need full keyboard support", "Colour themes chosen by tenants are contrast-checked"],
    workarounds=["Tenant brand colours below 4.5:1 contrast are adjusted automatically"],
    severity="high",
    conf=0.85,
)

constraint(
    "trial-tenant-email-limit", "Trial tenants: 50 emails per day", "2026-01-25 17:00",
    ["email", "trial", "abuse"],
    kind="policy",
    rule="After spammers used free trials to send phishing 'booking confirmations' in January 2026, trial tenants "
         "may send at most 50 emails per day and cannot use broadcasts. The counter is checked in "
         "`send_email()` before handing off to Postmark.",
    impact=["Trial tenants importing 2,000 customers cannot notify them all", "Sales demos must use a paid demo tenant"],
    workarounds=["Support can lift the limit per tenant in the admin after a manual check"],
    severity="low",
    conf=0.85,
)

constraint(
    "elasticache-no-tls", "Redis without in-transit encryption", "2025-08-01 10:00",
    ["redis", "elasticache", "tls"],
    kind="limitation",
    rule="The ElastiCache Redis 6 clusters (cache and Celery broker) were created without in-transit encryption; "
         "enabling it requires recreating the cluster. Clients connect with redis:// inside the VPC only, and "
         "rediss:// URLs will fail.",
    impact=["Security questionnaires need an exception note"],
    workarounds=["Traffic stays inside private subnets with security groups"],
    severity="low",
    conf=0.7,
    archived=("2026-05-10", "Clusters recreated as Redis 7 with TLS in May 2026; no longer applies."),
)
