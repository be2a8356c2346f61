/*
 * Stand-in for QEMU's qemu/bswap.h: little-endian conversions.  With
 * SOFTHCA_UNIT_SWAPPED the host pretends to be big-endian (and guest
 * words are byte-swapped in its memory), so that the big-endian paths of
 * the device run on a little-endian host too.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef SOFTHCA_UNIT_BSWAP_H
#define SOFTHCA_UNIT_BSWAP_H

#include <stdint.h>
#include <string.h>

#if defined(SOFTHCA_UNIT_SWAPPED) != \
    (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)
#define HOST_BIG_ENDIAN 1
#else
#define HOST_BIG_ENDIAN 0
#endif

#if HOST_BIG_ENDIAN
#define cpu_to_le64(x) __builtin_bswap64(x)
#else
#define cpu_to_le64(x) ((uint64_t)(x))
#endif
#define le64_to_cpu(x) cpu_to_le64(x)

static inline uint64_t ldq_le_p(const void *p)
{
    uint64_t v;

    memcpy(&v, p, sizeof(v));
    return le64_to_cpu(v);
}

#endif
