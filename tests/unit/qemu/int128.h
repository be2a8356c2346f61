/*
 * Stand-in for QEMU's qemu/int128.h on hosts with __int128: the few
 * operations the device's CRC uses.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef SOFTHCA_UNIT_INT128_H
#define SOFTHCA_UNIT_INT128_H

#include <stdint.h>

typedef unsigned __int128 Int128;

static inline Int128 int128_make64(uint64_t a) { return a; }
static inline Int128 int128_make128(uint64_t lo, uint64_t hi)
{
    return (Int128)hi << 64 | lo;
}
static inline uint64_t int128_getlo(Int128 a) { return a; }
static inline uint64_t int128_gethi(Int128 a) { return a >> 64; }
static inline Int128 int128_xor(Int128 a, Int128 b) { return a ^ b; }
static inline Int128 int128_rshift(Int128 a, int n) { return a >> n; }

#endif
