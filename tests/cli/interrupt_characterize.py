#!/usr/bin/env python3
"""characterize on the modelled GPU, interrupted at several moments by several signals: what it
leaves behind is no result.json, or one that parses, says whether it is complete, holds only
whole experiments (each also in experiments/<id>.json), and is complete exactly when it holds
every experiment of an uninterrupted run; `gpuprobe analyze` of it exits 0 (or 2 with one
line), never crashes; and the next run into the same folder succeeds (the dead run's lock is
taken over).

    interrupt_characterize.py <gpuprobe binary>

Exit 0: every case held; 1: a case failed (each printed); 2: bad use."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

MODEL = "model:tiny"


def characterize(gp, out):
    return subprocess.Popen([gp, "--device", MODEL, "characterize", "--quiet", "--out", out],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def ids_of(result):
    return [e.get("id") for e in result.get("experiments", [])]


def check_left(gp, out, full_ids, what):
    """The failures of what an interrupted run left in `out` (empty: it held)."""
    path = os.path.join(out, "result.json")
    if not os.path.exists(path):
        return []
    try:
        with open(path) as f:
            result = json.load(f)
    except ValueError as e:
        return ["%s: result.json does not parse (%s)" % (what, e)]
    fails = []
    complete = result.get("complete")
    ids = ids_of(result)
    if not isinstance(complete, bool):
        fails.append("%s: result.json has no complete flag" % what)
    elif complete and ids != full_ids:
        fails.append("%s: marked complete with %d of %d experiments" % (what, len(ids),
                                                                        len(full_ids)))
    elif not complete and ids != full_ids[:len(ids)]:
        fails.append("%s: incomplete, but its experiments are not a prefix of a full run's"
                     % what)
    for i in ids:
        if not os.path.exists(os.path.join(out, "experiments", i + ".json")):
            fails.append("%s: %s is in result.json but not in experiments/" % (what, i))
    p = subprocess.run([gp, "analyze", path], capture_output=True, text=True, timeout=120)
    if p.returncode < 0:
        fails.append("%s: analyze died of signal %d" % (what, -p.returncode))
    elif p.returncode == 2 and len(p.stderr.strip().splitlines()) != 1:
        fails.append("%s: analyze exit 2 with %d lines" % (what, len(p.stderr.splitlines())))
    elif p.returncode not in (0, 2):
        fails.append("%s: analyze exit %d" % (what, p.returncode))
    return fails


def main():
    if len(sys.argv) != 2:
        print(__doc__.splitlines()[-3], file=sys.stderr)
        return 2
    gp = sys.argv[1]
    work = tempfile.mkdtemp(prefix="gp-interrupt-")
    full = os.path.join(work, "full")
    t0 = time.monotonic()
    if characterize(gp, full).wait(timeout=600) != 0:
        print("FAIL the uninterrupted characterize on %s did not exit 0" % MODEL)
        return 1
    seconds = time.monotonic() - t0
    with open(os.path.join(full, "result.json")) as f:
        full_result = json.load(f)
    full_ids = ids_of(full_result)
    if full_result.get("complete") is not True or len(full_ids) < 3:
        print("FAIL the uninterrupted run is not complete (%d experiments)" % len(full_ids))
        return 1
    cases = [(signal.SIGINT, 0.02), (signal.SIGTERM, 0.15), (signal.SIGKILL, 0.35),
             (signal.SIGHUP, 0.55), (signal.SIGINT, 0.75), (signal.SIGKILL, 0.95)]
    fails = []
    for n, (sig, share) in enumerate(cases):
        out = os.path.join(work, "cut%d" % n)
        what = "%s at %.0f %% (%.2f s)" % (sig.name, 100 * share, share * seconds)
        p = characterize(gp, out)
        time.sleep(share * seconds)
        if p.poll() is None:
            p.send_signal(sig)
        try:
            p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            fails.append("%s: still running 60 s after the signal" % what)
            continue
        fails += check_left(gp, out, full_ids, what)
        left = "no result.json"
        if os.path.exists(os.path.join(out, "result.json")):
            try:
                with open(os.path.join(out, "result.json")) as f:
                    cut = json.load(f)
                left = "%s, %d of %d experiments" % (
                    "complete" if cut.get("complete") else "incomplete", len(ids_of(cut)),
                    len(full_ids))
            except ValueError:
                left = "unparseable"
        again = characterize(gp, out).wait(timeout=600)
        if again != 0:
            fails.append("%s: the next run into the same folder exited %d" % (what, again))
        else:
            with open(os.path.join(out, "result.json")) as f:
                if json.load(f).get("complete") is not True:
                    fails.append("%s: the next run's result is not complete" % what)
        print("ok  " if not fails else "..  ", what, "->", left)
    for f in fails:
        print("FAIL", f)
    subprocess.run(["rm", "-rf", work])
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
