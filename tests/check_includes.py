#!/usr/bin/env python3
"""Checks the include graph of src/: every file includes only its own layer or those below it
(core < analysis < device < measure < probes < report < cli), a probe family includes no other
family (probes/builtin.cpp, the registration list, excepted), and there are no include cycles.
Exit 1 with one line per violation. Usage: check_includes.py <source root>"""
import os
import re
import sys

LAYERS = ["core", "analysis", "device", "measure", "probes", "report", "cli"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def graph(src):
    edges = {}
    for root, _, files in os.walk(src):
        for f in files:
            if not f.endswith((".hpp", ".cpp", ".cu", ".cuh", ".hpp.in")):
                continue
            path = os.path.relpath(os.path.join(root, f), src)
            text = open(os.path.join(root, f), encoding="utf-8").read()
            edges[path] = [i for i in INCLUDE.findall(text) if os.path.exists(os.path.join(src, i))]
    return edges


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
    found = violations(graph(sys.argv[1]))
    for v in found:
        print(v)
    sys.exit(1 if found else 0)
