#!/usr/bin/env bash
# Runs every test on a fresh machine: installs the system packages, builds, runs the suite.
# Usage: scripts/test.sh [extra swift test arguments, e.g. --filter StoreTests]
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh

echo "==> Starting the throwaway Postgres the integration tests use (scripts/pg.sh)"
eval "$(scripts/pg.sh start)"

echo "==> Building (debug, with tests)"
swift build --build-tests

echo "==> Running the tests"
swift test --skip-build "$@"
