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

static inline Int128 load128(const uint8_t *p)
{
    return int128_make128(ldq_le_p(p), ldq_le_p(p + 8));
}

/* Each half of a times its constant, the two products added */
static inline Int128 ATTR_CLMUL_ACCEL fold(Int128 a, uint64_t k_lo,
                                           uint64_t k_hi)
{
    return int128_xor(clmul_64_accel(int128_getlo(a), k_lo),
                      clmul_64_accel(int128_gethi(a), k_hi));
}

/*
 * The raw (not inverted) CRC state after len bytes from p, len a multiple
 * of 16 and at least 64.
 */
static uint32_t ATTR_CLMUL_ACCEL crc32_fold(uint32_t state, const uint8_t *p,
                                            size_t len)
{
    Int128 x0, x1, x2, x3, t;

    x0 = int128_xor(load128(p), int128_make64(state));
    x1 = load128(p + 16);
    x2 = load128(p + 32);
    x3 = load128(p + 48);
    for (p += 64, len -= 64; len >= 64; p += 64, len -= 64) {
        x0 = int128_xor(fold(x0, FOLD_512_LO, FOLD_512_HI), load128(p));
        x1 = int128_xor(fold(x1, FOLD_512_LO, FOLD_512_HI), load128(p + 16));
        x2 = int128_xor(fold(x2, FOLD_512_LO, FOLD_512_HI), load128(p + 32));
        x3 = int128_xor(fold(x3, FOLD_512_LO, FOLD_512_HI), load128(p + 48));
    }

    x0 = int128_xor(fold(x0, FOLD_128_LO, FOLD_128_HI), x1);
    x0 = int128_xor(fold(x0, FOLD_128_LO, FOLD_128_HI), x2);
    x0 = int128_xor(fold(x0, FOLD_128_LO, FOLD_128_HI), x3);
    for (; len >= 16; p += 16, len -= 16) {
        x0 = int128_xor(fold(x0, FOLD_128_LO, FOLD_128_HI), load128(p));
    }

    /* 128 to 64 bits, appending the 32 zero bits a CRC is taken over */
    x0 = int128_xor(clmul_64_accel(int128_getlo(x0), FOLD_128_HI),
                    int128_make64(int128_gethi(x0)));
    /* 64 to 32 bits */
    t = int128_rshift(x0, 32);
    x0 = int128_xor(clmul_64_accel((uint32_t)int128_getlo(x0), FOLD_64), t);
    /* Barrett reduction to the 32-bit remainder */
    t = x0;
    x0 = clmul_64_accel((uint32_t)int128_getlo(x0), BARRETT_MU);
    x0 = clmul_64_accel((uint32_t)int128_getlo(x0), BARRETT_P);
    x0 = int128_xor(x0, t);
    return int128_getlo(x0) >> 32;
}

uint32_t softhca_crc32(uint32_t crc, const void *buf, size_t len)
{
    const uint8_t *p = buf;

    if (HAVE_CLMUL_ACCEL && len >= 64) {
        size_t n = len & ~(size_t)15;

        crc = ~crc32_fold(~crc, p, n);
        p += n;
        len -= n;
    }
    return crc32(crc, p, len);
}
