#!/usr/bin/env python3
"""Checks the include graph of src/: every file includes only its own layer or those below it
(core < analysis < device < measure < probes < report < cli), a probe family includes no other
family (probes/builtin.cpp, the registration list, excepted), there are no include cycles, and
analysis/ (pure judging: numbers in, conclusions out) reaches no device: nothing it includes,
directly or through other headers, is the device seam (core/device.hpp, core/sequence.hpp), a
CUDA, NVML or CUPTI header, or a file of a layer above it; nor does it take a callback
(std::function or <functional>): a search that calls back into a measurement drives the device
through it, and lives in measure/. Exit 1 with one line per violation. Usage: check_includes.py <source root>"""
import os
import re
import sys

LAYERS = ["core", "analysis", "device", "measure", "probes", "report", "cli"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SYSTEM_INCLUDE = re.compile(r'^\s*#\s*include\s+<([^>]+)>', re.M)
# What reaches a device: the seam's interface (the Device and its Sequencer) and the vendor
# runtimes. analysis/ may include none of them, however indirectly.
DEVICE_HEADERS = {"core/device.hpp", "core/sequence.hpp", "core/cuda_check.hpp", "core/nvml.hpp"}
DEVICE_SYSTEM = re.compile(r"^(cuda|cupti|nvml|nvPerf|nvperf|cu[a-z]*\.h)")
# A callback: what a search that drives a measurement takes (analysis/ has none).
CALLBACK = re.compile(r"\bstd::function\b|^\s*#\s*include\s+<functional>", re.M)


def graph(src, system=None, callbacks=None):
    """Quoted includes that exist under src, per file; `system`, when given, collects each
    file's <...> includes; `callbacks`, when given, the files that name a callback."""
    edges = {}
    for root, _, files in os.walk(src):
        for f in files:
            if not f.endswith((".hpp", ".cpp", ".cu", ".cuh", ".hpp.in")):
                continue
            path = os.path.relpath(os.path.join(root, f), src)
            text = open(os.path.join(root, f), encoding="utf-8").read()
            edges[path] = [i for i in INCLUDE.findall(text) if os.path.exists(os.path.join(src, i))]
            if system is not None:
                system[path] = SYSTEM_INCLUDE.findall(text)
            if callbacks is not None and CALLBACK.search(text):
                callbacks.add(path)
    return edges


def reached(edges, start):
    """Every file `start` includes, directly or through others, with the chain to it."""
    chain = {start: [start]}
    todo = [start]
    while todo:
        node = todo.pop()
        for nxt in edges.get(node, []):
            if nxt not in chain:
                chain[nxt] = chain[node] + [nxt]
                todo.append(nxt)
    return chain


def device_reach(edges, system):
    """analysis/ files that reach a device, one line each (the first chain found)."""
    out = []
    for path in sorted(edges):
        if path.split("/")[0] != "analysis":
            continue
        for node, chain in sorted(reached(edges, path).items(), key=lambda kv: (len(kv[1]), kv[0])):
            why = None
            if node in DEVICE_HEADERS:
                why = "the device seam"
            elif node.split("/")[0] in LAYERS and LAYERS.index(node.split("/")[0]) > LAYERS.index(
                    "analysis"):
                why = node.split("/")[0] + "/ is above analysis/"
            else:
                vendor = [s for s in system.get(node, []) if DEVICE_SYSTEM.match(s)]
                if vendor:
                    why = "<" + vendor[0] + ">"
            if why:
                out.append(f"{path} reaches a device through {' -> '.join(chain)} ({why})")
                break
    return out


def callback_use(callbacks):
    """analysis/ files that take a callback, one line each."""
    return [f"{path} takes a callback (std::function): a search that drives a measurement "
            "belongs in measure/" for path in sorted(callbacks) if path.split("/")[0] == "analysis"]


def violations(edges):
    out = []
    for path, includes in sorted(edges.items()):
        top = path.split("/")[0]
        if top not in LAYERS:
            continue
        for inc in includes:
            itop = inc.split("/")[0]
            if itop in LAYERS and LAYERS.index(itop) > LAYERS.index(top):
                out.append(f"{path} includes {inc}: {itop}/ is above {top}/")
            if top == "probes" and itop == "probes" and path != "probes/builtin.cpp":
                fam, ifam = path.split("/")[1], inc.split("/")[1]
                if fam != ifam:
                    out.append(f"{path} includes {inc}: family {fam} uses family {ifam}")
    # Cycles: depth-first search with colours.
    colour = {}

    def visit(node, stack):
        colour[node] = 1
        stack.append(node)
        for nxt in edges.get(node, []):
            if colour.get(nxt) == 1:
                out.append("include cycle: " + " -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif colour.get(nxt) is None:
                visit(nxt, stack)
        stack.pop()
        colour[node] = 2

    for node in sorted(edges):
        if colour.get(node) is None:
            visit(node, [])
    return out


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    system_includes, callbacks = {}, set()
    edges = graph(sys.argv[1], system_includes, callbacks)
    found = violations(edges) + device_reach(edges, system_includes) + callback_use(callbacks)
    for v in found:
        print(v)
    sys.exit(1 if found else 0)
