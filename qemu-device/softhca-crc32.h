/*
 * softhca: CRC-32 of IEEE 802.3, the CRC of the RoCEv2 ICRC.  Free of QEMU
 * state so that it can be unit-tested on the host (tests/unit).
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_SOFTHCA_CRC32_H
#define HW_SOFTHCA_CRC32_H

/*
 * The CRC-32 of buf continued from crc, in zlib's convention: start with
 * crc = 0, and softhca_crc32(softhca_crc32(0, a), b) is the CRC of a then b.
 */
uint32_t softhca_crc32(uint32_t crc, const void *buf, size_t len);

#endif
