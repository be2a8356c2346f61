/*
 * softhca: CRC-32 (IEEE 802.3) with carry-less multiplication where the
 * host has it.  Every RoCE packet's ICRC covers its whole payload, on
 * transmit and on receive, so this is the device's hottest loop: zlib's
 * table-driven CRC runs at about 4 GB/s, folding with a carry-less
 * multiply at several times that.
 *
 * The folding is the method of Gopal et al., "Fast CRC Computation for
 * Generic Polynomials Using PCLMULQDQ Instruction" (Intel, 2009), for the
 * bit-reflected polynomial 0x104c11db7: 64 bytes are folded per step into
 * four 128-bit lanes, the lanes into one, that one to 64 and then 32 bits,
 * and a Barrett reduction gives the remainder.  The constants are
 * x^k mod P(x) for the fold distances k, bit-reflected.  The multiply is
 * QEMU's clmul_64_accel() (crypto/clmul.h), on every host that has one.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include <zlib.h>
#include "qemu/bswap.h"
#include "crypto/clmul.h"
#include "softhca-crc32.h"

#define FOLD_512_HI     0x1c6e41596ull  /* x^(4*128+32) mod P, x^(4*128-32) */
#define FOLD_512_LO     0x154442bd4ull
#define FOLD_128_HI     0x0ccaa009eull  /* x^(128+32), x^(128-32) */
#define FOLD_128_LO     0x1751997d0ull
#define FOLD_64         0x163cd6124ull  /* x^64 */
#define BARRETT_MU      0x1f7011641ull  /* floor(x^64 / P), reflected */
#define BARRETT_P       0x1db710641ull  /* P, reflected */

/*
 * 128 bits of folding state.  A vector, so that on x86 the lanes stay in
 * SSE registers from one multiply to the next: as Int128 they went through
 * general registers and the stack, and the loop ran at a third the speed.
 */
typedef uint64_t Lane __attribute__((vector_size(16)));

static inline Lane load_lane(const uint8_t *p)
{
    return (Lane){ ldq_le_p(p), ldq_le_p(p + 8) };
}

/* Each half of a times its constant in k (low half k[0]), products added */
static inline Lane ATTR_CLMUL_ACCEL fold(Lane a, Lane k)
{
#ifdef HOST_X86_64
    __m128i v = (__m128i)a, c = (__m128i)k;

    return (Lane)_mm_xor_si128(_mm_clmulepi64_si128(v, c, 0x00),
                               _mm_clmulepi64_si128(v, c, 0x11));
#else
    Int128 r = int128_xor(clmul_64_accel(a[0], k[0]),
                          clmul_64_accel(a[1], k[1]));

    return (Lane){ int128_getlo(r), int128_gethi(r) };
#endif
}

/*
 * The raw (not inverted) CRC state after len bytes from p, len a multiple
 * of 16 and at least 16.  Four lanes fold 64 bytes a step where there are
 * that many; one lane folds the rest, 16 bytes a step.
 */
static uint32_t ATTR_CLMUL_ACCEL crc32_fold(uint32_t state, const uint8_t *p,
                                            size_t len)
{
    const Lane k512 = { FOLD_512_LO, FOLD_512_HI };
    const Lane k128 = { FOLD_128_LO, FOLD_128_HI };
    Lane x0;
    Int128 r, t;

    x0 = load_lane(p) ^ (Lane){ state, 0 };
    p += 16;
    len -= 16;
    if (len >= 48) {
        Lane x1 = load_lane(p);
        Lane x2 = load_lane(p + 16);
        Lane x3 = load_lane(p + 32);

        for (p += 48, len -= 48; len >= 64; p += 64, len -= 64) {
            x0 = fold(x0, k512) ^ load_lane(p);
            x1 = fold(x1, k512) ^ load_lane(p + 16);
            x2 = fold(x2, k512) ^ load_lane(p + 32);
            x3 = fold(x3, k512) ^ load_lane(p + 48);
        }
        x0 = fold(x0, k128) ^ x1;
        x0 = fold(x0, k128) ^ x2;
        x0 = fold(x0, k128) ^ x3;
    }
    for (; len >= 16; p += 16, len -= 16) {
        x0 = fold(x0, k128) ^ load_lane(p);
    }

    /* 128 to 64 bits, appending the 32 zero bits a CRC is taken over */
    r = int128_xor(clmul_64_accel(x0[0], FOLD_128_HI), int128_make64(x0[1]));
    /* 64 to 32 bits */
    t = int128_rshift(r, 32);
    r = int128_xor(clmul_64_accel((uint32_t)int128_getlo(r), FOLD_64), t);
    /* Barrett reduction to the 32-bit remainder */
    t = r;
    r = clmul_64_accel((uint32_t)int128_getlo(r), BARRETT_MU);
    r = clmul_64_accel((uint32_t)int128_getlo(r), BARRETT_P);
    r = int128_xor(r, t);
    return int128_getlo(r) >> 32;
}

uint32_t softhca_crc32(uint32_t crc, const void *buf, size_t len)
{
    const uint8_t *p = buf;

    if (HAVE_CLMUL_ACCEL && len >= 16) {
        size_t n = len & ~(size_t)15;

        crc = ~crc32_fold(~crc, p, n);
        p += n;
        len -= n;
    }
    return crc32(crc, p, len);
}
