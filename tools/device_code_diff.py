#!/usr/bin/env python3
"""Compares the sm_90a machine code of every kernel between a git revision and the working tree,
without a GPU: both trees' .cu files are compiled to cubins, and the code section of each kernel
(named without the anonymous-namespace hash, which depends on the file path) is compared byte by
byte. Use it to show that a refactor did not change what runs on the GPU.

Usage: tools/device_code_diff.py <revision>    (exit 0: identical; 1: some kernel differs)
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
            name = re.sub(r"\d+_GLOBAL__N__[0-9a-f]+_\d+_[A-Za-z0-9_]+?_cu_[0-9a-f]+", "ANON", name)
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


def main(rev):
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
    differs = 0
    for src in sorted(set(old) | set(new)):
        a, b = old.get(src, {}), new.get(src, {})
        diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
        print(f"{src}: {len(b)} kernels, " + ("identical" if not diff else f"{len(diff)} differ, e.g. {diff[0]}"))
        differs += len(diff)
    return 1 if differs else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
