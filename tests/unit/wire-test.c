/*
 * Unit tests of the device's frame parser (qemu-device/softhca-wire.c).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "softhca-wire.h"
#include "unit.h"

static const uint8_t mac[6] = { 0x52, 0x54, 0, 0, 0, 1 };

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = v >> 8;
    p[1] = v;
}

/* Write the IPv4 header checksum of frame f (after any change to it). */
static void ipv4_fix(uint8_t *f)
{
    size_t ihl = (f[14] & 0xf) * 4;
    uint32_t sum = 0;

    f[24] = f[25] = 0;
    for (size_t i = 0; i < ihl; i += 2) {
        sum += f[14 + i] << 8 | f[15 + i];
    }
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    put16(f + 24, ~sum);
}

/* Ethernet + IPv4 + UDP + payload; returns the frame length. */
static size_t ipv4_udp(uint8_t *f, uint16_t dport, size_t payload)
{
    size_t len = 14 + 20 + 8 + payload;

    memset(f, 0, len);
    memcpy(f, mac, 6);
    put16(f + 12, 0x0800);
    f[14] = 0x45;
    put16(f + 16, 20 + 8 + payload);
    f[22] = 64;
    f[23] = 17;
    memcpy(f + 26, "\x0a\x00\x00\x02", 4);
    memcpy(f + 30, "\x0a\x00\x00\x01", 4);
    put16(f + 34, 49152);
    put16(f + 36, dport);
    put16(f + 38, 8 + payload);
    ipv4_fix(f);
    return len;
}

static size_t ipv6_udp(uint8_t *f, uint16_t dport, size_t payload)
{
    size_t len = 14 + 40 + 8 + payload;

    memset(f, 0, len);
    memcpy(f, mac, 6);
    put16(f + 12, 0x86dd);
    f[14] = 0x60;
    put16(f + 18, 8 + payload);
    f[20] = 17;
    f[21] = 64;
    f[22] = 0xfd;               /* src fd00::2 */
    f[37] = 2;
    f[38] = 0xfd;               /* dst fd00::1 */
    f[53] = 1;
    put16(f + 54, 49152);
    put16(f + 56, dport);
    put16(f + 58, 8 + payload);
    return len;
}

static void test_ipv4(void)
{
    static const uint8_t gid[16] = { [10] = 0xff, [11] = 0xff,
                                     10, 0, 0, 1 };
    uint8_t f[128];
    size_t len = ipv4_udp(f, 4791, 40);
    SofthcaUdpFrame u;

    CHECK(softhca_parse_udp(f, len, &u));
    CHECK(!u.ipv6);
    CHECK_EQ(u.dst_port, 4791);
    CHECK_EQ(u.src_port, 49152);
    CHECK_EQ(u.payload_off, 42);
    CHECK_EQ(u.payload_len, 40);
    CHECK(memcmp(u.dst_gid, gid, 16) == 0);
    CHECK_EQ(u.src_gid[15], 2);

    /* Ethernet padding after the datagram is not payload */
    CHECK(softhca_parse_udp(f, len + 20, &u));
    CHECK_EQ(u.payload_len, 40);
}

static void test_ipv6(void)
{
    uint8_t f[128];
    size_t len = ipv6_udp(f, 4791, 24);
    SofthcaUdpFrame u;

    CHECK(softhca_parse_udp(f, len, &u));
    CHECK(u.ipv6);
    CHECK_EQ(u.dst_port, 4791);
    CHECK_EQ(u.payload_off, 14 + 40 + 8);
    CHECK_EQ(u.payload_len, 24);
    CHECK_EQ(u.dst_gid[0], 0xfd);
    CHECK_EQ(u.dst_gid[15], 1);
}

/* Every strict prefix of a valid frame is refused, and read within bounds. */
static void test_truncated(void)
{
    uint8_t f4[128], f6[128];
    size_t len4 = ipv4_udp(f4, 4791, 16), len6 = ipv6_udp(f6, 4791, 16);
    SofthcaUdpFrame u;

    for (size_t n = 0; n < len4; n++) {
        uint8_t *copy = malloc(n ? n : 1);

        memcpy(copy, f4, n);
        CHECK(!softhca_parse_udp(copy, n, &u));
        free(copy);
    }
    for (size_t n = 0; n < len6; n++) {
        uint8_t *copy = malloc(n ? n : 1);

        memcpy(copy, f6, n);
        CHECK(!softhca_parse_udp(copy, n, &u));
        free(copy);
    }
}

static void test_malformed_ipv4(void)
{
    uint8_t f[128];
    size_t len;
    SofthcaUdpFrame u;

    len = ipv4_udp(f, 4791, 16);
    f[14] = 0x44;                       /* IHL 16 bytes */
    ipv4_fix(f);
    CHECK(!softhca_parse_udp(f, len, &u));

    len = ipv4_udp(f, 4791, 16);
    f[14] = 0x4f;                       /* IHL 60 > total length */
    put16(f + 16, 40);
    ipv4_fix(f);
    CHECK(!softhca_parse_udp(f, len, &u));

    len = ipv4_udp(f, 4791, 16);
    f[14] = 0x55;                       /* version 5 */
    ipv4_fix(f);
    CHECK(!softhca_parse_udp(f, len, &u));

    len = ipv4_udp(f, 4791, 16);
    put16(f + 16, 200);                 /* total length past the frame */
    ipv4_fix(f);
    CHECK(!softhca_parse_udp(f, len, &u));

    len = ipv4_udp(f, 4791, 16);
    put16(f + 20, 0x2000);              /* more fragments */
    ipv4_fix(f);
    CHECK(!softhca_parse_udp(f, len, &u));
    put16(f + 20, 0x0001);              /* fragment offset */
    ipv4_fix(f);
    CHECK(!softhca_parse_udp(f, len, &u));
    put16(f + 20, 0x4000);              /* don't fragment: fine */
    ipv4_fix(f);
    CHECK(softhca_parse_udp(f, len, &u));

    len = ipv4_udp(f, 4791, 16);
    f[23] = 6;                          /* TCP */
    ipv4_fix(f);
    CHECK(!softhca_parse_udp(f, len, &u));

    len = ipv4_udp(f, 4791, 16);
    put16(f + 38, 7);                   /* UDP length below its header */
    CHECK(!softhca_parse_udp(f, len, &u));
    put16(f + 38, 8 + 17);              /* UDP length past IP's */
    CHECK(!softhca_parse_udp(f, len, &u));

    len = ipv4_udp(f, 4791, 16);
    f[24] ^= 1;                         /* header checksum */
    CHECK(!softhca_parse_udp(f, len, &u));
    f[24] ^= 1;
    f[22]--;                            /* TTL changed, checksum not */
    CHECK(!softhca_parse_udp(f, len, &u));

    len = ipv4_udp(f, 4791, 16);
    put16(f + 12, 0x8100);              /* VLAN tag: not parsed */
    CHECK(!softhca_parse_udp(f, len, &u));
}

static void test_malformed_ipv6(void)
{
    uint8_t f[128];
    size_t len;
    SofthcaUdpFrame u;

    len = ipv6_udp(f, 4791, 16);
    put16(f + 18, 100);                 /* payload length past the frame */
    CHECK(!softhca_parse_udp(f, len, &u));

    len = ipv6_udp(f, 4791, 16);
    f[20] = 44;                         /* a fragment header */
    CHECK(!softhca_parse_udp(f, len, &u));

    len = ipv6_udp(f, 4791, 16);
    put16(f + 18, 4);                   /* payload shorter than UDP's header */
    CHECK(!softhca_parse_udp(f, len, &u));
}

/* An IPv4 header with options (24 bytes) and its checksum: accepted */
static void test_ipv4_options(void)
{
    uint8_t f[128] = { 0 }, g[128];
    size_t len = ipv4_udp(g, 4791, 16);
    SofthcaUdpFrame u;

    memcpy(f, g, 34);
    memcpy(f + 38, g + 34, len - 34);   /* 4 bytes of options (NOPs) */
    memset(f + 34, 1, 4);
    f[14] = 0x46;
    put16(f + 16, 24 + 8 + 16);
    ipv4_fix(f);
    CHECK(softhca_parse_udp(f, len + 4, &u));
    CHECK_EQ(u.payload_off, 14 + 24 + 8);
    CHECK_EQ(u.payload_len, 16);
    f[35] = 0;                          /* an option byte changed */
    CHECK(!softhca_parse_udp(f, len + 4, &u));
}

static void test_gid_mcast(void)
{
    uint8_t gid[16] = { [10] = 0xff, [11] = 0xff, 224, 0, 0, 1 };

    CHECK(softhca_gid_is_mcast(gid));
    gid[12] = 239;
    CHECK(softhca_gid_is_mcast(gid));
    gid[12] = 240;
    CHECK(!softhca_gid_is_mcast(gid));
    gid[12] = 10;
    CHECK(!softhca_gid_is_mcast(gid));
    memset(gid, 0, sizeof(gid));
    gid[0] = 0xff;
    gid[1] = 0x0e;
    CHECK(softhca_gid_is_mcast(gid));
    gid[0] = 0xfe;
    CHECK(!softhca_gid_is_mcast(gid));
}

int main(void)
{
    RUN(test_ipv4);
    RUN(test_ipv6);
    RUN(test_truncated);
    RUN(test_malformed_ipv4);
    RUN(test_malformed_ipv6);
    RUN(test_ipv4_options);
    RUN(test_gid_mcast);
    return unit_summary();
}
