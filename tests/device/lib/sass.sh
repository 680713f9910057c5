# Sourced by the SASS tests (tests/device/sass_*.sh): disassembly and the helpers to read it.
# Not a test itself (ctest runs tests/device/*.sh only).

# Disassembles the sm_90a code of binary $1 into the file named by $sass (removed on exit).
sass_disassemble() {
  command -v cuobjdump >/dev/null || { echo "FAIL cuobjdump not found"; exit 1; }
  sass=$(mktemp)
  trap 'rm -f "$sass"' EXIT
  cuobjdump -sass -arch sm_90a "$1" >"$sass"
}

functions() {  # mangled names of the functions whose name matches regex $1
  sed -nE 's/.*Function : ([^ ]+).*/\1/p' "$sass" | grep -E "$1" || true
}

body_of() {  # instructions of the function named exactly $1
  awk -v k="$1" '/Function : /{p = ($3 == k); next} p' "$sass"
}

body_matching() {  # instructions of every function whose header line matches regex $1
  awk -v k="$1" '$0 ~ "Function : " && $0 ~ k {p=1; next} /Function :/{p=0} p' "$sass"
}

opcodes() {  # the opcode of every instruction line on stdin (predicate stripped)
  sed -nE 's#^[[:space:]]*/\*[0-9a-f]+\*/[[:space:]]+(@!?U?P[0-9T]+[[:space:]]+)?([A-Z0-9_.]+).*#\2#p'
}
