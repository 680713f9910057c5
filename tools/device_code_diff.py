#!/usr/bin/env python3
"""Compares the sm_90a machine code of every kernel between a git revision and the working tree,
without a GPU: both trees' .cu files are compiled to cubins, and the code section of each kernel
(named by its demangled name, in which the anonymous namespace carries no per-file hash) is compared byte by
byte. Use it to show that a refactor did not change what runs on the GPU.

Kernels are matched by their demangled name over the whole tree, so a kernel that moved to
another .cu file is still compared with its old self. A refactor that renames a type in a
kernel's signature (not its code) passes --rename OLD=NEW (applied to the old tree's demangled
names, as plain text; repeatable).

Usage: tools/device_code_diff.py <revision> [--rename OLD=NEW ...]
       (exit 0: identical; 1: some kernel differs or is missing)
"""
import os
import re
import struct
import subprocess
import sys
import tempfile

NVCC = os.environ.get("NVCC", "nvcc")


def code_sections(path):
    d = open(path, "rb").read()
    shoff = struct.unpack_from("<Q", d, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3A)
    hdrs = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize) for i in range(shnum)]
    strings = hdrs[shstrndx][4]
    out = {}
    for h in hdrs:
        name = d[strings + h[0]:d.index(b"\0", strings + h[0])].decode()
        if name.startswith(".text."):
            out[name] = d[h[4]:h[4] + h[5]]
    return out


def cubins(tree, out_dir, generated):
    sources = sorted(os.path.relpath(os.path.join(r, f), tree)
                     for r, _, fs in os.walk(os.path.join(tree, "src")) for f in fs if f.endswith(".cu"))
    result = {}
    for src in sources:
        cubin = os.path.join(out_dir, src.replace("/", "_") + ".cubin")
        subprocess.run([NVCC, "-std=c++17", "-O3", "-Isrc", "-I" + generated, "-gencode",
                        "arch=compute_90a,code=sm_90a", "-cubin", "-o", cubin, src],
                       cwd=tree, check=True, stdout=subprocess.DEVNULL)
        result[src] = code_sections(cubin)
    return result


def demangle(names):
    if not names:
        return {}
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True,
                         check=True).stdout.split("\n")
    return dict(zip(names, out))


def flatten(per_file, renames):
    """{demangled name (renamed): (source, code)} over every file; a name defined in two files
    keeps its file in the key."""
    raw = [(src, k[len(".text."):], code) for src, ks in per_file.items() for k, code in ks.items()]
    names = demangle([k for _, k, _ in raw])
    out = {}
    for src, k, code in raw:
        name = names.get(k, k)
        if name == k:  # not demangled: at least drop the anonymous namespace's per-file hash
            name = re.sub(r"\d+_GLOBAL__N__[0-9a-f]+_\d+_[A-Za-z0-9_]+?_cu_[0-9a-f]+", "ANON", k)
        for old, new in renames:
            name = name.replace(old, new)
        key = name if name not in out else f"{name} @ {src}"
        out[key] = (src, code)
    return out


def main(rev, renames=()):
    root = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True,
                          check=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        old_tree = os.path.join(tmp, "old")
        subprocess.run(["git", "worktree", "add", "-q", "--detach", old_tree, rev], cwd=root, check=True)
        try:
            generated = os.path.join(tmp, "generated")
            os.makedirs(generated)
            with open(os.path.join(generated, "build_info.hpp"), "w") as f:  # a stand-in: kernels
                f.write("#pragma once\n")                                     # do not read it
            os.makedirs(os.path.join(tmp, "a"))
            os.makedirs(os.path.join(tmp, "b"))
            old = cubins(old_tree, os.path.join(tmp, "a"), generated)
            new = cubins(root, os.path.join(tmp, "b"), generated)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", old_tree], cwd=root, check=True)
    for src in sorted(set(old) | set(new)):
        print(f"{src}: {len(old.get(src, {}))} kernels before, {len(new.get(src, {}))} now")
    a, b = flatten(old, renames), flatten(new, {})
    differs = sorted(k for k in set(a) | set(b) if k in a and k in b and a[k][1] != b[k][1])
    missing = sorted(k for k in set(a) | set(b) if (k in a) != (k in b))
    moved = sum(1 for k in set(a) & set(b) if a[k][0] != b[k][0])
    print(f"{len(b)} kernels now, {len(a)} before; {moved} moved to another file; "
          f"{len(differs)} differ; {len(missing)} only on one side")
    for k in differs[:20]:
        print(f"  differs: {k} ({a[k][0]} -> {b[k][0]})")
    for k in missing[:20]:
        print(f"  only {'before' if k in a else 'now'}: {k}")
    return 1 if differs or missing else 0


if __name__ == "__main__":
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        sys.exit(__doc__)
    pairs = []
    i = 1
    while i < len(args):
        if args[i] != "--rename" or i + 1 >= len(args) or "=" not in args[i + 1]:
            sys.exit(__doc__)
        pairs.append(tuple(args[i + 1].split("=", 1)))
        i += 2
    sys.exit(main(args[0], pairs))
