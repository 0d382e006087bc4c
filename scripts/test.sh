#!/usr/bin/env bash
# Runs every test on a fresh machine: installs the system packages, builds, runs the suite.
# Usage: scripts/test.sh [extra swift test arguments, e.g. --filter StoreTests]
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh

echo "==> Starting the throwaway Postgres the integration tests use (scripts/pg.sh)"
# Not `eval "$(…)"`: that succeeds when pg.sh fails, and the integration tests would be skipped.
pgenv=$(scripts/pg.sh start) || { echo "test.sh: the test Postgres did not start; see above" >&2; exit 1; }
eval "$pgenv"
[ -n "${REALM_ADAPTER_PG_PORT:-}" ] || { echo "test.sh: scripts/pg.sh gave no connection settings" >&2; exit 1; }

# The mutation script (scripts/mutations.sh, too slow for every run) is only as good as its
# patches: each must still apply to the code, or a guard goes unchecked without anyone knowing.
echo "==> Checking that each mutation patch still applies (scripts/mutations/)"
for p in scripts/mutations/*.patch; do
  git apply --check "$p" || { echo "test.sh: $p no longer applies; update it to the code (see scripts/mutations.sh)" >&2; exit 1; }
done

# Formatting (.swift-format: line length 120, as `swift format --in-place --recursive` leaves it).
echo "==> Checking the formatting (swift format lint --strict)"
swift format lint --strict --recursive Sources Connectors Tests Benchmarks Fuzz examples

echo "==> Building (debug, with tests)"
swift build --build-tests

echo "==> Building the documentation (scripts/docs.sh: a stale symbol link fails it)"
scripts/docs.sh

echo "==> Running the tests (at most 15 minutes: scripts/watchdog.sh names a test that hangs, and where)"
scripts/watchdog.sh 900 swift test --skip-build "$@"

# Only for the whole suite (not when a filter or other arguments were given).
if [ $# -eq 0 ]; then
  echo "==> Fuzzing the parsers of untrusted input, 30 s each (scripts/fuzz.sh)"
  scripts/fuzz.sh 30
fi
