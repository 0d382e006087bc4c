#!/usr/bin/env bash
# Runs a test command with a time limit, so that a hung test fails the run in minutes instead of
# holding CI until its own limit. On a hang it prints where the test process's threads are in
# the project's code (with gdb, when installed), kills it, and names the tests that started and
# never ended (last, where a truncated log still shows it). The first time a test exceeds its own
# time limit (swift-testing gives up on it, but its task stays where it is stuck), it prints the
# threads too, once, and lets the run go on.
# Usage: scripts/watchdog.sh SECONDS COMMAND [ARGUMENTS…]
set -uo pipefail
limit=$1
shift
log=$(mktemp "${TMPDIR:-/tmp}/realm-adapter-tests.XXXXXX")
trap 'rm -f "$log"' EXIT

# A session of its own: on a hang, only this command's processes are looked at and killed.
setsid "$@" > >(tee "$log") 2>&1 &
pid=$!

# Where the threads of the command's processes are, in the project's own code (needs gdb).
threads() {
  command -v gdb >/dev/null || return 0
  for p in $(pgrep -s "$pid"); do
    echo "watchdog: where the threads of process $p ($(ps -o comm= -p "$p")) are in the project's code:" >&2
    # Each thread's header, then only its frames in the project's own files.
    gdb -p "$p" -batch -ex 'thread apply all bt 40' 2>/dev/null |
      awk '/^Thread / { header = $0; next }
           /^#/ && /(Sources|Tests|Connectors|Benchmarks|examples)\// && !/\.build\// {
             if (header != "") { print header; header = "" }
             sub(/ \(.*\) at /, " at "); print "  " $0 }' >&2
  done
}

waited=0
overran=no
while kill -0 "$pid" 2>/dev/null; do
  if [ "$overran" = no ] && grep -q "Time limit was exceeded" "$log"; then
    overran=yes
    echo "watchdog: a test ran past its time limit; its task may still be stuck here:" >&2
    threads
  fi
  if [ "$waited" -lt "$limit" ]; then
    sleep 5
    waited=$((waited + 5))
    continue
  fi
  threads
  pkill -9 -s "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  echo "watchdog: the tests ran past $limit s and were stopped. These started and never ended:" >&2
  # swift-testing prints "◇ Test NAME started." per test and per argument ("case passing … to NAME"),
  # and "✔/✘/➜ Test NAME … passed/failed/skipped" per test (not per case). Names repeat across suites: counted.
  awk '{ gsub(/\033\[[0-9;]*m/, "") }
       /^◇ Test .* started\.$/ {
         s = $0; sub(/^◇ Test /, "", s); sub(/ started\.$/, "", s)
         if (s ~ /^case passing /) { fn = s; sub(/^.* to /, "", fn); cases[fn] = cases[fn] "\n    " s }
         else open[s]++
       }
       /^[^ ]+ Test / && !/^◇/ {
         s = $0; sub(/^[^ ]+ Test /, "", s)
         sub(/ (with [0-9]+ test cases? )?(passed|failed|skipped|recorded).*$/, "", s)
         if (s in open) open[s]--
       }
       END { for (t in open) if (open[t] > 0) print "  " t (t in cases ? cases[t] : "") }' "$log" >&2
  exit 124
done
wait "$pid"
