/*
 * Unit tests of the device's CRC-32 (qemu-device/softhca-crc32.c): the
 * check value, and the folding path against zlib's table-driven CRC for
 * every alignment and every length around its 16- and 64-byte steps.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include <zlib.h>
#include "softhca-crc32.h"
#include "unit.h"

static void test_check_value(void)
{
    const char *s = "123456789";

    CHECK_EQ(softhca_crc32(0, s, 9), 0xcbf43926);
    CHECK_EQ(softhca_crc32(softhca_crc32(0, s, 4), s + 4, 5), 0xcbf43926);
    CHECK_EQ(softhca_crc32(0, s, 0), 0);
}

static void test_against_zlib(void)
{
    static uint8_t buf[4096 + 64];
    uint32_t x = 1;
    int bad = 0;

    for (size_t i = 0; i < sizeof(buf); i++) {
        x = x * 1103515245 + 12345;
        buf[i] = x >> 16;
    }
    for (size_t off = 0; off < 16; off++) {
        for (size_t len = 0; len <= 300; len++) {
            bad += softhca_crc32(off, buf + off, len) !=
                   crc32(off, buf + off, len);
        }
        bad += softhca_crc32(0, buf + off, 4096) != crc32(0, buf + off, 4096);
    }
    CHECK_EQ(bad, 0);
}

/* A chained CRC equals the CRC of the whole, whatever the cut. */
static void test_chaining(void)
{
    static uint8_t buf[1024];
    uint32_t whole;
    int bad = 0;

    for (size_t i = 0; i < sizeof(buf); i++) {
        buf[i] = i * 31 + 7;
    }
    whole = softhca_crc32(0, buf, sizeof(buf));
    for (size_t cut = 0; cut <= sizeof(buf); cut += 13) {
        bad += softhca_crc32(softhca_crc32(0, buf, cut), buf + cut,
                             sizeof(buf) - cut) != whole;
    }
    CHECK_EQ(bad, 0);
}

int main(void)
{
    RUN(test_check_value);
    RUN(test_against_zlib);
    RUN(test_chaining);
    return unit_summary();
}
