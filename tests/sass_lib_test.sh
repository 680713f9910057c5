#!/usr/bin/env bash
# Runs without a GPU or a disassembler: checks tests/device/lib/sass.sh's timed-region test
# (need_timed) on a hand-written listing in cuobjdump -sass's format. need_timed must pass a
# kernel whose instruction sits between its clock reads, and fail one whose instruction was
# hoisted out of them, one with a single clock read, and a kernel name that matches nothing.
set -euo pipefail
source "$(dirname "$0")/device/lib/sass.sh"
sass=$(mktemp)
trap 'rm -f "$sass"' EXIT
cat >"$sass" <<'SASS'
	code for sm_90a
		Function : _Z11good_kernelPj
	.headerflags	@"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                     /* 0x00000a00ff017b82 */
                                                                              /* 0x000fe40000000800 */
        /*0010*/                   CS2R R4, SR_CLOCKLO ;                      /* 0x0000000000047805 */
                                                                              /* 0x000fe20000015000 */
        /*0020*/              @!P0 UBLKCP.S.G [UR8], [UR4], UR6 ;             /* 0x00000008040073ba */
                                                                              /* 0x0001e20008000206 */
        /*0030*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [UR8], R3 ; /* 0x000000030a0075a7 */
                                                                              /* 0x000e240008020148 */
        /*0040*/                   CS2R R6, SR_CLOCKLO ;                      /* 0x0000000000067805 */
                                                                              /* 0x000fe20000015000 */
        /*0050*/                   EXIT ;                                     /* 0x000000000000794d */
		..........
		Function : _Z12hoisted_kernelPj
	.headerflags	@"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   UBLKCP.S.G [UR8], [UR4], UR6 ;             /* 0x00000008040073ba */
                                                                              /* 0x0001e20008000206 */
        /*0010*/                   S2UR UR4, SR_GLOBALTIMERLO ;               /* 0x00000000000479c3 */
                                                                              /* 0x000e220000015200 */
        /*0020*/                   IADD3 R2, R2, 0x1, RZ ;                    /* 0x0000000102027810 */
                                                                              /* 0x000fe20007ffe0ff */
        /*0030*/                   S2UR UR6, SR_GLOBALTIMERLO ;               /* 0x00000000000679c3 */
                                                                              /* 0x000e220000015200 */
        /*0040*/                   UBLKCP.S.G [UR8], [UR4], UR6 ;             /* 0x00000008040073ba */
                                                                              /* 0x0001e20008000206 */
        /*0050*/                   EXIT ;                                     /* 0x000000000000794d */
		..........
		Function : _Z10one_clockPj
	.headerflags	@"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   CS2R R4, SR_CLOCKLO ;                      /* 0x0000000000047805 */
                                                                              /* 0x000fe20000015000 */
        /*0010*/                   UBLKCP.S.G [UR8], [UR4], UR6 ;             /* 0x00000008040073ba */
                                                                              /* 0x0001e20008000206 */
        /*0020*/                   EXIT ;                                     /* 0x000000000000794d */
		..........
SASS

status=0
expect() {  # expect <0|1> <args of need_timed...>
  local want="$1"
  shift
  fail=0
  need_timed "$@" >/dev/null
  if [[ "$fail" -ne "$want" ]]; then
    echo "FAIL need_timed $*: fail=$fail, want $want"
    status=1
  else
    echo "ok   need_timed $*: fail=$fail"
  fi
}
expect 0 'good_kernel' 'UBLKCP' 'bulk copy'
expect 0 'good_kernel' 'SYNCS' 'mbarrier wait'
expect 1 'good_kernel' 'UBLKCP' 'bulk copy' 2
expect 1 'hoisted_kernel' 'UBLKCP' 'bulk copy'
expect 1 'one_clock' 'UBLKCP' 'bulk copy'
expect 1 'no_such_kernel' 'UBLKCP' 'bulk copy'
# Both timed kernels together: one failing instance fails the check.
expect 1 'good_kernel|hoisted_kernel' 'UBLKCP' 'bulk copy'
[[ $(body_of _Z11good_kernelPj | timed_region | opcodes | tr '\n' ' ') == "UBLKCP.S.G SYNCS.PHASECHK.TRANS64.TRYWAIT " ]] ||
  { echo "FAIL timed_region of good_kernel: $(body_of _Z11good_kernelPj | timed_region | opcodes | tr '\n' ' ')"; status=1; }
exit $status
