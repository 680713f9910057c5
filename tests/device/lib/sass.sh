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

# A clock read: clock64 / clock (SR_CLOCKLO, SR_CLOCKHI) or %globaltimer (SR_GLOBALTIMERLO/HI),
# read by CS2R, S2R or S2UR.
clock_read_re='(CS2R|S2R|S2UR)[^;]*SR_(CLOCK|GLOBALTIMER)'

timed_region() {  # instructions on stdin after the first clock read and before the last one
  awk -v re="$clock_read_re" '
    $0 ~ re { reads++; if (reads == 1) { first = NR; next } last = NR }
    { line[NR] = $0 }
    END { if (reads >= 2) for (i = first + 1; i < last; ++i) if (i in line) print line[i] }'
}

clock_reads() {  # how many clock reads the instructions on stdin hold
  grep -cE "$clock_read_re" || true
}

# need_timed <kernel regex> <opcode regex> <what> [min count]: every function matching the
# kernel regex must hold at least [min count] (default 1) instructions matching the opcode regex
# between its first and its last clock read (the timed region), not merely somewhere. Sets
# fail=1 and prints FAIL otherwise (also when no function matches, or one has no timed region).
need_timed() {
  local kre="$1" ore="$2" what="$3" want="${4:-1}" found=0 f body region n all
  for f in $(functions "$kre"); do
    found=1
    body=$(body_of "$f")
    if [[ $(clock_reads <<<"$body") -lt 2 ]]; then
      echo "FAIL $f: fewer than two clock reads, no timed region"
      fail=1
      continue
    fi
    region=$(timed_region <<<"$body" | opcodes)
    n=$(grep -cE "^($ore)" <<<"$region" || true)
    all=$(opcodes <<<"$body" | grep -cE "^($ore)" || true)
    if [[ "$n" -lt "$want" ]]; then
      echo "FAIL $f: $n $what ($ore) inside the timed region (want >= $want; $all in the whole function)"
      fail=1
    else
      echo "ok   $f: $n $what inside the timed region ($(grep -E "^($ore)" <<<"$region" | sort | uniq -c | tr -s ' ' | tr '\n' ' '))"
    fi
  done
  if [[ "$found" -eq 0 ]]; then
    echo "FAIL: no function matches $kre"
    fail=1
  fi
}
