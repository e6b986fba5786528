"""Words for synthetic memories in the tests and the stress kit: a small software vocabulary."""

VOCAB = (
    "postgres redis kafka nginx docker kubernetes terraform react vue django flask celery "
    "webpack vite jest pytest graphql grpc oauth jwt cookie session cache queue worker "
    "migration schema index replica shard backup restore deploy rollback canary feature flag "
    "latency timeout retry circuit breaker logging metrics tracing alert pager oncall "
    "billing invoice payment refund checkout cart search ranking upload thumbnail "
    "encryption secret vault token rotation certificate dns proxy gateway ingress "
    "lint format typing mypy ruff black eslint prettier monorepo release changelog"
).split()
