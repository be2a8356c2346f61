/*
 * Stand-in for QEMU's crypto/clmul.h with its host header: the 64x64-bit
 * carry-less multiply, accelerated on x86 hosts with PCLMULQDQ.  Elsewhere
 * there is no acceleration and the CRC takes zlib's path, as in QEMU.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef SOFTHCA_UNIT_CLMUL_H
#define SOFTHCA_UNIT_CLMUL_H

#include "qemu/int128.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define HAVE_CLMUL_ACCEL  __builtin_cpu_supports("pclmul")
#define ATTR_CLMUL_ACCEL  __attribute__((target("pclmul")))

static inline Int128 ATTR_CLMUL_ACCEL clmul_64_accel(uint64_t n, uint64_t m)
{
    __m128i r = _mm_clmulepi64_si128(_mm_set_epi64x(0, n),
                                     _mm_set_epi64x(0, m), 0);

    return int128_make128(_mm_cvtsi128_si64(r),
                          _mm_cvtsi128_si64(_mm_unpackhi_epi64(r, r)));
}
#else
#define HAVE_CLMUL_ACCEL  false
#define ATTR_CLMUL_ACCEL
Int128 clmul_64_accel(uint64_t, uint64_t);
#endif

#endif
