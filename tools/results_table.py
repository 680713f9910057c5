#!/usr/bin/env python3
"""Prints markdown tables of a gpuprobe result.json's findings (for quoting in the README).

Values are printed as the JSON holds them, with 4 significant digits for display only; the JSON
is the source of truth."""
import json
import sys


def fmt(v):
    if isinstance(v, (int, float)):
        return f"{v:.6g}"
    return str(v)


def main(path):
    r = json.load(open(path))
    d = r["device"]
    print(f"Device: {d['name']} ({d['compute_capability']}, {d['sm_count']} SMs), "
          f"gpuprobe {r['tool']['version']} git {r['tool']['git_sha']}, "
          f"{r['started_utc']}, wall time {r['wall_s']:.1f} s\n")
    print("| experiment | finding | value | unit | ns | confidence |")
    print("|---|---|---|---|---|---|")
    for e in r["experiments"]:
        if e["status"] != "passed":
            print(f"| {e['id']} | {e['status']}: {e['reason']} | | | | |")
            continue
        for f in e["findings"]:
            if "load" in f:
                continue
            value, unit = f["value"], f["unit"]
            if unit == "bytes" and value >= 1024 * 1024:
                value, unit = value / 1048576, "MiB"
            elif unit == "bytes" and value >= 1024:
                value, unit = value / 1024, "KiB"
            ns = fmt(f["value_ns"]) if "value_ns" in f else ""
            print(f"| {e['id']} | {f['name']} | {fmt(value)} | {unit} | {ns} | "
                  f"{f['confidence']:.2f} |")

    cells, loads, levels = {}, [], []
    for e in r["experiments"]:
        for f in e.get("findings", []):
            if "load" not in f:
                continue
            level = f["name"][: -len(f["load"]) - 1]
            loads += [f["load"]] if f["load"] not in loads else []
            levels += [level] if level not in levels else []
            cells[(level, f["load"])] = f"{f['value']:.1f} ({f['value_ns']:.1f} ns)"
    if cells:
        print("\nLatency by load operator (latency.chase), cycles (ns):\n")
        print("| level | " + " | ".join("." + l for l in loads) + " |")
        print("|---|" + "---|" * len(loads))
        for lv in levels:
            print(f"| {lv} | " + " | ".join(cells.get((lv, l), "") for l in loads) + " |")


if __name__ == "__main__":
    main(sys.argv[1])
