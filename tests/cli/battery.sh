#!/usr/bin/env bash
# The bad-input battery (issue 9, item 5): every user error must give exit code 2, exactly one
# line on stderr, and write nothing (no output directory, no report, no model file, nothing in
# the working directory). Usage: battery.sh <gpuprobe binary>
set -uo pipefail
gp=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
D=$work/data
mkdir -p "$D" "$work/cwd"
cd "$work/cwd"
OUT=$work/out  # never created by a failing command

fail=0 count=0
expect_usage() {  # args...: one bad invocation
  count=$((count + 1))
  local err rc
  err=$("$gp" "$@" 2>&1 >/dev/null)
  rc=$?
  local lines
  lines=$(printf '%s' "$err" | grep -c '')
  local problem=""
  [[ $rc -eq 2 ]] || problem+=" exit $rc;"
  [[ $lines -eq 1 ]] || problem+=" $lines lines on stderr;"
  [[ ! -e $OUT ]] || problem+=" wrote $OUT;"
  [[ -z $(ls -A "$work/cwd") ]] || problem+=" wrote into the working directory;"
  [[ -z $(find "$D" -newer "$D/.stamp" -not -name .stamp 2>/dev/null) ]] || problem+=" wrote into $D;"
  if [[ -n $problem ]]; then
    fail=$((fail + 1))
    echo "FAIL [$count] gpuprobe $*:$problem"
    printf '%s\n' "$err" | head -3 | sed 's/^/    /'
  fi
  rm -rf "$OUT" "$work/cwd"/* "$work/cwd"/.[!.]* 2>/dev/null
}

# --- data: a minimal valid result, and files of every wrong shape ------------------------------
good='{"schema_version":1,"tool":{"git_sha":"abc","version":"0.1.0"},"started_utc":"2026-12-01T00:00:00Z",
"device":{"name":"GPU","compute_capability":"9.0","sm_count":132,"uuid":"U"},
"experiments":[{"id":"latency.sweep","status":"passed","reason":"","parameters":{},"samples":{"points":[]},
"statistics":{},"findings":[{"name":"l2.capacity","value":1024,"unit":"bytes","confidence":0.9,"method":"m"}],
"curves":[]}]}'
printf '%s' "$good" > "$D/good.json"
mutate() {  # name, python expression on r (the parsed good result)
  python3 -c "import json,sys; r=json.load(open('$D/good.json')); $2; open('$D/$1.json','w').write(json.dumps(r))"
}
: > "$D/empty.json"
printf 'not json' > "$D/notjson.json"
head -c 100 "$D/good.json" > "$D/truncated.json"
printf '[]' > "$D/array.json"
printf '{}' > "$D/object.json"
printf '%*s' 5000 '' | tr ' ' '[' > "$D/deep.json"
mkdir -p "$D/dir.json"
mutate version_string 'r["schema_version"]="1"'
mutate version_3 'r["schema_version"]=3'
mutate experiments_object 'r["experiments"]={}'
mutate experiments_number 'r["experiments"]=[1]'
mutate no_device 'del r["device"]'
mutate cc_xy 'r["device"]["compute_capability"]="x.y"'
mutate cc_huge 'r["device"]["compute_capability"]="99999999999.0"'
mutate value_string 'r["experiments"][0]["findings"][0]["value"]="1024"'
mutate findings_string 'r["experiments"][0]["findings"]="x"'
mutate points_string 'r["experiments"][0]["samples"]["points"]="x"'
mutate status_bogus 'r["experiments"][0]["status"]="bogus"'
mutate confidence_5 'r["experiments"][0]["findings"][0]["confidence"]=5'
mutate no_tool 'del r["tool"]'
mutate name_number 'r["experiments"][0]["findings"][0]["name"]=7'
mutate no_samples 'del r["experiments"][0]["samples"]'
mutate sm_count_string 'r["device"]["sm_count"]="132"'
mutate value_huge 'r["experiments"][0]["findings"][0]["value"]=1e999'
results="missing empty notjson truncated array object deep dir version_string version_3
  experiments_object experiments_number no_device cc_xy cc_huge value_string findings_string
  points_string status_bogus confidence_5 no_tool name_number no_samples sm_count_string value_huge"

# A model file of the right shape (the tiny preset), and broken ones.
"$gp" --device model:tiny info | python3 -c "import json,sys; json.dump(json.load(sys.stdin)['environment']['model'], open('$D/model.json','w'))"
model_mutate() {
  python3 -c "import json; m=json.load(open('$D/model.json')); $2; open('$D/$1.json','w').write(json.dumps(m))"
}
model_mutate m_neg_line 'm["l1_line_bytes"]=-128'
model_mutate m_cc 'm["compute_capability"]="x.y"'
model_mutate m_no_name 'del m["name"]'
model_mutate m_string 'm["l2_capacity_bytes"]="big"'
model_mutate m_huge 'm["l2_capacity_bytes"]=1e308'
model_mutate m_float 'm["sm_count"]=1.5'
model_mutate m_sigma 'm["noise_relative_sigma"]="x"'
model_mutate m_array 'm=[m]'
model_mutate m_u32 'm["l1_ways"]=2**40'
touch "$D/.stamp"
sleep 1  # so -newer sees anything written after this

# --- the command line -----------------------------------------------------------------------------
expect_usage
expect_usage frobnicate
expect_usage list --bogus
expect_usage run
expect_usage --device model:tiny run latency.swep
expect_usage --device model:tiny run 'nomatch*'
expect_usage --device model:a100 --out "$OUT" run hopper.wgmma.throughput
expect_usage compare "$D/good.json"
expect_usage analyze
expect_usage report
expect_usage export-model
expect_usage replay
expect_usage --min-reps 0 --device model:tiny --out "$OUT" run latency.shared
expect_usage --min-reps abc --device model:tiny --out "$OUT" run latency.shared
expect_usage --max-reps 2000 --device model:tiny --out "$OUT" run latency.shared
expect_usage --min-reps 10 --max-reps 5 --device model:tiny --out "$OUT" run latency.shared
expect_usage --spread 2 --device model:tiny --out "$OUT" run latency.shared
expect_usage --spread -1 --device model:tiny --out "$OUT" run latency.shared
expect_usage --node-stride 0 --device model:tiny --out "$OUT" run latency.shared
expect_usage --node-stride -5 --device model:tiny --out "$OUT" run latency.shared
expect_usage --seed abc --device model:tiny --out "$OUT" run latency.shared
# sizes
for bad in abc -5 0 1X ''; do
  expect_usage --min-size "$bad" --device model:tiny --out "$OUT" run latency.sweep
  expect_usage --max-size "$bad" --device model:tiny --out "$OUT" run latency.sweep
  expect_usage --array-size "$bad" --device model:tiny --out "$OUT" run latency.shared
done
expect_usage --max-size 64G --device model:tiny --out "$OUT" run latency.sweep
expect_usage --min-size 1M --max-size 4K --device model:tiny --out "$OUT" run latency.sweep
# devices
for dev in gpu7 model:nope cuda:x model: 99999 '' "model:$D/missing.json" "model:$D/dir.json"; do
  expect_usage --device "$dev" --out "$OUT" run latency.shared
done
# shared options, whatever experiments are selected (latency.shared uses none of them)
for opt in "--strides 0" "--strides -1" "--strides 65" "--strides x" "--offsets -1" "--offsets 65" \
           "--offsets x" "--word-sizes 3" "--word-sizes 0" "--word-sizes 32" "--carveouts 150" \
           "--carveouts -2" "--carveouts x" "--loads bogus" "--loads ,"; do
  # shellcheck disable=SC2086
  expect_usage $opt --device model:tiny --out "$OUT" run latency.shared
done
expect_usage --loads '' --device model:tiny --out "$OUT" run latency.shared
# --axis on the bandwidth family: values out of range, of the wrong type or not allowed, axes the
# experiment chooses itself, unknown axes (checked before anything runs, whatever is selected)
for ax in bandwidth.stride.stride_elements=0 bandwidth.stride.stride_elements=65 \
          bandwidth.stride.stride_elements=x bandwidth.stride.stride_elements= \
          bandwidth.stride.variant=write bandwidth.offset.offset_elements=65 \
          bandwidth.offset.diagnostic_offset_elements=-1 bandwidth.read.width_bytes=3 \
          bandwidth.copy.width_bytes=32 bandwidth.layout.layout=aosoa \
          bandwidth.transpose.kernel=tiled2 bandwidth.read.unroll=2 bandwidth.sweep.load_bytes=16 \
          bandwidth.hierarchy.level=l1 bandwidth.stride.strides=2 bandwidth.strid.stride_elements=2; do
  expect_usage --axis "$ax" --device model:tiny --out "$OUT" run latency.shared
done
expect_usage --out '' --device model:tiny run latency.shared
expect_usage --device model:tiny --out /proc/gpuprobe/x run latency.shared
expect_usage --device model:tiny --out "$D/good.json" run latency.shared

# --- the loaders of result.json -------------------------------------------------------------------
for r in $results; do
  f=$D/$r.json
  expect_usage analyze "$f"
  # compare reads findings only: samples of the wrong shape are analyze's and report's business
  [[ $r == points_string ]] || expect_usage compare "$f" "$D/good.json"
  expect_usage report "$f" --out "$OUT"
  expect_usage export-model "$f" "$OUT/model.json"
  expect_usage replay "$f" --out "$OUT/replay"
done
expect_usage export-model "$D/good.json" "$OUT/model.json"  # no latency findings to export
expect_usage replay "$D/good.json" --out "$OUT/replay"     # nothing to export or replay
# --- model files ----------------------------------------------------------------------------------
for m in m_neg_line m_cc m_no_name m_string m_huge m_float m_sigma m_array m_u32 notjson deep empty; do
  expect_usage --device "model:$D/$m.json" --out "$OUT" run latency.shared
done

echo "$count bad inputs, $fail broke the contract (exit 2, one line on stderr, nothing written)"
[[ $count -ge 192 && $fail -eq 0 ]]
