#!/bin/sh
# Run the end-to-end suite, in a network namespace with only loopback when the system
# allows it (`unshare -n`: root, or unprivileged user namespaces), so that no request can
# leave 127.0.0.1 whatever the CLI tries. Extra arguments go to pytest.
#   tests/e2e/run.sh            # with the python3 on PATH (memindex installed in it)
#   PYTHON=.venv/bin/python tests/e2e/run.sh -x
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-python3}
# Inside the namespace pip cannot reach a package index: test_readme_e2e.py then leaves out
# the README's `pip install` line (with a warning) and runs the rest.
export MEMINDEX_E2E_NETNS=1
if unshare -n true 2>/dev/null && command -v ip >/dev/null 2>&1; then
  exec unshare -n sh -c 'ip link set lo up && exec "$@"' sh "$python" -m pytest -m e2e "$here" "$@"
elif unshare -rn true 2>/dev/null && command -v ip >/dev/null 2>&1; then
  exec unshare -rn sh -c 'ip link set lo up && exec "$@"' sh "$python" -m pytest -m e2e "$here" "$@"
else
  echo "run.sh: no network namespace available; relying on the proxy guard of the test environment" >&2
  unset MEMINDEX_E2E_NETNS
  exec "$python" -m pytest -m e2e "$here" "$@"
fi
