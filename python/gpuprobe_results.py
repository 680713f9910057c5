"""Read gpuprobe's JSON output into rows (plain dicts) or a pandas DataFrame.

Standard library only (Python 3.8+); pandas is used when it is installed and asked for.

    import gpuprobe_results as gr
    doc = gr.load("results/h200/result.json")    # a result, fleet, check, repeat or baseline file
    rows = doc.rows()                              # one dict per finding (columns below)
    bw = [r for r in rows if r["finding"] == "dram.read_bandwidth"][0]["value"]
    df = doc.to_dataframe()                        # the same rows as a DataFrame (needs pandas)

`load(path)` reads a file (gzip-compressed or not: the first bytes decide), `loads(text)` a
string (e.g. the stdout of `gpuprobe check --format json`), `read_rows(path, as_dataframe=False)`
both steps at once. What the file is comes from its content, not its name:

- `Result`   result.json (`schema_version` 1 or 2; `gpuprobe characterize`, `run`, `replay`)
- `Fleet`    fleet.json of `gpuprobe fleet merge` / `mpirun gpuprobe fleet` ("gpuprobe.fleet"),
             node_summary.json of `gpuprobe fleet` on one node ("gpuprobe.node")
- `Check`    the output of `gpuprobe check --format json` ("gpuprobe.check")
- `Repeat`   repeat.json of `gpuprobe repeat N`
- `Baseline` a baseline (`baselines/h200.json`, `gpuprobe baseline build`; "gpuprobe.baseline")

Every row has every column of its kind's list below, in that order (None where the file has
no such value); the lists are stable and also available as the module's *_COLUMNS constants.

Result.rows(): one row per finding, in file order (RESULT_COLUMNS)
    source          the file read (or "<string>")
    experiment      the experiment's id, e.g. "bandwidth.read"
    status          the experiment's status: passed, waived or error
    finding         the finding's name, e.g. "dram.read_bandwidth"
    value           the number (a bool, category or mask is coded as a number too)
    unit            e.g. "GB/s", "cycles", "bytes"
    kind            number, bool, category or mask (schema 2's `typed.kind`; schema 1: None)
    text            the value as gpuprobe shows it, e.g. "4582.5", "LRU" (schema 1: None)
    label           a category's or bool's machine name, e.g. "lru" (when given)
    confidence      0..1
    standard_error  in `unit`: the finding's own, else its replicates' (when given)
    value_ns        a latency converted to ns (when given)
    replicates      how many replicate medians stand behind the value (when given)
    method          how the value was obtained, in words
    extra           a dict of the finding's other fields (p5_gb_s, variant, the replicates'
                    object with replicate_medians, ...)
    device_name, device_uuid, git_sha (gpuprobe's), gpuprobe_version, command, started_utc,
    schema_version
Result.experiment_rows(): one row per experiment (EXPERIMENT_COLUMNS): source, experiment,
    status, reason, wall_s, findings, curves, sm_clock_drift_percent, throttled.
Result.curves(): one row per curve (CURVE_COLUMNS): source, experiment, curve, file, columns,
    rows (how many; None when the file holds no rows, as schema 1 results), x, y, x_unit,
    y_unit, title.
Result.curve_rows(experiment, curve=None): the curve's table, one dict per point keyed by its
    columns; from result.json, or from the CSV named by `file` beside it (older results).
Result.environment(): a flat dict of `environment` ("nvml.driver_version", "host.hostname",
    "clocks.sm_clock_mhz", ...). Result.provenance(): tool, build, command, times, device,
    driver and host in one flat dict.

Fleet.rows(): one row per GPU x finding (FLEET_COLUMNS)
    source, fleet_kind ("gpuprobe.fleet" or "gpuprobe.node"), label (the member: its file or
    rank), host, device_name, device_uuid, finding, unit, kind (number, bool, category, mask),
    value, text (bool/category/mask only), fleet_median, fleet_mad (numbers), fleet_value
    (others), relative_deviation_percent, spread, deviation_in_own_spreads, modified_z,
    beyond_own_spread, same_as_fleet (others), outlier
Fleet.member_rows(): one row per GPU (FLEET_MEMBER_COLUMNS): source, label, status (ok,
    excluded, error), reason, host, rank (the MPI rank; `fleet` on one node: the CUDA ordinal),
    device_name, device_uuid, result_path, outlier, outlier_findings (a list),
    baseline_out_of_family, baseline_verdict, baseline_error (the last three after
    `--baseline`).

Check.rows(): one row per finding judged (CHECK_COLUMNS)
    source, gpu_name, gpu_uuid, host, git_sha, baseline (its name), experiment, finding, kind,
    unit, value, text, verdict ("in family" or "out of family"), out_of_family (bool),
    deviation (value - baseline, in `unit`; numbers), deviation_percent, deviation_spreads
    (in combined spreads), baseline_value (the median, or a category's value), baseline_text,
    combined_spread, card_spread, own_spread, run_spread, baseline_cards, hint
Check.verdict, Check.out_of_family, Check.out_of_family_findings: the check's own summary.

Repeat.rows(): one row per finding (REPEAT_COLUMNS): source, finding, unit, runs,
    runs_with_finding, median, run_to_run_relative_spread, max_z (inf where gpuprobe wrote
    "inf"), beyond_stated_spread, judged_by, bound, tightest, values (list, one per run, None
    where a run lacks it), confidences (list)

Baseline.rows(): one row per finding (BASELINE_COLUMNS): source, gpu_model, experiment,
    finding, kind, unit, median, card_spread, run_spread, card_min, card_max, cards, runs,
    run_spread_cards, value, text, label, agree

Bad input (not JSON, not gpuprobe's, a truncated gzip, a field of the wrong type, a version
this reader does not know) raises `ResultsError`, a ValueError, whose message is one line
naming the file and the problem; `NotGpuprobeFile` and `CorruptFile` are its subclasses.
"""

import csv
import gzip
import io
import json
import math
import os
import zlib

__all__ = [
    "ResultsError", "NotGpuprobeFile", "CorruptFile",
    "load", "loads", "read_rows", "to_dataframe", "have_pandas",
    "Result", "Fleet", "Check", "Repeat", "Baseline",
    "RESULT_COLUMNS", "EXPERIMENT_COLUMNS", "CURVE_COLUMNS", "FLEET_COLUMNS",
    "FLEET_MEMBER_COLUMNS", "CHECK_COLUMNS", "REPEAT_COLUMNS", "BASELINE_COLUMNS",
]

RESULT_SCHEMA_VERSIONS = (1, 2)

RESULT_COLUMNS = (
    "source", "experiment", "status", "finding", "value", "unit", "kind", "text", "label",
    "confidence", "standard_error", "value_ns", "replicates", "method", "extra",
    "device_name", "device_uuid", "git_sha", "gpuprobe_version", "command", "started_utc",
    "schema_version",
)
EXPERIMENT_COLUMNS = (
    "source", "experiment", "status", "reason", "wall_s", "findings", "curves",
    "sm_clock_drift_percent", "throttled",
)
CURVE_COLUMNS = (
    "source", "experiment", "curve", "file", "columns", "rows", "x", "y", "x_unit", "y_unit",
    "title",
)
FLEET_COLUMNS = (
    "source", "fleet_kind", "label", "host", "device_name", "device_uuid", "finding", "unit",
    "kind", "value", "text", "fleet_median", "fleet_mad", "fleet_value",
    "relative_deviation_percent", "spread", "deviation_in_own_spreads", "modified_z",
    "beyond_own_spread", "same_as_fleet", "outlier",
)
FLEET_MEMBER_COLUMNS = (
    "source", "label", "status", "reason", "host", "rank", "device_name", "device_uuid",
    "result_path", "outlier", "outlier_findings", "baseline_out_of_family", "baseline_verdict",
    "baseline_error",
)
CHECK_COLUMNS = (
    "source", "gpu_name", "gpu_uuid", "host", "git_sha", "baseline", "experiment", "finding",
    "kind", "unit", "value", "text", "verdict", "out_of_family", "deviation",
    "deviation_percent", "deviation_spreads", "baseline_value", "baseline_text",
    "combined_spread", "card_spread", "own_spread", "run_spread", "baseline_cards", "hint",
)
REPEAT_COLUMNS = (
    "source", "finding", "unit", "runs", "runs_with_finding", "median",
    "run_to_run_relative_spread", "max_z", "beyond_stated_spread", "judged_by", "bound",
    "tightest", "values", "confidences",
)
BASELINE_COLUMNS = (
    "source", "gpu_model", "experiment", "finding", "kind", "unit", "median", "card_spread",
    "run_spread", "card_min", "card_max", "cards", "runs", "run_spread_cards", "value", "text",
    "label", "agree",
)

# The finding fields that have a column of their own in Result.rows(); the rest go to `extra`.
_FINDING_FIELDS = frozenset(
    ("name", "value", "unit", "typed", "confidence", "standard_error", "value_ns", "method"))


class ResultsError(ValueError):
    """A file this reader cannot read; the message is one line naming the file."""

    def __init__(self, source, problem):
        self.source = source
        self.problem = " ".join(str(problem).split())
        super().__init__("%s: %s" % (source, self.problem))


class NotGpuprobeFile(ResultsError):
    """Valid JSON, but not a file gpuprobe writes (or not one this reader knows)."""


class CorruptFile(ResultsError):
    """Not readable as JSON: cut short, not text, a broken gzip stream, or a field of the
    wrong type inside a gpuprobe file."""


# ---------------------------------------------------------------------------------------------
# Loading


def load(path):
    """Read one gpuprobe file (plain or gzip-compressed JSON) and return a Result, Fleet,
    Check, Repeat or Baseline. Raises ResultsError (a ValueError) for anything else."""
    source = os.fspath(path)
    try:
        with open(source, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ResultsError(source, "cannot be read: %s" % (e.strerror or e))
    return _parse(data, source)


def loads(text, source="<string>"):
    """Like load, from a str or bytes holding the JSON (e.g. `gpuprobe check --format json`'s
    stdout)."""
    if isinstance(text, str):
        text = text.encode("utf-8")
    if not isinstance(text, (bytes, bytearray)):
        raise ResultsError(source, "expected str or bytes, got %s" % type(text).__name__)
    return _parse(bytes(text), source)


def read_rows(path, as_dataframe=False):
    """load(path).rows(), or the same as a pandas DataFrame when as_dataframe is true."""
    doc = load(path)
    return doc.to_dataframe() if as_dataframe else doc.rows()


def have_pandas():
    """Whether pandas can be imported here."""
    try:
        import pandas  # noqa: F401
    except ImportError:
        return False
    return True


def to_dataframe(rows, columns=None):
    """A pandas DataFrame of rows (dicts) with the given column order. Raises ImportError,
    saying so, where pandas is not installed (rows() needs nothing but the standard
    library)."""
    try:
        import pandas
    except ImportError:
        raise ImportError("gpuprobe_results: pandas is not installed; use .rows() for plain "
                          "dicts") from None
    return pandas.DataFrame.from_records(list(rows), columns=list(columns) if columns else None)


def _parse(data, source):
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as e:
            raise CorruptFile(source, "broken gzip data (%s)" % (e or type(e).__name__))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise CorruptFile(source, "not UTF-8 text, so not JSON (a binary file?)")
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        raise CorruptFile(source, "empty file, not JSON")
    try:
        doc = json.loads(text, parse_constant=_constant)
    except json.JSONDecodeError as e:
        cut = e.pos >= len(text.rstrip())
        raise CorruptFile(source, "not valid JSON: %s at line %d column %d%s"
                          % (e.msg, e.lineno, e.colno, " (the file ends there: cut short?)"
                             if cut else ""))
    except RecursionError:
        raise CorruptFile(source, "JSON nested too deeply")
    return _wrap(doc, source)


def _constant(name):
    # gpuprobe writes no NaN or Infinity literals; Python's json would accept them.
    return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[name]


def _wrap(doc, source):
    if not isinstance(doc, dict):
        raise NotGpuprobeFile(source, "a JSON %s, not a gpuprobe file (result.json, fleet.json, "
                              "check output, repeat.json or a baseline)" % _json_type(doc))
    kind = doc.get("kind")
    if kind in ("gpuprobe.fleet", "gpuprobe.node"):
        return Fleet(doc, source)
    if kind == "gpuprobe.check":
        return Check(doc, source)
    if kind == "gpuprobe.baseline":
        return Baseline(doc, source)
    if isinstance(kind, str) and kind.startswith("gpuprobe."):
        raise NotGpuprobeFile(source, "a gpuprobe file of kind '%s', which this reader does not "
                              "know" % kind)
    if "experiments" in doc and "schema_version" in doc:
        return Result(doc, source)
    if "judgement" in doc and "findings" in doc and "runs" in doc:
        return Repeat(doc, source)
    if "id" in doc and "status" in doc and "findings" in doc:
        raise NotGpuprobeFile(source, "one experiment's file (experiments/<id>.json), not a "
                              "result.json: load the result.json of its folder")
    if "dram_latency_cycles" in doc and "l1_hit_latency_cycles" in doc:
        raise NotGpuprobeFile(source, "a GPU model (--device model:FILE), not a result: "
                              "results come from running gpuprobe on it")
    if "experiments" in doc and "note" in doc:
        raise NotGpuprobeFile(source, "a test fixture of recorded samples, not a result.json")
    keys = sorted(doc)[:6]
    raise NotGpuprobeFile(source, "not a gpuprobe file: no 'kind' and no result, repeat or "
                          "fleet fields (keys: %s)" % (", ".join(keys) if keys else "none"))


# ---------------------------------------------------------------------------------------------
# Typed access with one-line errors


def _json_type(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return type(v).__name__


_CHECKS = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
}


class _Doc(object):
    """What every kind of file shares: the parsed JSON, where it came from, typed access."""

    kind = ""
    COLUMNS = ()

    def __init__(self, doc, source):
        self.data = doc
        self.source = source

    def __repr__(self):
        return "<gpuprobe_results.%s %s>" % (type(self).__name__, self.source)

    def _get(self, obj, key, want, where, required=True, default=None):
        """obj[key] checked to be of JSON type `want` ("number|null" allows either); a missing
        key is an error when required, else default."""
        if not isinstance(obj, dict):
            raise CorruptFile(self.source, "%s: expected an object, found %s"
                              % (where or "top level", _json_type(obj)))
        if key not in obj:
            if required:
                raise CorruptFile(self.source, "%s has no '%s'" % (where or "top level", key))
            return default
        v = obj[key]
        kinds = want.split("|")
        if v is None and "null" in kinds:
            return None
        if any(_CHECKS[k](v) for k in kinds if k != "null"):
            return v
        path = "%s.%s" % (where, key) if where else key
        raise CorruptFile(self.source, "%s: expected %s, found %s"
                          % (path, " or ".join(kinds), _json_type(v)))

    def _items(self, obj, key, where, required=True):
        """obj[key] as a list of objects."""
        arr = self._get(obj, key, "array", where, required, default=[])
        path = "%s.%s" % (where, key) if where else key
        for i, item in enumerate(arr):
            if not isinstance(item, dict):
                raise CorruptFile(self.source, "%s[%d]: expected an object, found %s"
                                  % (path, i, _json_type(item)))
        return arr

    def _check_version(self, known):
        v = self._get(self.data, "schema_version", "integer", "", required=False, default=1)
        if v not in known:
            raise NotGpuprobeFile(self.source, "%s schema_version %r, which this reader does "
                                  "not know (it reads %s)"
                                  % (self.kind, v, ", ".join(str(k) for k in known)))
        return v

    def rows(self):
        raise NotImplementedError

    def to_dataframe(self):
        """rows() as a pandas DataFrame, columns in the documented order."""
        return to_dataframe(self.rows(), self.COLUMNS)


def _row(columns, values):
    return dict((c, values.get(c)) for c in columns)


def _flatten(obj, prefix, out):
    for k, v in obj.items():
        key = "%s.%s" % (prefix, k) if prefix else str(k)
        if isinstance(v, dict) and v:
            _flatten(v, key, out)
        else:
            out[key] = v
    return out


# ---------------------------------------------------------------------------------------------
# result.json


class Result(_Doc):
    """A result.json: `experiments[]`, each with `findings[]` and `curves[]`."""

    kind = "result"
    COLUMNS = RESULT_COLUMNS

    def __init__(self, doc, source):
        super().__init__(doc, source)
        self.schema_version = self._check_version(RESULT_SCHEMA_VERSIONS)
        self.experiments = self._items(doc, "experiments", "")
        for i, e in enumerate(self.experiments):
            where = "experiments[%d]" % i
            self._get(e, "id", "string", where)
            self._get(e, "status", "string", where)
        self._tool = self._get(doc, "tool", "object", "", required=False, default={})
        self._device = self._get(doc, "device", "object", "", required=False, default={})

    # -- who, when, with what
    @property
    def device_name(self):
        return self._get(self._device, "name", "string|null", "device", required=False)

    @property
    def device_uuid(self):
        return self._get(self._device, "uuid", "string|null", "device", required=False)

    @property
    def git_sha(self):
        return self._get(self._tool, "git_sha", "string|null", "tool", required=False)

    @property
    def started_utc(self):
        return self._get(self.data, "started_utc", "string|null", "", required=False)

    @property
    def complete(self):
        return self._get(self.data, "complete", "boolean|null", "", required=False)

    def environment(self):
        """`environment` as one flat dict: "gpu.name", "nvml.driver_version", "host.hostname",
        "clocks.sm_clock_mhz", ... (lists are kept as lists)."""
        env = self._get(self.data, "environment", "object", "", required=False, default={})
        return _flatten(env, "", {})

    def provenance(self):
        """Where the numbers come from, in one flat dict: gpuprobe's version, git SHA, build
        and argv, the command, times, complete, the device, its driver and the host."""
        env = self.environment()
        out = {
            "source": self.source,
            "schema_version": self.schema_version,
            "command": self.data.get("command"),
            "started_utc": self.data.get("started_utc"),
            "finished_utc": self.data.get("finished_utc"),
            "wall_s": self.data.get("wall_s"),
            "complete": self.data.get("complete"),
        }
        _flatten(self._tool, "tool", out)
        for k in ("name", "uuid", "kind", "compute_capability", "sm_count", "ordinal"):
            out["device." + k] = self._device.get(k)
        out["driver_version"] = env.get("nvml.driver_version")
        out["cuda_runtime_version"] = env.get("cuda.runtime_version")
        out["host"] = env.get("host.hostname")
        return out

    # -- findings
    def rows(self):
        """One dict per finding, RESULT_COLUMNS."""
        common = {
            "source": self.source,
            "device_name": self.device_name,
            "device_uuid": self.device_uuid,
            "git_sha": self.git_sha,
            "gpuprobe_version": self._get(self._tool, "version", "string|null", "tool",
                                          required=False),
            "command": self._get(self.data, "command", "string|null", "", required=False),
            "started_utc": self.started_utc,
            "schema_version": self.schema_version,
        }
        out = []
        for i, e in enumerate(self.experiments):
            ewhere = "experiments[%d]" % i
            for j, f in enumerate(self._items(e, "findings", ewhere, required=False)):
                where = "%s.findings[%d]" % (ewhere, j)
                typed = self._get(f, "typed", "object", where, required=False, default={})
                twhere = where + ".typed"
                row = dict(common)
                row.update({
                    "experiment": e["id"],
                    "status": e["status"],
                    "finding": self._get(f, "name", "string", where),
                    "value": self._get(f, "value", "number", where),
                    "unit": self._get(f, "unit", "string", where, required=False, default=""),
                    "kind": self._get(typed, "kind", "string", twhere, required=False),
                    "text": self._get(typed, "text", "string", twhere, required=False),
                    "label": self._get(typed, "label", "string", twhere, required=False),
                    "confidence": self._get(f, "confidence", "number|null", where,
                                            required=False),
                    "standard_error": self._standard_error(f, where),
                    "value_ns": self._get(f, "value_ns", "number|null", where, required=False),
                    "replicates": self._replicates(f, where),
                    "method": self._get(f, "method", "string|null", where, required=False),
                    "extra": dict((k, v) for k, v in f.items() if k not in _FINDING_FIELDS),
                })
                out.append(_row(RESULT_COLUMNS, row))
        return out

    def _replicates(self, f, where):
        rep = self._get(f, "replicates", "object|number|null", where, required=False)
        if isinstance(rep, dict):
            rep = self._get(rep, "replicates", "number|null", where + ".replicates",
                            required=False)
        return rep

    def _standard_error(self, f, where):
        se = self._get(f, "standard_error", "number|null", where, required=False)
        rep = self._get(f, "replicates", "object|number|null", where, required=False)
        if se is None and isinstance(rep, dict):
            se = self._get(rep, "standard_error", "number|null", where + ".replicates",
                           required=False)
        return se

    def finding(self, name):
        """The row of the finding of that name (the first, should two experiments share it);
        KeyError-free: None when there is none."""
        for r in self.rows():
            if r["finding"] == name:
                return r
        return None

    def experiment_rows(self):
        """One dict per experiment, EXPERIMENT_COLUMNS."""
        out = []
        for i, e in enumerate(self.experiments):
            where = "experiments[%d]" % i
            clocks = self._get(e, "clocks", "object", where, required=False, default={})
            during = clocks.get("during") if isinstance(clocks.get("during"), dict) else {}
            throttled = clocks.get("throttled", during.get("throttled"))
            out.append(_row(EXPERIMENT_COLUMNS, {
                "source": self.source,
                "experiment": e["id"],
                "status": e["status"],
                "reason": self._get(e, "reason", "string|null", where, required=False),
                "wall_s": self._get(e, "wall_s", "number|null", where, required=False),
                "findings": len(self._items(e, "findings", where, required=False)),
                "curves": len(self._items(e, "curves", where, required=False)),
                "sm_clock_drift_percent": self._get(clocks, "sm_clock_drift_percent",
                                                    "number|null", where + ".clocks",
                                                    required=False),
                "throttled": throttled if isinstance(throttled, bool) else None,
            }))
        return out

    # -- curves
    def _curve_list(self):
        for i, e in enumerate(self.experiments):
            where = "experiments[%d]" % i
            for j, c in enumerate(self._items(e, "curves", where, required=False)):
                cwhere = "%s.curves[%d]" % (where, j)
                self._get(c, "name", "string", cwhere)
                yield e["id"], c, cwhere

    def curves(self):
        """One dict per curve, CURVE_COLUMNS."""
        out = []
        for eid, c, where in self._curve_list():
            hints = self._get(c, "hints", "object", where, required=False, default={})
            rows = self._get(c, "rows", "array", where, required=False)
            out.append(_row(CURVE_COLUMNS, {
                "source": self.source,
                "experiment": eid,
                "curve": c["name"],
                "file": self._get(c, "file", "string|null", where, required=False),
                "columns": list(self._get(c, "columns", "array", where, required=False,
                                          default=[])),
                "rows": None if rows is None else len(rows),
                "x": hints.get("x"),
                "y": hints.get("y"),
                "x_unit": hints.get("x_unit"),
                "y_unit": hints.get("y_unit"),
                "title": hints.get("title"),
            }))
        return out

    def curve_rows(self, experiment, curve=None):
        """The table of one curve of `experiment` (the only one, or the one named `curve`), one
        dict per point keyed by the curve's columns. A result without rows in its JSON (schema
        1) is read from the CSV named by the curve's `file` in result.json's folder."""
        found = [(c, w) for eid, c, w in self._curve_list()
                 if eid == experiment and (curve is None or c["name"] == curve)]
        if not found:
            names = [c["name"] for eid, c, w in self._curve_list() if eid == experiment]
            what = "experiment '%s' has no curve%s" % (
                experiment, "" if curve is None else " '%s'" % curve)
            raise ResultsError(self.source, what + (" (it has: %s)" % ", ".join(names)
                                                    if names else ""))
        if len(found) > 1:
            raise ResultsError(self.source, "experiment '%s' has %d curves (%s): name one"
                               % (experiment, len(found),
                                  ", ".join(c["name"] for c, w in found)))
        c, where = found[0]
        columns = self._get(c, "columns", "array", where, required=False, default=[])
        if not all(isinstance(k, str) for k in columns):
            raise CorruptFile(self.source, "%s.columns: expected an array of strings" % where)
        rows = self._get(c, "rows", "array", where, required=False)
        if rows is not None:
            out = []
            for k, r in enumerate(rows):
                if not isinstance(r, list) or len(r) != len(columns):
                    raise CorruptFile(self.source, "%s.rows[%d]: expected an array of %d "
                                      "values (one per column)" % (where, k, len(columns)))
                out.append(dict(zip(columns, r)))
            return out
        name = self._get(c, "file", "string|null", where, required=False)
        csv_path = None
        if name and self.source != "<string>":
            csv_path = os.path.join(os.path.dirname(os.path.abspath(self.source)), name)
        if not csv_path or not os.path.isfile(csv_path):
            raise ResultsError(self.source, "curve '%s' of '%s' has no rows in the file (a "
                               "result recorded before curves carried rows) and its CSV %s is "
                               "not beside it" % (c["name"], experiment, name or "(unnamed)"))
        return _read_csv(csv_path)


def _csv_value(s):
    if s == "":
        return ""
    if s in ("true", "false"):
        return s == "true"
    for conv in (int, float):
        try:
            return conv(s)
        except ValueError:
            pass
    return s


def _read_csv(path):
    try:
        with io.open(path, "r", encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f)
            return [dict((k, _csv_value(v)) for k, v in r.items()) for r in reader]
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise CorruptFile(path, "cannot read the curve's CSV: %s" % e)


# ---------------------------------------------------------------------------------------------
# fleet.json / node_summary.json


class Fleet(_Doc):
    """A fleet report: `members[]` (one per GPU) and `findings[]` (one per finding, with one
    entry per GPU in `values[]`)."""

    kind = "fleet"
    COLUMNS = FLEET_COLUMNS

    def __init__(self, doc, source):
        super().__init__(doc, source)
        self._check_version((1,))
        self.fleet_kind = doc["kind"]
        self.members = self._items(doc, "members", "")
        self.findings = self._items(doc, "findings", "")
        for i, m in enumerate(self.members):
            self._get(m, "label", "string", "members[%d]" % i)

    def _member_info(self):
        info = {}
        for i, m in enumerate(self.members):
            where = "members[%d]" % i
            dev = self._get(m, "device", "object", where, required=False, default={})
            info[m["label"]] = {
                "host": self._get(m, "host", "string|null", where, required=False),
                "device_name": self._get(dev, "name", "string|null", where + ".device",
                                         required=False),
                "device_uuid": self._get(dev, "uuid", "string|null", where + ".device",
                                         required=False),
            }
        return info

    @property
    def baseline(self):
        """The baseline the GPUs were judged against (`fleet merge --baseline`), or None."""
        return self._get(self.data, "baseline", "object", "", required=False)

    def rows(self):
        """One dict per GPU x finding, FLEET_COLUMNS."""
        info = self._member_info()
        out = []
        for i, f in enumerate(self.findings):
            where = "findings[%d]" % i
            name = self._get(f, "name", "string", where)
            kind = self._get(f, "kind", "string", where, required=False, default="number")
            entry = {
                "source": self.source,
                "fleet_kind": self.fleet_kind,
                "finding": name,
                "unit": self._get(f, "unit", "string|null", where, required=False),
                "kind": kind,
                "fleet_median": self._get(f, "fleet_median", "number|null", where,
                                          required=False),
                "fleet_mad": self._get(f, "fleet_mad", "number|null", where, required=False),
                "fleet_value": self._get(f, "fleet_value", "string|null", where,
                                         required=False),
            }
            for j, v in enumerate(self._items(f, "values", where)):
                vwhere = "%s.values[%d]" % (where, j)
                label = self._get(v, "label", "string", vwhere)
                row = dict(entry)
                row.update(info.get(label, {}))
                row["label"] = label
                row["value"] = self._get(v, "value", "number|null", vwhere, required=False)
                row["text"] = self._get(v, "text", "string|null", vwhere, required=False)
                for k in ("relative_deviation_percent", "spread", "deviation_in_own_spreads",
                          "modified_z"):
                    row[k] = self._get(v, k, "number|null", vwhere, required=False)
                for k in ("beyond_own_spread", "same_as_fleet", "outlier"):
                    row[k] = self._get(v, k, "boolean|null", vwhere, required=False)
                out.append(_row(FLEET_COLUMNS, row))
        return out

    def member_rows(self):
        """One dict per GPU, FLEET_MEMBER_COLUMNS."""
        out = []
        for i, m in enumerate(self.members):
            where = "members[%d]" % i
            dev = self._get(m, "device", "object", where, required=False, default={})
            b = self._get(m, "baseline", "object", where, required=False, default={})
            bwhere = where + ".baseline"
            rank = m.get("rank", m.get("cuda_ordinal"))
            out.append(_row(FLEET_MEMBER_COLUMNS, {
                "source": self.source,
                "label": m["label"],
                "status": self._get(m, "status", "string|null", where, required=False),
                "reason": self._get(m, "reason", "string|null", where, required=False),
                "host": self._get(m, "host", "string|null", where, required=False),
                "rank": rank if _CHECKS["integer"](rank) else None,
                "device_name": dev.get("name"),
                "device_uuid": dev.get("uuid"),
                "result_path": self._get(m, "result_path", "string|null", where,
                                         required=False),
                "outlier": self._get(m, "outlier", "boolean|null", where, required=False),
                "outlier_findings": list(self._get(m, "outlier_findings", "array", where,
                                                   required=False, default=[])),
                "baseline_out_of_family": self._get(b, "out_of_family", "boolean|null",
                                                    bwhere, required=False),
                "baseline_verdict": self._get(b, "verdict", "string|null", bwhere,
                                              required=False),
                "baseline_error": self._get(b, "error", "string|null", bwhere,
                                            required=False),
            }))
        return out

    def members_dataframe(self):
        return to_dataframe(self.member_rows(), FLEET_MEMBER_COLUMNS)


# ---------------------------------------------------------------------------------------------
# gpuprobe check --format json


class Check(_Doc):
    """The output of `gpuprobe check --format json`: one judged finding per `findings[]`."""

    kind = "check"
    COLUMNS = CHECK_COLUMNS

    def __init__(self, doc, source):
        super().__init__(doc, source)
        self._check_version((1,))
        self.findings = self._items(doc, "findings", "")
        self.verdict = self._get(doc, "verdict", "string", "")
        self.out_of_family = self._get(doc, "out_of_family", "boolean", "")
        names = self._get(doc, "out_of_family_findings", "array", "", required=False,
                          default=[])
        self.out_of_family_findings = list(names)
        self._result = self._get(doc, "result", "object", "", required=False, default={})
        self._baseline = self._get(doc, "baseline", "object", "", required=False, default={})

    @property
    def baseline_name(self):
        return self._get(self._baseline, "name", "string|null", "baseline", required=False)

    def rows(self):
        """One dict per judged finding, CHECK_COLUMNS."""
        common = {"source": self.source, "baseline": self.baseline_name}
        for col, key in (("gpu_name", "gpu_name"), ("gpu_uuid", "gpu_uuid"), ("host", "host"),
                         ("git_sha", "gpuprobe_git_sha")):
            common[col] = self._get(self._result, key, "string|null", "result", required=False)
        out = []
        for i, f in enumerate(self.findings):
            where = "findings[%d]" % i
            oof = self._get(f, "out_of_family", "boolean", where)
            kind = self._get(f, "kind", "string", where, required=False, default="number")
            number = kind == "number"
            row = dict(common)
            row.update({
                "experiment": self._get(f, "experiment", "string|null", where, required=False),
                "finding": self._get(f, "name", "string", where),
                "kind": kind,
                "unit": self._get(f, "unit", "string|null", where, required=False),
                "value": self._get(f, "value", "number|null", where, required=False),
                "text": self._get(f, "text", "string|null", where, required=False),
                "verdict": "out of family" if oof else "in family",
                "out_of_family": oof,
                "baseline_value": self._get(f, "baseline_median" if number else "baseline_value",
                                            "number|null", where, required=False),
                "baseline_text": self._get(f, "baseline_text", "string|null", where,
                                           required=False),
                "baseline_cards": self._get(f, "baseline_cards", "number|null", where,
                                            required=False),
                "hint": self._get(f, "hint", "string|null", where, required=False),
            })
            for k in ("deviation", "deviation_percent", "deviation_spreads", "combined_spread",
                      "card_spread", "own_spread", "run_spread"):
                row[k] = self._get(f, k, "number|null", where, required=False)
            out.append(_row(CHECK_COLUMNS, row))
        return out


# ---------------------------------------------------------------------------------------------
# repeat.json


class Repeat(_Doc):
    """repeat.json of `gpuprobe repeat N`: each finding's N values and their spread."""

    kind = "repeat"
    COLUMNS = REPEAT_COLUMNS

    def __init__(self, doc, source):
        super().__init__(doc, source)
        self.runs = self._get(doc, "runs", "integer", "")
        self.findings = self._items(doc, "findings", "")
        self.beyond = self._get(doc, "beyond", "integer", "", required=False)

    def rows(self):
        """One dict per finding, REPEAT_COLUMNS."""
        out = []
        for i, f in enumerate(self.findings):
            where = "findings[%d]" % i
            max_z = self._get(f, "max_z", "number|string|null", where, required=False)
            if isinstance(max_z, str):
                if max_z != "inf":
                    raise CorruptFile(self.source, "%s.max_z: expected a number or \"inf\", "
                                      "found \"%s\"" % (where, max_z))
                max_z = math.inf
            row = {
                "source": self.source,
                "runs": self.runs,
                "finding": self._get(f, "name", "string", where),
                "unit": self._get(f, "unit", "string|null", where, required=False),
                "max_z": max_z,
                "beyond_stated_spread": self._get(f, "beyond_stated_spread", "boolean", where),
                "judged_by": self._get(f, "judged_by", "string|null", where, required=False),
                "bound": self._get(f, "bound", "string|null", where, required=False),
                "values": list(self._get(f, "values", "array", where)),
                "confidences": list(self._get(f, "confidences", "array", where,
                                              required=False, default=[])),
            }
            for k in ("runs_with_finding", "median", "run_to_run_relative_spread", "tightest"):
                row[k] = self._get(f, k, "number|null", where, required=False)
            out.append(_row(REPEAT_COLUMNS, row))
        return out


# ---------------------------------------------------------------------------------------------
# baselines/<model>.json


class Baseline(_Doc):
    """A baseline of one GPU model: per finding the median over cards and the spreads."""

    kind = "baseline"
    COLUMNS = BASELINE_COLUMNS

    def __init__(self, doc, source):
        super().__init__(doc, source)
        self._check_version((1,))
        self.gpu_model = self._get(doc, "gpu_model", "string", "")
        self.cards = self._get(doc, "cards", "integer", "", required=False)
        self.runs = self._get(doc, "runs", "integer", "", required=False)
        self.findings = self._items(doc, "findings", "")

    def rows(self):
        """One dict per finding, BASELINE_COLUMNS."""
        out = []
        for i, f in enumerate(self.findings):
            where = "findings[%d]" % i
            row = {
                "source": self.source,
                "gpu_model": self.gpu_model,
                "experiment": self._get(f, "experiment", "string|null", where, required=False),
                "finding": self._get(f, "name", "string", where),
                "kind": self._get(f, "kind", "string", where, required=False, default="number"),
                "unit": self._get(f, "unit", "string|null", where, required=False),
                "text": self._get(f, "text", "string|null", where, required=False),
                "label": self._get(f, "label", "string|null", where, required=False),
            }
            for k in ("median", "card_spread", "run_spread", "card_min", "card_max", "cards",
                      "runs", "run_spread_cards", "value", "agree"):
                row[k] = self._get(f, k, "number|null", where, required=False)
            out.append(_row(BASELINE_COLUMNS, row))
        return out
