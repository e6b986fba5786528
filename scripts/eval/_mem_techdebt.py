"""Tech debt of the Harbor project."""

from _mem_common import tech_debt

tech_debt(
    "naive-datetimes-in-reports", "naïve datetimes in the reports module", "2026-02-17 11:00",
    ["timezones", "reports", "datetime"],
    status="open", priority="medium",
    description="`api/harbor/reports/` was written early and uses `datetime.utcnow()` and `datetime.now()`, which "
                "return naïve datetimes. Comparing them with timestamptz values from asyncpg raises "
                "`TypeError: can't compare offset-naive and offset-aware datetimes`, which is why several report "
                "functions strip tzinfo first. The monthly revenue report buckets bookings by UTC date, so a "
                "booking at 00:30 Europe/Berlin is counted on the previous day.",
    reason_deferred="Reports are used by few tenants and the fix changes historical numbers they have exported.",
    impact=["Day and month totals differ from the calendar for late-evening bookings", "Random TypeErrors when new code passes aware datetimes"],
    suggested_fix=["Use aware datetimes everywhere (`datetime.now(UTC)`)", "Bucket by tenant timezone with `AT TIME ZONE tenants.timezone` in SQL"],
    acceptance_criteria=["No `utcnow()` in harbor/reports", "Report for a Berlin tenant counts 00:30 bookings on the right day"],
    files=["api/harbor/reports/revenue.py"],
    conf=0.85,
)

tech_debt(
    "invoice-lines-float-prices", "Float prices in old invoice lines", "2025-09-02 10:00",
    ["invoicing", "money", "data-model"],
    status="open", priority="low",
    description="Invoice lines created before 2025-09 store `unit_price_legacy double precision` and have "
                "`unit_price_cents` NULL. `invoices/totals.py` has two code paths (legacy float and Money) and the "
                "credit note generator must pick the right one. About 210k rows affected.",
    reason_deferred="Those invoices are issued and immutable; we cannot change their amounts, only how we read them.",
    impact=["Credit notes for old invoices occasionally differ by one cent", "Two code paths to test"],
    suggested_fix=["Backfill unit_price_cents from the PDF-rendered values (already rounded) and keep the float column read-only"],
    acceptance_criteria=["No NULL unit_price_cents", "Legacy branch removed from totals.py"],
    files=["api/harbor/invoices/totals.py"],
    conf=0.8,
)

tech_debt(
    "bookings-service-god-module", "bookings/service.py is a 2,400-line module", "2026-01-14 15:00",
    ["bookings", "refactoring", "backend"],
    status="in_progress", priority="medium",
    description="`api/harbor/bookings/service.py` contains creation, rescheduling, cancellation fees, no-show "
                "handling, waitlist, recurring series and Google Calendar mirroring. Functions share module-level "
                "helpers with hidden side effects (e.g. `_apply_fee` sends email). Test file is 3,100 lines.",
    reason_deferred="Every feature touches it; we split it piece by piece alongside feature work.",
    impact=["Merge conflicts on most booking PRs", "Hard to reason about which path invalidates the availability cache"],
    suggested_fix=["Split into bookings/create.py, reschedule.py, cancellation.py, series.py with explicit side-effect functions"],
    acceptance_criteria=["No module in harbor/bookings over 600 lines", "Side effects only in *_effects.py"],
    files=["api/harbor/bookings/service.py"],
    conf=0.8,
    changes=[("2026-08-05", "cancellation.py extracted")],
)

tech_debt(
    "slow-calendar-week-view", "Slow calendar week view", "2026-08-19 10:30",
    ["calendar", "performance", "dashboard"],
    status="open", priority="high",
    description="`GET /v1/bookings?from=...&to=...` behind the dashboard week view does a sequential scan for big "
                "tenants: the only btree index is `(tenant_id, created_at)`, but the query filters on `starts_at`. "
                "The GiST index of the overlap constraint is not used for this ordering. p95 is 1.8 s for tenants "
                "with more than 200k bookings and the DB CPU spikes every Monday morning when staff open the week.",
    reason_deferred="Building the index on the 40M-row table must be done concurrently and off-peak; postponed twice by incidents.",
    impact=["Large chains complain the calendar is sluggish", "Contributes to DB CPU at the Monday peak"],
    suggested_fix=["`CREATE INDEX CONCURRENTLY ix_bookings_tenant_starts ON bookings (tenant_id, starts_at) INCLUDE (resource_id, status)`",
                   "Drop the unused `(tenant_id, created_at)` index afterwards"],
    acceptance_criteria=["EXPLAIN shows an index scan", "Week view p95 under 300 ms for the largest tenant"],
    files=["api/harbor/bookings/queries.py"],
    conf=0.85,
)

tech_debt(
    "invoice-list-n-plus-one", "Invoice list N+1 queries", "2026-11-14 09:00",
    ["invoicing", "performance", "sqlalchemy"],
    status="in_progress", priority="medium",
    description="`GET /v1/invoices` serializes `invoice.customer` and `invoice.payments` through lazy loading, so a "
                "page of 50 invoices runs 101 SQL statements. Through PgBouncer the round trips add up to ~700 ms. "
                "The relationships on Invoice predate our `lazy=\"raise\"` rule.",
    reason_deferred="Found while profiling the dashboard; fix is small but touches serializers used by exports.",
    impact=["Slow invoice page in the dashboard", "Extra load on PgBouncer pools"],
    suggested_fix=["`selectinload(Invoice.customer), selectinload(Invoice.payments)` in the list query", "Set lazy='raise' on Invoice relationships"],
    acceptance_criteria=["List endpoint runs <= 3 queries per page (asserted in test with the query counter fixture)"],
    files=["api/harbor/invoices/api.py", "api/harbor/invoices/models.py"],
    conf=0.85,
)

tech_debt(
    "dashboard-bundle-size", "Dashboard JS bundle is 2.1 MB", "2026-06-30 14:00",
    ["frontend", "performance", "bundle"],
    status="in_progress", priority="high",
    description="The first load of app.harbor.app downloads 2.1 MB of gzipped JavaScript: moment.js with all "
                "locales (~300 KB), the whole lodash, FullCalendar premium plugins on every route and the Sentry "
                "replay integration even though replay is off. LCP is 4.8 s on a mid-range Android phone and the "
                "dashboard feels slow on salon iPads.",
    reason_deferred="Feature work for the autumn season took priority.",
    impact=["Slow first load, especially on mobile", "Lighthouse performance score 41"],
    suggested_fix=["`experimental.optimizePackageImports: ['lodash-es', 'date-fns']` in next.config.js",
                   "Dynamic import of the calendar with `next/dynamic`", "Replace moment with date-fns (already used in new code)",
                   "Drop the replay integration from the Sentry config"],
    acceptance_criteria=["First-load JS under 600 KB gzipped on /dashboard", "LCP under 2.5 s on the Moto G test profile"],
    files=["web/next.config.js", "web/src/app/(dashboard)/calendar/page.tsx"],
    conf=0.85,
    changes=[("2026-11-13", "moment removed from calendar; bundle now 1.4 MB")],
)

tech_debt(
    "stale-feature-flags", "Stale feature flags", "2026-09-08 11:00",
    ["feature-flags", "cleanup", "unleash"],
    status="open", priority="low",
    description="Unleash has 37 flags; 21 have been at 100% for more than 90 days (e.g. `bookings.new-calendar` "
                "since April, `billing.sepa-debit`, `widget.v3`). The code still carries both branches, and tests "
                "only cover the 'on' path.",
    reason_deferred="Nobody owns cleanup; flags created before the owner/removal-date rule have no owner.",
    impact=["Dead code paths", "Confusing behaviour when a flag is toggled by accident"],
    suggested_fix=["Monthly flag review in the platform sync", "Script listing flags at 100% for > 30 days with their code references"],
    acceptance_criteria=["Fewer than 10 flags at 100% older than 30 days"],
    files=["api/harbor/flags.py", "web/src/lib/flags.ts"],
    conf=0.8,
)

tech_debt(
    "class-components-in-settings", "Class components left in settings pages", "2026-02-02 10:00",
    ["frontend", "react", "refactoring"],
    status="open", priority="low",
    description="`web/src/legacy/settings/` still has 14 class components from the 2024 port (billing settings, "
                "opening hours editor, staff permissions). They fetch in `componentDidMount` and keep API data in "
                "`this.state`, so they cannot use our TanStack Query hooks and don't refresh after mutations elsewhere.",
    reason_deferred="Settings pages change rarely.",
    impact=["Opening hours editor shows stale data after saving from another tab", "Two styles to maintain"],
    suggested_fix=["Rewrite as function components with hooks (plain function declarations, typed props)"],
    acceptance_criteria=["No `extends React.Component` in web/src"],
    files=["web/src/legacy/settings/OpeningHoursEditor.tsx"],
    conf=0.8,
)

tech_debt(
    "useeffect-data-fetching", "Data fetching in useEffect in older pages", "2026-02-02 10:30",
    ["frontend", "react", "data-fetching"],
    status="open", priority="medium",
    description="About 25 components still fetch with `useEffect(() => { fetch(url).then(r => r.json()).then(setData) }, [deps])`. "
                "No cancellation, so the customer search sometimes shows results for the previous input; React "
                "StrictMode fetches twice in dev; the booking widget's slot list refetches on every render because "
                "its deps array contains an inline `filters` object.",
    reason_deferred="Migrated opportunistically when a page is touched.",
    impact=["Race conditions and flicker", "Extra load on the availability endpoint"],
    suggested_fix=["Replace with TanStack Query hooks from web/src/api/queries", "Memoize or flatten deps in the widget until migrated"],
    acceptance_criteria=["No fetch calls inside useEffect (lint rule `harbor/no-fetch-in-effect`)"],
    files=["web/src/widget/SlotList.tsx", "web/src/components/CustomerSearch.tsx"],
    conf=0.85,
)

tech_debt(
    "stripe-calls-in-checkout-request", "Stripe calls inside the checkout request", "2026-04-14 16:00",
    ["stripe", "checkout", "latency"],
    status="open", priority="medium",
    description="`POST /v1/public/{slug}/bookings` creates the Stripe Customer and the PaymentIntent synchronously "
                "before answering the widget. When Stripe is slow the request p99 reaches 3.2 s and the booking row "
                "stays locked meanwhile; ingress timeout is 30 s.",
    reason_deferred="Changing the widget payment flow needs a new widget release and embeds are cached by tenants' sites.",
    impact=["Slow checkout at peak", "Bookings abandoned when the spinner takes too long"],
    suggested_fix=["Create the booking as `pending_payment`, create the PaymentIntent in a second call from the widget",
                   "Reuse Stripe Customer ids cached on our customer row"],
    acceptance_criteria=["Booking creation p99 under 800 ms independent of Stripe latency"],
    files=["api/harbor/public/checkout.py"],
    conf=0.8,
)

tech_debt(
    "celery-retry-policy-inconsistent", "Inconsistent Celery retry policies", "2026-07-21 10:00",
    ["celery", "retries", "reliability"],
    status="open", priority="high",
    description="Tasks define retries ad hoc: some use `autoretry_for=(Exception,)` with no backoff, which caused "
                "retry storms during the Stripe incident in June and the Google outage in July; others never retry, "
                "so a single Postmark 5xx loses an invoice email; `send_invoice_email` retries 3 times with a fixed "
                "5 s countdown.",
    reason_deferred="Needs an audit of all 64 tasks for idempotency before enabling retries broadly.",
    impact=["Retry storms amplify outages", "Silently lost emails"],
    suggested_fix=["Base class `HarborTask` with retry_backoff=True, retry_backoff_max=600, retry_jitter=True, max_retries=8",
                   "autoretry_for only specific transient exceptions (stripe.error.APIConnectionError, httpx.TransportError, RateLimitError)",
                   "Tasks that call Stripe must pass idempotency keys"],
    acceptance_criteria=["All tasks inherit HarborTask", "No autoretry_for=(Exception,) left"],
    files=["api/harbor/worker/base.py"],
    conf=0.85,
)

tech_debt(
    "e2e-suite-slow", "E2E suite takes 28 minutes", "2026-09-29 15:00",
    ["e2e", "ci", "testing", "playwright"],
    status="open", priority="medium",
    description="410 Playwright specs run on every PR in 4 shards and take 28 minutes wall time. Most of it is setup: "
                "specs create tenants, staff and services by clicking through the UI. Developers merge before the "
                "job finishes, and the CI minutes budget is nearly used up.",
    reason_deferred="Needs API-based seeding fixtures first.",
    impact=["Slow feedback on PRs", "~40% of monthly CI minutes"],
    suggested_fix=["Seed via API fixtures instead of the UI", "Run a tagged @smoke subset on PRs, the full suite on main and nightly"],
    acceptance_criteria=["PR e2e job under 8 minutes"],
    files=["e2e/", ".github/workflows/ci.yml"],
    conf=0.8,
)

tech_debt(
    "hardcoded-german-in-emails", "Hard-coded German in email templates", "2026-09-16 12:00",
    ["i18n", "email", "templates"],
    status="open", priority="medium",
    description="Six older templates in `api/harbor/notifications/templates/` (cancellation.html, no_show_fee.html, "
                "waitlist_offer.html and the SMS texts) contain literal German ('Ihre Buchung wurde storniert') "
                "instead of gettext calls. End customers of French tenants received German cancellation emails; "
                "reported by the société Kiné Bastille.",
    reason_deferred="Needs translations for French and any new language before the templates can switch.",
    impact=["Wrong-language emails for non-German tenants", "Blocks adding further languages"],
    suggested_fix=["Wrap strings in `{% trans %}` and move templates to per-locale folders", "Add a test that renders each template for each locale"],
    acceptance_criteria=["No German literals in templates outside templates/de/"],
    files=["api/harbor/notifications/templates/cancellation.html"],
    conf=0.85,
)

tech_debt(
    "terraform-drift-console-changes", "Console changes not in Terraform", "2026-08-27 17:00",
    ["terraform", "drift", "aws"],
    status="in_progress", priority="medium",
    description="`terraform plan` on stacks/rds and stacks/redis is not clean: during the May 2026 connection incident "
                "someone raised max_connections in the RDS parameter group from 200 to 400 through the AWS console, and Terraform still says 200; an ElastiCache "
                "parameter and a security group rule for the office VPN were also added by hand. Because plans are "
                "noisy, people stopped reading them.",
    reason_deferred="Importing requires a maintenance window for the parameter group reboot.",
    impact=["Real unexpected changes hide in noisy plans", "Next apply would silently revert the console changes"],
    suggested_fix=["Codify the values in Terraform (or `terraform import` the SG rule)", "Nightly drift-detection workflow that posts to #infra"],
    acceptance_criteria=["`terraform plan` shows no changes on all stacks"],
    files=["infra/terraform/stacks/rds/parameters.tf"],
    conf=0.8,
)

tech_debt(
    "audit-log-missing-tenant-id", "audit_log rows without tenant_id", "2026-10-15 09:30",
    ["audit-log", "multi-tenancy", "rls"],
    status="in_progress", priority="high",
    description="The `audit_log` table allows NULL in `tenant_id`: about 4.1M of 38M rows have none, mostly events "
                "written by Celery tasks that did not set a tenant context. This blocks enabling row-level security "
                "on audit_log, and tenant exports miss those entries.",
    reason_deferred="Backfill has to run in batches on a 38M-row table without locking it.",
    impact=["RLS rollout incomplete", "GDPR exports incomplete for audit entries"],
    suggested_fix=["Backfill by joining on entity_type/entity_id to bookings, invoices, customers",
                   "Make AuditLogger require tenant_id; then add NOT NULL via NOT VALID check + VALIDATE"],
    acceptance_criteria=["0 NULL tenant_id rows", "RLS policy enabled on audit_log"],
    files=["api/harbor/audit/logger.py", "api/harbor/jobs/backfill_audit_tenant.py"],
    conf=0.85,
)

tech_debt(
    "backend-tests-order-dependent", "Backend tests depend on execution order", "2026-03-03 10:00",
    ["testing", "pytest", "database"],
    status="open", priority="medium",
    description="All tests share one Postgres database with session-scoped fixtures, and a few tests commit. "
                "`pytest -p no:randomly` is pinned in setup.cfg because random order fails, and pytest-xdist is off, "
                "so the backend suite takes 14 minutes.",
    reason_deferred="About 60 tests rely on data created by other tests.",
    impact=["Slow CI", "Tests pass locally and fail in CI depending on which subset runs"],
    suggested_fix=["Wrap each test in a transaction with SAVEPOINTs and roll back", "Per-xdist-worker databases", "Create data in the test with factories"],
    acceptance_criteria=["Suite passes with pytest-randomly and `-n auto` in under 5 minutes"],
    files=["api/tests/conftest.py", "api/setup.cfg"],
    conf=0.85,
)

tech_debt(
    "legacy-unversioned-api", "Unversioned /api endpoints for Zapier", "2025-10-21 11:00",
    ["api", "zapier", "legacy"],
    status="open", priority="medium",
    description="The Zapier app (about 1,100 active zaps) still calls `/api/bookings` and `/api/customers` from "
                "before /v1 existed, authenticating with `?api_key=` in the query string. Keys ended up in ingress "
                "logs until redaction was added in March 2026. Response shapes differ from v1 (camelCase fields, "
                "float amounts).",
    reason_deferred="Requires a new Zapier app version and migrating users' zaps.",
    impact=["Two serializers to maintain", "API keys in URLs"],
    suggested_fix=["Publish Zapier app v2 on /v1 with header auth", "Send Deprecation/Sunset headers on /api"],
    acceptance_criteria=["No traffic on /api for 30 days"],
    files=["api/harbor/legacy_api.py"],
    conf=0.8,
)

tech_debt(
    "duplicate-timezone-helpers", "Three timezone helper modules", "2026-05-11 14:00",
    ["timezones", "datetime", "cleanup"],
    status="open", priority="low",
    description="`harbor/utils/tz.py`, `harbor/common/dates.py` and `harbor/bookings/timeutil.py` each define a "
                "`to_local()`. The bookings one does `dt.replace(tzinfo=pytz.timezone('Europe/Berlin'))`, which "
                "attaches the LMT offset +00:53, so some reminder times were off by 7 minutes.",
    reason_deferred="Low impact since the reminder bug was patched locally.",
    impact=["Subtle time bugs", "Developers pick whichever helper they find first"],
    suggested_fix=["Keep one module `harbor/time.py` on zoneinfo", "Lint rule banning pytz imports"],
    acceptance_criteria=["Only one to_local()", "No pytz in requirements"],
    files=["api/harbor/utils/tz.py", "api/harbor/common/dates.py", "api/harbor/bookings/timeutil.py"],
    conf=0.85,
)

tech_debt(
    "pdf-rendering-in-request", "Invoice PDF generated inside the API request", "2025-07-28 10:00",
    ["invoices", "pdf", "latency"],
    status="resolved", priority="high",
    description="`POST /v1/invoices/{id}/issue` rendered the PDF with wkhtmltopdf inline; large invoices took up to "
                "12 s and occasionally hit the ingress timeout, leaving invoices issued without a document.",
    reason_deferred="Resolved in November 2025 together with the WeasyPrint switch: rendering now happens in the Celery `documents` queue and the API returns 202.",
    impact=["Timeouts on issue", "Issued invoices without PDF"],
    suggested_fix=["Render asynchronously and notify via websocket/polling"],
    acceptance_criteria=["Issue endpoint p99 under 500 ms"],
    files=["api/harbor/invoices/api.py"],
    conf=0.9,
    changes=[("2025-11-20", "Resolved with WeasyPrint migration")],
)

tech_debt(
    "worker-logs-plain-text", "Worker logs not JSON", "2026-03-20 10:00",
    ["logging", "celery", "observability"],
    status="resolved", priority="medium",
    description="Celery workers logged plain text through the default Celery logger, so Loki could not parse "
                "task_id, tenant_id or request_id and tracing a booking across API and worker was manual.",
    reason_deferred="Resolved June 2026: workers use structlog JSON with the same processors as the API, including request_id binding.",
    impact=["Could not filter worker logs by tenant or request"],
    suggested_fix=["Hook structlog into Celery's `setup_logging` signal"],
    acceptance_criteria=["Worker log lines are JSON with task_id and request_id"],
    files=["api/harbor/worker/logging.py"],
    conf=0.85,
    changes=[("2026-06-11", "Resolved")],
)

tech_debt(
    "python-39-upgrade", "Upgrade from Python 3.9", "2025-06-16 10:00",
    ["python", "upgrade"],
    status="resolved", priority="high",
    description="The MVP ran on Python 3.9 on Heroku; FastAPI and SQLAlchemy 2 typing features and zoneinfo-based "
                "code needed a newer version, and 3.9 reaches end of life in October 2025.",
    reason_deferred="Blocked until the EKS migration brought our own images.",
    impact=["Cannot use newer typing syntax", "Security support ending"],
    suggested_fix=["Move images to python:3.12-slim"],
    acceptance_criteria=["All services on 3.12"],
    conf=0.8,
    archived=("2025-12-05", "Done in October 2025; all images on Python 3.12."),
)
