/*
 * softhca: the responder's atomic operations (spec §16) on a guest word
 * mapped into the host.  They are host atomic operations, as TCG runs the
 * guest's own atomics, so that they are atomic against the guest's vCPUs
 * too.  The word is 8-byte aligned and little-endian; on a big-endian host
 * FETCH_ADD is a compare-and-swap loop over the byte-swapped value.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_SOFTHCA_ATOMIC_H
#define HW_SOFTHCA_ATOMIC_H

#include "qemu/atomic.h"
#include "qemu/bswap.h"

/* COMPARE_SWAP: swap in swap if the word is compare; the value before. */
static inline uint64_t softhca_atomic_cmp_swap(uint64_t *word,
                                               uint64_t compare,
                                               uint64_t swap)
{
    return le64_to_cpu(qatomic_cmpxchg__nocheck(word, cpu_to_le64(compare),
                                                cpu_to_le64(swap)));
}

/* FETCH_ADD: add add, modulo 2^64; the value before. */
static inline uint64_t softhca_atomic_fetch_add(uint64_t *word, uint64_t add)
{
#if HOST_BIG_ENDIAN
    uint64_t old = qatomic_read__nocheck(word), seen;

    while ((seen = qatomic_cmpxchg__nocheck(word, old,
                                            cpu_to_le64(le64_to_cpu(old) +
                                                         add))) != old) {
        old = seen;
    }
    return le64_to_cpu(old);
#else
    return qatomic_fetch_add(word, add);
#endif
}

/*
 * ATOMIC WRITE: store the 8 bytes at data in one piece, after the writes
 * the device made before it.
 */
static inline void softhca_atomic_store(uint64_t *word, const uint8_t *data)
{
    uint64_t val;

    memcpy(&val, data, sizeof(val));
    smp_wmb();      /* a vCPU that sees the word sees the writes before */
    qatomic_set__nocheck(word, val);
}

#endif /* HW_SOFTHCA_ATOMIC_H */
