#!/usr/bin/env python3
"""Writes docs/H200_RESULTS.md from results/h200 (the committed tool output).

Every number is read from result.json / the CSVs / crosscheck.txt; nothing is typed by hand."""
import argparse
import csv
import json
import pathlib

ap = argparse.ArgumentParser(description=__doc__)
ap.add_argument("--root", default=pathlib.Path(__file__).resolve().parent.parent, type=pathlib.Path,
                help="the checkout whose README.md and results/h200 to use (default: this one)")
root = ap.parse_args().root
res = root / "results" / "h200"
findings = (res / "FINDINGS.md").read_text().splitlines()
lat = [l for l in findings if l.startswith("| latency.")]
mat_start = [i for i, l in enumerate(findings) if l.startswith("| level |")][0]
mat_end = next((i for i in range(mat_start, len(findings)) if not findings[i].startswith("|")),
               len(findings))
mat = findings[mat_start:mat_end]
r = json.loads((res / "result.json").read_text())
_d = r["device"]
hdr = (f"Device: {_d['name']} ({_d['compute_capability']}, {_d['sm_count']} SMs), "
       f"gpuprobe {r['tool']['version']} git {r['tool']['git_sha']}, {r['started_utc']}, "
       f"wall time {r['wall_s']:.1f} s")
f = {x["name"]: x for e in r["experiments"] for x in e["findings"]}


def v(n, d=1):
    return f"{f[n]['value']:.{d}f}"


def target(n, minimum, text=None):
    met = f[n]["value"] >= minimum
    return (text or f">= {minimum:g}") + ("" if met else " (not met)")


cross = (res / "crosscheck.txt").read_text().strip().splitlines()
wall = {e["id"]: e["wall_s"] for e in r["experiments"]}


def fam(p):
    return sum(w for k, w in wall.items() if k.startswith(p))


flags = [e["id"] for e in r["experiments"]
         if e["clocks"].get("sm_clock_drift_flagged") or e["clocks"].get("throttled")]
pl = f["hopper.pipeline.128x256x64.best_pipeline_tflops"]
if "l2.partition.sm_group_sizes" in f:
    hm = f.get("l2.partition.hash_mask", {})
    l2p = (f"SM groups {' + '.join(str(g) for g in f['l2.partition.sm_group_sizes']['group_sizes'])}; "
           f"first access near {v('l2.partition.near_latency', 0)} / far {v('l2.partition.far_latency', 0)} cycles; "
           + (f"side of a line = parity of address bits {', '.join(str(b) for b in hm['bits'])} "
              f"({hm['mask_hex']}, {hm['lines_predicted'] * 100:.1f}% of probed lines predicted)" if hm.get("bits") else "no linear hash found"))
else:
    l2p = "not in this result"


def cls(n):
    if n not in f:
        return "not found"
    if f[n]["value"] < 0:
        return f"tied ({f[n].get('policy', 'see the result')})"
    return ["LRU", "FIFO", "tree-PLRU", "random", "none of these"][int(f[n]["value"])]


def random_placement_worst(rp):
    """The replay's worst errors by region for the random_placement sensitivity ({} when not applicable)."""
    w = (rp["experiments"][0].get("statistics", {}).get("l2_policy_sensitivity", {})
         .get("worst_error_percent_by_region", {}).get("random_placement"))
    return w if isinstance(w, dict) else {}


def structure_text():
    out = []
    if "cache.l1.ways" in f:
        out.append(f"- L1: {v('cache.l1.ways', 0)}-way, {v('cache.l1.sets', 0)} sets, {v('cache.l1.line_size', 0)}-B lines, "
                   f"replacement {cls('cache.l1.replacement')} (confidences {f['cache.l1.ways']['confidence']:.2f}, "
                   f"{f['cache.l1.sets']['confidence']:.2f}, {f['cache.l1.line_size']['confidence']:.2f}, "
                   f"{f['cache.l1.replacement']['confidence']:.2f}).")
        if "cache.l1.tag_capacity" in f:
            t = f["cache.l1.tag_capacity"]
            out.append(f"- L1 tags: {v('cache.l1.tag_sets', 0)} sets under an XOR hash measured column by column "
                       f"name {t['value'] / 1024:.0f} KiB of lines, the L1 holds {t['capacity_bytes'] / 1024:.2f} KiB: "
                       + ("lines are stored apart from the tags (decoupled)" if t.get("decoupled") else "one array")
                       + f" (confidence {t['confidence']:.2f}).")
        if "cache.l1.data_victim" in f:
            dv = f["cache.l1.data_victim"]
            mz = ", ".join(f"{k} {z:.1f}" for k, z in sorted(dv.get("misfit_z", {}).items()))
            out.append(f"- L1 data victim (a line leaving while its set has a free tag; {dv['lines_held']} lines held in "
                       f"the sequences' carve-out): {dv['victim']} of global_lru / own_set / random / random_set / set_cycle "
                       f"(misfits in standard errors: {mz}; confidence {dv['confidence']:.2f}).")
    ways = [e for e in r["experiments"] if e["id"] == "cache.l2.ways"]
    if ways:
        rec = ways[0]["samples"]
        targets = [p for p in rec.get("pools", []) if p.get("method") == "eviction_sweeps"]
        parts = []
        for p in targets:
            rp = p.get("repeat", {})
            what = (f"a minimal {p['ways']}-line set" if p["found"] else
                    f"every one of the groups needed (at least {p['ways_at_least']} competing lines)" if p.get("ways_at_least") and not rp.get("probabilistic") else
                    "no repeatable set" if rp.get("probabilistic") else "no set")
            parts.append(f"{what}, evicted {rp.get('evicted_with_set', 0)} of {rp.get('trials', 0)} times with it and "
                         f"{rp.get('evicted_with_one_less', 0)} with one line or group less, re-read after eviction at "
                         f"{rp.get('reread_cycles_median', 0):.1f} cycles (median of the 8; "
                         + (f"served from {p['served_after_eviction']} against far hit {rec['served_references']['far_hit_cycles']:.1f} / DRAM {rec['served_references']['dram_cycles']:.1f})"
                            if 2 * rp.get('evicted_with_set', 0) > rp.get('trials', 0) and p.get('served_after_eviction') and 'served_references' in rec
                            else "mostly not evicted)" if 2 * rp.get('evicted_with_set', 0) <= rp.get('trials', 0) else "unclassified)"))
        found = [k for k in ("cache.l2.ways", "cache.l2.line_size", "cache.l2.replacement", "cache.l2.competing_lines_lower_bound",
                             "cache.l2.set_index_bits", "cache.l2.sets") if k in f]
        out.append(f"- L2 by eviction sweeps ({len(targets)} targets, {sum(p.get('eviction_tests', 0) for p in targets)} tests, "
                   f"{wall['cache.l2.ways']:.1f} s): " + "; ".join(parts) + ". Findings: " +
                   (", ".join(f"`{k}` = {f[k]['value']:g}" + (f" ({f[k]['policy']})" if f[k].get('policy') else "") +
                              f" (confidence {f[k]['confidence']:.2f})" for k in found) if found else
                    "none (two targets of one kind must agree)") + ".")
    si = f.get("cache.l2.set_index_bits")
    if si and "page_bits" in si:
        phys = [b for b in si["bits"] if b not in si["page_bits"]]
        pairs = ", ".join(f"({a}, {b})" for a, b in si["equal_pairs"]) or "none"
        out.append(f"- L2 set index (flips of one conflict-set member's address bits): each of the physical bits "
                   f"{', '.join(str(b) for b in phys)} moves a line to another set; pairs that cancel: {pairs}"
                   + ("; such a pair moves a line by fewer lines than there are sets, so the index is no modulo (kind "
                      f"`{si['kind']}`)" if si.get("modulo_refuted") else f" (kind `{si['kind']}`)")
                   + (f"; bits {si['page_bits'][0]}..{si['page_bits'][-1]} lie above the {2 ** si['first_page_bit'] // 2**20} MiB page "
                      "and change its physical frame, which user code cannot see: the frame matters, its columns are out of reach."
                      if si["page_bits"] else "."))
    if ways and "cycles" in ways[0]["samples"].get("line_by_stride", {}) and "cache.l2.line_size" in f:
        lb = ways[0]["samples"]["line_by_stride"]
        med = [sorted(c)[len(c) // 2] for c in lb["cycles"]]
        out.append(f"- L2 line by node stride (cross-check, `line_by_stride` in cache.l2.ways' samples): random-order chases over "
                   f"{lb['working_set_bytes'] / 2**20:.1f} MiB at strides {', '.join(str(x) for x in lb['strides'])} B take "
                   f"{' / '.join(f'{m:.1f}' for m in med)} cycles per load, peak at "
                   f"{lb['strides'][med.index(max(med))]} B (below the line a line's later nodes reuse it, above it fewer lines are touched); "
                   f"`cache.l2.line_size` = {f['cache.l2.line_size']['value']:g} B ({'by node stride' if 'node strides' in f['cache.l2.line_size']['method'] else 'by conflict sets'}).")
    if "tlb.l1.entries" in f:
        out.append(f"- TLB: {int(f['tlb.levels']['value'])} level(s) up to {f['tlb.levels'].get('method', '').split('up to ')[-1]}; "
                   f"first level {v('tlb.l1.entries', 0)} entries of {f['tlb.page_size']['value'] / 2**20:g} MiB each "
                   f"(reach {f['tlb.l1.reach']['value'] / 2**20:g} MiB), miss penalty {v('tlb.l1.miss_penalty', 0)} cycles "
                   f"(confidence {f['tlb.l1.miss_penalty']['confidence']:.2f}).")
    if "dram.latency_near_home" in f:
        near_home = f["dram.latency_near_home"]
        how = "cold chases of one SM over lines of one home" if "replicates_cycles" in near_home else "cold first reads after a flush"
        mixed_model = (f['l2.far_hit_latency']['value'] + f['dram.latency_near_home']['value']) / 2
        out.append(f"- DRAM by home (`cache.l2.far_hit`, {how}): "
                   f"{v('dram.latency_near_home', 1)} cycles for lines homed in the SM's partition, "
                   f"{v('dram.latency_far_home', 1)} for lines homed in the other (their mean "
                   f"{(f['dram.latency_near_home']['value'] + f['dram.latency_far_home']['value']) / 2:.1f} against the sweep's "
                   f"`dram.latency` {v('dram.latency', 1)}). The sweep's mixed plateau ({v('l2.mixed_latency', 1)}) against "
                   f"(far hit {v('l2.far_hit_latency', 1)} + near-home DRAM) / 2 = "
                   f"{mixed_model:.1f} ({(mixed_model / f['l2.mixed_latency']['value'] - 1) * 100:+.1f} %): one SM's set beyond its "
                   f"partition (home lines and copies of far-homed lines share it) reads far-homed lines from the other "
                   f"partition and misses its own home lines to DRAM.")
    mix = [e for e in r["experiments"] if e["id"] == "cache.l2.mixture"]
    if mix and "l2.mixture.miss_latency" in f and mix[0].get("curves"):
        rows = [l.split(",") for l in (res / mix[0]["curves"][0]["file"]).read_text().splitlines()[1:]]
        shares = ", ".join(f"{float(x[1]):.2f} at {float(x[0]) / 1e6:.1f} MB" for x in rows)
        ps = f.get("l2.mixture.page_spread", {})
        out.append(f"- The mixed region's make-up (`cache.l2.mixture`, every 32nd load of one warm pass timed on its own): "
                   f"share of loads served by the SM's own partition {shares}; the others cost "
                   f"{v('l2.mixture.miss_latency', 1)} cycles on the chase's scale (far hits and DRAM misses, the same at every size)"
                   + (f"; at {ps['working_set_bytes'] / 1e6:.1f} MB (share {ps['near_share']:.2f}) the chain's {ps['pages']} pages of 2 MiB "
                      f"range from {ps['page_share_min']:.2f} to {ps['page_share_max']:.2f} (heterogeneity z {ps['heterogeneity_z']:.0f}): "
                      f"the pages do not share the partition alike (a page's frame enters the L2 index)" if ps else "") + "."
                   + (lambda a: f" Other allocations of one size (the same chain at the end of fresh, larger allocations: other physical pages): "
                      f"at {a['working_set_bytes'] / 1e6:.1f} MB the chase's mean latency runs from {a['latency_min_cycles']:.1f} to "
                      f"{a['latency_max_cycles']:.1f} cycles over {a['allocations']} allocations (near share {a['near_share_min']:.2f} .. "
                      f"{a['near_share_max']:.2f}); `l2.mixture.allocation_spread` = {f['l2.mixture.allocation_spread']['value']:.1f} % "
                      f"(confidence {f['l2.mixture.allocation_spread']['confidence']:.2f}, heterogeneity z {a['heterogeneity_z']:.0f}): "
                      + ("the allocations differ beyond their sampling noise, so the slope's shape belongs to the allocation, "
                         "not to the size alone." if f['l2.mixture.allocation_spread']['confidence'] >= 0.9 else
                         "the allocations do not clearly differ beyond their sampling noise.") if a else "")(f.get("l2.mixture.allocation_spread"))
                   + (lambda u: f" Loads share their fate (near hit or not) alike within aligned blocks of up to "
                      f"{u['value'] / 1024:.0f} KiB and less beyond (phi {u['phi']:.2f}, then {u['phi_next']:.2f}: "
                      f"`l2.mixture.placement_unit`, confidence {u['confidence']:.2f})"
                      + (": the index places blocks of that size as wholes." if u['confidence'] >= 0.9 else
                         "; how clearly the index places blocks of that size as wholes is what the confidence says.")
                      if u and u.get("phi_next") is not None else "")(f.get("l2.mixture.placement_unit")))
    rp_path = res / "replay" / "result.json"
    if rp_path.exists():
        rp = json.loads(rp_path.read_text())
        g = {x["name"]: x for x in rp["experiments"][0]["findings"]}
        regions = [k.split(".")[1] for k in g
                   if k.count(".") == 2 and k.startswith("replay.") and k.endswith(".worst_error_percent")]
        beyond = g.get("replay.l2_mixed.worst_beyond_allocations_percent")
        runs_arg = " --runs " + " ".join(rp["experiments"][0]["parameters"].get("runs", [])) if rp["experiments"][0]["parameters"].get("runs") else ""
        out.append(f"- Replay (`gpuprobe replay results/h200/result.json{runs_arg}`, [report](results/h200/replay/report.html)): "
                   f"the model exported from this result, measured at the sweep's {g['replay.points_within_3_percent']['points']} working sets, "
                   f"is within 3 % at {g['replay.points_within_3_percent']['value'] * 100:.0f}% of them; worst error "
                   f"{g['replay.worst_error_percent']['value']:.1f}% at {g['replay.worst_error_percent']['working_set_bytes'] / 2**20:.2f} MiB "
                   f"({g['replay.worst_error_percent']['region']}); per region: " +
                   ", ".join(f"{k} {g['replay.' + k + '.worst_error_percent']['value']:.1f}%" for k in sorted(regions)) + "."
                   + (lambda sp, br, wr: f" The GPU's own runs (this one and the repeat's three) differ by up to {sp['value']:.1f}% at one working set "
                      f"({sp['working_set_bytes'] / 2**20:.2f} MiB, {sp['region']}; confidence {sp['confidence']:.2f}): the 3 % asked of the model is below "
                      f"what the GPU reproduces there. Against the range of those runs the replay is within 3 % at {wr['value'] * 100:.0f}% of "
                      f"{wr['points_judged']} working sets, at most {br['value']:.1f}% outside it (at {br['working_set_bytes'] / 2**20:.2f} MiB, {br['region']})."
                      if sp and br and wr else "")(g.get("replay.runs_worst_spread_percent"), g.get("replay.worst_beyond_runs_percent"),
                                                    g.get("replay.points_within_3_percent_of_runs"))
                   + (f" On the L2's slope, against the range the GPU's own allocations give at each size ({beyond['points_judged']} points): "
                      f"at most {beyond['value']:.1f}% outside it (at {beyond['working_set_bytes'] / 2**20:.2f} MiB)." if beyond else "")
                   + (lambda rnd: f" With the placement unit's blocks placed at random instead of evenly (`random_placement` in "
                      f"`l2_policy_sensitivity`, the other bound), the slope's worst error is {rnd['error_percent']:.1f}% "
                      f"(at {rnd['working_set_bytes'] / 2**20:.2f} MiB)."
                      if isinstance(rnd, dict) else "")(random_placement_worst(rp).get("l2_mixed"))
                   + (lambda offs: " Why the points off by more than 3 % miss (`replay.<region>.off_points_between_placements`): "
                      + "; ".join(f"{r}: {o['between_placements']} of {o['off_points']} lie between the even and a random placement "
                                  f"(where the allocation sits decides)"
                                  + (", unexplained at " + ", ".join(f"{u['working_set_bytes'] / 2**20:.2f} MiB" for u in o['unexplained'])
                                     if o['unexplained'] else "")
                                  for r, o in offs) + "." if offs else "")(
                       sorted((k.split(".")[1], v) for k, v in g.items() if k.endswith(".off_points_between_placements")))
                   + (lambda vd, pw, pl, kn: f" Judged fairly (`replay.fair.*`, against {vd['runs']} runs of the GPU; at least 4 asked): "
                      f"**{vd['label']}** (confidence {vd['confidence']:.2f}): {pw['points_within']} of {pw['points_judged']} working sets "
                      f"({pw['value'] * 100:.1f}%) within 3 % of the runs' range (95% asked)"
                      + (f", {sum(1 for q in pl['plateaus'] if abs(q['error_percent']) <= 3)} of {len(pl['plateaus'])} plateaus within 3 % "
                         f"of the median run's" if pl else "")
                      + (f", the L1 knee {kn['value']:+.2f}% from the median run's `l1.capacity`" if kn else "")
                      + ("; misses: " + "; ".join(vd['misses']) if vd['misses'] else "") + "."
                      if vd and pw else "")(g.get("replay.fair.verdict"), g.get("replay.fair.points_within"),
                                            g.get("replay.fair.plateaus_within"), g.get("replay.fair.l1_knee_error")))
    others = sorted(p.name for p in (res / "other_cards").glob("GPU-*") if (p / "result.json").exists())
    if others:
        out.append(f"- Other H200s of the pool ([results/h200/other_cards](results/h200/other_cards/README.md)): "
                   + ", ".join(others) + "; every call lands on another card, and some findings differ by card "
                   "(DRAM latency; whether the eviction sweeps find a minimal L2 set).")
    return "\n".join(out)


structure = structure_text()


def during(eid):
    e = [x for x in r["experiments"] if x["id"] == eid][0]
    d = e["clocks"].get("during", {})
    if "sm_clock_mhz" not in d:
        return ""
    sm, pw = d["sm_clock_mhz"], d.get("power_w") or {}
    reasons = ", ".join(d.get("throttle_reasons", [])) or "none"
    return (f"`{eid}` SM clock {sm['min']:.0f}-{sm['max']:.0f} MHz, power up to "
            f"{pw.get('max', float('nan')):.0f} W, throttle reasons: {reasons}")


during_note = "; ".join(x for x in (during("hopper.wgmma.throughput"), during("hopper.pipeline")) if x)
if during_note:
    wg = f["hopper.wgmma.bf16.tflops"].get("sm_clock_mhz")
    during_note += (
        ". These launches last milliseconds, separated by the host's checks of every accumulator, "
        "so NVML's readings see a mostly idle GPU; inside the launches the SM clock "
        "(%clock64 against %globaltimer) was "
        + (f"{wg:.0f} MHz (wgmma) and " if wg else "")
        + f"{pl.get('sm_clock_mhz', float('nan')):.0f} MHz (pipeline)")
clock_note = ("no drift over 2% and no throttle reason in any experiment" if not flags else
              "drift or throttling flagged in: " + ", ".join(flags))
peak = f["dram.read_bandwidth"]["peak_gb_s"]
section = f"""# H200 results in detail

Quoted from `results/h200/result.json` (the tool's own output; every finding of every family is
in [results/h200/FINDINGS.md](../results/h200/FINDINGS.md); this page is generated by
`tools/readme_results.py`; the one-screen summary is in the [README](../README.md)). {hdr}. Clocks were read before and after every experiment:
{clock_note} (see each experiment's `clocks`).{(" NVML read every 50 ms while the tensor-core experiments ran (`clocks.during`): " + during_note + ".") if during_note else ""}

### Latency and capacities (`latency.*`)

| experiment | finding | value | ns | confidence |
|---|---|---|---|---|
""" + "\n".join(lat) + """

Latency of each load operator at the middle of each plateau (`latency.chase`), cycles (ns):

""" + "\n".join(mat) + """

Cross-check against an independent pointer chase (`tools/reference_chase.cu`: its own chain
generator, CUDA load intrinsics instead of inline PTX, its own timing loop) at the same working
sets, same session (`results/h200/crosscheck.txt`):

```
""" + "\n".join(cross[1:]) + f"""
```

What the H200 shows: the L1 is invalidated at every kernel launch (the chase warms it inside
the timed launch); `.cg`/`.cv` bypass the L1 and the first level they see is the L2; L2 hits from
one SM cost ~{v('l2.hit_latency', 0)} cycles up to ~{f['l2.near_capacity']['value'] / 2**20:.1f} MiB (the near
partition, {f['l2.near_capacity']['value'] / r['device']['l2_bytes'] * 100:.0f}% of the {r['device']['l2_bytes'] / 2**20:.0f} MiB the driver reports), then a mixed region (near hits, far hits and DRAM misses) of median ~{v('l2.mixed_latency', 0)} cycles up to
~{f['l2.capacity']['value'] / 2**20:.1f} MiB, then DRAM at ~{v('dram.latency', 0)} cycles; the usable L1 at the
default (= maximum-L1) carveout is {f['l1.capacity']['value'] / 1024:.2f} KiB. Not every H200 is the same:
sweeps from other machines are in `tests/data/h200_latency_sweep_run*.json` and in the history of
`results/h200`; `gpuprobe compare` sets two results side by side.

### Cache structure, TLB and the replay (`cache.l1.ways`, `cache.l2.ways`, `latency.tlb`, `gpuprobe replay`)

{structure}

### The other families, against the issues' targets

| quantity | measured | target / reference |
|---|---|---|
| L2 partitions (`cache.l2.partition`) | {l2p} | (no public figure) |
| fetch granularity (`cache.fetch_granularity`) | L1 miss fetches {v('cache.l1.fetch_granularity', 0)} B; a DRAM miss fills {v('cache.l2.fill_granularity', 0)} B into the L2 | 32-B sectors (vendor) |
| DRAM read (`dram.read_bandwidth`) | {v('dram.read_bandwidth')} GB/s ({f['dram.read_bandwidth']['percent_of_peak']:.1f}% of {peak:.1f}) | {target('dram.read_bandwidth', 4650)} |
| DRAM write (`dram.write_bandwidth`) | {v('dram.write_bandwidth')} GB/s | {target('dram.write_bandwidth', 4650)}; cudaMemset {v('dram.write_bandwidth.cudamemset_reference')} |
| DRAM copy, read + write (`dram.copy_bandwidth`) | {v('dram.copy_bandwidth')} GB/s | {target('dram.copy_bandwidth', 4400)}; cudaMemcpy {v('dram.copy_bandwidth.cudamemcpy_reference')} |
| L2 read, all SMs (`l2.read_bandwidth`) | {v('l2.read_bandwidth')} GB/s (best LDG variant {v('hierarchy.l2.read_bandwidth')}; TMA bulk, each tile by one SM {v('l2.tma_bulk_read_bandwidth')}) | {target('l2.read_bandwidth', 12000)}; gpu-benches ~9700-10500 |
| L2 read of tiles many SMs read at once, TMA (`l2.tma_read_bandwidth`) | {v('l2.tma_read_bandwidth')} GB/s | (not the issue's measure; see docs) |
| L1 read (`hierarchy.l1.read_bandwidth`) | {f['hierarchy.l1.read_bandwidth']['value']:.2f} B/clk/SM (variant {f['hierarchy.l1.read_bandwidth'].get('variant', '')}) | {target('hierarchy.l1.read_bandwidth', 126.5)} |
| shared memory (`smem.bandwidth`) | {v('smem.bandwidth', 2)} B/clk/SM | {target('smem.bandwidth', 127.5)} |
| bank conflicts: measured N-way = model (`smem.bank_model_agreement`) | {v('smem.bank_model_agreement', 2)} (fraction of {f['smem.bank_model_agreement']['cases']} cases) | all |
| FFMA (`compute.ffma.throughput`) | {v('compute.ffma.throughput', 2)} FMA/clk/SM ({f['compute.ffma.throughput'].get('percent_of_peak', 0):.2f}% of peak at the measured clock) | >= 97% |
| WGMMA bf16 dense (`hopper.wgmma.bf16.tflops`) | {v('hopper.wgmma.bf16.tflops')} TFLOP/s, accumulators verified | {target('hopper.wgmma.bf16.tflops', 890)} |
| TMA -> WGMMA pipeline, 128x256x64 (`hopper.pipeline`) | {v('hopper.pipeline.128x256x64.best_pipeline_tflops')} TFLOP/s vs wgmma-only {v('hopper.pipeline.128x256x64.wgmma_only_tflops')} ({pl['fraction_of_wgmma_only'] * 100:.1f}%; {pl.get('fraction_of_wgmma_only_per_clock', 0) * 100:.1f}% per SM clock) | within 10% ({'met here' if pl['fraction_of_wgmma_only'] >= 0.9 else 'not met here'}) |
| TMA load (`hopper.tma.load_bandwidth`) | {v('hopper.tma.load_bandwidth')} GB/s | |
| DSMEM latency, cluster of 2 (`hopper.dsmem.latency`) | {v('hopper.dsmem.latency')} cycles | H800: ~180 (Luo et al.) |
| litmus, release/acquire / relaxed without fence | {v('ordering.litmus.release_acquire.stale_reads', 0)} / {v('ordering.litmus.relaxed_no_fence.stale_reads', 0)} stale reads of 100000 | 0 with the right protocol |

Wall time of `gpuprobe characterize`: {r['wall_s']:.1f} s in all (latency {fam('latency.'):.1f} s, cache structure {fam('cache.'):.1f} s,
bandwidth {fam('bandwidth.'):.1f} s, shared memory + compute + timers
{fam('smem.') + fam('compute.') + fam('timer.'):.1f} s, ordering {fam('ordering.'):.1f} s, Hopper {fam('hopper.'):.1f} s).
Why the misses are misses, with the evidence, is in [docs/FAMILIES.md](docs/FAMILIES.md).

### Seed 002's H200 tables beside ours

Seed 002 reports percentages of 4916.7 GB/s (a 6144-bit bus); our card reports a {r['device']['mem_bus_width_bits']}-bit bus,
so our percentages are of {peak:.1f} GB/s. Copy bandwidth counts bytes read + written.

| | seed 002 | gpuprobe |
|---|---|---|
| copy, float | 54.5% (2680 GB/s) | {v('dram.copy_bandwidth.width_4b')} GB/s ({f['dram.copy_bandwidth.width_4b']['percent_of_peak']:.1f}%) |
| copy, float2 | 78.3% (3850 GB/s) | {v('dram.copy_bandwidth.width_8b')} GB/s ({f['dram.copy_bandwidth.width_8b']['percent_of_peak']:.1f}%) |
| copy, float4 | 86.6% (4258 GB/s) | {v('dram.copy_bandwidth.width_16b')} GB/s ({f['dram.copy_bandwidth.width_16b']['percent_of_peak']:.1f}%) |
"""
rows = list(csv.DictReader(open(res / "bandwidth.stride.table.csv")))


def srow(var, s):
    x = [q for q in rows if q["variant"] == var and q["stride_elements"] == str(s)][0]
    return float(x["useful_gb_s_median"]), x["sectors_per_request"]


seed_sec = {1: 4, 2: 8, 3: 12, 4: 16, 8: 32, 16: 32, 32: 32}
seed_bw = {8: "369.9", 16: "264.8", 32: "172.2"}
for s in [1, 2, 3, 4, 8, 16, 32]:
    g, sec = srow("copy", s)
    rd, _ = srow("read", s)
    section += (f"| stride {s}: sectors/request; strided copy | {seed_sec[s]}; "
                f"{seed_bw.get(s, '~1/stride')} | {sec} (model); {g:.1f} GB/s (read-only {rd:.1f}) |\n")
gaps = [100 * (1 - srow("copy", k)[0] / float(seed_bw[k])) for k in (8, 16, 32)]


def bank_cycles(stride):
    e = [x for x in r["experiments"] if x["id"] == "smem.bank_conflicts"][0]
    c = [q for q in e["samples"]["cases"]
         if q["mode"] == "block" and q["word_bytes"] == 4 and q["stride"] == stride][0]
    return c["cycles_per_access"]["median"]


agree = f["smem.bank_model_agreement"]
bank32 = (f"{bank_cycles(32) / bank_cycles(1):.1f}x the stride-1 time, 4-B words (model and "
          f"measurement agree in {agree['agreeing']} of {agree['cases']} cases)")
section += f"""| AoS vs SoA read | AoS ~ read-only stride 3 | AoS {v('dram.layout_aos_bandwidth')} vs SoA {v('dram.layout_soa_bandwidth')} GB/s |
| transpose naive / tiled / padded, vs copy | (figures only) | {v('transpose.naive_bandwidth')} / {v('transpose.tiled_bandwidth')} / {v('transpose.tiled_padded_bandwidth')} vs {v('transpose.copy_bandwidth')} GB/s |
| bank conflicts, stride 32 | 32-way | {bank32} |

Seed 002's strided numbers appear to count useful bytes as ours do (its text does not say); our
strided copies at strides 8-32 stay {min(gaps):.1f}-{max(gaps):.1f}% below its figures on this card, the one row
of its tables we do not match.
"""
section = section.replace("](results/", "](../results/").replace("](docs/", "](")
(root / "docs" / "H200_RESULTS.md").write_text(section)

# The README's sample output: the summary card gpuprobe printed for this result
# (results/h200/summary.txt, written by `gpuprobe summary results/h200/result.json`).
card = res / "summary.txt"
readme_path = root / "README.md"
readme = readme_path.read_text()
begin, end = "<!-- summary:begin -->", "<!-- summary:end -->"
if card.exists() and begin in readme and end in readme:
    block = begin + "\n```text\n" + card.read_text().rstrip("\n") + "\n```\n" + end
    readme = readme[:readme.index(begin)] + block + readme[readme.index(end) + len(end):]
    readme_path.write_text(readme)
