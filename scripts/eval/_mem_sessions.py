"""Session summaries of the Harbor project."""

from _mem_common import session

session(
    "2026-11-11-celery-beat-to-cronjobs", "Moved scheduled jobs from Celery beat to CronJobs", "2026-11-11 17:40",
    ["scheduling", "cronjob", "celery", "kubernetes"],
    goal="Replace the harbor-beat deployment with one CronJob per schedule.",
    outcome="success",
    completed=[
        "Ported 9 schedules: send-payment-reminders (02:00 UTC), issue-recurring-invoices (02:45), renew-calendar-watches (hourly), purge-expired-refresh-tokens, flush-stale-waitlist, reconcile-payouts (monthly), usage-metering, sitemap-refresh, trial-expiry-mails",
        "Added `python -m harbor.jobs` entry point with a registry in harbor/jobs/__init__.py",
        "Scaled harbor-beat to 0 in production after a night of parallel dry runs",
    ],
    in_progress=[],
    blockers=[],
    next_actions=[
        "After 2026-11-19, delete `beat_schedule` and the `celery.beat` settings from api/harbor/worker/celeryconfig.py and remove the harbor-beat template from the chart",
        "Add an alert on kube_job_status_failed for CronJob-owned jobs",
    ],
    key_changes=["deploy/charts/harbor-worker/templates/cronjobs.yaml", "api/harbor/jobs/__init__.py"],
    files=["deploy/charts/harbor-worker/values.yaml"],
    conf=0.9,
)

session(
    "2026-11-05-staging-reminders-cronjob", "Reminders CronJob silent on staging", "2026-11-05 11:15",
    ["cronjob", "staging", "scheduling"],
    goal="Find out why payment reminders were not sent on staging during the CronJob trial.",
    outcome="success",
    completed=[
        "Found `suspend: true` inherited from the staging values override meant for the heavy reconcile job",
        "Found startingDeadlineSeconds missing in the first template version; controller logged 'too many missed start times'",
        "Fixed both, ran the job manually with `kubectl create job --from=cronjob/send-payment-reminders`",
    ],
    in_progress=[],
    blockers=[],
    next_actions=["Document in the CronJob runbook"],
    key_changes=["deploy/apps/staging/values-worker.yaml"],
    conf=0.85,
)

session(
    "2026-10-22-nightly-reminder-failures", "Debugged nightly reminder failures", "2026-10-22 15:30",
    ["celery", "redis", "debugging", "nightly"],
    goal="Explain why ~3% of payment reminder tasks fail at night.",
    outcome="success",
    completed=[
        "Correlated Sentry 'Too many connections' errors with the recurring invoice batch at 02:00",
        "Traced it to the cache client's BlockingConnectionPool (max 20) under the gevent pool with 200 greenlets",
        "Raised CACHE_REDIS_MAX_CONNECTIONS to 100 for billing workers, set broker_pool_limit=10",
        "Moved issue-recurring-invoices to 02:45 UTC",
    ],
    in_progress=[],
    blockers=[],
    next_actions=["Watch 7 nights; close Sentry issue HARBOR-API-8F2 if quiet"],
    key_changes=["api/harbor/cache.py", "deploy/charts/harbor-worker/values.yaml"],
    conf=0.85,
)

session(
    "2026-10-14-rls-invoices-payments", "RLS on invoices and payments", "2026-10-14 18:00",
    ["rls", "multi-tenancy", "postgres", "security"],
    goal="Enable row-level security on invoices, invoice_lines, payments and audit_log.",
    outcome="partial",
    completed=[
        "Policies enabled on invoices, invoice_lines and payments in production",
        "Fixed three Celery tasks that ran without `tenant_context()` and saw zero rows on staging (PDF regeneration, reconcile_payouts, dunning)",
    ],
    in_progress=["audit_log policy written but not enabled"],
    blockers=["audit_log has ~4.1M rows with NULL tenant_id; the policy would hide them and break support tooling"],
    next_actions=["Backfill audit_log.tenant_id", "Add a test that runs every Celery task under a non-BYPASSRLS role"],
    key_changes=["api/migrations/versions/2026_10_14_1000_rls_invoices.py", "api/harbor/db/rls.py"],
    conf=0.85,
)

session(
    "2026-10-30-audit-log-tenant-backfill", "audit_log tenant_id backfill, part 1", "2026-10-30 17:20",
    ["audit-log", "multi-tenancy", "backfill"],
    goal="Fill tenant_id on audit_log rows so RLS can be enabled.",
    outcome="partial",
    completed=[
        "Wrote `backfill_audit_tenant` job: batches of 5,000 ids, joins on entity_type/entity_id",
        "Backfilled 3.2M of 4.1M rows on production at night",
        "AuditLogger now raises if tenant_id is missing (behind flag platform.audit-strict on staging)",
    ],
    in_progress=["~900k rows reference deleted entities; need a rule for those"],
    blockers=[],
    next_actions=["Decide: assign via actor user's tenant or delete rows older than retention", "Then NOT NULL via NOT VALID + VALIDATE"],
    key_changes=["api/harbor/jobs/backfill_audit_tenant.py", "api/harbor/audit/logger.py"],
    conf=0.8,
)

session(
    "2026-09-18-french-invoice-numbering", "Gapless invoice numbers for French tenants", "2026-09-18 16:50",
    ["invoicing", "france", "compliance"],
    goal="Replace the Postgres sequence used for invoice numbers with a gapless per-tenant counter.",
    outcome="success",
    completed=[
        "New table invoice_number_sequences(tenant_id, series, next_value) with row lock at issue time",
        "Migrated existing counters; verified no gaps for the 312 French tenants",
        "Drafts no longer get a number until issued",
    ],
    in_progress=[],
    blockers=[],
    next_actions=["Measure issue latency during the month-start bulk run"],
    key_changes=["api/harbor/invoices/numbering.py", "api/migrations/versions/2026_09_17_1400_invoice_number_sequences.py"],
    conf=0.9,
)

session(
    "2026-11-07-italian-locale", "Started Italian language support", "2026-11-07 18:10",
    ["i18n", "localization", "italian"],
    goal="Ship Italian for the booking widget, emails and invoice PDFs.",
    outcome="partial",
    completed=["Added `it` to web i18n config, Crowdin project updated, widget strings translated (machine + review)"],
    in_progress=["Email templates: waiting for the hard-coded German templates to be converted to gettext first"],
    blockers=["Crowdin translations for invoice labels not reviewed yet"],
    next_actions=["Convert cancellation.html and no_show_fee.html to gettext", "pybabel update/compile for `it`", "Enable `i18n.locale-it` for the two pilot tenants in Ticino"],
    key_changes=["web/src/i18n/config.ts", "web/messages/it.json"],
    conf=0.8,
)

session(
    "2026-09-03-webhook-signature-fix", "Fixed Stripe webhook signature failures", "2026-09-03 17:00",
    ["stripe", "webhooks", "middleware"],
    goal="Stripe started reporting 400s for all webhook deliveries after Tuesday's release.",
    outcome="success",
    completed=[
        "Root cause: new request logging middleware parsed and re-encoded the JSON body",
        "Added RAW_BODY_PATHS exclusion and a regression test that verifies a real signed payload",
        "Replayed 1,240 failed events with replay_stripe_events",
    ],
    in_progress=[],
    blockers=[],
    next_actions=["Add alert on stripe webhook 4xx rate"],
    key_changes=["api/harbor/middleware/request_logging.py", "api/tests/payments/test_webhooks.py"],
    conf=0.9,
)

session(
    "2026-10-08-playwright-flake-hunt", "Playwright flake hunt", "2026-10-08 18:30",
    ["e2e", "playwright", "ci", "flaky"],
    goal="Bring e2e flake rate below 2% of runs.",
    outcome="partial",
    completed=[
        "Fixed 6 specs that booked 'tomorrow' (fail on Saturday) with page.clock.setFixedTime",
        "Introduced seedTenant() API fixture; 40 specs migrated",
    ],
    in_progress=["Remaining specs still seed via the UI"],
    blockers=[],
    next_actions=["Migrate the rest of the specs to seedTenant()", "Tag @smoke subset to cut PR time"],
    key_changes=["e2e/fixtures/seed.ts"],
    conf=0.8,
)

session(
    "2026-11-13-dashboard-bundle-splitting", "Dashboard bundle splitting", "2026-11-13 17:45",
    ["frontend", "performance", "bundle", "nextjs"],
    goal="Cut dashboard first-load JS and improve LCP on tablets.",
    outcome="partial",
    completed=[
        "Calendar loaded with next/dynamic; moment replaced by date-fns in calendar code",
        "optimizePackageImports for lodash-es and date-fns in next.config.js",
        "First-load JS 2.1 MB -> 1.4 MB; LCP on the Moto G profile 4.8 s -> 3.1 s",
    ],
    in_progress=["Removing Sentry replay integration"],
    blockers=[],
    next_actions=["Remove moment from reports pages", "Audit FullCalendar premium plugins"],
    key_changes=["web/next.config.js", "web/src/app/(dashboard)/calendar/page.tsx"],
    conf=0.85,
)

session(
    "2026-08-20-eks-upgrade-1-30", "EKS upgrade to 1.30", "2026-08-20 19:00",
    ["kubernetes", "eks", "upgrade", "infra"],
    goal="Upgrade staging and production clusters from 1.29 to 1.30.",
    outcome="success",
    completed=["Control plane and managed add-ons (vpc-cni, coredns, kube-proxy, ebs-csi) upgraded on staging, then production",
               "Karpenter v1 migration: Provisioner replaced by NodePool/EC2NodeClass", "ingress-nginx bumped to 1.11",
               "Replaced deprecated flowcontrol v1beta3 manifests"],
    in_progress=[],
    blockers=[],
    next_actions=["Plan 1.31 for February 2027"],
    key_changes=["infra/terraform/stacks/eks/main.tf"],
    conf=0.85,
)

session(
    "2026-08-27-terraform-rds-drift", "Terraform drift on the RDS stack", "2026-08-27 16:30",
    ["terraform", "rds", "drift"],
    goal="Get `terraform plan` clean for stacks/rds.",
    outcome="blocked",
    completed=["Identified console-made change to max_connections in parameter group harbor-pg16"],
    in_progress=[],
    blockers=["State lock left by a cancelled CI run", "Parameter change needs an instance reboot; no window agreed yet"],
    next_actions=["force-unlock with break-glass role", "Codify max_connections=400 in parameters.tf", "Schedule reboot with ops"],
    key_changes=[],
    conf=0.75,
)

session(
    "2026-07-15-gdpr-export-job", "Built the tenant export job", "2026-07-15 18:00",
    ["gdpr", "export", "privacy"],
    goal="Replace manual SQL exports for data portability requests.",
    outcome="success",
    completed=["export_tenant and export_customer jobs write a zip of JSON and CSV files to S3 and print a presigned URL",
               "Rows are streamed with server-side cursors to stay under the 2Gi worker memory limit",
               "Documented why pg_dump is not suitable for single-tenant exports"],
    in_progress=[],
    blockers=[],
    next_actions=["Include audit_log entries once tenant_id is complete"],
    key_changes=["api/harbor/jobs/export_tenant.py"],
    conf=0.85,
)

session(
    "2026-09-25-calendar-invalid-grant", "Google Calendar sync failing for Praxis Weber", "2026-09-25 12:30",
    ["google", "calendar", "oauth", "support"],
    goal="Support escalation: staff appointments no longer blocking booking slots.",
    outcome="success",
    completed=[
        "Sentry showed RefreshError invalid_grant for two staff members; they had changed their Google passwords",
        "Added `needs_reauth` status and the notify_calendar_reauth email so tenants learn about it themselves",
    ],
    in_progress=[],
    blockers=[],
    next_actions=["Show a banner in Settings > Integrations when a connection needs reauth"],
    key_changes=["api/harbor/integrations/google_calendar.py"],
    conf=0.85,
)

session(
    "2026-05-06-invoice-font-fix", "Fixed broken characters in invoice PDFs", "2026-05-06 17:10",
    ["invoices", "pdf", "fonts"],
    goal="Müller GmbH reported broken umlauts in their invoices since mid-April.",
    outcome="success",
    completed=[
        "Slim base image had dropped system fonts; installed Noto/DejaVu and bundled Inter",
        "Regenerated 3,870 affected PDFs as new versions (data unchanged, GoBD)",
    ],
    in_progress=[],
    blockers=[],
    next_actions=["Add a render test asserting glyph coverage for äöüß é ç €"],
    key_changes=["api/Dockerfile.worker", "api/harbor/invoices/fonts/"],
    conf=0.9,
)

session(
    "2026-03-25-unleash-migration", "Migrated flags from LaunchDarkly to Unleash", "2026-03-25 18:20",
    ["feature-flags", "unleash", "launchdarkly"],
    goal="Move all 34 flags to Unleash and remove the LaunchDarkly SDKs.",
    outcome="success",
    completed=["Flags recreated in Unleash with a tenantId-based gradual rollout strategy", "Backend UnleashClient and the web app switched; unleash-edge deployed at flags.harbor.app",
               "Bootstrap file flags-bootstrap.json generated nightly for outages", "Renamed flags to the area.short-name convention"],
    in_progress=[],
    blockers=[],
    next_actions=["Cancel LaunchDarkly contract (ends 2026-04-30)"],
    key_changes=["api/harbor/flags.py", "web/src/lib/flags.ts"],
    conf=0.85,
)

session(
    "2026-02-12-argo-cd-rollout", "Argo CD rollout for staging", "2026-02-12 18:00",
    ["argocd", "deploy", "gitops"],
    goal="Get staging deployed by Argo CD and prepare production.",
    outcome="success",
    completed=["App-of-apps layout in deploy/apps/ with one Application per service and environment", "harbor-release-bot commits new image tags after CI builds",
               "Migrations run as a PreSync hook Job", "Auto-sync enabled for staging only"],
    in_progress=[],
    blockers=[],
    next_actions=["Production cutover on 2026-02-20", "Delete kubectl deploy step and KUBECONFIG_PROD secret"],
    key_changes=["deploy/apps/staging/", ".github/workflows/release.yml"],
    conf=0.85,
)

session(
    "2026-10-02-stripe-tax-rollout", "Stripe Tax for subscriptions", "2026-10-02 17:30",
    ["stripe", "vat", "billing", "tax"],
    goal="Enable Stripe Tax on Harbor's own subscription invoices.",
    outcome="partial",
    completed=["automatic_tax on new subscriptions behind billing.stripe-tax", "VAT id collection in checkout"],
    in_progress=["Migrating existing subscriptions (requires complete billing addresses)"],
    blockers=["~140 tenants without a postal code in their billing address"],
    next_actions=["Email tenants to complete their address", "Run migrate_subscriptions_to_stripe_tax in batches"],
    key_changes=["api/harbor/billing/subscriptions.py"],
    conf=0.8,
)

session(
    "2026-09-10-double-booking-report", "Investigated a reported double booking", "2026-09-10 15:45",
    ["bookings", "support", "idempotency"],
    goal="Salon Lumière reported the same customer booked twice at 10:00.",
    outcome="success",
    completed=[
        "Not an overlap on one resource: the two bookings were for two different stylists ('any staff' option) created 400 ms apart by a double click",
        "Widget now sends an Idempotency-Key header on booking creation; the API dedupes for 10 minutes",
        "Refunded the second deposit following the duplicate-charge runbook",
    ],
    in_progress=[],
    blockers=[],
    next_actions=["Old widget embeds (v2) don't send the header; nudge tenants to update"],
    key_changes=["api/harbor/public/checkout.py", "web/src/widget/BookButton.tsx"],
    conf=0.85,
)

session(
    "2026-10-27-gmx-deliverability", "Booking emails delayed at GMX and web.de", "2026-10-27 16:00",
    ["email", "postmark", "deliverability"],
    goal="Tenants in Bavaria report confirmation emails arriving 30-60 minutes late.",
    outcome="partial",
    completed=["Confirmed greylisting by GMX/web.de for a newly verified tenant sender domain", "Noted in the email runbook"],
    in_progress=["Asked Postmark support about warming the new domain"],
    blockers=[],
    next_actions=["Consider sending from mail.harbor.app until a tenant domain has history"],
    key_changes=[],
    conf=0.7,
)

session(
    "2026-06-04-pgbouncer-rollout", "PgBouncer rollout", "2026-06-04 19:30",
    ["pgbouncer", "postgres", "connections"],
    goal="Put PgBouncer in front of RDS after the May connection incident.",
    outcome="success",
    completed=[
        "pgbouncer chart with 2 replicas, transaction pooling",
        "API and workers switched; asyncpg statement_cache_size=0",
        "Server connections at peak dropped from 380 to 78",
    ],
    in_progress=[],
    blockers=[],
    next_actions=["Write runbook for pool errors", "Codify the console change to max_connections in Terraform"],
    key_changes=["deploy/charts/pgbouncer/", "api/harbor/db/engine.py"],
    conf=0.9,
)

session(
    "2026-11-14-invoice-list-performance", "Invoice list performance", "2026-11-14 17:00",
    ["invoicing", "performance", "sqlalchemy", "dashboard"],
    goal="The invoices page of the dashboard takes ~1.5 s; find out why.",
    outcome="partial",
    completed=["Profiled with the query counter: 101 queries per page (lazy customer + payments)", "selectinload fix in a branch"],
    in_progress=["Export serializers depend on lazy loading; need to add loader options there too"],
    blockers=[],
    next_actions=["Set lazy='raise' on Invoice relationships and fix what breaks", "Check the week view index issue next"],
    key_changes=["api/harbor/invoices/api.py"],
    conf=0.8,
)

session(
    "2026-11-16-random-logouts", "Random logouts in the dashboard", "2026-11-16 16:20",
    ["auth", "jwt", "refresh-tokens", "bugfix"],
    goal="Salon staff are logged out several times a day.",
    outcome="success",
    completed=[
        "Cause: two tabs refreshing the access token at the same moment; the second used an already-rotated refresh token and reuse detection revoked the family",
        "Added a 30 s grace window where the previous refresh token returns the same new pair",
        "Web: refresh is now coordinated across tabs with BroadcastChannel",
    ],
    in_progress=[],
    blockers=[],
    next_actions=["Watch auth_refresh_reuse_detected metric for a week"],
    key_changes=["api/harbor/auth/tokens.py", "web/src/lib/auth.ts"],
    conf=0.85,
)

session(
    "2026-04-10-opensearch-spike", "OpenSearch spike for customer search", "2026-04-10 18:00",
    ["search", "opensearch", "spike"],
    goal="Check whether OpenSearch fixes slow customer search for big tenants.",
    outcome="abandoned",
    completed=["Indexed 2M customers from a prod snapshot into a 2-node cluster; queries fast (p95 30 ms)",
               "Compared with a Postgres prototype using a tsvector column, unaccent and a GIN index: p95 55 ms, good enough",
               "Estimated OpenSearch cost at EUR 380/month plus a sync pipeline"],
    in_progress=[],
    blockers=[],
    next_actions=["Go with Postgres full-text search; drop the OpenSearch branch"],
    key_changes=[],
    conf=0.8,
)

session(
    "2026-09-30-ci-cost-review", "CI cost review", "2026-09-30 15:00",
    ["ci", "github-actions", "cost"],
    goal="Understand why the GitHub Actions bill doubled in September.",
    outcome="partial",
    completed=["Found that e2e sharding 2 -> 4 roughly doubled runner minutes because setup runs in every shard", "Added path filters so docs-only PRs skip backend and e2e jobs",
               "Cancel-in-progress concurrency groups for PR workflows"],
    in_progress=["Evaluating actions-runner-controller on EKS"],
    blockers=[],
    next_actions=["Smoke subset for PRs (see e2e suite debt)"],
    key_changes=[".github/workflows/ci.yml"],
    conf=0.8,
)

session(
    "2025-07-22-heroku-to-eks-kickoff", "Heroku to EKS migration kickoff", "2025-07-22 17:00",
    ["kubernetes", "heroku", "migration"],
    goal="Plan the move from Heroku to EKS.",
    outcome="success",
    completed=["Terraform skeleton for the network and EKS stacks in eu-central-1", "Decided on External Secrets Operator for config and ingress-nginx with cert-manager",
               "Inventory of Heroku add-ons: Postgres, Redis, Scheduler, Papertrail"],
    in_progress=["Docker images for api and worker (Heroku buildpacks until now)"],
    blockers=[],
    next_actions=["Staging on EKS by mid August"],
    key_changes=["infra/terraform/"],
    conf=0.7,
    archived=("2026-01-10", "Migration finished in September 2025; details in decisions/eks-on-aws."),
)

session(
    "2025-08-14-duplicate-reminders", "Duplicate payment reminders", "2025-08-14 18:00",
    ["celery", "celery-beat", "reminders"],
    goal="Customers received every payment reminder twice last night.",
    outcome="success",
    completed=["Found two beat processes: one started with -B inside a worker pod, one standalone; both scheduled send_payment_reminders",
               "Removed -B from the worker command and made harbor-beat a separate deployment with replicas 1 and strategy Recreate",
               "Apologized to the 9 affected tenants"],
    in_progress=[],
    blockers=[],
    next_actions=["Consider a lock for beat"],
    key_changes=["deploy/charts/harbor-worker/values.yaml"],
    conf=0.7,
    archived=("2026-11-15", "Old incident; scheduled jobs now run as k8s CronJobs (decisions/scheduled-jobs-as-k8s-cronjobs)."),
)
