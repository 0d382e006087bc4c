#!/usr/bin/env bash
# Fuzzes what an attacker or a broken peer controls (Fuzz/Sources/FuzzTargets): the JSON
# instruction reader, the configuration reader, the pgoutput decoder and the binary COPY decoder,
# each with libFuzzer and AddressSanitizer for a bounded time.
#
#   scripts/fuzz.sh            # each target for 30 s
#   scripts/fuzz.sh 300 pgoutput
#
# Seeds come from Fuzz/corpus/<target>/ (the test suite replays every file there); what the
# fuzzer finds on top goes to .build-fuzz/corpus/<target>/. A crash stops the script with exit
# status 1 and leaves the input in .build-fuzz/crashes/: copy it into Fuzz/corpus/<target>/ so
# that it becomes a regression test, then fix the crash. The build is kept apart from the
# normal one (.build-fuzz), and takes a few minutes the first time on the 2-core machine. Leaks
# inside the toolchain's libraries are suppressed by Fuzz/lsan-suppressions.txt (each says why).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-30}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(instructions configuration pgoutput copy-binary)

echo "==> Building the fuzzer (libFuzzer + AddressSanitizer, in .build-fuzz)"
# Not -sanitize=fuzzer: its libFuzzer brings a main of its own, which clashes with the one
# SwiftPM gives an executable. The code gets libFuzzer's instrumentation, the binary the
# library without its main, and FuzzMain hands over to LLVMFuzzerRunDriver.
fuzzer_lib=$(ls "$(dirname "$(dirname "$(command -v swiftc)")")"/lib/clang/*/lib/linux/libclang_rt.fuzzer_no_main-x86_64.a 2>/dev/null | head -n 1)
[ -n "$fuzzer_lib" ] || { echo "fuzz.sh: libclang_rt.fuzzer_no_main not found in the Swift toolchain" >&2; exit 1; }
swift build --scratch-path .build-fuzz --product realm-adapter-fuzz \
  -Xswiftc -sanitize=address -Xswiftc -sanitize-coverage=edge,trace-cmp,inline-8bit-counters,pc-table -Xswiftc -DFUZZING \
  -Xlinker "$fuzzer_lib" -Xlinker -lstdc++ 2>&1 | grep -v "^\[" | grep -v "Cannot export local symbol" || true
binary=.build-fuzz/debug/realm-adapter-fuzz
[ -x "$binary" ] || { echo "fuzz.sh: the fuzzer did not build" >&2; exit 1; }

mkdir -p .build-fuzz/crashes
for t in "${targets[@]}"; do
  [ -d "Fuzz/corpus/$t" ] || { echo "fuzz.sh: no target $t (Fuzz/corpus/$t)" >&2; exit 2; }
  mkdir -p ".build-fuzz/corpus/$t"
  echo "==> $t for $seconds s"
  if ! LSAN_OPTIONS="suppressions=$PWD/Fuzz/lsan-suppressions.txt" REALM_ADAPTER_FUZZ_TARGET="$t" "$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
      -artifact_prefix=".build-fuzz/crashes/$t-" -print_final_stats=1 ".build-fuzz/corpus/$t" "Fuzz/corpus/$t" \
      > ".build-fuzz/$t.log" 2>&1; then
    tail -n 40 ".build-fuzz/$t.log" >&2
    echo "fuzz.sh: $t crashed; the input is in .build-fuzz/crashes/ (keep it in Fuzz/corpus/$t/ as a regression test)" >&2
    exit 1
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" ".build-fuzz/$t.log" | sed 's/^/    /'
done
echo "fuzz.sh: no crash in ${targets[*]} (${seconds} s each)"
