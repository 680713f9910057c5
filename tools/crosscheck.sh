#!/usr/bin/env bash
# Runs the independent reference chase (tools/reference_chase.cu) at the working sets that
# latency.chase used, and prints both numbers side by side. Usage: crosscheck.sh <result.json> <build dir>
set -euo pipefail
result="$1"; build="$2"
python3 - "$result" <<'PY' | while read -r ws load level mine; do
import json, sys
r = json.load(open(sys.argv[1]))
for e in r["experiments"]:
    if e["id"] != "latency.chase" or e["status"] != "passed": continue
    for p in e["samples"]["points"]:
        if p["load"] in ("ca", "cg"):
            print(p["working_set_bytes"], p["load"], p["level"], p["cycles_per_load"]["median"])
PY
  mode=hot; [[ "$level" == dram ]] && mode=cold
  ref=$("$build/reference_chase" "$ws" "$load" 16384 "$mode" | awk '{print $3}')
  python3 -c "import sys; m,r=float('$mine'),float('$ref'); print(f'$level $load ws=$ws gpuprobe={m:.2f} reference={r:.2f} diff={100*(m-r)/r:+.2f}%')"
done
