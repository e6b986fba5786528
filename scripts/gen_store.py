#!/usr/bin/env python3
"""Generate a realistic synthetic memindex memory store (schema 1.0).

Usage:
    python scripts/gen_store.py OUT_DIR --count N [--seed S]

Writes N memories to OUT_DIR/.claude/memory/<folder>/<id>.json.  Standard
library only, Python >= 3.10, deterministic for a given (count, seed).

Vocabulary model
----------------
* Every slot in a sentence template ({tech}, {comp}, {ident}, {err}, {cmd},
  {file}, ...) draws from a hand-written pool of software-engineering terms.
  Pools are listed roughly from common to rare and sampled with Zipf weights
  (weight of rank r = 1 / r**s), so a few terms (PostgreSQL, React, `user_id`,
  CI) are everywhere and most are rare.
* Identifiers, file paths, commands, service and stream names are composed
  from independent Zipf draws (entity x suffix, entity x path template, ...),
  which gives a long tail of medium and rare compound terms.
* A fixed project lexicon (built once from a fixed seed) of ~21k composed
  code identifiers (function, test, feature-flag, metric and config names
  like `RecalculateShipmentEta`, `TestOrderSync_Timeout`, `shipment_eta_v2`)
  is also Zipf-ranked: a few are mentioned everywhere, most rarely.
* Prose words listed in SYNONYMS vary between variants (fails / breaks /
  errors out ...), widening the mid-frequency English vocabulary.
* Each memory has a "topic" (one tech, component, entity, error, service,
  file ...) that its templates keep referring to, so terms are bursty: a
  memory about pgbouncer says pgbouncer several times.
* Unique tokens (ticket keys, PR numbers, commit SHAs, versions, pod names,
  request ids, run ids, hosts, migration file names) are sprinkled into every
  memory, so the vocabulary keeps growing with N as in a real store.

Also importable: generate(out_dir, count, seed) and modify_one(path, seed).
Mix: decision 25%, runbook 20%, session_summary 20%, constraint 12%,
tech_debt 13%, preference 10%; ~5% retired, ~2% archived; bodies 60-250 words;
timestamps over 2024-11-01 .. 2026-11-01, denser towards the end.
"""
from __future__ import annotations

import argparse
import calendar
import json
import math
import os
import random
import re
import sys
import time
import zlib
from bisect import bisect
from itertools import accumulate
from pathlib import Path

SCHEMA_VERSION = "1.0"

FOLDERS = {
    "session_summary": "sessions",
    "decision": "decisions",
    "runbook": "runbooks",
    "constraint": "constraints",
    "tech_debt": "tech-debt",
    "preference": "preferences",
}

# category mix (percent)
CATEGORY_MIX = [
    ("decision", 25),
    ("runbook", 20),
    ("session_summary", 20),
    ("constraint", 12),
    ("tech_debt", 13),
    ("preference", 10),
]
_CAT_NAMES = [c for c, _ in CATEGORY_MIX]
_CAT_CUM = list(accumulate(w for _, w in CATEGORY_MIX))

RETIRED_RATE = 0.05
ARCHIVED_RATE = 0.02

# timestamps: two years, denser towards the end (a growing project)
T_START = 1730419200  # 2024-11-01T00:00:00Z
T_END = 1793491200    # 2026-11-01T00:00:00Z
T_SPAN = T_END - T_START

MIN_WORDS, MAX_WORDS = 60, 250
# median body length per category (words); clipped to [MIN_WORDS, MAX_WORDS]
MEDIAN_WORDS = {
    "decision": 130,
    "runbook": 140,
    "session_summary": 135,
    "constraint": 95,
    "tech_debt": 115,
    "preference": 80,
}


# --------------------------------------------------------------------------
# Zipf pools
# --------------------------------------------------------------------------

class Pool:
    """Items sampled with Zipf weights by list position (rank 1 = first)."""

    __slots__ = ("items", "cum", "total")

    def __init__(self, items, s: float = 1.0):
        self.items = list(items)
        self.cum = list(accumulate(1.0 / (r ** s) for r in range(1, len(self.items) + 1)))
        self.total = self.cum[-1]

    def draw(self, rng: random.Random):
        return self.items[bisect(self.cum, rng.random() * self.total)]


def _lines(block: str) -> list[str]:
    return [ln.strip() for ln in block.strip().splitlines() if ln.strip()]


TECH = Pool(_lines("""
PostgreSQL
React
TypeScript
Kubernetes
Docker
GitHub Actions
Redis
Go
Node.js
Python
Terraform
NATS
Kafka
Next.js
Helm
Prometheus
Grafana
Nginx
S3
gRPC
GraphQL
Sentry
OpenTelemetry
Vite
Jest
Playwright
pytest
Elasticsearch
Datadog
FastAPI
Django
Celery
RabbitMQ
Vitest
ESLint
Webpack
Tailwind
Storybook
Argo CD
Istio
Envoy
pgbouncer
sqlc
Prisma
SQLAlchemy
Alembic
Vault
Loki
Cypress
Apollo
protobuf
Stripe
Auth0
Keycloak
Flyway
pnpm
Yarn
Bazel
Rust
SQLite
DynamoDB
Lambda
ECS
EKS
GKE
Cloud Run
BigQuery
Snowflake
dbt
Airflow
Temporal
Kong
Traefik
Memcached
MinIO
ClickHouse
TimescaleDB
PostGIS
Mapbox
Twilio
SendGrid
CloudFront
Cloudflare
Fastly
Jaeger
Tempo
k6
Locust
Renovate
Dependabot
SonarQube
Trivy
cert-manager
external-dns
Karpenter
KEDA
Linkerd
Consul
etcd
Zod
tRPC
Remix
Svelte
Vue
Angular
Flutter
Swift
Kotlin
"""), s=1.0)

TECH_GROUPS = {
    "data": "PostgreSQL Redis S3 Elasticsearch pgbouncer SQLite DynamoDB BigQuery Snowflake "
            "ClickHouse TimescaleDB PostGIS MinIO Memcached dbt etcd",
    "messaging": "NATS Kafka RabbitMQ Celery Temporal Airflow Lambda",
    "frontend": "React Next.js Vite Webpack Tailwind Storybook Apollo Remix Svelte Vue Angular "
                "Zod tRPC Flutter",
    "lang": "TypeScript Go Node.js Python Rust Swift Kotlin",
    "infra": "Kubernetes Docker Terraform Helm Nginx Argo_CD Istio Envoy Kong Traefik Linkerd "
             "Consul ECS EKS GKE Cloud_Run CloudFront Cloudflare Fastly cert-manager external-dns "
             "Karpenter KEDA Vault",
    "observability": "Prometheus Grafana Sentry OpenTelemetry Datadog Loki Jaeger Tempo",
    "testing": "Jest Playwright pytest Vitest Cypress k6 Locust",
    "tooling": "GitHub_Actions ESLint pnpm Yarn Bazel Renovate Dependabot SonarQube Trivy",
    "backend": "gRPC GraphQL FastAPI Django sqlc Prisma SQLAlchemy Alembic Flyway protobuf",
    "saas": "Stripe Auth0 Keycloak Mapbox Twilio SendGrid",
}
_TECH_RANK = {t: i for i, t in enumerate(TECH.items)}
TECH_GROUP = {}
GROUP_POOL = {}
for _g, _names in TECH_GROUPS.items():
    _members = sorted((n.replace("_", " ") for n in _names.split()), key=_TECH_RANK.__getitem__)
    GROUP_POOL[_g] = Pool(_members, s=1.0)
    for _n in _members:
        TECH_GROUP[_n] = _g
assert set(TECH_GROUP) == set(TECH.items), set(TECH.items) ^ set(TECH_GROUP)

COMP = Pool(_lines("""
API gateway
auth service
tracking service
notification service
billing worker
search indexer
ingestion pipeline
admin dashboard
webhook handler
job scheduler
rate limiter
session store
cache layer
checkout flow
feature flag service
read replica
migration runner
event bus
ETA service
carrier adapter
geocoding client
payment processor
reporting service
export worker
email sender
audit logger
config loader
permissions module
GraphQL resolver layer
websocket gateway
background job queue
mobile BFF
public API
internal CLI
dev container
staging cluster
data warehouse sync
metrics exporter
log shipper
secrets manager
release pipeline
preview environments
onboarding wizard
settings page
map view
dispatch board
route optimizer
inventory sync
pricing engine
invoice generator
SSO bridge
user directory
upload service
PDF renderer
analytics pipeline
health checker
load balancer
image resizer
"""), s=0.95)

ENTITY = Pool(_lines("""
user
order
shipment
account
tenant
invoice
payment
session
event
customer
carrier
product
subscription
route
driver
package
address
notification
webhook
report
job
team
role
token
api_key
vehicle
warehouse
label
quote
refund
export
task
member
permission
device
location
stop
manifest
parcel
organization
project
workspace
comment
attachment
upload
audit_entry
plan
coupon
cart
price
tax_rate
currency
region
zone
schedule
delivery
pickup
claim
ticket
message
thread
channel
feature_flag
setting
profile
contact
document
batch
rate
container
pallet
invoice_line
credit_note
payout
dispute
sku
supplier
purchase_order
backorder
return
exception
milestone
geofence
checkpoint
signature
photo
barcode
hub
depot
lane
tariff
customs_entry
incident
alert
dashboard
widget
query
filter
segment
cohort
experiment
variant
campaign
template
locale
translation
secret
certificate
domain
endpoint
integration
connector
sync_run
import_job
snapshot
backup
"""), s=1.0)

ID_SUFFIX = Pool(["_id", "_status", "_created_at", "_count", "_ref", "_type", "_uuid", "_version",
                  "_total", "_key", "_name", "_url", "_state", "_ids", "_payload", "_hash"], s=1.1)

CAMEL_FORM = Pool(["{E}Service", "use{E}", "{E}Repository", "{E}List", "{E}Card", "handle{E}Updated",
                   "create{E}", "get{E}ByID", "{E}Props", "{E}Store", "fetch{E}s", "{E}Handler",
                   "validate{E}", "{E}DTO", "{E}Form", "on{E}Created", "{E}Event", "{E}Status"], s=1.0)

# data-ish identifiers: columns, fields, env vars, headers
IDENT_DATA = Pool(_lines("""
user_id
tenant_id
shipment_id
created_at
DATABASE_URL
updated_at
NODE_ENV
order_id
JWT_SECRET
account_id
REDIS_URL
request_id
NATS_URL
trace_id
tracking_number
LOG_LEVEL
VITE_API_URL
deleted_at
org_id
external_id
SENTRY_DSN
NEXT_PUBLIC_API_URL
X-Request-ID
Idempotency-Key
carrier_code
eta_at
correlation_id
OTEL_EXPORTER_OTLP_ENDPOINT
AWS_REGION
GITHUB_TOKEN
Retry-After
ETag
expires_at
locale
"""), s=1.0)

# code identifiers: APIs, hooks, types, k8s fields, SQL
IDENT_CODE = Pool(_lines("""
React.FC
useEffect
context.Context
useState
ctx.Done()
errors.Is
Promise.all
sql.ErrNoRows
fmt.Errorf
useQuery
http.Client
sync.WaitGroup
pgxpool.Pool
useMemo
useCallback
t.Parallel()
readinessProbe
resources.limits.memory
process.env
import.meta.env
json.Marshal
time.Now()
http.HandlerFunc
defer rows.Close()
go func()
AckWait
MaxDeliver
ConfigMap
HorizontalPodAutoscaler
PodDisruptionBudget
CronJob
queryClient.invalidateQueries
React.StrictMode
Suspense
ErrorBoundary
forwardRef
z.object
as const
unknown
any
@pytest.fixture
async def
BaseModel
Depends
session.commit()
SELECT ... FOR UPDATE SKIP LOCKED
ON CONFLICT DO NOTHING
CREATE INDEX CONCURRENTLY
EXPLAIN ANALYZE
pg_stat_activity
max_connections
statement_timeout
idle_in_transaction_session_timeout
VACUUM ANALYZE
jsonb
gen_random_uuid()
GOMAXPROCS
GOGC
livenessProbe
imagePullPolicy
ServiceAccount
chan struct{}
json.NewDecoder
errgroup.Group
slog.Logger
zap.Logger
useRef
useReducer
React.memo
"""), s=1.0)

ERR = Pool(_lines("""
connection refused
context deadline exceeded
ECONNRESET
OOMKilled
CrashLoopBackOff
deadlock detected
too many connections for role
TypeError: Cannot read properties of undefined (reading 'map')
panic: runtime error: invalid memory address or nil pointer dereference
504 Gateway Timeout
401 Unauthorized
duplicate key value violates unique constraint
ImagePullBackOff
exit code 137
429 Too Many Requests
i/o timeout
nats: timeout
x509: certificate signed by unknown authority
relation does not exist
canceling statement due to statement timeout
JavaScript heap out of memory
Readiness probe failed
fatal error: concurrent map writes
WARNING: DATA RACE
502 Bad Gateway
403 Forbidden
ERR_PNPM_OUTDATED_LOCKFILE
Cannot find module
Hydration failed because the initial UI does not match
Maximum update depth exceeded
EADDRINUSE: address already in use
no space left on device
ModuleNotFoundError: No module named
nats: no responders available for request
TLS handshake timeout
could not serialize access due to concurrent update
SSL SYSCALL error: EOF detected
invalid input syntax for type uuid
value too long for type character varying(255)
jwt expired
invalid signature
No 'Access-Control-Allow-Origin' header is present
Test timed out in 5000ms
Element is not attached to the DOM
net::ERR_CONNECTION_REFUSED
The operation was canceled.
Process completed with exit code 1
Back-off restarting failed container
unexpected EOF
Liveness probe failed
ERR_MODULE_NOT_FOUND
rate limit exceeded
"""), s=1.0)

CMD_T = Pool(_lines("""
kubectl rollout restart deployment/{svc} -n {ns}
go test ./... -race -count=1
kubectl logs -f deploy/{svc} -n {ns} --since=15m
pnpm install --frozen-lockfile
docker compose up -d postgres nats redis
make migrate-up
kubectl get pods -n {ns} -l app={svc}
gh run rerun {runid} --failed
psql $DATABASE_URL -c 'select count(*) from {entities}'
npx playwright test --retries=0
pnpm test --filter web
kubectl describe pod {pod} -n {ns}
golangci-lint run ./...
npx tsc --noEmit
make test-integration
docker compose down -v
helm upgrade --install {svc} ./charts/{svc} -f values-{envslug}.yaml
go test ./internal/{entity}/... -run Test{E}
terraform plan -target=module.{entity}
kubectl get events -n {ns} --sort-by=.lastTimestamp
nats stream info {stream}
nats consumer report {stream}
argocd app sync {svc}-{envslug}
make lint
npm ci
go mod tidy
kubectl top pods -n {ns}
curl -sS localhost:8080/healthz
pytest -x -k {entity}
alembic upgrade head
sqlc generate
buf generate
git bisect run make test
redis-cli --scan --pattern '{entity}:*'
vault kv get secret/{svc}
aws s3 ls s3://{entity}-exports-{envslug}/
k6 run load/{entity}.js
npx prisma migrate deploy
kubectl scale deploy/{svc} --replicas=0 -n {ns}
gh pr checks {prnum}
docker build -t {svc}:dev .
pnpm -r build
kubectl exec -it deploy/{svc} -n {ns} -- sh
go tool pprof http://localhost:6060/debug/pprof/heap
"""), s=0.9)

FILE_T = Pool(_lines("""
.github/workflows/ci.yml
internal/{entity}/service.go
web/src/components/{E}List.tsx
internal/{entity}/handler.go
.env.local
docker-compose.yml
internal/{entity}/repository.go
Makefile
k8s/base/{svc}/deployment.yaml
web/src/hooks/use{E}.ts
migrations/{mig}
package.json
internal/{entity}/{entity}_test.go
.env.production
cmd/{svc}/main.go
web/src/api/{entities}.ts
go.mod
tsconfig.json
charts/{svc}/values.yaml
.github/workflows/deploy.yml
internal/platform/db/pool.go
internal/platform/nats/client.go
web/src/pages/{entities}/index.tsx
vite.config.ts
playwright.config.ts
db/queries/{entity}.sql
k8s/overlays/{envslug}/kustomization.yaml
api/openapi.yaml
.github/workflows/e2e.yml
pnpm-lock.yaml
proto/{entity}/v1/{entity}.proto
web/src/lib/http.ts
terraform/modules/{entity}/main.tf
app/services/{entity}_service.py
tests/test_{entity}.py
pyproject.toml
scripts/seed.sh
web/e2e/{entity}.spec.ts
internal/config/config.go
web/src/App.tsx
"""), s=0.95)

ENVFILE = Pool([".env.local", ".env.production", ".env", ".env.staging", ".env.test",
                ".env.example", ".env.development"], s=1.0)
ENVNAME = Pool(["staging", "production", "CI", "local dev", "preview", "QA", "sandbox"], s=1.0)
NS = Pool(["default", "apps", "platform", "jobs", "monitoring", "staging", "prod", "data",
           "ingress-nginx", "kube-system"], s=1.0)
ROLE = Pool(["api", "worker", "consumer", "gateway", "scheduler", "indexer", "sync", "webhooks",
             "cron", "migrator"], s=1.0)
CIJOB = Pool(["e2e", "unit-tests", "lint", "integration-tests", "build-images", "typecheck",
              "deploy-staging", "go-test", "web-test", "migrations-check", "security-scan",
              "docker-build", "release", "coverage"], s=1.0)
CISTEP = Pool(["Run tests", "Install dependencies", "Wait for Postgres", "Build image", "Set up Go",
               "Setup Node", "Upload coverage", "Install Playwright browsers", "Run migrations",
               "Push image", "Restore cache", "Checkout"], s=1.0)
METRIC = Pool(["p99 latency", "error rate", "memory usage", "consumer lag", "CPU throttling",
               "queue depth", "p95 latency", "build time", "connection count", "GC pause time",
               "bundle size", "replication lag", "5xx rate", "cache hit rate", "disk usage",
               "cold start time", "test duration", "time to first byte"], s=1.0)
TEAM = Pool(["platform team", "frontend guild", "SRE on-call", "mobile team", "data team",
             "payments team", "security team", "ops team", "product team", "support team"], s=1.0)
PERSON = Pool(["@dana", "@miguel", "@priya", "@tomasz", "@li.wei", "@sam", "@fatima", "@jonas",
               "@aiko", "@oleg", "@grace", "@ravi", "@elena", "@kwame", "@nora", "@ben", "@yuki",
               "@sofia", "@marcus", "@ines"], s=0.9)
FEATURE = Pool(_lines("""
bulk export
live tracking map
SSO login
rate limiting
audit log
webhook retries
ETA predictions
CSV import
search autocomplete
invoice PDFs
dark mode
role-based access
password reset
email digests
push notifications
multi-tenant billing
data retention
usage metering
API pagination
label printing
route planning
proof of delivery
carrier onboarding
i18n
offline mode
activity feed
onboarding flow
accessibility fixes
"""), s=1.0)
THING = Pool(_lines("""
connection pool
retry policy
cache TTL
schema migration
feature flag
health check
request timeout
database index
readiness probe
idempotency key
pagination cursor
error boundary
log format
secret rotation
build cache
lockfile
Docker layer cache
test fixtures
seed data
API versioning
circuit breaker
backoff strategy
dead letter queue
job deduplication
soft deletes
timezone handling
currency rounding
UUID generation
JSON serialization
input validation
CSRF protection
session expiry
code splitting
trace sampling
image optimization
memoization
lazy loading
state management
form validation
date parsing
N+1 queries
batch size
connection string
graceful shutdown
"""), s=1.0)
LIB = Pool(_lines("""
github.com/jackc/pgx/v5
@tanstack/react-query
zod
github.com/nats-io/nats.go
github.com/go-chi/chi/v5
react-hook-form
github.com/stretchr/testify
date-fns
msw
@testing-library/react
go.uber.org/zap
axios
testcontainers-go
zustand
golang-migrate
openapi-typescript
react-router
pydantic
httpx
lodash
"""), s=1.0)
# Parts for composed project identifiers (function, test, flag, metric and
# config names).  Three independent Zipf draws give a smooth long tail of
# medium and rare terms, like the identifiers of a real code base.
VERB = Pool(_lines("""
get list create update delete sync validate handle process fetch parse build
publish compute recalculate normalize consume enqueue retry reconcile render
resolve load save apply merge export import cancel schedule dispatch notify
refresh invalidate serialize decode encode map filter group batch migrate
backfill lock claim release assign track match estimate price verify sign
rotate purge index search split archive format
""".replace("\n", " ").replace(" ", "\n")), s=0.8)
NOUN = Pool(_lines("""
status eta totals events address batch cursor label payload summary window
quota token history snapshot schema metadata filters options config cache key
checksum timeline route stops rates fees tax currency timezone permissions
roles owner deadline priority attempts backoff offset page results items lines
count state version diff errors warnings retries limits score weight distance
duration geometry bounds position coordinates zone slot capacity manifest
signature receipt audit balance
""".replace("\n", " ").replace(" ", "\n")), s=0.8)
TEST_COND = Pool(["DuplicateKey", "NotFound", "Timeout", "Unauthorized", "EmptyInput", "Concurrent",
                  "Retry", "InvalidTimezone", "Pagination", "LargeBatch", "Cancelled", "Expired",
                  "RaceCondition", "MissingTenant", "ZeroItems", "Idempotent", "Rollback",
                  "PartialFailure", "StaleCache", "Unicode"], s=0.9)
SETTING = Pool(["timeout_ms", "enabled", "batch_size", "max_retries", "ttl_seconds", "poll_interval",
                "concurrency", "rate_limit", "page_size", "buffer_size"], s=1.0)

TICKET_PROJ = Pool(["TW", "PLAT", "WEB", "OPS", "API", "INFRA", "DATA", "SEC", "MOB", "BUG"], s=1.0)
MIG_VERB = Pool(["add", "create", "drop", "backfill", "alter", "rename", "index"], s=1.0)
DUR_UNIT = Pool(["minutes", "seconds", "hours", "days"], s=1.0)


def _slug(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")


def _camel(entity: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in entity.split("_"))


def _plural(word: str) -> str:
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


# --------------------------------------------------------------------------
# Template engine
# --------------------------------------------------------------------------

_SLOT_RE = re.compile(r"\{(\w+|=[^{}]*)\}")

# Prose synonyms: outside `code`, each listed word of a sentence template
# becomes a choice among its variants (first one most likely), which widens
# the mid-frequency English vocabulary.
SYNONYMS = [
    "fails|breaks|errors out|falls over|blows up",
    "failing|breaking|erroring out|red",
    "broke|regressed|stopped working|fell over",
    "fix|patch|repair",
    "fixed|patched|resolved|addressed",
    "check|inspect|look at|review|examine",
    "confirm|verify|double-check|make sure",
    "large|big|huge|oversized",
    "old|legacy|outdated|deprecated",
    "stale|leftover|lingering",
    "problem|issue|bug|defect|regression",
    "errors|failures|exceptions",
    "requests|calls|round trips",
    "restart|bounce|recycle|redeploy",
    "brittle|fragile|flaky|hacky|error-prone",
    "easier|simpler|cheaper|safer",
    "hard|difficult|painful|awkward|tricky",
    "added|introduced|wired up|implemented",
    "removed|deleted|dropped|ripped out",
    "moved|migrated|relocated",
    "replace|swap|substitute",
    "replaced|swapped out|superseded",
    "slowed|held|dragged",
    "currently|today|right now|at the moment",
    "roughly|about|approximately|around|nearly",
    "whenever|every time|each time",
    "later|afterwards|subsequently",
    "quarter|cycle|milestone",
    "traffic|load|volume|throughput",
    "dashboard|board|panel",
    "reviewed|approved|signed off",
    "tracks|covers|describes|documents",
    "exposes|serves|publishes",
    "calls|invokes|hits",
    "builds|pipelines|workflows",
    "outage|incident|downtime",
    "workaround|stopgap|band-aid|hack",
    "helper|utility|wrapper",
    "cleanup|tidy-up|housekeeping",
    "wastes|burns|costs",
    "drift|diverge|skew",
    "reproduce|repro|trigger",
    "spike|jump|surge",
    "rising|climbing|growing",
    "expensive|costly|slow",
]
_SYN = {}
for _line in SYNONYMS:
    _alts = _line.split("|")
    _SYN[_alts[0]] = _alts
    _SYN[_alts[0].capitalize()] = [a.capitalize() for a in _alts]
_SYN_RE = re.compile(r"(?<![{\w=|])(" + "|".join(sorted(_SYN, key=len, reverse=True)) + r")(?![\w}|])")


def _add_synonyms(t: str) -> str:
    segs = t.split("`")  # odd segments are inline code: leave them alone
    for i in range(0, len(segs), 2):
        segs[i] = _SYN_RE.sub(lambda m: "{=" + "|".join(_SYN[m.group(1)]) + "}", segs[i])
    return "`".join(segs)


def _compile(t: str, synonyms: bool = False) -> list:
    """Split a template: even positions are literals, odd positions slot names
    or (for "{=a|b|c}") a Pool of alternatives."""
    if synonyms:
        t = _add_synonyms(t)
    parts = _SLOT_RE.split(t)
    for i in range(1, len(parts), 2):
        if parts[i].startswith("="):
            parts[i] = Pool(parts[i][1:].split("|"), s=1.2)
    return parts


def _render(parts: list, topic: dict, rng: random.Random) -> str:
    if len(parts) == 1:
        return parts[0]
    buf = []
    for i, p in enumerate(parts):
        if i & 1:
            if type(p) is Pool:
                buf.append(p.draw(rng))
                continue
            v = topic.get(p)
            if v is None:
                v = SLOTS[p](rng, topic)
            buf.append(v)
        elif p:
            buf.append(p)
    return "".join(buf)


CMD_T = Pool([_compile(t) for t in CMD_T.items], s=0.9)
FILE_T = Pool([_compile(t) for t in FILE_T.items], s=0.95)


def _fresh(pool: Pool, avoid_key: str):
    def f(rng, topic):
        v = pool.draw(rng)
        if v == topic.get(avoid_key):
            v = pool.draw(rng)
        return v
    return f


def _tech2(rng: random.Random, topic: dict) -> str:
    """Another technology, usually of the same kind as the topic's (Kafka vs NATS)."""
    tech = topic.get("tech")
    pool = GROUP_POOL[TECH_GROUP[tech]] if tech and rng.random() < 0.85 else TECH
    for _ in range(4):
        v = pool.draw(rng)
        if v != tech:
            return v
    return TECH.draw(rng) if tech != "PostgreSQL" else "Redis"


def _bt(s: str) -> str:
    return "`" + s + "`"


def _ident(rng: random.Random) -> str:
    """A data identifier: hand-listed, or composed as entity x suffix / CamelCase form."""
    r = rng.random()
    if r < 0.45:
        return IDENT_DATA.draw(rng)
    e = ENTITY.draw(rng)
    if r < 0.8:
        return e + ID_SUFFIX.draw(rng)
    return CAMEL_FORM.draw(rng).replace("{E}", _camel(e))


def _svc(rng: random.Random, entity: str | None = None) -> str:
    return (entity or ENTITY.draw(rng)).replace("_", "-") + "-" + ROLE.draw(rng)


def _hex(rng: random.Random, n: int) -> str:
    return format(rng.getrandbits(4 * n), "0%dx" % n)


_ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789"


def _pod(rng: random.Random, svc: str) -> str:
    return "%s-%s-%s" % (svc, _hex(rng, 9), "".join(rng.choice(_ALNUM) for _ in range(5)))


def _ver(rng: random.Random) -> str:
    return "v%d.%d.%d" % (min(int(rng.expovariate(0.6)), 9), rng.randint(0, 40), rng.randint(0, 19))


def _date(rng: random.Random) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(T_START + rng.randrange(T_SPAN)))


def _count(rng: random.Random) -> str:
    return str(rng.choice((1, 2, 5)) * 10 ** rng.randint(1, 4))


def _ms(rng: random.Random) -> str:
    if rng.random() < 0.7:
        return "%dms" % rng.randint(20, 4000)
    return "%.1fs" % rng.uniform(1, 60)


def _dur(rng: random.Random) -> str:
    u = DUR_UNIT.draw(rng)
    n = {"minutes": rng.randint(2, 90), "seconds": rng.randint(5, 120),
         "hours": rng.randint(1, 12), "days": rng.randint(1, 14)}[u]
    return "%d %s" % (n, u if n != 1 else u[:-1])


def _mig(rng: random.Random, topic: dict) -> str:
    return "%04d_%s_%s_%s.sql" % (rng.randint(1, 480), MIG_VERB.draw(rng), topic["entity"],
                                  ID_SUFFIX.draw(rng).strip("_"))


def _file_raw(rng: random.Random, topic: dict) -> str:
    return _render(FILE_T.draw(rng), topic, rng)


def _envvar(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.6:
        for _ in range(6):
            v = IDENT_DATA.draw(rng)
            if v.upper() == v and "-" not in v:
                return v
        return "DATABASE_URL"
    e = ENTITY.draw(rng).upper()
    return e + rng.choice(("_SERVICE_URL", "_API_KEY", "_TIMEOUT_MS", "_ENABLED", "_BATCH_SIZE"))


SLOTS = {
    "tech2": lambda rng, t: _tech2(rng, t),
    "comp2": _fresh(COMP, "comp"),
    "ident2": lambda rng, t: _bt(_ident(rng) if rng.random() < 0.5 else IDENT_CODE.draw(rng)),
    "code": lambda rng, t: _bt(IDENT_CODE.draw(rng)),
    "err2": lambda rng, t: _bt(ERR.draw(rng)),
    # commands and paths need the bare service name: use the topic's "_inner" view
    "file2": lambda rng, t: _bt(_file_raw(rng, t.get("_inner", t))),
    "thing2": _fresh(THING, "thing"),
    "metric2": _fresh(METRIC, "metric"),
    "feature2": _fresh(FEATURE, "feature"),
    "team": lambda rng, t: TEAM.draw(rng),
    "person": lambda rng, t: PERSON.draw(rng),
    "cmd": lambda rng, t: _bt(_render(CMD_T.draw(rng), t.get("_inner", t), rng)),
    "envvar": lambda rng, t: _bt(_envvar(rng)),
    "cistep": lambda rng, t: CISTEP.draw(rng),
    "lib2": lambda rng, t: _bt(LIB.draw(rng)),
    "svc2": lambda rng, t: _bt(_svc(rng)),
    "ticket": lambda rng, t: "%s-%d" % (TICKET_PROJ.draw(rng), rng.randint(10, 6000)),
    "pr": lambda rng, t: "#%d" % rng.randint(100, 12000),
    "prnum": lambda rng, t: str(rng.randint(100, 12000)),
    "sha": lambda rng, t: _hex(rng, 7),
    "ver": lambda rng, t: _ver(rng),
    "host": lambda rng, t: "ip-10-%d-%d-%d" % (rng.randint(0, 63), rng.randint(0, 255), rng.randint(1, 254)),
    "pod": lambda rng, t: _pod(rng, t["svc_raw"]),
    "reqid": lambda rng, t: "req_" + _hex(rng, 16),
    "runid": lambda rng, t: str(rng.randint(4_000_000_000, 9_999_999_999)),
    "mig": _mig,
    "date": lambda rng, t: _date(rng),
    "dur": lambda rng, t: _dur(rng),
    "ms": lambda rng, t: _ms(rng),
    "pct": lambda rng, t: "%d%%" % rng.randint(2, 98),
    "count": lambda rng, t: _count(rng),
    "num": lambda rng, t: str(rng.randint(2, 12)),
    # composed identifiers: mostly from the fixed project lexicon, else new
    # ones built around the memory's entity
    "fn2": lambda rng, t: _bt(LEX_FN.draw(rng) if rng.random() < 0.7 else _fn(rng)),
    "test": lambda rng, t: _bt(LEX_TEST.draw(rng) if rng.random() < 0.6 else _test(rng, t["entity"])),
    "flag": lambda rng, t: _bt(LEX_FLAG.draw(rng) if rng.random() < 0.6 else _flag(rng, t["entity"])),
    "metricname": lambda rng, t: _bt(LEX_METRIC.draw(rng) if rng.random() < 0.6
                                     else _metric_name(rng, t["entity"])),
    "cfgkey": lambda rng, t: _bt(LEX_CFG.draw(rng) if rng.random() < 0.6 else _cfgkey(rng, t["entity"])),
}


def _fn(rng: random.Random, entity: str | None = None) -> str:
    """A function / method name: `RecalculateShipmentEta`, `sync_order_totals`, ..."""
    v, n = VERB.draw(rng), NOUN.draw(rng)
    e = entity or ENTITY.draw(rng)
    r = rng.random()
    if r < 0.45:
        return v.capitalize() + _camel(e) + n.capitalize()
    if r < 0.75:
        return v + _camel(e) + n.capitalize()
    if r < 0.9:
        return "%s_%s_%s" % (v, e, n)
    return _camel(e) + n.capitalize() + "Handler"


def _test(rng: random.Random, entity: str) -> str:
    if rng.random() < 0.75:
        return "Test%s%s_%s" % (_camel(entity), VERB.draw(rng).capitalize(), TEST_COND.draw(rng))
    return "test_%s_%s_%s" % (VERB.draw(rng), entity, TEST_COND.draw(rng).lower())


def _flag(rng: random.Random, entity: str) -> str:
    n = NOUN.draw(rng)
    return rng.choice(("%s_%s_v2", "enable_%s_%s", "%s-%s-rollout", "new-%s-%s")) % (entity, n)


def _metric_name(rng: random.Random, entity: str) -> str:
    r = rng.random()
    if r < 0.4:
        return "%s_%s_total" % (entity, NOUN.draw(rng))
    if r < 0.75:
        return "%s_%s_duration_seconds" % (entity, VERB.draw(rng))
    return "%s_%s_errors_total" % (entity, VERB.draw(rng))


def _cfgkey(rng: random.Random, entity: str) -> str:
    return "%s.%s.%s" % (entity, NOUN.draw(rng), SETTING.draw(rng))


def _lexicon(make, n: int, seed: int) -> Pool:
    """A fixed project lexicon of n distinct composed identifiers.  Items drawn
    early (common parts) get the top Zipf ranks, so a few functions / flags /
    metrics are mentioned everywhere and most are rare."""
    r = random.Random(seed)
    seen, out = set(), []
    while len(out) < n:
        v = make(r)
        if v not in seen:
            seen.add(v)
            out.append(v)
    return Pool(out, s=1.0)


LEX_FN = _lexicon(_fn, 12000, 101)
LEX_TEST = _lexicon(lambda r: _test(r, ENTITY.draw(r)), 4000, 102)
LEX_FLAG = _lexicon(lambda r: _flag(r, ENTITY.draw(r)), 1500, 103)
LEX_METRIC = _lexicon(lambda r: _metric_name(r, ENTITY.draw(r)), 2000, 104)
LEX_CFG = _lexicon(lambda r: _cfgkey(r, ENTITY.draw(r)), 2000, 105)


def make_topic(rng: random.Random) -> dict:
    entity = ENTITY.draw(rng)
    svc = _svc(rng, entity if rng.random() < 0.7 else None)
    envname = ENVNAME.draw(rng)
    topic = {
        "tech": TECH.draw(rng),
        "comp": COMP.draw(rng),
        "entity": entity,
        "entities": _plural(entity),
        "E": _camel(entity),
        "stream": _plural(entity).upper(),
        "ident": _bt(_ident(rng)),
        "err": _bt(ERR.draw(rng)),
        "svc_raw": svc,
        "svc": _bt(svc),
        "ns": NS.draw(rng),
        "envname": envname,
        "envslug": {"local dev": "dev", "CI": "ci"}.get(envname, envname.lower()),
        "envfile": _bt(ENVFILE.draw(rng)),
        "feature": FEATURE.draw(rng),
        "thing": THING.draw(rng),
        "ci": CIJOB.draw(rng),
        "metric": METRIC.draw(rng),
        "lib_raw": LIB.draw(rng),
    }
    topic["lib"] = _bt(topic["lib_raw"])
    topic["fn"] = _bt(_fn(rng, entity) if rng.random() < 0.5 else LEX_FN.draw(rng))
    # commands and paths refer to the topic entity/service, so render them last
    # (inside commands, {svc} must be the bare name, not backticked)
    inner = dict(topic, svc=svc)
    topic["file_raw"] = _render(FILE_T.draw(rng), inner, rng)
    topic["file"] = _bt(topic["file_raw"])
    topic["_inner"] = inner
    return topic


# --------------------------------------------------------------------------
# Sentence templates
# --------------------------------------------------------------------------

T = {}

T["d_title"] = """
Use {tech} for {thing} in {comp}
Adopt {tech} instead of {tech2}
Move {entity} data to {tech}
Replace {tech2} with {tech} in the {comp}
Keep the {comp} on {tech} for now
Standardize {thing} across all services
Split {svc} out of the monolith
Version the {entity} API with URL prefixes
Run {ci} only for changed packages
Generate the {entity} client from OpenAPI
Store {ident} in {tech} instead of {tech2}
Drop {tech2} from the {comp} stack
Use {tech} for {feature}
Make {thing} mandatory for {entity} writes
Publish {entity} events through {tech}
Own {thing} in the {comp}, not callers
"""

T["d_context"] = """
The {comp} currently relies on {tech2}, and {metric} has grown to {ms} at peak traffic.
The {comp} calls {code} on every request, and profiling shows it dominates {metric}.
{fn} grew to several hundred lines and now owns {thing}, {fn2} and the retry logic.
The {metricname} panel shows {metric} doubling since {ver}.
We kept hitting {err} in {envname} whenever the {comp} was under load.
Every new {entity} feature required touching {file} and {file2}, which slowed reviews down.
The {team} asked for a single way to handle {thing} before the {feature} launch.
{ticket} tracks the original problem: {ident} was inconsistent between the {comp} and the {comp2}.
Our {tech2} setup has no good story for {thing}, and the workaround in {file} is brittle.
Traffic on {svc} roughly doubled after {feature} shipped, and the current design tops out around {count} requests per second.
During the incident on {date} we lost visibility into the {comp} for {dur}.
Most {entity} reads come from the {comp2}, but writes still go through the legacy path in {file}.
{person} spiked {tech} in {pr} and the prototype cut {metric} from {ms} to {ms}.
Local development needs {envfile} plus three running containers, and onboarding takes a full day.
We run {tech} {ver} in {envname} and it reaches end of life next quarter.
The {ci} job spends most of its time on {thing}, and developers wait {dur} for feedback.
Customers on the {feature} beta reported stale {entities} in the UI.
"""

T["d_decision"] = """
Use {tech} for {thing} in the {comp}, configured through {envfile}.
Adopt {tech} behind a thin interface in {file} so the {comp} never imports it directly.
Migrate {ident} reads to {tech} and keep {tech2} as a fallback until {ver}.
All new {entity} endpoints go through the {comp}; old routes are frozen.
Move {thing} out of {fn} into {fn2} and ship it behind the {flag} flag.
Expose {cfgkey} as the only knob for {thing} and drop the hard-coded values in {fn}.
Run {cmd} as part of the {ci} job and fail the build on any diff.
Publish every {entity} state change to the {stream} stream and let consumers build their own views.
Keep {tech2} for now but put {thing} in front of it, owned by the {team}.
Move {feature} to {tech} behind a feature flag and roll out per tenant ({ticket}).
Set {thing} defaults in one place, {file}, and forbid per-service overrides.
Write {entities} with {ident} as the idempotency key and reject duplicates at the database.
"""

T["alt_option"] = """
Keep {tech2} and tune {thing}
Use {tech2}
Write a custom {thing} in the {comp}
Buy a managed {tech2} plan
Do nothing until {ver}
Put {thing} in each service
Use {tech2} with {lib2}
Move {entity} logic into the {comp2}
Poll the database every {dur}
"""

T["alt_reason"] = """
Too much operational overhead for a team of our size.
Does not support {thing} without a plugin.
Benchmarks showed {metric} of {ms}, well above the budget.
License cost would be around {count} USD per month.
Would require rewriting {file2} and most of the {comp2}.
The {team} has no experience running it in {envname}.
It hides {err2} instead of surfacing it to callers.
Vendor lock-in; no self-hosted option for {envname}.
Polling adds load and still leaves {dur} of staleness.
"""

T["d_rationale"] = """
{tech} is already deployed for the {comp2}, so there is nothing new to operate.
It removes the {err} class of failures we saw in {ticket}.
Keeps {metric} under {ms} in the load test ({cmd}).
One code path for {thing} is easier to review and test.
{person} and the {team} can support it on call.
The {lib} client handles {thing} and reconnects for us.
It lets {ci} run in parallel, cutting build time by {pct}.
Schema changes stay in {file}, reviewed like any other code.
Rolling back is a config change in {envfile}, no redeploy needed.
{fn} becomes a thin wrapper that is easy to cover with {test}.
The {flag} flag lets us compare {metricname} before and after per tenant.
"""

T["d_consequence"] = """
Every service must read {envvar} at startup.
The {comp2} needs a migration to the new {entity} format.
We accept a second dependency on {tech} in {envname}.
Existing {entities} are backfilled by a one-off job ({ticket}).
Dashboards for {metric} must be rebuilt in Grafana.
{file} becomes the single source of truth; edits elsewhere are rejected in review.
Local setup gains one more container in `docker-compose.yml`.
Old clients keep working until {ver}, then get {err2}.
On-call runbooks for the {comp} need updating.
Callers of {fn2} must pass {ident} explicitly.
Alerting moves from {metric} to {metricname}.
Code that uses {code} directly has to move to the new helper.
"""

T["rb_title"] = """
Fix {err} in the {comp}
Recover {svc} from CrashLoopBackOff
Rerun the flaky {ci} job in CI
Restore {entity} table from snapshot
Rotate {envfile} secrets for {svc}
Drain a stuck {tech} consumer for {entities}
Debug high {metric} on {svc}
Unblock a failed migration in {envname}
Reset the local {tech} database for tests
Roll back a bad {svc} deploy
Replay dead-lettered {entity} events
Handle {err} during {entity} import
Clear stale {thing} after a deploy
Free disk space on {tech} nodes
"""

T["rb_trigger"] = """
Alert fires when {metric} on {svc} stays above threshold for 10 minutes.
The {ci} job fails on main with {err}.
On-call gets paged for {err} from {svc} in {envname}.
A developer reports {err} right after pulling main and running {cmd}.
Customers report missing {entities} in the {comp}.
The nightly {entity} export does not land in S3 by 06:00 UTC.
A deploy of {svc} {ver} stalls in Argo CD with degraded health.
"""

T["rb_symptom"] = """
Logs show {err} roughly every {dur}.
`kubectl get pods -n {ns}` lists {pod} restarting with {err2}.
{metric} climbs to {ms} on the Grafana dashboard.
Requests carrying {ident} return 500 with request id {reqid}.
The {ci} job times out after {dur} on step "{cistep}".
`pg_stat_activity` shows {count} idle connections from {svc}.
The {stream} consumer has {count} pending messages and is not acking.
Only pods on node {host} are affected.
Stack traces point at {code} in {file2}.
{test} fails intermittently on main with {err}.
The {metricname} counter stops increasing while {metric} keeps growing.
Traces show {fn} waiting on {fn2} for {ms}.
Sentry groups the error as {ticket} with {count} events in the last hour.
The {comp} shows an empty state although {entities} exist in the database.
"""

T["rb_step"] = """
Run {cmd}.
Check {file} for a stale {thing}.
Scale down with `kubectl scale deploy/{svc_raw} --replicas=0 -n {ns}`, wait for drain, then scale back up.
Confirm {envfile} sets {envvar}; copy it from {envfile} in 1Password if missing.
Re-run only the failed jobs with `gh run rerun {runid} --failed`.
Open the Grafana dashboard for {svc} and note the time {metric} started rising.
Run {cmd} and compare the output with the last good deploy {sha}.
Roll back with `helm rollback {svc_raw}` to the previous revision if the error rate stays above {pct}.
Delete the poisoned message with `nats stream rm-msg {stream} {count}` after saving it to the incident doc.
Apply the fix from {pr} and redeploy {svc} to {envname}.
Ask {person} in #oncall before touching production data.
Restart the dependency with `docker compose restart postgres` and retry.
Bump {thing} in {file2} and redeploy.
Check {metricname} in Grafana for the affected {entities}.
Set {cfgkey} to a lower value in {envfile} and restart {svc}.
Turn off the {flag} flag in the admin dashboard and confirm {fn} stops being called.
Run {test} locally with `go test -run` and `-count=20` to reproduce.
"""

T["rb_verification"] = """
{metric} returns under {ms} and no new {err} appears in the logs for {dur}.
`kubectl get pods -n {ns}` shows all {svc} pods Ready with zero restarts.
The {ci} job passes three times in a row on a re-run.
{cmd} exits 0 and the {comp} lists the missing {entities} again.
Consumer lag on {stream} drops to zero within {dur}.
{metricname} is flat again and {test} passes in CI.
"""

T["rb_root_cause"] = """
The {comp} opened a new database connection per request and exhausted the pool at {count} connections.
A race between {ident} updates and the cache refresh left stale {entities} behind.
{tech2} {ver} changed the default {thing}, which we had never set explicitly.
The test relied on wall-clock time and broke whenever CI ran slower than {ms}.
The container limit in {file} was {count}Mi while the heap peaked higher under load.
A migration added an index without `CONCURRENTLY` and locked the {entities} table.
A missing {envvar} in {envname} made the service fall back to a localhost default.
The {lib} client retried without backoff and amplified the outage.
The worker ignored {code} and kept processing after shutdown started.
{fn} retried {fn2} in a tight loop when {ident} was empty.
{cfgkey} defaulted to zero after the config refactor, disabling {thing}.
A missing {code} in {file2} let goroutines pile up until the pod hit its memory limit.
"""

T["rb_environment"] = """
{envname}, {ns} namespace, {tech} {ver}
{envname} cluster, {svc} {ver}
Local dev with `docker compose` and {envfile}
GitHub Actions ubuntu-latest runners, {ci} job
{envname} and CI; {tech} {ver}
"""

T["c_title"] = """
{tech} caps {thing} at {count}
No PII in {tech} subjects or logs
Keep the {comp} on {tech} {ver}
CI runners limited to {num} GB memory
Never run migrations from {svc} pods
{entity} exports must finish within {dur}
Carrier API rate limit of {count} requests per minute
{envname} database is read-only for developers
Do not call the {comp} from the browser
All {entity} writes need an audit entry
Max payload size of {count} KB on the {comp}
Secrets only through Vault, never {envfile}
"""

T["c_rule"] = """
{tech} in {envname} allows at most {count} {thing} per tenant.
Never commit {envfile}; secrets come from Vault or the CI secret store.
Schema migrations run only from the migrate job, never from {svc} at startup.
{entity} payloads must not include email, phone or address fields once they leave the {comp}.
The {comp} must stay on {tech} {ver} until the vendor certifies a newer version.
CI runners have {num} GB of memory and {num} vCPUs; jobs that need more must be split.
Every write to {entities} must record {ident} and the acting user in the audit log.
External calls from the {comp} must set a timeout of at most {ms}.
Production data may only be queried through the read replica, never the primary.
Do not use {code} in request handlers of the {comp}; it blocks under load.
{cfgkey} must stay below {count} in {envname}.
Every {entity} change ships behind a flag such as {flag} until it has run a week in staging.
"""

T["c_impact"] = """
Bulk jobs on {entities} must be chunked into batches of {count}.
Tests that need {tech} cannot run in parallel on one runner.
The {feature} rollout is limited to tenants under {count} {entities}.
Debugging {err} in {envname} takes longer without direct database access.
Some {tech2} features are unavailable until the upgrade.
Large uploads fail with {err2} and need a resumable path.
The {ci} job takes {dur} longer because of the serial step.
{fn} has to page through results instead of loading all {entities} at once.
"""

T["c_workaround"] = """
Use {cmd} against the staging snapshot instead.
Queue the work through {stream} and let the {comp2} process it in batches.
Request a temporary exception from the {team} and record it in {ticket}.
Mask {ident} with the helper in {file} before logging.
Split the {ci} job with a test matrix.
Use presigned S3 URLs so uploads bypass the {comp}.
Cache {entities} in Redis for {dur} to stay under the limit.
Raise {cfgkey} for the batch job only, via {envfile}.
Call {fn2} asynchronously from the {comp2} and poll for the result.
"""

T["td_title"] = """
Duplicated {entity} validation in two services
Remove the legacy {entity} endpoint from {svc}
Replace hand-rolled {thing} in the {comp}
{ident} stored as a free-text string
Skipped tests in the {ci} job
Untyped {tech} client in the {comp}
Hard-coded {thing} in {file}
{entity} status spread across three columns
Missing indexes on {entity} lookup queries
Copy-pasted {tech} setup in every service
Leftover {feature} feature flags
Synchronous {entity} emails in the request path
"""

T["td_description"] = """
The {comp} and the {comp2} both validate {entities}, and the rules drifted apart ({ticket}).
{file} still exposes the v1 {entity} endpoint that only one old mobile build calls.
{thing} is implemented by hand in {file} instead of using {lib}.
{ident} is stored as text, so typos like "in_transit " with a trailing space end up in production.
{count} tests in the {ci} job are marked skip since {date} because they were flaky.
The {tech} client in the {comp} returns untyped maps, so every caller casts and checks for nil.
{entity} lookups by {ident} do a sequential scan once the table grows past {count} rows.
Each service has its own copy of the {tech} bootstrap code with slightly different settings.
{file2} leans on {code} in a dozen places, which hides {err2}.
{fn} mixes {thing} with {entity} validation and is hard to test; {test} is skipped.
The {flag} flag has been at 100% since {date} but the old path is still in {file}.
"""

T["td_deferred"] = """
The {feature} launch had priority and the workaround was good enough at the time.
Fixing it needs a coordinated release with the mobile team.
Nobody owns the {comp} since the reorg; {person} agreed to pick it up next quarter.
The migration needs a maintenance window in {envname}.
We wanted real traffic data before choosing between {tech} and {tech2}.
"""

T["td_impact"] = """
Bugs get fixed in one place and reappear in the other.
{metric} on {svc} is {pct} higher than it needs to be.
New developers copy the pattern into new code.
Support tickets about wrong {entity} states, about {count} a month.
The {ci} job gives false confidence about {comp} behaviour.
Every {tech} upgrade has to be repeated in {num} places.
"""

T["td_fix"] = """
Move the rules into one package, {file}, and call it from both sides.
Delete the endpoint after usage drops to zero on the dashboard.
Replace it with {lib} and remove the custom code.
Add a Postgres enum for {ident} and a migration that normalizes existing rows.
Fix or delete each skipped test; track them in {ticket}.
Generate a typed client with `sqlc generate` or `buf generate`.
Add the index with `CREATE INDEX CONCURRENTLY` in `migrations/{mig}`.
Extract a shared helper in internal/platform and use it in every `cmd/` binary.
Replace direct {code} calls with a helper in {file2}.
Split {fn} into {fn2} and a pure function that {test} can cover.
Delete the {flag} flag and the dead branch behind it.
"""

T["td_accept"] = """
Only one implementation of {entity} validation remains.
No requests to the old endpoint for 30 days.
The {ci} job runs with zero skipped tests.
{cmd} passes with no warnings.
{metric} on {svc} stays under {ms} at peak.
The {comp} has no direct import of {tech2}.
{test} runs and passes without retries.
No references to {flag} remain in the code base.
"""

# Preferences come in coherent themes: title, topic, value, reasons and examples
# all talk about the same thing.  Generic reasons are shared by every theme.
PREF_THEMES = [
    dict(title="Prefer table-driven tests in Go\nUse table-driven tests for {entity} packages",
         topic="Go testing style",
         value="Use table-driven tests with `t.Run` and `t.Parallel()` for every Go package.\n"
               "Write table-driven tests for {entity} handlers, one case per row, named after the behaviour.",
         reason="It keeps failures readable when a case breaks in CI.\n"
                "Adding a regression case for a bug like {ticket} becomes a one-line change.",
         prefer="`t.Run(tc.name, func(t *testing.T) {...})`\n"
                "`tests := []struct{ name string; in {E}; wantErr bool }{...}`",
         avoid="copy-pasted `Test{E}Create1`, `Test{E}Create2`\n`time.Sleep` in tests"),
    dict(title="Wrap errors with context in Go\nNever compare error strings",
         topic="error handling\nerror handling in the {comp}",
         value="Wrap errors with `fmt.Errorf(\"...: %w\", err)` and check them with `errors.Is`.\n"
               "Return wrapped errors from the {comp} and map them to HTTP codes only in the handler.",
         reason="A bare `return err` made {err} impossible to trace in {ticket}.\n"
                "String matching broke when {lib} changed an error message.",
         prefer="`errors.Is(err, sql.ErrNoRows)`\n`fmt.Errorf(\"load {entity}: %w\", err)`",
         avoid="`if err.Error() == \"no rows\"`\n`return err` without context\n`panic(err)` in handlers"),
    dict(title="No default exports in React components\nType React props explicitly",
         topic="React components\nReact component exports",
         value="Use named exports only and type props with an explicit interface instead of `React.FC`.",
         reason="Default exports made renames miss call sites in {file}.\n"
                "`React.FC` hides the children prop and confused the {E}List types.",
         prefer="`export function {E}List(props: {E}ListProps)`\n`interface {E}CardProps { {entity}: {E} }`",
         avoid="`export default function ({entity})`\n`const {E}List: React.FC = () => ...`"),
    dict(title="Keep pull requests small and focused\nSplit refactors from behaviour changes",
         topic="pull request size",
         value="Keep pull requests under about 400 changed lines and split refactors from behaviour changes.",
         reason="Small diffs get reviewed the same day; big ones wait for days.\n"
                "{pr} mixed a rename with a fix and the revert took both out.",
         prefer="one PR for the {entity} migration, one for the handler\n`refactor:` and `feat:` in separate PRs",
         avoid="a single 2000-line PR touching the {comp} and the {comp2}"),
    dict(title="Use pnpm, never npm or yarn\nAlways install with a frozen lockfile",
         topic="package manager",
         value="Always use pnpm, with `--frozen-lockfile` in CI and Docker builds.",
         reason="The lockfile drifted twice and broke the {ci} job with {err}.\n"
                "Mixing package managers produced two lockfiles in {pr}.",
         prefer="`pnpm add -D {lib_raw}`\n`pnpm install --frozen-lockfile`",
         avoid="`npm install {lib_raw}`\n`yarn add {lib_raw}`"),
    dict(title="Use structured logging with {ident}\nLog with fields, not string concatenation",
         topic="logging",
         value="Log with structured fields and always include {ident}; never build log messages "
               "with string concatenation.",
         reason="It makes logs searchable in Loki by {ident}.\n"
                "During {ticket} we could not correlate {svc} logs with traces.",
         prefer="`logger.Info(\"{entity} updated\", \"{entity}_id\", id)`\n`slog.With(\"request_id\", reqID)`",
         avoid="`log.Printf(\"updated \" + id)`\n`console.log(JSON.stringify({entity}))`"),
    dict(title="Use conventional commit messages\nReference the ticket in every commit",
         topic="commit messages",
         value="Use conventional commits with a scope, such as `feat({entity}): ...`, and reference the ticket.",
         reason="The release notes for {ver} are generated from commit messages.",
         prefer="`feat({entity}): add {feature}`\n`fix(ci): pin {tech} to {ver}`",
         avoid="`fixed stuff`\n`wip`\n`address review comments`"),
    dict(title="Explain the plan before editing files\nAsk before large refactors",
         topic="working style",
         value="Describe the plan in two or three bullet points before editing more than one file.\n"
               "Ask before refactoring code outside the files the task is about.",
         reason="{person} wants to catch wrong assumptions before a big diff lands.\n"
                "An unrequested refactor of {file} had to be reverted in {pr}.",
         prefer="a short plan, then small commits\nasking before touching {file}",
         avoid="rewriting {file} without asking\nunrequested refactors in the same change"),
    dict(title="Run make lint before committing\nRun the type checker before pushing",
         topic="pre-commit checks",
         value="Run `make lint` and {cmd} before every commit.",
         reason="The {ci} job takes {dur}; failing on lint there wastes everyone's time.",
         prefer="`make lint`\n`npx tsc --noEmit`\n`golangci-lint run ./...`",
         avoid="`git commit --no-verify`\npushing to see if CI passes"),
    dict(title="Use React Query for server state\nNo data fetching in useEffect",
         topic="data fetching\nstate management",
         value="Fetch server data with `useQuery` and refresh it with `queryClient.invalidateQueries`; "
               "do not fetch in `useEffect`.",
         reason="Hand-written fetching in `useEffect` caused {err} on the {entity} page.",
         prefer="`const {entity}Query = useQuery(...)`\n`useMutation` with `onSuccess` invalidation",
         avoid="`useEffect(() => fetch(...), [])`\nserver data copied into a global store"),
    dict(title="Avoid any in TypeScript code\nValidate API responses with zod",
         topic="TypeScript types",
         value="No `any`; use `unknown` plus a zod schema at the API boundary.",
         reason="An `any` on the {entity} response let a renamed field reach production ({ticket}).",
         prefer="`const {E}Schema = z.object({...})`\n`unknown` at API boundaries",
         avoid="`any` in {entity} types\n`as {E}` casts on fetch results"),
    dict(title="Prefer {tech} over {tech2} for new services",
         topic="{tech} usage",
         value="Prefer {tech} for new work in the {comp} unless there is a written reason not to.",
         reason="It matches what the {team} already runs for the {comp2}.",
         prefer="{tech} for new services",
         avoid="adding {tech2} to a new service"),
    dict(title="Use {lib} for {thing}",
         topic="{thing}",
         value="Use {lib} for {thing} instead of rolling our own.",
         reason="The hand-written version in {file} had two bugs ({ticket}).",
         prefer="{lib}",
         avoid="hand-written {thing} helpers"),
    dict(title="Write SQL by hand with sqlc\nNo ORM for {entity} queries",
         topic="database access",
         value="Write queries in `db/queries/{entity}.sql` and generate Go code with `sqlc generate`; no ORM.",
         reason="ORM-generated queries caused N+1 queries on the {entity} list.",
         prefer="`-- name: Get{E}ByID :one`\n`sqlc generate`",
         avoid="GORM models for {entities}\nstring-built SQL"),
    dict(title="Read config from env, parsed once\nKeep {envfile} out of git",
         topic="configuration",
         value="Read config from environment variables parsed once in `internal/config/config.go`; "
               "{envfile} is for local dev only.",
         reason="A scattered `os.Getenv` read {envvar} as empty in {envname}.",
         prefer="`cfg.{E}Timeout`\none place that parses {envvar}",
         avoid="`os.Getenv` scattered in handlers\ncommitted {envfile}"),
    dict(title="Name {entity} handlers after the action",
         topic="naming\nnaming of {entity} handlers",
         value="Name handlers after the action, such as `Create{E}` or `Cancel{E}`, not after the HTTP verb.",
         reason="Verb-based names collided when we added a second POST route.",
         prefer="`Create{E}`\n`Cancel{E}`",
         avoid="`Post{E}Handler`\n`Handle{E}2`"),
]

T["p_reason"] = """
{person} reviews most of this code and asked for it explicitly.
Mixed styles caused a real bug in {ticket}.
Agreed in the {team} sync on {date}.
Consistency makes reviews faster for everyone.
The assistant kept doing the opposite and it cost an extra review round in {pr}.
New joiners copy whatever they see first, so the codebase should show one way.
It is what the linters and code generators already assume.
"""

for _i, _th in enumerate(PREF_THEMES):
    T["pt%d" % _i] = _th["title"]
    T["pc%d" % _i] = _th["topic"]
    T["pv%d" % _i] = _th["value"]
    T["pr%d" % _i] = _th["reason"] + "\n" + T["p_reason"]
    T["pp%d" % _i] = _th["prefer"]
    T["pa%d" % _i] = _th["avoid"]
# unions of all themes (generic keys in SPECS, used by modify_one)
for _k, _f in (("p_value", "value"), ("p_prefer", "prefer"), ("p_avoid", "avoid")):
    T[_k] = "\n".join(th[_f] for th in PREF_THEMES)
PREF_THEME = Pool(range(len(PREF_THEMES)), s=0.8)

T["s_title"] = """
Session: {feature} for the {comp}
Debugging {err} in {svc}
Wired {ident} through the {comp}
Upgraded {tech} to {ver}
Investigated flaky {ci} tests
Pairing on {feature} for {entities}
Refactored the {entity} repository layer
Added {thing} to {svc}
Load testing the {comp} with k6
Cleaned up {tech} config in {envname}
Fixed {entity} sync between {comp} and {comp2}
Set up {tech} for local development
"""

T["s_goal"] = """
Ship the first version of {feature} in the {comp}.
Find out why {svc} throws {err} in {envname}.
Pass {ident} through the {comp} so the {comp2} can filter by it.
Upgrade {tech} to {ver} without downtime.
Make the {ci} job green again on main.
Reduce {metric} on {svc} below {ms}.
Refactor {fn} so the {comp} can reuse it.
Add {thing} to {svc} and cover it with tests.
Move {entity} persistence from {tech2} to {tech}.
"""

T["s_completed"] = """
Added {ident} to {file}
Wrote integration tests for {entity} creation in {file2}
Reproduced {err} locally with {cmd}
Bumped {tech} to {ver} in `go.mod` and `package.json`
Fixed the race in {file} found by `go test -race`
Configured {thing} for {svc} in {envname}
Opened {pr} with the {entity} migration
Removed the retry loop that hid {err2}
Updated the runbook for the {comp}
Split {file} into handler and service
Replaced {code} with a typed helper in {file2}
Traced {err} to a missing {code} in {file}
Implemented {fn} in {file}
Added {test} for the {entity} edge case
Put the new path behind {flag}
Added {metricname} counter and a Grafana panel
Renamed {fn2} to {fn}
"""

T["s_in_progress"] = """
Backfill of {ident} for existing {entities} ({ticket})
Dashboard for {metric} on {svc}
Review of {pr} by {person}
Moving {thing} settings into {envfile}
Rollout of {flag} to the remaining tenants
Moving callers from {fn2} to {fn}
"""

T["s_blocker"] = """
Waiting on the {team} for access to {envname}.
The {ci} job keeps failing on an unrelated {err2}.
Need a decision on {tech} vs {tech2} first.
The vendor sandbox is down since {date}.
"""

T["s_next"] = """
Merge {pr} after {person} approves.
Run {cmd} against staging.
Deploy {svc} to {envname} behind the feature flag.
Write a decision record for {thing}.
Delete the old {entity} code path once traffic is zero.
Add an alert on {metric} for {svc}.
Ask {person} about {ticket}.
Remove the {flag} flag after a week at 100%.
Make {test} run in the {ci} job.
"""

T["s_key_change"] = """
{file}: new {ident} field and validation
{file2}: {thing} moved behind an interface
{file2}: uses {code} instead of {code}
{file}: {fn} split out of {fn2}
{file2}: {cfgkey} default changed
`migrations/{mig}`: adds {entity} index
`.github/workflows/ci.yml`: cache for {tech}
{file2}: handles {err} with retry and backoff
`k8s/base/{svc_raw}/deployment.yaml`: memory limit raised to {count}Mi
"""

T["ref"] = """
Tracked in {ticket}.
Fixed in {pr} ({sha}).
See {ticket} and {pr}.
Came up in the incident on {date}.
Reported by {person}; see {ticket}.
First seen with request id {reqid}.
Last verified against {ver} on {date}.
"""

T["change"] = """
Updated steps after {ticket}
Added details about {ident}
Renamed {fn} in the steps
Clarified {thing} guidance
Noted fix in {pr}
Bumped version references to {ver}
Reworded after review by {person}
Added root cause from incident on {date}
"""

T["retire_reason"] = """
No longer applies after the move to {tech}.
The {comp} was decommissioned in {ticket}.
Fixed upstream in {tech2} {ver}.
Obsolete since the process change agreed with the {team}.
"""

T["archive_reason"] = """
Stale: no activity since {date}.
The {feature} project was cancelled.
Moved to the team wiki.
Superseded by the platform handbook.
"""

TPL = {k: Pool([_compile(t, synonyms=True) for t in _lines(v)], s=0.8) for k, v in T.items()}


# --------------------------------------------------------------------------
# Content construction
# --------------------------------------------------------------------------

# (field, kind, template key, min items, max items); kind "s" = string of sentences,
# "l" = list of strings, "alt" = decision alternatives, "ex" = preference examples
SPECS = {
    "decision": [
        ("context", "s", "d_context", 1, 3),
        ("decision", "s", "d_decision", 1, 2),
        ("alternatives", "alt", None, 1, 3),
        ("rationale", "l", "d_rationale", 1, 5),
        ("consequences", "l", "d_consequence", 1, 4),
    ],
    "runbook": [
        ("trigger", "s", "rb_trigger", 1, 1),
        ("symptoms", "l", "rb_symptom", 1, 4),
        ("steps", "l", "rb_step", 2, 9),
        ("verification", "s", "rb_verification", 1, 2),
        ("root_cause", "s", "rb_root_cause", 1, 3),
        ("environment", "s", "rb_environment", 1, 1),
    ],
    "session_summary": [
        ("goal", "s", "s_goal", 1, 1),
        ("completed", "l", "s_completed", 1, 6),
        ("in_progress", "l", "s_in_progress", 0, 3),
        ("blockers", "l", "s_blocker", 0, 2),
        ("next_actions", "l", "s_next", 1, 4),
        ("key_changes", "l", "s_key_change", 0, 5),
    ],
    "constraint": [
        ("rule", "s", "c_rule", 1, 2),
        ("impact", "l", "c_impact", 1, 4),
        ("workarounds", "l", "c_workaround", 1, 4),
    ],
    "tech_debt": [
        ("description", "s", "td_description", 1, 3),
        ("reason_deferred", "s", "td_deferred", 1, 2),
        ("impact", "l", "td_impact", 1, 3),
        ("suggested_fix", "l", "td_fix", 1, 4),
        ("acceptance_criteria", "l", "td_accept", 1, 3),
    ],
    "preference": [  # generic keys; generation uses per-theme pools, see _pref_spec
        ("value", "s", "p_value", 1, 1),
        ("reason", "s", "p_reason", 1, 5),
        ("prefer", "ex", "p_prefer", 1, 3),
        ("avoid", "ex", "p_avoid", 1, 3),
    ],
}
# where extra sentences go when every field is full
OVERFLOW = {"decision": "rationale", "runbook": "steps", "session_summary": "completed",
            "constraint": "impact", "tech_debt": "suggested_fix", "preference": "reason"}
# where the sentence with unique tokens (ticket, PR, sha, ...) goes
REF_FIELD = {"decision": "context", "runbook": "root_cause", "session_summary": "goal",
             "constraint": "rule", "tech_debt": "description", "preference": "reason"}


def _wc(s: str) -> int:
    return s.count(" ") + 1


# lowercase proper names that must not be capitalized at the start of a sentence
_KEEP_LOWER = {t for t in TECH.items if t[:1].islower()}


def _cap(s: str) -> str:
    if s[:1].islower() and s.split(" ", 1)[0] not in _KEEP_LOWER:
        return s[0].upper() + s[1:]
    return s


def _sentence(key: str, topic: dict, rng: random.Random, used: set | None = None) -> str | None:
    """Render one template of pool `key`.  With `used`, never reuse a template
    within the same memory; return None when the pool is exhausted."""
    pool = TPL[key]
    parts = pool.draw(rng)
    if used is not None:
        tries = 0
        while id(parts) in used:
            tries += 1
            if tries > 3:
                left = [p for p in pool.items if id(p) not in used]
                if not left:
                    return None
                parts = rng.choice(left)
                break
            parts = pool.draw(rng)
        used.add(id(parts))
    return _cap(_render(parts, topic, rng))


def _item(kind: str, key: str, topic: dict, rng: random.Random, used: set):
    if kind == "alt":
        opt = _sentence("alt_option", topic, rng, used)
        why = _sentence("alt_reason", topic, rng, used)
        if opt is None or why is None:
            return None, 0
        return {"option": opt, "rejected_reason": why}, _wc(opt) + _wc(why)
    s = _sentence(key, topic, rng, used)
    return (s, _wc(s)) if s is not None else (None, 0)


def _pref_spec(theme: int) -> list:
    return [("value", "s", "pv%d" % theme, 1, 1),
            ("reason", "s", "pr%d" % theme, 1, 5),
            ("prefer", "ex", "pp%d" % theme, 1, 3),
            ("avoid", "ex", "pa%d" % theme, 1, 3)]


def build_content(cat: str, topic: dict, rng: random.Random, target: int) -> tuple[dict, int]:
    spec = _pref_spec(topic["theme"]) if cat == "preference" else SPECS[cat]
    items = {f: [] for f, *_ in spec}
    seen: set = set()  # templates already used in this memory
    words = 0
    for field, kind, key, lo, hi in spec:
        n = lo
        if lo == 0 and rng.random() < 0.5:
            n = 1
        for _ in range(n):
            v, w = _item(kind, key, topic, rng, seen)
            if v is not None:
                items[field].append(v)
                words += w
    # one sentence with unique tokens (ticket / PR / sha / request id)
    ref = _sentence("ref", topic, rng) if rng.random() < 0.85 else None
    if ref:
        words += _wc(ref)
    open_fields = [s for s in spec if len(items[s[0]]) < s[4]]
    ov = next(s for s in spec if s[0] == OVERFLOW[cat])
    misses = 0
    while words < target and misses < 4:
        s = rng.choice(open_fields) if open_fields else ov
        v, w = _item(s[1], s[2], topic, rng, seen)
        if v is None:
            if s in open_fields:
                open_fields.remove(s)
            else:
                misses += 1
            continue
        if words + w > MAX_WORDS:
            break
        items[s[0]].append(v)
        words += w
        if s in open_fields and len(items[s[0]]) >= s[4]:
            open_fields.remove(s)
    extra = []
    while words < MIN_WORDS:  # rare: top up with reference sentences
        e = _sentence("ref", topic, rng)
        extra.append(e)
        words += _wc(e)
    if ref:
        extra.insert(0, ref)
    items[REF_FIELD[cat]].extend(extra)

    content = {}
    for field, kind, key, lo, hi in spec:
        if kind == "s":
            content[field] = " ".join(items[field])
        elif kind == "ex":
            content.setdefault("examples", {})[field] = items[field]
        else:
            content[field] = items[field]
    return content, words


def _pick(rng: random.Random, options: tuple, weights: tuple):
    return rng.choices(options, weights=weights)[0]


def _enums(cat: str, content: dict, status: str, rng: random.Random, topic: dict) -> dict:
    """Return the full content dict with enum fields in schema order."""
    c = content
    if cat == "decision":
        if status == "retired":
            st = _pick(rng, ("superseded", "deprecated"), (3, 1))
        else:
            st = _pick(rng, ("accepted", "proposed", "deprecated", "superseded"), (80, 12, 5, 3))
        return {"status": st, "context": c["context"], "decision": c["decision"],
                "alternatives": c["alternatives"], "rationale": c["rationale"],
                "consequences": c["consequences"]}
    if cat == "runbook":
        return c
    if cat == "session_summary":
        if c["blockers"]:
            out = _pick(rng, ("blocked", "partial", "abandoned"), (5, 4, 1))
        else:
            out = _pick(rng, ("success", "partial", "abandoned"), (7, 3, 0.3))
        return {"goal": c["goal"], "outcome": out, "completed": c["completed"],
                "in_progress": c["in_progress"], "blockers": c["blockers"],
                "next_actions": c["next_actions"], "key_changes": c["key_changes"]}
    if cat == "constraint":
        kind = _pick(rng, ("technical", "policy", "limitation", "gap"), (4, 3, 3, 1))
        sev = _pick(rng, ("high", "medium", "low"), (3, 5, 2))
        expires = None
        if rng.random() < 0.12:
            expires = time.strftime("%Y-%m-%d", time.gmtime(T_END + rng.randrange(365 * 86400)))
        return {"kind": kind, "rule": c["rule"], "impact": c["impact"],
                "workarounds": c["workarounds"], "severity": sev,
                "active": status == "active" and rng.random() > 0.03, "expires": expires}
    if cat == "tech_debt":
        if status == "retired":
            st = _pick(rng, ("resolved", "wont_fix"), (3, 1))
        else:
            st = _pick(rng, ("open", "in_progress", "resolved", "wont_fix"), (60, 20, 15, 5))
        pr = _pick(rng, ("critical", "high", "medium", "low"), (5, 25, 45, 25))
        return {"status": st, "priority": pr, "description": c["description"],
                "reason_deferred": c["reason_deferred"], "impact": c["impact"],
                "suggested_fix": c["suggested_fix"],
                "acceptance_criteria": c["acceptance_criteria"]}
    # preference
    return {"topic": _sentence("pc%d" % topic["theme"], topic, rng), "value": c["value"], "reason": c["reason"],
            "strength": _pick(rng, ("strong", "default", "soft"), (3, 5, 2)),
            "examples": c["examples"]}


TITLE_KEY = {"decision": "d_title", "runbook": "rb_title", "session_summary": "s_title",
             "constraint": "c_title", "tech_debt": "td_title"}


def _title(cat: str, topic: dict, rng: random.Random) -> str:
    t = ""
    for _ in range(6):
        key = "pt%d" % topic["theme"] if cat == "preference" else TITLE_KEY[cat]
        t = _render(TPL[key].draw(rng), topic, rng)
        n = t.count(" ") + 1
        if n < 4:
            t += " in the " + topic["comp"]
            n = t.count(" ") + 1
        if 4 <= n <= 10 and len(t) <= 120:
            break
    words = t.split()
    if len(words) > 10:
        t = " ".join(words[:10])
    return _cap(t[:120].rstrip())


_B36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def _b36(n: int, width: int) -> str:
    out = []
    for _ in range(width):
        n, r = divmod(n, 36)
        out.append(_B36[r])
    return "".join(reversed(out))


def make_id(title: str, index: int, seed: int) -> str:
    # bijective in index (odd multiplier mod 2**30) => unique suffix per store
    suffix = _b36((index * 0x2545F491 + seed * 0x9E3779B1) & 0x3FFFFFFF, 6)
    base = _slug(title.replace("`", ""))[:60].rstrip("-")
    if len(base) > 48:
        cut = base.rfind("-", 0, 60)
        if cut > 30:
            base = base[:cut]
    return (base + "-" + suffix) if base else suffix


TAGS_GENERAL = Pool(_lines("""
ci
backend
frontend
database
k8s
testing
infra
auth
performance
observability
api
security
deploy
dx
migrations
flaky-tests
caching
messaging
incident
config
mobile
billing
ui
data
networking
cost
dependencies
on-call
"""), s=0.9)

CAT_TAGS = {
    "decision": ["architecture", "adr", "design"],
    "runbook": ["runbook", "incident", "ops", "debugging"],
    "session_summary": ["session", "wip", "pairing"],
    "constraint": ["constraint", "policy", "limits"],
    "tech_debt": ["tech-debt", "refactor", "cleanup"],
    "preference": ["style", "conventions", "workflow"],
}


def _tags(cat: str, topic: dict, rng: random.Random) -> list[str]:
    n = rng.choice((2, 3, 3, 4, 4, 5, 6))
    cand = []
    if rng.random() < 0.7:
        cand.append(_slug(topic["tech"]))
    if rng.random() < 0.5:
        cand.append(topic["entity"].replace("_", "-"))
    if rng.random() < 0.4:
        cand.append(rng.choice(CAT_TAGS[cat]))
    out = []
    for t in cand:
        if t not in out:
            out.append(t)
    while len(out) < n:
        t = TAGS_GENERAL.draw(rng)
        if t not in out:
            out.append(t)
    return out[:n]


def _ts(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:00Z", time.gmtime(t))


def _parse_ts(s: str) -> int:
    return calendar.timegm(time.strptime(s, "%Y-%m-%dT%H:%M:%SZ"))


def _timeline(rng: random.Random) -> tuple[int, int, int]:
    created = T_START + int(T_SPAN * math.sqrt(rng.random()))
    created -= created % 60
    if rng.random() < 0.45:
        return created, created, 0
    delta = int(rng.expovariate(1 / (12 * 86400))) + 600
    updated = min(created + delta, T_END)
    updated -= updated % 60
    updated = max(updated, created)
    times = 1 + min(int(rng.expovariate(0.7)), 20)
    return created, updated, times


def make_memory(index: int, seed: int, rng: random.Random, history: dict) -> dict:
    cat = _CAT_NAMES[bisect(_CAT_CUM, rng.random() * _CAT_CUM[-1])]
    topic = make_topic(rng)
    if cat == "preference":
        topic["theme"] = PREF_THEME.draw(rng)
    r = rng.random()
    status = "retired" if r < RETIRED_RATE else "archived" if r < RETIRED_RATE + ARCHIVED_RATE else "active"

    title = _title(cat, topic, rng)
    mid = make_id(title, index, seed)
    target = int(min(MAX_WORDS, max(MIN_WORDS, rng.lognormvariate(math.log(MEDIAN_WORDS[cat]), 0.35))))
    content, _ = build_content(cat, topic, rng, target)
    content = _enums(cat, content, status, rng, topic)

    created, updated, times = _timeline(rng)
    retired_at = retired_reason = archived_at = archived_reason = None
    if status == "retired":
        prev = history.get(cat)
        if prev and rng.random() < 0.7:
            rid, rcreated = prev[rng.randrange(len(prev))]
            end = max(created, rcreated) + rng.randint(3600, 20 * 86400)
            retired_reason = "Superseded by %s." % rid
        else:
            end = created + rng.randint(86400, 120 * 86400)
            retired_reason = _sentence("retire_reason", topic, rng)
        end = min(end, T_END)
        end -= end % 60
        updated = max(updated, end, created)
        retired_at = _ts(updated)
        times = max(times, 1)
    elif status == "archived":
        end = min(created + rng.randint(30 * 86400, 300 * 86400), T_END)
        end -= end % 60
        updated = max(updated, end, created)
        archived_at = _ts(updated)
        archived_reason = _sentence("archive_reason", topic, rng)
        times = max(times, 1)
    else:  # active memories can be named as the replacement of a retired one
        h = history.setdefault(cat, [])
        if len(h) < 512:
            h.append((mid, created))
        elif rng.random() < 0.05:
            h[rng.randrange(512)] = (mid, created)

    changes = []
    if times and updated > created:
        k = min(times, 4)
        pts = sorted(rng.randint(created + 60, updated) for _ in range(k - 1)) + [updated]
        for p in pts:
            changes.append({"date": _ts(p - p % 60), "summary": _sentence("change", topic, rng)})

    files = []
    if rng.random() < 0.8:
        files.append(topic["file_raw"])
        for _ in range(rng.choice((0, 0, 1, 1, 2, 3))):
            f = _file_raw(rng, topic["_inner"])
            if f not in files:
                files.append(f)

    return {
        "schema_version": SCHEMA_VERSION,
        "category": cat,
        "id": mid,
        "title": title,
        "created_at": _ts(created),
        "updated_at": _ts(updated),
        "tags": _tags(cat, topic, rng),
        "content": content,
        "related_files": files,
        "confidence": round(rng.uniform(0.55, 1.0) if status == "active" else rng.uniform(0.3, 0.8), 2),
        "record_status": status,
        "changes": changes,
        "times_updated": times,
        "retired_at": retired_at,
        "retired_reason": retired_reason,
        "archived_at": archived_at,
        "archived_reason": archived_reason,
    }


_enc = json.encoder.encode_basestring  # C accelerated when available


def _emit(v, ind: int) -> str:
    """Same output as json.dumps(v, indent=2, ensure_ascii=False), without the
    (slow, pure Python) generic indenting encoder."""
    t = type(v)
    if t is str:
        return _enc(v)
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if t is int or t is float:
        return repr(v)
    if not v:
        return "[]" if t is list else "{}"
    pad = "\n" + "  " * (ind + 1)
    if t is list:
        body = ("," + pad).join([_emit(x, ind + 1) for x in v])
        return "[" + pad + body + "\n" + "  " * ind + "]"
    body = ("," + pad).join([_enc(k) + ": " + _emit(x, ind + 1) for k, x in v.items()])
    return "{" + pad + body + "\n" + "  " * ind + "}"


def _dump(mem: dict) -> str:
    return _emit(mem, 0) + "\n"


def generate(out_dir: Path, count: int, seed: int = 0) -> list[Path]:
    """Write `count` memories under out_dir/.claude/memory; return their paths."""
    root = Path(out_dir) / ".claude" / "memory"
    dirs = {}
    for cat, folder in FOLDERS.items():
        d = os.path.join(root, folder)
        os.makedirs(d, exist_ok=True)
        dirs[cat] = d
    rng = random.Random(seed)
    history: dict = {}
    paths = []
    for i in range(count):
        mem = make_memory(i, seed, rng, history)
        p = os.path.join(dirs[mem["category"]], mem["id"] + ".json")
        with open(p, "w", encoding="utf-8") as f:
            f.write(_dump(mem))
        paths.append(Path(p))
    return paths


_MOD_FIELDS = {  # (string field, list field) that modify_one rewrites
    "decision": ("context", "rationale"),
    "runbook": ("root_cause", "steps"),
    "session_summary": ("goal", "completed"),
    "constraint": ("rule", "workarounds"),
    "tech_debt": ("description", "suggested_fix"),
    "preference": ("reason", None),
}


def modify_one(path: Path, seed: int) -> None:
    """Rewrite one memory in place: new body text, updated_at, changes, times_updated."""
    path = Path(path)
    with open(path, encoding="utf-8") as f:
        mem = json.load(f)
    cat = mem["category"]
    rng = random.Random((zlib.crc32(path.name.encode()) << 20) ^ (seed * 0x9E3779B1))
    topic = make_topic(rng)
    spec = {s[0]: s for s in SPECS[cat]}
    content = mem["content"]
    sfield, lfield = _MOD_FIELDS[cat]

    # replace the string field with new sentences of roughly the same length
    old_words = _wc(content[sfield])
    new, words = [], 0
    ref = _sentence("ref", topic, rng)
    while words + _wc(ref) < old_words - 8 or not new:
        s = _sentence(spec[sfield][2], topic, rng)
        if new and words + _wc(s) + _wc(ref) > old_words + 15:
            break
        new.append(s)
        words += _wc(s)
    new.append(ref)
    content[sfield] = " ".join(new)

    # replace one item of the list field
    if lfield and content.get(lfield):
        lst = content[lfield]
        lst[rng.randrange(len(lst))] = _sentence(spec[lfield][2], topic, rng)
    elif cat == "preference":
        ex = content["examples"]["prefer"]
        if ex:
            ex[rng.randrange(len(ex))] = _sentence("p_prefer", topic, rng)

    upd = _parse_ts(mem["updated_at"]) + rng.randint(1, 72) * 3600
    mem["updated_at"] = _ts(upd)
    mem["times_updated"] = int(mem.get("times_updated", 0)) + 1
    mem.setdefault("changes", []).append({"date": mem["updated_at"],
                                          "summary": _sentence("change", topic, rng)})
    with open(path, "w", encoding="utf-8") as f:
        f.write(_dump(mem))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir", type=Path, help="store root; files go to OUT_DIR/.claude/memory/")
    ap.add_argument("--count", type=int, required=True, help="number of memories")
    ap.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    a = ap.parse_args(argv)
    if a.count < 0:
        ap.error("--count must be >= 0")
    t0 = time.perf_counter()
    paths = generate(a.out_dir, a.count, a.seed)
    dt = time.perf_counter() - t0
    print("wrote %d memories to %s in %.2fs" % (len(paths), a.out_dir / ".claude" / "memory", dt),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
