#!/usr/bin/env python3
"""The typed-core counts of issue 28, measured from the sources (docs/ARCHITECTURE.md quotes
them): string reads of samples in src/probes, finding names spelled as strings where
core/finding_names.hpp defines a key, fixed axes of all axis declarations, functions over 150
lines and files over 800 lines in src/.

    tools/house_counts.py [--markdown]

Heuristics, not a parser: a sample read is a `.at("`, `.value("` or `.contains("` call in a
probe source outside the samples' one conversion (files named *_samples.cpp/.hpp are the
conversions and are not counted); a spelled finding name is a string literal equal to a name
core/finding_names.hpp declares, outside that header; an axis declaration is a call of
int_axis / number_axis / string_axis / bool_axis, fixed when wrapped in fixed(...).
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src")
EXTS = (".cpp", ".hpp", ".cu", ".cuh")


def sources(top):
    for dirpath, _, names in os.walk(top):
        for n in sorted(names):
            if n.endswith(EXTS):
                yield os.path.join(dirpath, n)


def sample_reads():
    pattern = re.compile(r'\.(at|value|contains)\("')
    count = 0
    for path in sources(os.path.join(SRC, "probes")):
        if re.search(r"_samples\.(cpp|hpp)$", path):
            continue
        with open(path, errors="replace") as f:
            count += sum(len(pattern.findall(line)) for line in f)
    return count


def declared_names():
    names = set()
    for header in ("finding_names.hpp", "finding_value.hpp"):
        path = os.path.join(SRC, "core", header)
        if os.path.exists(path):
            with open(path) as f:
                names |= set(re.findall(r'FindingKey\s+\w+\s*\{\s*"([^"*]+)"', f.read()))
    return names


def spelled_names(names):
    count = 0
    for path in sources(SRC):
        if path.endswith(("finding_names.hpp", "finding_value.hpp", "finding_names.cpp")):
            continue
        with open(path, errors="replace") as f:
            for line in f:
                count += sum(1 for lit in re.findall(r'"([^"\\]+)"', line) if lit in names)
    return count


def axes():
    decl = re.compile(r"\b(int_axis|number_axis|string_axis|bool_axis)\s*\(")
    fixed = re.compile(r"\bfixed\s*\(\s*(int_axis|number_axis|string_axis|bool_axis)\s*\(")
    total = fixed_count = 0
    for path in sources(os.path.join(SRC, "probes")):
        with open(path, errors="replace") as f:
            text = f.read()
        total += len(decl.findall(text))
        fixed_count += len(fixed.findall(text))
    return fixed_count, total


def long_functions():
    tool = os.path.join(os.path.dirname(ROOT), "shared", "tools", "funclen.py")
    if not os.path.exists(tool):
        return None
    out = subprocess.run([sys.executable, tool, "150", SRC], capture_output=True, text=True).stdout
    return len([l for l in out.splitlines() if l.strip()])


def long_files():
    big = []
    for path in sources(SRC):
        with open(path, errors="replace") as f:
            n = sum(1 for _ in f)
        if n > 800:
            big.append((n, os.path.relpath(path, ROOT)))
    return sorted(big, reverse=True)


def main():
    fixed_count, total = axes()
    funcs = long_functions()
    files = long_files()
    rows = [
        ("string reads of samples in src/probes (outside *_samples conversions)", sample_reads()),
        ("finding names spelled as strings outside core/finding_names.hpp",
         spelled_names(declared_names())),
        ("fixed axes / axis declarations in src/probes", "%d / %d" % (fixed_count, total)),
        ("functions over 150 lines in src/", "?" if funcs is None else funcs),
        ("files over 800 lines in src/",
         "%d%s" % (len(files), (" (" + ", ".join("%s %d" % (p, n) for n, p in files) + ")")
                   if files else "")),
    ]
    markdown = "--markdown" in sys.argv[1:]
    for what, value in rows:
        print(("| %s | %s |" if markdown else "%s: %s") % (what, value))
    return 0


if __name__ == "__main__":
    sys.exit(main())
