#!/usr/bin/env bash
# Mutation check of the guarantees: switches each guard off in turn (a named patch in
# scripts/mutations/), builds, runs the tests that claim the guarantee, and reports whether they
# failed, as they must. A mutation the tests do not catch is a guarantee without proof.
#
#   scripts/mutations.sh              # every mutation
#   scripts/mutations.sh NAME ...     # some (file names without .patch)
#   scripts/mutations.sh --list
#
# Each patch starts with `# guard:` (what it switches off) and `# tests:` (a --filter for the
# tests that must fail). The work happens in a copy of the working tree under .build-mutations/
# (built there, so each mutation rebuilds only what it touches); the working tree is not changed.
# It starts the test Postgres (scripts/pg.sh). On the 2-core development machine the whole run
# takes about 12 minutes (4 for a first build of the copy and the unmutated tests, then 15-90 s
# per mutation: a build of what it touches and the tests, which wait out their timeouts):
# too slow for every CI run; run it when a guard or its tests change. Exit status: 0 when every
# mutation was caught and every test passed unmutated, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
patches="$root/scripts/mutations"
work="${MUTATIONS_DIR:-$root/.build-mutations}"
tree="$work/tree"

field() { sed -n "s/^# $1: //p" "$2" | head -n 1; }

if [ "${1:-}" = "--list" ]; then
  for p in "$patches"/*.patch; do printf '%-30s %s\n' "$(basename "$p" .patch)" "$(field guard "$p")"; done
  exit 0
fi
names=("$@")
[ ${#names[@]} -gt 0 ] || names=($(ls "$patches" | sed 's/\.patch$//'))
for n in "${names[@]}"; do [ -f "$patches/$n.patch" ] || { echo "mutations: no patch $patches/$n.patch" >&2; exit 2; }; done

for n in "${names[@]}"; do
  git apply --check "$patches/$n.patch" || { echo "mutations: $n.patch no longer applies; update it to the code" >&2; exit 1; }
done

pgenv=$(scripts/pg.sh start)
eval "$pgenv"

echo "==> Copying the working tree to $tree"
mkdir -p "$tree"
for d in Sources Connectors Tests Benchmarks examples scripts; do rm -rf "${tree:?}/$d"; done
tar -C "$root" --exclude=./.build --exclude='./.build-*' --exclude='./.build_*' --exclude=./.git -cf - . | tar -C "$tree" -xf -

run_tests() {  # $1: filter, $2: log file; returns the test command's status
  (cd "$tree" && swift build --build-tests >"$2" 2>&1 && swift test --skip-build --filter "$1" >>"$2" 2>&1)
}

all_filters=$(for n in "${names[@]}"; do field tests "$patches/$n.patch"; done | paste -sd'|')
echo "==> Building the copy and running the tests unmutated (they must pass)"
started=$SECONDS
if ! run_tests "$all_filters" "$work/unmutated.log"; then
  echo "mutations: the tests fail without any mutation; see $work/unmutated.log" >&2
  tail -n 30 "$work/unmutated.log" >&2
  exit 1
fi
echo "    passed ($((SECONDS - started)) s)"

missed=0
results=()
for n in "${names[@]}"; do
  p="$patches/$n.patch"
  filter=$(field tests "$p")
  log="$work/$n.log"
  started=$SECONDS
  if ! patch -s -p1 -d "$tree" <"$p"; then
    echo "mutations: $n.patch no longer applies; update it to the code" >&2
    exit 1
  fi
  if (cd "$tree" && swift build --build-tests >"$log" 2>&1); then
    if (cd "$tree" && swift test --skip-build --filter "$filter" >>"$log" 2>&1); then
      verdict="MISSED"
      missed=$((missed + 1))
    else
      verdict="caught"
    fi
  else
    verdict="DOES NOT BUILD"
    missed=$((missed + 1))
  fi
  patch -s -R -p1 -d "$tree" <"$p"
  failing=$(grep -o '✘ Test [A-Za-z0-9_]*(' "$log" | sed 's/✘ Test //; s/($//' | sort -u | paste -sd, - || true)
  line=$(printf '%-30s %-8s %4d s  %s' "$n" "$verdict" $((SECONDS - started)) "${failing:-}")
  echo "$line"
  results+=("$line")
done

echo
echo "Mutation check, $(date -u +%F): ${#names[@]} mutations, $missed not caught"
printf '%s\n' "${results[@]}"
[ "$missed" -eq 0 ]
