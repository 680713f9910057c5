#!/usr/bin/env bash
# The output folder and the files gpuprobe writes (issue: data loss): an earlier result in --out
# is replaced whole (no stale CSV stays) and said on stderr, files gpuprobe did not make stay, a
# folder holding other things is refused, a folder another run holds (.gpuprobe.lock) is refused
# naming its pid and taken over once that run is gone, and export-model never replaces its
# input, a device node or a link. Usage: output_safety.sh <gpuprobe binary>
set -uo pipefail
gp=$(realpath "$1")
h200=$(realpath "$(dirname "$0")/../../results/h200/result.json")  # exports a model
work=$(mktemp -d)
holder=""
trap '[[ -n $holder ]] && kill "$holder" 2>/dev/null; rm -rf "$work"' EXIT
cd "$work"
fail=0
check() {  # description, condition (evaluated)
  if ! eval "$2"; then
    fail=$((fail + 1))
    echo "FAIL: $1"
  fi
}
run() { timeout 120 "$gp" --device model:tiny --quiet "$@"; }

# --- an earlier result is replaced whole ----------------------------------------------------------
run --out r run latency.sweep >/dev/null 2>&1
check "the first run writes its CSV" '[[ -f r/latency.sweep.curve.csv ]]'
echo "mine" > r/notes.txt
run --out r run latency.shared >/dev/null 2>err.txt
rc=$?
check "a second run into an earlier result succeeds (exit $rc)" '[[ $rc -eq 0 ]]'
check "it says what it replaces" 'grep -q "replacing the earlier result" err.txt'
check "no stale CSV stays" '[[ ! -e r/latency.sweep.curve.csv && ! -e r/experiments/latency.sweep.json ]]'
check "the new result is alone" \
  '[[ $(python3 -c "import json; print([e[\"id\"] for e in json.load(open(\"r/result.json\"))[\"experiments\"]])") == "['"'"'latency.shared'"'"']" ]]'
check "a file gpuprobe did not make stays" '[[ $(cat r/notes.txt) == mine ]]'
check "the lock is released at exit" '[[ ! -e r/.gpuprobe.lock ]]'

# --- a folder with other things and no result is refused -----------------------------------------
mkdir other && echo "keep" > other/data.txt
run --out other run latency.shared >/dev/null 2>err.txt
rc=$?
check "a non-empty folder without a result is refused (exit $rc)" '[[ $rc -eq 2 && $(grep -c "" err.txt) -eq 1 ]]'
check "and left as it was" '[[ $(ls -A other) == data.txt ]]'
mkdir empty
run --out empty run latency.shared >/dev/null 2>&1
check "an empty folder is used" '[[ -f empty/result.json ]]'
mkdir badresult && echo "{" > badresult/result.json
run --out badresult run latency.shared >/dev/null 2>err.txt
rc=$?
check "a folder whose result.json cannot be read is refused (exit $rc)" '[[ $rc -eq 2 && $(grep -c "" err.txt) -eq 1 ]]'

# --- the lock: a live run's folder is refused, a dead run's lock is taken over --------------------
mkdir locked
python3 - locked/.gpuprobe.lock <<'PY' &
import fcntl, os, sys, time
f = open(sys.argv[1], "w")
fcntl.flock(f, fcntl.LOCK_EX)
f.write("%d\n" % os.getpid())
f.flush()
time.sleep(120)
PY
holder=$!
for _ in $(seq 50); do [[ -s locked/.gpuprobe.lock ]] && break; sleep 0.1; done
run --out locked run latency.shared >/dev/null 2>err.txt
rc=$?
check "a folder another run holds is refused (exit $rc)" '[[ $rc -eq 2 && $(grep -c "" err.txt) -eq 1 ]]'
check "naming the other run's pid" 'grep -q "pid $holder" err.txt'
check "nothing is written into it" '[[ ! -e locked/result.json ]]'
"$gp" report "$work/r/result.json" --out locked >/dev/null 2>err.txt
rc=$?
check "report into a held folder is refused (exit $rc)" '[[ $rc -eq 2 && $(grep -c "" err.txt) -eq 1 ]]'
kill "$holder"
wait "$holder" 2>/dev/null
holder=""
check "the dead run's lock file stays" '[[ -e locked/.gpuprobe.lock ]]'
run --out locked run latency.shared >/dev/null 2>err.txt
rc=$?
check "a stale lock is taken over (exit $rc: $(head -1 err.txt))" '[[ $rc -eq 0 && -f locked/result.json ]]'
check "and released" '[[ ! -e locked/.gpuprobe.lock ]]'

# --- export-model: not over its input, a device node or a link ------------------------------------
cp "$h200" in.json
chmod 0444 in.json
sum=$(md5sum < in.json)
"$gp" export-model in.json in.json >/dev/null 2>&1
check "export-model does not replace its input at mode 0444" '[[ $(md5sum < in.json) == "$sum" ]]'
ln -s in.json link.json
"$gp" export-model link.json in.json >/dev/null 2>&1
check "nor through a link" '[[ $(md5sum < in.json) == "$sum" ]]'
"$gp" export-model in.json link.json >/dev/null 2>&1
check "a link given as output stays a link" '[[ -L link.json && $(md5sum < in.json) == "$sum" ]]'
mkfifo pipe
timeout 30 "$gp" export-model in.json pipe >/dev/null 2>&1
check "a FIFO given as output stays a FIFO" '[[ -p pipe ]]'
# A device node of our own (the null device, where mknod is allowed), not the system's
# /dev/null: were the check lost, the test would not replace the machine's.
if mknod nulldev c 1 3 2>/dev/null; then
  timeout 30 "$gp" export-model in.json nulldev >/dev/null 2>&1
  check "a device node given as output stays a device" '[[ -c nulldev ]]'
fi
"$gp" export-model in.json model.json >/dev/null 2>&1
check "a new file is written" '[[ -f model.json ]]'
"$gp" export-model in.json model.json >/dev/null 2>&1
rc=$?
check "and replaced (exit $rc)" '[[ $rc -eq 0 && -f model.json ]]'

echo "output_safety: $fail failed"
[[ $fail -eq 0 ]]
