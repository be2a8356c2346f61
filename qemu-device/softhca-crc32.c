/*
 * softhca: CRC-32 (IEEE 802.3) with carry-less multiplication where the
 * host has it.  Every RoCE packet's ICRC covers its whole payload, on
 * transmit and on receive, so this is the device's hottest loop: zlib's
 * table-driven CRC runs at about 4 GB/s, folding with PCLMULQDQ at several
 * times that.
 *
 * The folding is the method of Gopal et al., "Fast CRC Computation for
 * Generic Polynomials Using PCLMULQDQ Instruction" (Intel, 2009), for the
 * bit-reflected polynomial 0x104c11db7: 64 bytes are folded per step into
 * four 128-bit lanes, the lanes into one, that one to 64 and then 32 bits,
 * and a Barrett reduction gives the remainder.  The constants are
 * x^k mod P(x) for the fold distances k, bit-reflected.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include <zlib.h>
#include "softhca-crc32.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define FOLD_512_HI     0x1c6e41596ull  /* x^(4*128+32) mod P, x^(4*128-32) */
#define FOLD_512_LO     0x154442bd4ull
#define FOLD_128_HI     0x0ccaa009eull  /* x^(128+32), x^(128-32) */
#define FOLD_128_LO     0x1751997d0ull
#define FOLD_64         0x163cd6124ull  /* x^64 */
#define BARRETT_MU      0x1f7011641ull  /* floor(x^64 / P), reflected */
#define BARRETT_P       0x1db710641ull  /* P, reflected */

/* a * (the constant pair k), the low and high halves folded together */
__attribute__((target("pclmul,sse4.1")))
static inline __m128i fold(__m128i a, __m128i k)
{
    return _mm_xor_si128(_mm_clmulepi64_si128(a, k, 0x00),
                         _mm_clmulepi64_si128(a, k, 0x11));
}

/*
 * The raw (not inverted) CRC state after len bytes from p, len a multiple
 * of 16 and at least 64.
 */
__attribute__((target("pclmul,sse4.1")))
static uint32_t crc32_fold(uint32_t state, const uint8_t *p, size_t len)
{
    const __m128i mask32 = _mm_set_epi32(0, 0, 0, ~0);
    __m128i k = _mm_set_epi64x(FOLD_512_HI, FOLD_512_LO);
    __m128i x0, x1, x2, x3, t;

    x0 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)p),
                       _mm_cvtsi32_si128(state));
    x1 = _mm_loadu_si128((const __m128i *)(p + 16));
    x2 = _mm_loadu_si128((const __m128i *)(p + 32));
    x3 = _mm_loadu_si128((const __m128i *)(p + 48));
    for (p += 64, len -= 64; len >= 64; p += 64, len -= 64) {
        x0 = _mm_xor_si128(fold(x0, k), _mm_loadu_si128((const __m128i *)p));
        x1 = _mm_xor_si128(fold(x1, k),
                           _mm_loadu_si128((const __m128i *)(p + 16)));
        x2 = _mm_xor_si128(fold(x2, k),
                           _mm_loadu_si128((const __m128i *)(p + 32)));
        x3 = _mm_xor_si128(fold(x3, k),
                           _mm_loadu_si128((const __m128i *)(p + 48)));
    }

    k = _mm_set_epi64x(FOLD_128_HI, FOLD_128_LO);
    x0 = _mm_xor_si128(fold(x0, k), x1);
    x0 = _mm_xor_si128(fold(x0, k), x2);
    x0 = _mm_xor_si128(fold(x0, k), x3);
    for (; len >= 16; p += 16, len -= 16) {
        x0 = _mm_xor_si128(fold(x0, k), _mm_loadu_si128((const __m128i *)p));
    }

    /* 128 to 64 bits, appending the 32 zero bits a CRC is taken over */
    x0 = _mm_xor_si128(_mm_clmulepi64_si128(x0, k, 0x10),
                       _mm_srli_si128(x0, 8));
    /* 64 to 32 bits */
    t = _mm_srli_si128(x0, 4);
    x0 = _mm_clmulepi64_si128(_mm_and_si128(x0, mask32),
                              _mm_set_epi64x(0, FOLD_64), 0x00);
    x0 = _mm_xor_si128(x0, t);
    /* Barrett reduction to the 32-bit remainder */
    k = _mm_set_epi64x(BARRETT_MU, BARRETT_P);
    t = x0;
    x0 = _mm_clmulepi64_si128(_mm_and_si128(x0, mask32), k, 0x10);
    x0 = _mm_clmulepi64_si128(_mm_and_si128(x0, mask32), k, 0x00);
    x0 = _mm_xor_si128(x0, t);
    return _mm_extract_epi32(x0, 1);
}

static bool have_pclmul(void)
{
    static int have = -1;

    if (have < 0) {
        __builtin_cpu_init();
        have = __builtin_cpu_supports("pclmul") &&
               __builtin_cpu_supports("sse4.1");
    }
    return have;
}
#endif

uint32_t softhca_crc32(uint32_t crc, const void *buf, size_t len)
{
    const uint8_t *p = buf;

#if defined(__x86_64__)
    if (len >= 64 && have_pclmul()) {
        size_t n = len & ~(size_t)15;

        crc = ~crc32_fold(~crc, p, n);
        p += n;
        len -= n;
    }
#endif
    return crc32(crc, p, len);
}
