/*
 * softhca: the pseudo-random generator of fault injection -- xorshift64*
 * seeded through splitmix64, so that a seed and a sequence of frames give
 * the same faults on every host.  Free of QEMU state so that it can be
 * unit-tested on the host (tests/unit).
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_SOFTHCA_RAND_H
#define HW_SOFTHCA_RAND_H

#include <stdbool.h>
#include <stdint.h>

/*
 * The state of stream `stream` of a seed: the streams of one seed are
 * unrelated, and none starts at 0, which xorshift never leaves.
 */
static inline uint64_t softhca_rand_seed(uint64_t seed, uint32_t stream)
{
    uint64_t z = seed + (stream + 1) * 0x9e3779b97f4a7c15ull;

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return z ? z : 1;
}

static inline uint64_t softhca_rand_next(uint64_t *state)
{
    uint64_t x = *state;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1dull;
}

/* One draw: true with probability per_mille / 1000. */
static inline bool softhca_rand_per_mille(uint64_t *state, uint32_t per_mille)
{
    /* the high bits are the good ones; scale them to 0..999 */
    return ((softhca_rand_next(state) >> 32) * 1000 >> 32) < per_mille;
}

#endif /* HW_SOFTHCA_RAND_H */
