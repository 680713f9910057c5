#!/usr/bin/env python3
"""Tests of python/gpuprobe_results.py on the committed results and tests/data/python/.

    python3 tests/python/test_gpuprobe_results.py [--gpuprobe BUILD/gpuprobe] [unittest options]

With --gpuprobe (CTest passes the built binary) the tests also run `gpuprobe check` and
`gpuprobe fleet merge` on a copy of the committed H200 result with DRAM read lowered by 10 %
and read what they print; without it those tests are skipped. Standard library only; the
DataFrame test is skipped where pandas is missing.
"""
import copy
import gzip
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
import gpuprobe_results as gr  # noqa: E402

GPUPROBE = os.environ.get("GPUPROBE_BINARY", "")
if "--gpuprobe" in sys.argv[:-1]:  # taken out before unittest reads the rest
    _i = sys.argv.index("--gpuprobe")
    GPUPROBE = os.path.abspath(sys.argv[_i + 1])
    del sys.argv[_i:_i + 2]
H200 = os.path.join(ROOT, "results", "h200")
RESULT = os.path.join(H200, "result.json")
V1_WITH_CSV = os.path.join(H200, "other_cards", "GPU-378d63f9", "result.json")
V1_GZ = os.path.join(H200, "cache_family", "run1_result.json.gz")
FLEET = os.path.join(H200, "links", "fleet_of_runs", "fleet.json")
REPEAT = os.path.join(H200, "repeat", "repeat.json")
REPLAY = os.path.join(H200, "replay", "result.json")
BASELINE = os.path.join(ROOT, "baselines", "h200.json")
DATA = os.path.join(ROOT, "tests", "data", "python")
CHECK_SLOW = os.path.join(DATA, "check_dram_slow.json")
FLEET_BASELINE = os.path.join(DATA, "fleet_baseline.json")


def raw(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def json_findings(doc):
    return [(e["id"], f) for e in doc["experiments"] for f in e.get("findings", [])]


class TempDir(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="gpuprobe_results_test_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def write(self, name, data):
        path = os.path.join(self.tmp, name)
        with open(path, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode("utf-8"))
        return path


class ResultRows(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.json = raw(RESULT)
        cls.doc = gr.load(RESULT)
        cls.rows = cls.doc.rows()

    def test_kind_and_version(self):
        self.assertIsInstance(self.doc, gr.Result)
        self.assertEqual(self.doc.kind, "result")
        self.assertEqual(self.doc.schema_version, self.json["schema_version"])
        self.assertEqual(self.doc.schema_version, 2)

    def test_one_row_per_finding_in_file_order(self):
        expected = json_findings(self.json)
        self.assertGreater(len(expected), 100)
        self.assertEqual(len(self.rows), len(expected))
        self.assertEqual([(r["experiment"], r["finding"]) for r in self.rows],
                         [(eid, f["name"]) for eid, f in expected])

    def test_columns_are_the_documented_ones_in_order(self):
        for r in self.rows:
            self.assertEqual(tuple(r), gr.RESULT_COLUMNS)
        for name in gr.RESULT_COLUMNS:
            self.assertIn(name, gr.__doc__, "column %s is not documented" % name)

    def test_dram_read_bandwidth(self):
        (eid, f), = [(e, f) for e, f in json_findings(self.json)
                     if f["name"] == "dram.read_bandwidth"]
        (r,) = [r for r in self.rows if r["finding"] == "dram.read_bandwidth"]
        self.assertEqual(r["value"], f["value"])
        self.assertEqual(r["unit"], "GB/s")
        self.assertEqual(r["experiment"], eid)
        self.assertEqual(r["experiment"], "bandwidth.read")
        self.assertEqual(r["status"], "passed")
        self.assertEqual(r["confidence"], f["confidence"])
        self.assertEqual(r["method"], f["method"])
        self.assertEqual(r["kind"], "number")
        self.assertEqual(r["text"], f["typed"]["text"])
        self.assertEqual(r["extra"]["p5_gb_s"], f["p5_gb_s"])
        self.assertEqual(r["device_name"], "NVIDIA H200")
        self.assertEqual(r["device_uuid"], self.json["device"]["uuid"])
        self.assertEqual(r["git_sha"], self.json["tool"]["git_sha"])
        self.assertEqual(r["started_utc"], self.json["started_utc"])
        self.assertEqual(self.doc.finding("dram.read_bandwidth"), r)
        self.assertIsNone(self.doc.finding("no.such.finding"))

    def test_standard_error_and_replicates(self):
        with_se = [(e, f) for e, f in json_findings(self.json) if "standard_error" in f]
        with_rep = [(e, f) for e, f in json_findings(self.json)
                    if isinstance(f.get("replicates"), dict)]
        self.assertTrue(with_se and with_rep)
        by_name = dict((r["finding"], r) for r in self.rows)
        for _, f in with_se:
            self.assertEqual(by_name[f["name"]]["standard_error"], f["standard_error"])
        for _, f in with_rep:
            r = by_name[f["name"]]
            self.assertEqual(r["replicates"], f["replicates"]["replicates"])
            self.assertEqual(r["standard_error"],
                             f.get("standard_error", f["replicates"]["standard_error"]))
        no_se = [r for r in self.rows if r["standard_error"] is None]
        self.assertTrue(no_se, "findings without a standard error keep None")

    def test_typed_kinds(self):
        kinds = set(r["kind"] for r in self.rows)
        self.assertTrue({"number", "bool", "category", "mask"} <= kinds, kinds)
        (mask,) = [r for r in self.rows if r["finding"] == "l2.partition.hash_mask"]
        self.assertEqual(mask["kind"], "mask")
        self.assertEqual(mask["text"], "0xab000")
        self.assertEqual(int(mask["value"]), 0xab000)

    def test_experiment_rows(self):
        rows = self.doc.experiment_rows()
        self.assertEqual(len(rows), len(self.json["experiments"]))
        self.assertEqual(sum(r["findings"] for r in rows), len(self.rows))
        (peer,) = [r for r in rows if r["experiment"] == "link.peer"]
        self.assertEqual(peer["status"], "waived")
        self.assertIn("two or more GPUs", peer["reason"])
        self.assertEqual(sum(r["status"] == "passed" for r in rows),
                         self.json["summary"]["experiments"] - self.json["summary"]["waived"]
                         - self.json["summary"]["errors"])

    def test_curves_from_the_json(self):
        curves = self.doc.curves()
        self.assertEqual(len(curves),
                         sum(len(e.get("curves", [])) for e in self.json["experiments"]))
        (sweep,) = [c for c in curves if c["experiment"] == "latency.sweep"]
        (jc,) = [e for e in self.json["experiments"] if e["id"] == "latency.sweep"][0]["curves"]
        self.assertEqual(sweep["rows"], len(jc["rows"]))
        self.assertEqual(sweep["x"], "working_set_bytes")
        points = self.doc.curve_rows("latency.sweep")
        self.assertEqual(len(points), len(jc["rows"]))
        self.assertEqual(list(points[0]), jc["columns"])
        self.assertEqual(points[-1]["cycles_median"],
                         jc["rows"][-1][jc["columns"].index("cycles_median")])
        with self.assertRaises(gr.ResultsError) as e:
            self.doc.curve_rows("latency.sweep", "nonesuch")
        self.assertIn("curve", str(e.exception))
        with self.assertRaises(gr.ResultsError):
            self.doc.curve_rows("no.such.experiment")

    def test_environment_and_provenance(self):
        env = self.doc.environment()
        self.assertEqual(env["nvml.driver_version"],
                         self.json["environment"]["nvml"]["driver_version"])
        self.assertEqual(env["host.hostname"], self.json["environment"]["host"]["hostname"])
        self.assertEqual(env["gpu.uuid"], self.json["device"]["uuid"])
        p = self.doc.provenance()
        self.assertEqual(p["tool.git_sha"], self.json["tool"]["git_sha"])
        self.assertEqual(p["tool.build.build_type"], self.json["tool"]["build"]["build_type"])
        self.assertEqual(p["driver_version"], env["nvml.driver_version"])
        self.assertEqual(p["device.uuid"], self.json["device"]["uuid"])
        self.assertEqual(p["command"], "characterize")
        self.assertIs(p["complete"], True)


class OlderAndOtherResults(unittest.TestCase):
    def test_schema_v1_with_csv_curves(self):
        j = raw(V1_WITH_CSV)
        self.assertEqual(j["schema_version"], 1)
        doc = gr.load(V1_WITH_CSV)
        self.assertEqual(doc.schema_version, 1)
        rows = doc.rows()
        self.assertEqual(len(rows), len(json_findings(j)))
        self.assertTrue(all(r["kind"] is None and r["text"] is None for r in rows))
        (r,) = [r for r in rows if r["finding"] == "dram.read_bandwidth"]
        self.assertEqual(r["unit"], "GB/s")
        self.assertEqual(r["device_uuid"], j["device"]["uuid"])
        # Schema 1 curves carry no rows: read from the CSV beside result.json.
        (c,) = [c for c in doc.curves() if c["experiment"] == "latency.sweep"]
        self.assertIsNone(c["rows"])
        points = doc.curve_rows("latency.sweep")
        with open(os.path.join(os.path.dirname(V1_WITH_CSV), c["file"])) as f:
            lines = [line for line in f.read().splitlines() if line]
        self.assertEqual(len(points), len(lines) - 1)
        self.assertEqual(list(points[0]), lines[0].split(","))
        self.assertIsInstance(points[0]["working_set_bytes"], int)
        self.assertIsInstance(points[0]["cycles_median"], float)

    def test_schema_v1_gzipped(self):
        j = raw(V1_GZ)
        self.assertEqual(j["schema_version"], 1)
        doc = gr.load(V1_GZ)
        self.assertEqual(len(doc.rows()), len(json_findings(j)))
        self.assertEqual(doc.git_sha, j["tool"]["git_sha"])
        # No CSV beside a .json.gz: said, in one line.
        with self.assertRaises(gr.ResultsError) as e:
            doc.curve_rows("latency.sweep")
        self.assertIn("CSV", str(e.exception))
        self.assertNotIn("\n", str(e.exception))

    def test_v1_and_v2_agree_on_a_stable_finding(self):
        old = gr.load(V1_GZ).finding("l1.hit_latency")
        new = gr.load(RESULT).finding("l1.hit_latency")
        self.assertEqual(old["value"], new["value"])
        self.assertEqual(old["unit"], new["unit"])

    def test_replay_result(self):
        j = raw(REPLAY)
        doc = gr.load(REPLAY)
        self.assertEqual(len(doc.rows()), len(json_findings(j)))
        self.assertEqual(doc.rows()[0]["command"], "replay")

    def test_every_committed_result_reads(self):
        n = 0
        for d, _, files in os.walk(os.path.join(ROOT, "results")):
            for name in files:
                if not (name.endswith("result.json") or name.endswith("result.json.gz")):
                    continue
                path = os.path.join(d, name)
                doc = gr.load(path)
                self.assertIsInstance(doc, gr.Result, path)
                self.assertEqual(len(doc.rows()), len(json_findings(raw(path))), path)
                doc.experiment_rows()
                doc.curves()
                n += 1
        self.assertGreaterEqual(n, 10)


class FleetRows(unittest.TestCase):
    def test_committed_fleet(self):
        j = raw(FLEET)
        doc = gr.load(FLEET)
        self.assertIsInstance(doc, gr.Fleet)
        rows = doc.rows()
        self.assertEqual(len(rows), sum(len(f["values"]) for f in j["findings"]))
        labels = set(m["label"] for m in j["members"])
        self.assertEqual(set(r["label"] for r in rows), labels)
        # One row per GPU x finding.
        self.assertEqual(len(set((r["label"], r["finding"]) for r in rows)), len(rows))
        for r in rows:
            self.assertEqual(tuple(r), gr.FLEET_COLUMNS)
            self.assertEqual(r["device_name"], "NVIDIA H200")
        # The rows flagged as outliers are the report's outliers.
        self.assertEqual(set((r["label"], r["finding"]) for r in rows if r["outlier"]),
                         set((o["label"], o["finding"]) for o in j["outliers"]))
        (first,) = [f for f in j["findings"] if f["name"] == "dram.read_bandwidth"]
        mine = [r for r in rows if r["finding"] == "dram.read_bandwidth"]
        self.assertEqual(sorted(r["value"] for r in mine),
                         sorted(v["value"] for v in first["values"]))
        self.assertTrue(all(r["fleet_median"] == first["fleet_median"] for r in mine))
        members = doc.member_rows()
        self.assertEqual([m["label"] for m in members], [m["label"] for m in j["members"]])
        self.assertEqual([m["outlier_findings"] for m in members],
                         [m["outlier_findings"] for m in j["members"]])

    def test_fleet_against_a_baseline(self):
        doc = gr.load(FLEET_BASELINE)
        members = dict((m["label"], m) for m in doc.member_rows())
        self.assertIs(members["card_slow.json"]["baseline_out_of_family"], True)
        self.assertIn("dram.read_bandwidth", members["card_slow.json"]["baseline_verdict"])
        self.assertIs(members["card_a.json"]["baseline_out_of_family"], False)
        self.assertEqual(doc.baseline["name"], "h200")
        rows = doc.rows()
        self.assertEqual(len(rows), 3 * 6)
        (slow,) = [r for r in rows
                   if r["label"] == "card_slow.json" and r["finding"] == "dram.read_bandwidth"]
        self.assertIs(slow["outlier"], True)
        self.assertLess(slow["relative_deviation_percent"], -5)
        (cat,) = [r for r in rows
                  if r["label"] == "card_a.json" and r["finding"] == "cache.l1.replacement"]
        self.assertEqual((cat["kind"], cat["text"], cat["fleet_value"], cat["same_as_fleet"]),
                         ("category", "LRU", "LRU", True))
        self.assertIsNone(cat["fleet_mad"])


    def test_node_summary(self):
        # node_summary.json of `gpuprobe fleet` is the same report with kind gpuprobe.node and
        # members {label: gpuN, cuda_ordinal: N} (src/cli/fleet.cpp).
        j = raw(FLEET_BASELINE)
        j["kind"] = "gpuprobe.node"
        for i, m in enumerate(j["members"]):
            m["cuda_ordinal"] = i
            m["host"] = "node07"
        doc = gr.loads(json.dumps(j))
        self.assertIsInstance(doc, gr.Fleet)
        self.assertEqual([m["rank"] for m in doc.member_rows()], [0, 1, 2])
        rows = doc.rows()
        self.assertTrue(all(r["fleet_kind"] == "gpuprobe.node" and r["host"] == "node07"
                            for r in rows))


class CheckRows(unittest.TestCase):
    def test_committed_check_of_the_lowered_copy(self):
        j = raw(CHECK_SLOW)
        doc = gr.load(CHECK_SLOW)
        self.assertIsInstance(doc, gr.Check)
        rows = doc.rows()
        self.assertEqual(len(rows), len(j["findings"]))
        self.assertTrue(doc.out_of_family)
        self.assertEqual(doc.out_of_family_findings, ["dram.read_bandwidth"])
        self.assertIn("dram.read_bandwidth", doc.verdict)
        out = [r for r in rows if r["out_of_family"]]
        self.assertEqual([r["finding"] for r in out], ["dram.read_bandwidth"])
        r = out[0]
        self.assertEqual(r["verdict"], "out of family")
        self.assertEqual(r["unit"], "GB/s")
        self.assertTrue(-11 < r["deviation_percent"] < -9, r["deviation_percent"])
        self.assertLess(r["deviation_spreads"], -3)
        self.assertAlmostEqual(r["deviation"], r["value"] - r["baseline_value"], places=6)
        self.assertEqual(r["gpu_uuid"], j["result"]["gpu_uuid"])
        self.assertEqual(r["baseline"], "h200")
        for r in rows:
            self.assertEqual(tuple(r), gr.CHECK_COLUMNS)
            if r["finding"] != "dram.read_bandwidth":
                self.assertEqual(r["verdict"], "in family")
        (mask,) = [r for r in rows if r["kind"] == "mask"]
        self.assertEqual((mask["text"], mask["baseline_text"]), ("0xab000", "0xab000"))
        self.assertIsNone(mask["deviation"])


class RepeatAndBaselineRows(unittest.TestCase):
    def test_repeat(self):
        j = raw(REPEAT)
        doc = gr.load(REPEAT)
        self.assertIsInstance(doc, gr.Repeat)
        rows = doc.rows()
        self.assertEqual(len(rows), len(j["findings"]))
        self.assertEqual(doc.runs, 3)
        self.assertTrue(all(len(r["values"]) == 3 and r["runs"] == 3 for r in rows))
        self.assertEqual(sum(r["beyond_stated_spread"] for r in rows), j["beyond"])
        (r,) = [r for r in rows if r["finding"] == "dram.read_bandwidth"]
        self.assertEqual(r["unit"], "GB/s")
        # gpuprobe writes an infinite z as "inf".
        j2 = copy.deepcopy(j)
        j2["findings"][0]["max_z"] = "inf"
        self.assertEqual(gr.loads(json.dumps(j2)).rows()[0]["max_z"], math.inf)

    def test_baseline(self):
        j = raw(BASELINE)
        doc = gr.load(BASELINE)
        self.assertIsInstance(doc, gr.Baseline)
        rows = doc.rows()
        self.assertEqual(len(rows), len(j["findings"]))
        self.assertEqual(doc.gpu_model, "NVIDIA H200")
        self.assertEqual(doc.cards, j["cards"])
        (r,) = [r for r in rows if r["finding"] == "dram.read_bandwidth"]
        (f,) = [f for f in j["findings"] if f["name"] == "dram.read_bandwidth"]
        self.assertEqual((r["median"], r["card_spread"], r["unit"]),
                         (f["median"], f["card_spread"], "GB/s"))
        (c,) = [r for r in rows if r["finding"] == "cache.l1.replacement"]
        self.assertEqual((c["kind"], c["text"]), ("category", "LRU"))


class BadInput(TempDir):
    def assert_one_line(self, exc_type, path, *words):
        with self.assertRaises(exc_type) as e:
            gr.load(path).rows()
        msg = str(e.exception)
        self.assertIsInstance(e.exception, ValueError)
        self.assertNotIn("\n", msg)
        self.assertIn(path, msg)
        for w in words:
            self.assertIn(w, msg)
        return msg

    def test_corrupt_json(self):
        with open(RESULT, "rb") as f:
            head = f.read(5000)
        self.assert_one_line(gr.CorruptFile, self.write("cut.json", head), "cut short")
        self.assert_one_line(gr.CorruptFile, self.write("empty.json", b""), "empty")
        self.assert_one_line(gr.CorruptFile, self.write("text.json", "gpuprobe\n"), "JSON")
        self.assert_one_line(gr.CorruptFile, self.write("bin.json", b"\x00\xff\xfe\x80" * 8),
                             "not UTF-8")

    def test_corrupt_gzip(self):
        data = gzip.compress(b'{"schema_version": 2, "experiments": []}')
        self.assert_one_line(gr.CorruptFile, self.write("cut.json.gz", data[:-12]), "gzip")
        # Decided by content, not name: a gzip stream called .json reads.
        ok = self.write("named.json", data)
        self.assertEqual(gr.load(ok).rows(), [])

    def test_not_gpuprobe(self):
        self.assert_one_line(gr.NotGpuprobeFile, self.write("list.json", "[1, 2]"), "array")
        self.assert_one_line(gr.NotGpuprobeFile, self.write("obj.json", '{"a": 1}'),
                             "not a gpuprobe file")
        self.assert_one_line(gr.NotGpuprobeFile, self.write("kind.json", '{"kind": "gpuprobe.x"}'),
                             "gpuprobe.x")
        self.assert_one_line(gr.NotGpuprobeFile,
                             os.path.join(ROOT, "tests", "data", "fleet", "h200_seed201.json"),
                             "model")
        self.assert_one_line(gr.NotGpuprobeFile,
                             os.path.join(H200, "links", "gpu0", "experiments", "link.host.json"),
                             "one experiment")
        self.assert_one_line(gr.ResultsError, os.path.join(self.tmp, "missing.json"),
                             "cannot be read")

    def test_unknown_versions(self):
        j = raw(V1_GZ)
        j["schema_version"] = 99
        self.assert_one_line(gr.NotGpuprobeFile, self.write("v99.json", json.dumps(j)), "99")
        c = raw(CHECK_SLOW)
        c["schema_version"] = 7
        self.assert_one_line(gr.NotGpuprobeFile, self.write("c7.json", json.dumps(c)), "check")

    def test_wrong_types_are_named(self):
        j = raw(V1_GZ)
        j["experiments"][0]["findings"][0]["value"] = "fast"
        self.assert_one_line(gr.CorruptFile, self.write("t1.json", json.dumps(j)),
                             "experiments[0].findings[0].value", "number", "string")
        j = raw(V1_GZ)
        j["experiments"][1]["findings"] = {"a": 1}
        self.assert_one_line(gr.CorruptFile, self.write("t2.json", json.dumps(j)),
                             "experiments[1].findings")
        j = raw(V1_GZ)
        j["experiments"] = "none"
        self.assert_one_line(gr.CorruptFile, self.write("t3.json", json.dumps(j)), "experiments")
        c = raw(CHECK_SLOW)
        del c["findings"][2]["out_of_family"]
        self.assert_one_line(gr.CorruptFile, self.write("t4.json", json.dumps(c)),
                             "findings[2]", "out_of_family")

    def test_loads_bad_input(self):
        with self.assertRaises(gr.CorruptFile) as e:
            gr.loads('{"kind": ')
        self.assertIn("<string>", str(e.exception))
        with self.assertRaises(gr.ResultsError):
            gr.loads(12)


class Mutations(unittest.TestCase):
    """Every value of a file replaced by each JSON type, and keys deleted: every accessor
    either works or raises ResultsError, never a KeyError, TypeError or AttributeError."""

    REPLACEMENTS = (None, "x", [], {}, 1.5, True, [1], {"a": None})
    SKIP = ("samples", "statistics", "kernels", "protocol", "parameters", "method", "sources",
            "conditions", "judgement", "rule", "compatibility")

    def paths(self, node, prefix=()):
        if isinstance(node, dict):
            items = [(k, v) for k, v in node.items() if k not in self.SKIP]
        elif isinstance(node, list):
            items = list(enumerate(node))[:3]
        else:
            return
        for k, v in items:
            yield prefix + (k,)
            for p in self.paths(v, prefix + (k,)):
                yield p

    def exercise(self, doc):
        doc.rows()
        for name in ("experiment_rows", "curves", "environment", "provenance", "member_rows"):
            if hasattr(doc, name):
                getattr(doc, name)()
        if isinstance(doc, gr.Result):
            for c in doc.curves():
                try:
                    doc.curve_rows(c["experiment"], c["curve"])
                except gr.ResultsError:
                    pass

    def mutate_all(self, data, source, sample):
        paths = list(self.paths(data))
        random.Random(26).shuffle(paths)
        tried = 0
        for path in paths[:sample]:
            parent = data
            for k in path[:-1]:
                parent = parent[k]
            key = path[-1]
            saved = parent[key]
            variants = list(self.REPLACEMENTS) + ["delete"]
            for v in variants:
                if v == "delete":
                    if not isinstance(parent, dict):
                        continue
                    del parent[key]
                else:
                    parent[key] = copy.deepcopy(v)
                try:
                    self.exercise(gr._wrap(data, source))
                except gr.ResultsError as e:
                    self.assertNotIn("\n", str(e))
                except Exception as e:  # noqa: BLE001
                    self.fail("%s at %s = %r: %s: %s"
                              % (source, "/".join(map(str, path)), v, type(e).__name__, e))
                finally:
                    parent[key] = saved
                tried += 1
        self.assertGreater(tried, 100)

    def test_result(self):
        self.mutate_all(raw(REPLAY), "replay", 400)

    def test_result_v1(self):
        j = raw(V1_GZ)
        j["experiments"] = j["experiments"][:3]
        self.mutate_all(j, "v1", 300)

    def test_check(self):
        self.mutate_all(raw(CHECK_SLOW), "check", 400)

    def test_fleet(self):
        self.mutate_all(raw(FLEET_BASELINE), "fleet", 400)

    def test_repeat(self):
        j = raw(REPEAT)
        j["findings"] = j["findings"][:5]
        self.mutate_all(j, "repeat", 400)

    def test_baseline(self):
        j = raw(BASELINE)
        j["findings"] = j["findings"][:3] + [f for f in j["findings"] if "label" in f][:2]
        self.mutate_all(j, "baseline", 400)


class DataFrames(unittest.TestCase):
    @unittest.skipUnless(gr.have_pandas(), "pandas is not installed")
    def test_dataframes(self):
        df = gr.read_rows(RESULT, as_dataframe=True)
        self.assertEqual(list(df.columns), list(gr.RESULT_COLUMNS))
        self.assertEqual(len(df), len(gr.load(RESULT).rows()))
        v = df.loc[df["finding"] == "dram.read_bandwidth", "value"].iloc[0]
        self.assertEqual(v, gr.load(RESULT).finding("dram.read_bandwidth")["value"])
        self.assertEqual(list(gr.load(CHECK_SLOW).to_dataframe().columns),
                         list(gr.CHECK_COLUMNS))
        self.assertEqual(len(gr.load(FLEET).to_dataframe()), len(gr.load(FLEET).rows()))

    @unittest.skipIf(gr.have_pandas(), "pandas is installed")
    def test_without_pandas_rows_still_work(self):
        with self.assertRaises(ImportError) as e:
            gr.load(CHECK_SLOW).to_dataframe()
        self.assertIn("rows()", str(e.exception))
        self.assertEqual(len(gr.read_rows(CHECK_SLOW)), 6)


@unittest.skipUnless(GPUPROBE, "no gpuprobe binary given (--gpuprobe PATH)")
class WithTheBinary(TempDir):
    def lowered_copy(self, name="slow.json"):
        j = raw(RESULT)
        n = 0
        for e in j["experiments"]:
            for f in e.get("findings", []):
                if f["name"] == "dram.read_bandwidth":
                    f["value"] *= 0.9
                    n += 1
        self.assertEqual(n, 1)
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            json.dump(j, f)
        return path, j

    def gp(self, *args):
        p = subprocess.run([GPUPROBE] + list(args), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True, cwd=self.tmp,
                           timeout=120)
        return p.returncode, p.stdout, p.stderr

    def test_check_out_of_family(self):
        path, j = self.lowered_copy()
        rc, out, err = self.gp("check", path, "--format", "json")
        self.assertEqual(rc, 3, err)
        doc = gr.loads(out)
        self.assertIsInstance(doc, gr.Check)
        rows = doc.rows()
        self.assertEqual(len(rows), json.loads(out)["summary"]["shared"])
        self.assertEqual([r["finding"] for r in rows if r["out_of_family"]],
                         ["dram.read_bandwidth"])
        (r,) = [r for r in rows if r["finding"] == "dram.read_bandwidth"]
        self.assertEqual(r["verdict"], "out of family")
        (f,) = [f for _, f in json_findings(j) if f["name"] == "dram.read_bandwidth"]
        self.assertEqual(r["value"], f["value"])
        self.assertTrue(-11 < r["deviation_percent"] < -9, r["deviation_percent"])
        # The same read from a file.
        saved = os.path.join(self.tmp, "check.json")
        with open(saved, "w") as fh:
            fh.write(out)
        self.assertEqual(gr.load(saved).rows()[0]["source"], saved)

    def test_check_in_family(self):
        rc, out, err = self.gp("check", RESULT, "--format", "json")
        self.assertEqual(rc, 0, err)
        doc = gr.loads(out)
        self.assertFalse(doc.out_of_family)
        rows = doc.rows()
        self.assertEqual(len(rows), len(json_findings(raw(RESULT))))
        self.assertTrue(all(r["verdict"] == "in family" for r in rows))

    def test_fleet_merge_with_baseline(self):
        slow, _ = self.lowered_copy("card_slow.json")
        shutil.copy(RESULT, os.path.join(self.tmp, "card_a.json"))
        rc, out, err = self.gp("fleet", "merge", "card_a.json", "card_slow.json", "--out", "fl",
                               "--baseline", "h200")
        self.assertEqual(rc, 3, out + err)
        doc = gr.load(os.path.join(self.tmp, "fl", "fleet.json"))
        members = dict((m["label"], m) for m in doc.member_rows())
        self.assertEqual(set(members), {"card_a.json", "card_slow.json"})
        self.assertIs(members["card_slow.json"]["baseline_out_of_family"], True)
        self.assertIs(members["card_a.json"]["baseline_out_of_family"], False)
        rows = doc.rows()
        self.assertEqual(len(rows), 2 * len(json_findings(raw(RESULT))))
        (r,) = [r for r in rows
                if r["label"] == "card_slow.json" and r["finding"] == "dram.read_bandwidth"]
        self.assertLess(r["relative_deviation_percent"], -4)


if __name__ == "__main__":
    unittest.main()
