"""Preferences of the Harbor team."""

from _mem_common import preference

preference(
    "snake-case-api-json", "snake_case in API JSON", "2025-08-19 12:00",
    ["api", "naming", "json"],
    topic="Field naming in the REST API",
    value="Request and response bodies use snake_case (`tenant_id`, `starts_at`, `customer_id`), query parameters "
          "too. No camelCase conversion layer in the frontend: the generated TypeScript types keep snake_case. Enum "
          "values are lowercase snake_case strings (`pending_payment`, `no_show`).",
    reason="Python models map 1:1 to JSON, and a conversion layer caused the `start_time` bug once.",
    strength="strong",
    prefer=["{\"booking_id\": \"bkg_8f3a21\", \"starts_at\": \"2026-03-10T09:00:00Z\"}"],
    avoid=["{\"bookingId\": ...}", "alias_generator=to_camel in Pydantic models"],
    conf=0.9,
)

preference(
    "no-react-fc", "Plain function components, no React.FC", "2026-01-09 10:00",
    ["react", "typescript", "frontend"],
    topic="How to declare React components",
    value="Write components as function declarations with an explicit props type and let the return type be "
          "inferred. Do not type them as `React.FC` or `FC<Props>`. Props types are named `<Component>Props` and "
          "declared right above the component.",
    reason="React.FC used to add implicit children, makes generic components awkward, and the codebase mixed both "
           "styles; we settled on one.",
    strength="strong",
    prefer=["type BookingCardProps = { booking: Booking }\nexport function BookingCard({ booking }: BookingCardProps) { ... }"],
    avoid=["export const BookingCard: React.FC<Props> = ({ booking }) => ..."],
    conf=0.9,
)

preference(
    "factory-boy-test-data", "Test data via factory_boy factories", "2026-03-03 11:00",
    ["testing", "pytest", "factories"],
    topic="Creating data in backend tests",
    value="Each test creates the data it needs with the factories in `api/tests/factories.py` "
          "(`BookingFactory(tenant=tenant, starts_at=...)`) and the `tenant` fixture. No JSON fixture files, no raw "
          "INSERTs, no relying on rows another test created.",
    reason="Shared fixtures made the suite order-dependent and slow.",
    strength="default",
    prefer=["booking = BookingFactory(tenant=tenant, status='confirmed')"],
    avoid=["loaddata('bookings.json')", "session.execute(text('insert into bookings ...'))"],
    conf=0.85,
)

preference(
    "conventional-commit-pr-titles", "Conventional Commits in PR titles", "2025-08-01 10:00",
    ["git", "pr", "commits"],
    topic="PR titles and commit messages",
    value="PR titles follow Conventional Commits with a scope: `feat(billing): add Stripe Tax`, "
          "`fix(widget): keep selected slot on locale switch`, `chore(deps): ...`. PRs are squash-merged, so the "
          "PR title becomes the commit on main; release-please builds the changelog from it.",
    reason="Changelog and release notes for tenants are generated automatically.",
    strength="strong",
    prefer=["fix(invoices): render € sign in PDF footer"],
    avoid=["'fixed stuff'", "'WIP'"],
    conf=0.9,
)

preference(
    "small-reviewable-prs", "Keep PRs small and reviewable", "2025-08-01 10:30",
    ["pr", "code-review"],
    topic="Size and shape of pull requests",
    value="Aim for under ~400 changed lines excluding generated files (schema.d.ts, migrations autogen noise). "
          "Put the expand migration in its own PR before the code that uses it. Open drafts early. One approval "
          "is enough, except `billing/`, `payments/` and `migrations/`, which need two (CODEOWNERS).",
    reason="Reviews of 1,500-line PRs were rubber stamps.",
    strength="default",
    prefer=["Separate refactor PR, then feature PR"],
    avoid=["Mixing formatting changes with logic changes"],
    conf=0.85,
)

preference(
    "ruff-lint-and-format", "ruff for linting and formatting", "2025-09-20 10:00",
    ["python", "lint", "formatting", "ruff"],
    topic="Python linting and formatting",
    value="`ruff check --fix` and `ruff format` (line length 100) via pre-commit and in CI; mypy --strict on "
          "harbor/billing and harbor/payments, normal mode elsewhere.",
    reason="One fast tool instead of three; CI lint step went from 70 s to 4 s.",
    strength="strong",
    prefer=["pre-commit run --all-files"],
    avoid=["Adding flake8 plugins or isort config"],
    conf=0.9,
)

preference(
    "flake8-black-isort", "flake8 + black + isort", "2025-06-20 10:00",
    ["python", "lint", "formatting"],
    topic="Python linting and formatting",
    value="Format Python with black (line length 88), sort imports with isort using profile black, and lint with "
          "flake8 plus flake8-bugbear and flake8-comprehensions. All three run in pre-commit and again in the CI "
          "lint job; config lives in setup.cfg and pyproject.toml.",
    reason="The standard setup most of the team already knew from previous jobs.",
    strength="default",
    prefer=["black ."],
    avoid=["Manual formatting"],
    conf=0.5,
    retired=("2025-09-20", "Replaced by ruff (preferences/ruff-lint-and-format)."),
)

preference(
    "sqlalchemy-2-style", "SQLAlchemy 2.0 style queries", "2025-08-25 15:00",
    ["python", "sqlalchemy", "database"],
    topic="Writing ORM queries and models",
    value="Use `select(Booking).where(...)` with `session.scalars()` / `session.execute()`, never `session.query()`. "
          "Columns are typed with `Mapped[...]` and `mapped_column()`. New relationships use `lazy=\"raise\"` so "
          "every load is explicit (`selectinload`, `joinedload`).",
    reason="Async sessions do not support lazy loading; explicit loading prevents N+1 surprises.",
    strength="strong",
    prefer=["stmt = select(Invoice).where(Invoice.tenant_id == tid).options(selectinload(Invoice.lines))"],
    avoid=["session.query(Invoice).filter_by(...)", "relationship() without lazy= in new models"],
    conf=0.9,
)

preference(
    "problem-json-errors", "Errors as problem+json", "2025-09-12 11:00",
    ["api", "errors", "conventions"],
    topic="Error responses of the API",
    value="Errors are `application/problem+json` (RFC 9457, formerly 7807) with `type`, `title`, `status`, `detail`, "
          "plus our `code` (machine-readable snake_case, e.g. `slot_taken`, `invoice_immutable`) and `request_id`. "
          "Raise `HarborProblem(code=..., status=409, detail=...)`; do not raise bare HTTPException with a string.",
    reason="The widget and integrators switch on `code`; free-text details are translated and change.",
    strength="strong",
    prefer=["raise HarborProblem(code='slot_taken', status=409)"],
    avoid=["raise HTTPException(400, 'Slot already booked')"],
    conf=0.9,
)

preference(
    "named-exports-typescript", "Named exports in TypeScript", "2026-01-09 10:30",
    ["typescript", "frontend", "modules"],
    topic="Module exports in the web app",
    value="Use named exports. Default exports only where Next.js requires them (page.tsx, layout.tsx, route "
          "handlers' config). No barrel index.ts files that re-export a whole folder.",
    reason="Grep-able names, better auto-imports, and barrels slowed the dev server and broke tree shaking.",
    strength="default",
    prefer=["export function InvoiceTable() {}"],
    avoid=["export default function () {}", "components/index.ts re-exporting 40 files"],
    conf=0.8,
)

preference(
    "tailwind-styling", "Styling with Tailwind", "2025-10-01 10:00",
    ["frontend", "css", "tailwind"],
    topic="Styling React components",
    value="Tailwind utility classes and the shadcn/ui components in `web/src/components/ui`. Design tokens "
          "(colours, radius, spacing) live in tailwind.config.ts. No CSS modules or styled-components in new code; "
          "the widget uses a prefixed Tailwind build (`hb-`) so it does not clash with tenants' sites.",
    reason="Consistent UI and no naming debates.",
    strength="default",
    prefer=["className=\"flex items-center gap-2 text-sm\""],
    avoid=["BookingCard.module.css", "inline style objects for layout"],
    conf=0.8,
)

preference(
    "structured-log-fields", "Structured log fields", "2026-03-18 15:00",
    ["logging", "structlog", "observability"],
    topic="How to write log statements",
    value="`log.info(\"invoice_issued\", invoice_id=inv.id, tenant_id=inv.tenant_id)`: the event is a snake_case "
          "past-tense name, details go in keyword fields, no f-strings in the message. request_id, tenant_id and "
          "task_id are bound automatically by middleware and Celery signals. Never log personal data.",
    reason="Loki queries and alerts filter on fields, not on message text.",
    strength="strong",
    prefer=["log.warning(\"stripe_webhook_duplicate\", event_id=event.id)"],
    avoid=["logger.info(f\"Invoice {inv.number} issued for {customer.email}\")"],
    conf=0.85,
)

preference(
    "english-in-code", "English for code, comments and commits", "2025-06-12 12:00",
    ["conventions", "language", "code-review"],
    topic="Language used in the repository",
    value="The team sits in Berlin and Lyon; code, comments, commit messages, PR descriptions and docs are in "
          "English. User-facing text only through translation files. German or French legal terms "
          "(Stornorechnung, Sammelrechnung, facture d'acompte) are fine in comments with an English gloss.",
    reason="Everyone can review everything.",
    strength="strong",
    prefer=["# Stornorechnung (cancellation invoice) referencing the original"],
    avoid=["# Rechnung stornieren, falls Kunde nicht zahlt"],
    conf=0.9,
)

preference(
    "settings-via-harborsettings", "Config only through HarborSettings", "2025-08-02 11:00",
    ["config", "python", "pydantic"],
    topic="Reading configuration in the backend",
    value="All configuration is read through `HarborSettings` (pydantic-settings) in `api/harbor/settings.py` and "
          "injected with `get_settings()`. No `os.getenv` / `os.environ` elsewhere. A new setting gets a sensible "
          "default, or is added to Secrets Manager for every environment before the PR merges.",
    reason="One place to see every knob; validation fails fast at startup instead of at first use.",
    strength="strong",
    prefer=["settings.postmark_server_token"],
    avoid=["os.getenv('POSTMARK_TOKEN', '')"],
    conf=0.9,
)

preference(
    "assistant-answer-style", "How I like answers from the assistant", "2026-04-02 09:00",
    ["assistant", "workflow"],
    topic="Working style with the coding assistant",
    value="Keep answers short. Show exact commands and file paths. Ask before running migrations or anything against "
          "staging or production. Run `make test-fast` before saying something is done. No emojis, no long "
          "summaries of what you just did.",
    reason="I read diffs anyway; I want the decisions and the commands.",
    strength="default",
    prefer=["'Changed api/harbor/invoices/api.py; make test-fast passes.'"],
    avoid=["Multi-paragraph recaps", "Running kubectl against harbor-prod without asking"],
    conf=0.8,
)

preference(
    "ui-text-expansion", "Design UI for long German and French strings", "2026-04-22 14:00",
    ["ui", "i18n", "frontend", "design"],
    topic="Layout and translated labels",
    value="German labels are often 30-40% longer than English ('Terminbestätigung erneut senden'). No fixed widths on "
          "buttons, tabs or table headers; let text wrap. Truncate with a tooltip only for user data (customer "
          "names), never for UI labels. Check new screens with the pseudo-locale `en-XA` (`pnpm dev:pseudo`).",
    reason="Truncated buttons were the top UI complaint from German tenants.",
    strength="default",
    prefer=["min-w-0 + flex-wrap on toolbars"],
    avoid=["w-32 on buttons with translated text"],
    conf=0.85,
)

preference(
    "redux-toolkit-state", "Redux Toolkit for frontend state", "2025-07-03 10:00",
    ["frontend", "react", "redux", "state"],
    topic="Frontend state management",
    value="All shared state, including data loaded from the API, goes into Redux Toolkit slices in "
          "`web/src/store/`. Fetching happens in createAsyncThunk thunks; components read with typed "
          "`useAppSelector` hooks and never call fetch directly.",
    reason="Predictable state transitions and the Redux devtools for debugging the calendar.",
    strength="default",
    prefer=["createSlice + createAsyncThunk"],
    avoid=["Local component state for API data"],
    conf=0.5,
    retired=("2026-01-25", "Replaced by TanStack Query for server state (decisions/tanstack-query-server-state)."),
)

preference(
    "date-fns-not-moment", "date-fns, not moment", "2026-05-12 10:00",
    ["frontend", "dates", "timezones"],
    topic="Date handling libraries",
    value="Frontend: date-fns and date-fns-tz; moment is legacy and being removed. Backend: the standard library "
          "zoneinfo with aware datetimes, never pytz. Always format in the tenant's timezone, not the browser's.",
    reason="Bundle size and the pytz LMT offset bug.",
    strength="strong",
    prefer=["formatInTimeZone(date, tenant.timezone, 'dd.MM.yyyy HH:mm')", "datetime.now(ZoneInfo('Europe/Paris'))"],
    avoid=["moment(date).format()", "pytz.timezone(...).localize"],
    conf=0.85,
)
