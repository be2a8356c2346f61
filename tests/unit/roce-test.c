/*
 * Unit tests of the RoCEv2 codec (qemu-device/softhca-wire.c): opcode
 * table, parser, builder, ICRC, and frames captured from Linux rdma_rxe.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "softhca-wire.h"
#include "unit.h"
#include "roce-frames.h"

#define ETH_LEN     14
#define IPV4_LEN    20
#define IPV6_LEN    40
#define UDP_LEN     8
#define FRAME_MAX   2048

static uint16_t get16(const uint8_t *p)
{
    return p[0] << 8 | p[1];
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = v >> 8;
    p[1] = v;
}

static size_t hex_decode(const char *hex, uint8_t *out)
{
    size_t n = 0;
    unsigned int byte;

    while (*hex && sscanf(hex, "%2x", &byte) == 1) {
        out[n++] = byte;
        hex += 2;
    }
    return n;
}

static void make_env(SofthcaRoceEnvelope *env, bool ipv6)
{
    static const uint8_t v4_src[16] = { [10] = 0xff, [11] = 0xff,
                                        10, 0, 0, 1 };
    static const uint8_t v4_dst[16] = { [10] = 0xff, [11] = 0xff,
                                        10, 0, 0, 2 };
    static const uint8_t v6_src[16] = { 0xfd, [15] = 1 };
    static const uint8_t v6_dst[16] = { 0xfd, [15] = 2 };

    memset(env, 0, sizeof(*env));
    memcpy(env->dst_mac, "\x52\x54\x00\x00\x00\x02", 6);
    memcpy(env->src_mac, "\x52\x54\x00\x00\x00\x01", 6);
    memcpy(env->src_gid, ipv6 ? v6_src : v4_src, 16);
    memcpy(env->dst_gid, ipv6 ? v6_dst : v4_dst, 16);
    env->src_port = 0xc123;
    env->traffic_class = 0xb8;          /* DSCP EF */
    env->hop_limit = 0x40;
    env->flow_label = 0xabcde;
    env->ip_id = 0x1234;
}

/* Every field set, to values that show truncation or misplaced bytes. */
static void make_packet(SofthcaRocePacket *p, uint8_t opcode, size_t len)
{
    memset(p, 0, sizeof(*p));
    p->bth.opcode = opcode;
    p->bth.solicited = opcode & 1;
    p->bth.mig_req = opcode & 2;
    p->bth.pkey = 0x8001;
    p->bth.fecn = opcode & 4;
    p->bth.becn = opcode & 8;
    p->bth.dest_qpn = 0xabcdef;
    p->bth.ack_req = !(opcode & 1);
    p->bth.psn = 0xfedcba;
    p->deth.qkey = 0x80010002;
    p->deth.src_qpn = 0x123456;
    p->reth.va = 0x0123456789abcdefULL;
    p->reth.rkey = 0x89abcdef;
    p->reth.dma_len = 0x10000001;
    p->atomic.va = 0xfedcba9876543210ULL;
    p->atomic.rkey = 0x76543210;
    p->atomic.swap_add = 0x1122334455667788ULL;
    p->atomic.compare = 0x99aabbccddeeff00ULL;
    p->aeth.syndrome = 0x60;
    p->aeth.msn = 0xa5a5a5;
    p->atomic_ack = 0xdeadbeefcafef00dULL;
    p->imm = 0xfeedface;
    p->inv_rkey = 0x13579bdf;
    p->xrc_srqn = 0x2468ac;
    p->feth = 0x00000031;
    p->payload_len = len;
}

/* Whether a parsed packet has the header fields of the one built from. */
static void check_fields(const SofthcaRocePacket *got,
                         const SofthcaRocePacket *want)
{
    uint16_t xh = softhca_opcode_info(want->bth.opcode)->xh;

    CHECK_EQ(got->bth.opcode, want->bth.opcode);
    CHECK_EQ(got->bth.solicited, want->bth.solicited);
    CHECK_EQ(got->bth.mig_req, want->bth.mig_req);
    CHECK_EQ(got->bth.pad, -want->payload_len & 3);
    CHECK_EQ(got->bth.pkey, want->bth.pkey);
    CHECK_EQ(got->bth.fecn, want->bth.fecn);
    CHECK_EQ(got->bth.becn, want->bth.becn);
    CHECK_EQ(got->bth.dest_qpn, want->bth.dest_qpn);
    CHECK_EQ(got->bth.ack_req, want->bth.ack_req);
    CHECK_EQ(got->bth.psn, want->bth.psn);
    CHECK_EQ(got->xh, xh);
    if (xh & SOFTHCA_XH_XRCETH) {
        CHECK_EQ(got->xrc_srqn, want->xrc_srqn);
    }
    if (xh & SOFTHCA_XH_FETH) {
        CHECK_EQ(got->feth, want->feth);
    }
    if (xh & SOFTHCA_XH_DETH) {
        CHECK_EQ(got->deth.qkey, want->deth.qkey);
        CHECK_EQ(got->deth.src_qpn, want->deth.src_qpn);
    }
    if (xh & SOFTHCA_XH_RETH) {
        CHECK(got->reth.va == want->reth.va);
        CHECK_EQ(got->reth.rkey, want->reth.rkey);
        CHECK_EQ(got->reth.dma_len, want->reth.dma_len);
    }
    if (xh & SOFTHCA_XH_ATOMICETH) {
        CHECK(got->atomic.va == want->atomic.va);
        CHECK_EQ(got->atomic.rkey, want->atomic.rkey);
        CHECK(got->atomic.swap_add == want->atomic.swap_add);
        CHECK(got->atomic.compare == want->atomic.compare);
    }
    if (xh & SOFTHCA_XH_AETH) {
        CHECK_EQ(got->aeth.syndrome, want->aeth.syndrome);
        CHECK_EQ(got->aeth.msn, want->aeth.msn);
    }
    if (xh & SOFTHCA_XH_ATOMICACKETH) {
        CHECK(got->atomic_ack == want->atomic_ack);
    }
    if (xh & SOFTHCA_XH_IMMDT) {
        CHECK_EQ(got->imm, want->imm);
    }
    if (xh & SOFTHCA_XH_IETH) {
        CHECK_EQ(got->inv_rkey, want->inv_rkey);
    }
    CHECK_EQ(got->payload_len, want->payload_len);
}

/* Parse a whole frame: envelope, transport headers, ICRC. */
static bool parse_frame(const uint8_t *f, size_t len, SofthcaUdpFrame *u,
                        SofthcaRocePacket *p)
{
    return softhca_parse_udp(f, len, u) &&
           u->dst_port == SOFTHCA_ROCE_UDP_PORT &&
           softhca_parse_roce(f + u->payload_off, u->payload_len, p) &&
           softhca_icrc_check(f, u);
}

/*
 * Header lengths as rxe_opcode.c has them, and the packet's place in its
 * message: F first, M middle, L last, O only; lower case: no payload.
 */
static const struct {
    uint8_t opcode;
    uint8_t hdr_len;
    char kind;
} expected_ops[] = {
    { 0x00, 12, 'F' }, { 0x01, 12, 'M' }, { 0x02, 12, 'L' },
    { 0x03, 16, 'L' }, { 0x04, 12, 'O' }, { 0x05, 16, 'O' },
    { 0x06, 28, 'F' }, { 0x07, 12, 'M' }, { 0x08, 12, 'L' },
    { 0x09, 16, 'L' }, { 0x0a, 28, 'O' }, { 0x0b, 32, 'O' },
    { 0x0c, 28, 'o' }, { 0x0d, 16, 'F' }, { 0x0e, 12, 'M' },
    { 0x0f, 16, 'L' }, { 0x10, 16, 'O' }, { 0x11, 16, 'o' },
    { 0x12, 24, 'o' }, { 0x13, 40, 'o' }, { 0x14, 40, 'o' },
    { 0x16, 16, 'L' }, { 0x17, 16, 'O' },
    /* IBA 1.5: FLUSH (FETH, RETH), ATOMIC WRITE (RETH, 8 bytes) */
    { 0x1c, 32, 'o' }, { 0x1d, 28, 'O' },
    { 0x20, 12, 'F' }, { 0x21, 12, 'M' }, { 0x22, 12, 'L' },
    { 0x23, 16, 'L' }, { 0x24, 12, 'O' }, { 0x25, 16, 'O' },
    { 0x26, 28, 'F' }, { 0x27, 12, 'M' }, { 0x28, 12, 'L' },
    { 0x29, 16, 'L' }, { 0x2a, 28, 'O' }, { 0x2b, 32, 'O' },
    { 0x64, 20, 'O' }, { 0x65, 24, 'O' },
    /* XRC: RC's operations, an XRCETH before the headers of requests */
    { 0xa0, 16, 'F' }, { 0xa1, 16, 'M' }, { 0xa2, 16, 'L' },
    { 0xa3, 20, 'L' }, { 0xa4, 16, 'O' }, { 0xa5, 20, 'O' },
    { 0xa6, 32, 'F' }, { 0xa7, 16, 'M' }, { 0xa8, 16, 'L' },
    { 0xa9, 20, 'L' }, { 0xaa, 32, 'O' }, { 0xab, 36, 'O' },
    { 0xac, 32, 'o' }, { 0xad, 16, 'F' }, { 0xae, 12, 'M' },
    { 0xaf, 16, 'L' }, { 0xb0, 16, 'O' }, { 0xb1, 16, 'o' },
    { 0xb2, 24, 'o' }, { 0xb3, 44, 'o' }, { 0xb4, 44, 'o' },
    { 0xb6, 20, 'L' }, { 0xb7, 20, 'O' },
};
#define N_OPS (sizeof(expected_ops) / sizeof(expected_ops[0]))

static void test_opcode_table(void)
{
    size_t supported = 0;

    for (unsigned int op = 0; op < 256; op++) {
        supported += softhca_opcode_info(op) != NULL;
    }
    CHECK_EQ(supported, N_OPS);
    for (size_t i = 0; i < N_OPS; i++) {
        const SofthcaOpInfo *info = softhca_opcode_info(expected_ops[i].opcode);
        char kind = expected_ops[i].kind;
        char upper = kind & ~0x20;

        CHECK(info != NULL);
        if (!info) {
            continue;
        }
        CHECK_EQ(info->hdr_len, expected_ops[i].hdr_len);
        CHECK_EQ(!!(info->flags & SOFTHCA_OPF_PAYLOAD), kind == upper);
        CHECK_EQ(!!(info->flags & SOFTHCA_OPF_FIRST),
                 upper == 'F' || upper == 'O');
        CHECK_EQ(!!(info->flags & SOFTHCA_OPF_LAST),
                 upper == 'L' || upper == 'O');
    }
    /* the order of the extended headers where there are two */
    CHECK_EQ(softhca_opcode_info(0x0b)->xh,
             SOFTHCA_XH_RETH | SOFTHCA_XH_IMMDT);
    CHECK_EQ(softhca_opcode_info(0x65)->xh,
             SOFTHCA_XH_DETH | SOFTHCA_XH_IMMDT);
    CHECK_EQ(softhca_opcode_info(0x12)->xh,
             SOFTHCA_XH_AETH | SOFTHCA_XH_ATOMICACKETH);
    CHECK_EQ(softhca_opcode_info(0xab)->xh,
             SOFTHCA_XH_XRCETH | SOFTHCA_XH_RETH | SOFTHCA_XH_IMMDT);
    CHECK_EQ(softhca_opcode_info(0x1c)->xh,
             SOFTHCA_XH_FETH | SOFTHCA_XH_RETH);
}

/* Rewrite the checksum of a 20-byte IPv4 header after changing it. */
static void ipv4_fix(uint8_t *ip)
{
    uint32_t sum = 0;

    put16(ip + 10, 0);
    for (int i = 0; i < IPV4_LEN; i += 2) {
        sum += get16(ip + i);
    }
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    put16(ip + 10, ~sum);
}

/* IPv4: the header checksum holds, and the fixed fields are as sent. */
static void check_ipv4_header(const uint8_t *ip, const SofthcaRoceEnvelope *e)
{
    uint32_t sum = 0;

    for (int i = 0; i < IPV4_LEN; i += 2) {
        sum += get16(ip + i);
    }
    sum = (sum & 0xffff) + (sum >> 16);
    CHECK_EQ(sum, 0xffff);
    CHECK_EQ(ip[1], e->traffic_class);
    CHECK_EQ(get16(ip + 4), e->ip_id);
    CHECK_EQ(get16(ip + 6), 0x4000);    /* DF */
    CHECK_EQ(ip[8], e->hop_limit);
}

static void check_ipv6_header(const uint8_t *ip, const SofthcaRoceEnvelope *e)
{
    CHECK_EQ(ip[0], 0x60 | e->traffic_class >> 4);
    CHECK_EQ(ip[1], (e->traffic_class & 0xf) << 4 | e->flow_label >> 16);
    CHECK_EQ(get16(ip + 2), e->flow_label & 0xffff);
    CHECK_EQ(ip[7], e->hop_limit);
}

/* Build then parse every opcode, over IPv4 and IPv6, for several sizes. */
static void test_roundtrip(void)
{
    static const size_t sizes[] = { 0, 1, 2, 3, 4, 5, 257, 1024 };
    uint8_t frame[FRAME_MAX], payload[1024];

    for (size_t i = 0; i < sizeof(payload); i++) {
        payload[i] = i * 7 + 3;
    }
    for (int ipv6 = 0; ipv6 < 2; ipv6++) {
        SofthcaRoceEnvelope env;

        make_env(&env, ipv6);
        for (size_t i = 0; i < N_OPS; i++) {
            uint8_t op = expected_ops[i].opcode;
            bool has_payload = !(expected_ops[i].kind & 0x20);

            for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
                SofthcaRocePacket want, got;
                SofthcaUdpFrame u;
                size_t len, ip_len = ipv6 ? IPV6_LEN : IPV4_LEN;

                if (!has_payload && sizes[s]) {
                    break;
                }
                make_packet(&want, op, sizes[s]);
                len = softhca_build_roce(frame, sizeof(frame), &env, &want,
                                         payload);
                CHECK_EQ(len, ETH_LEN + ip_len + UDP_LEN +
                         expected_ops[i].hdr_len + ((sizes[s] + 3) & ~3) + 4);
                CHECK(parse_frame(frame, len, &u, &got));
                CHECK_EQ(u.ipv6, ipv6);
                CHECK_EQ(u.src_port, env.src_port);
                CHECK(!memcmp(u.src_gid, env.src_gid, 16));
                CHECK(!memcmp(u.dst_gid, env.dst_gid, 16));
                CHECK(!memcmp(frame, env.dst_mac, 6));
                CHECK(!memcmp(frame + 6, env.src_mac, 6));
                CHECK_EQ(get16(frame + u.payload_off - 2), 0); /* UDP csum */
                if (ipv6) {
                    check_ipv6_header(frame + ETH_LEN, &env);
                } else {
                    check_ipv4_header(frame + ETH_LEN, &env);
                }
                check_fields(&got, &want);
                CHECK_EQ(got.payload_off, expected_ops[i].hdr_len);
                CHECK_EQ(softhca_roce_payload_off(&env, op),
                         u.payload_off + got.payload_off);
                CHECK(!memcmp(frame + u.payload_off + got.payload_off,
                              payload, sizes[s]));
            }
        }
    }
}

/*
 * A payload written first where softhca_roce_payload_off() says is kept,
 * pad bytes zeroed.
 */
static void test_payload_in_place(void)
{
    uint8_t frame[128];
    size_t off, len;
    SofthcaRoceEnvelope env;
    SofthcaRocePacket p, got;
    SofthcaUdpFrame u;

    make_env(&env, false);
    make_packet(&p, SOFTHCA_TRANSPORT_RC | SOFTHCA_OP_SEND_ONLY, 5);
    off = softhca_roce_payload_off(&env, p.bth.opcode);
    CHECK_EQ(off, ETH_LEN + IPV4_LEN + UDP_LEN + 12);
    memset(frame, 0xee, sizeof(frame));
    memcpy(frame + off, "hello", 5);
    len = softhca_build_roce(frame, sizeof(frame), &env, &p, frame + off);
    CHECK(parse_frame(frame, len, &u, &got));
    CHECK(!memcmp(frame + off, "hello\0\0\0", 8));
    CHECK_EQ(got.bth.pad, 3);
}

/*
 * A frame gathered from headers, payload pieces and tail is, byte for byte,
 * the frame built whole: for every opcode with a payload, IPv4 and IPv6,
 * payloads of every pad count, cut into pieces of every size.
 */
static void test_gather(void)
{
    uint8_t whole[FRAME_MAX], hdr[FRAME_MAX], tail[SOFTHCA_ROCE_TAIL_MAX];
    uint8_t payload[1031], gathered[FRAME_MAX];

    for (size_t i = 0; i < sizeof(payload); i++) {
        payload[i] = i * 7 + 3;
    }
    for (int v6 = 0; v6 <= 1; v6++) {
        SofthcaRoceEnvelope env;

        make_env(&env, v6);
        for (size_t i = 0; i < N_OPS; i++) {
            if (expected_ops[i].kind & 0x20) {
                continue;               /* no payload */
            }
            for (size_t n = 1028; n <= sizeof(payload); n++) {
                for (size_t piece = 1; piece <= n; piece = piece * 4 + 1) {
                    struct iovec iov[1100];
                    SofthcaRocePacket p;
                    size_t len, hlen, tlen, at = 0;
                    int cnt = 0;

                    make_packet(&p, expected_ops[i].opcode, n);
                    len = softhca_build_roce(whole, sizeof(whole), &env, &p,
                                             payload);
                    CHECK(len);
                    for (size_t o = 0; o < n; o += piece) {
                        iov[cnt].iov_base = payload + o;
                        iov[cnt++].iov_len = n - o < piece ? n - o : piece;
                    }
                    memset(tail, 0xee, sizeof(tail));
                    hlen = softhca_build_roce_gather(hdr, sizeof(hdr), &env,
                                                     &p, iov, cnt, tail,
                                                     &tlen);
                    CHECK_EQ(hlen, softhca_roce_payload_off(&env, p.bth.opcode));
                    memcpy(gathered, hdr, hlen);
                    at = hlen;
                    memcpy(gathered + at, payload, n);
                    at += n;
                    memcpy(gathered + at, tail, tlen);
                    CHECK_EQ(at + tlen, len);
                    CHECK(!memcmp(gathered, whole, len));
                }
            }
        }
    }
}

/*
 * Every prefix of a packet is refused and read within bounds, except at a
 * word boundary inside the payload: a shorter payload is then well formed
 * and only the ICRC tells.
 */
static void test_truncated_packet(void)
{
    uint8_t frame[FRAME_MAX], payload[9] = "truncated";
    SofthcaRoceEnvelope env;

    make_env(&env, false);
    for (size_t i = 0; i < N_OPS; i++) {
        bool has_payload = !(expected_ops[i].kind & 0x20);
        size_t roce_off = ETH_LEN + IPV4_LEN + UDP_LEN, len, full;
        SofthcaRocePacket p, got;

        make_packet(&p, expected_ops[i].opcode, has_payload ? 9 : 0);
        len = softhca_build_roce(frame, sizeof(frame), &env, &p, payload);
        full = len - roce_off;
        for (size_t n = 0; n < full; n++) {
            uint8_t *copy = malloc(n ? n : 1);
            bool ok;

            memcpy(copy, frame + roce_off, n);
            ok = softhca_parse_roce(copy, n, &got);
            free(copy);
            /* with 4 bytes of payload left: more than the pad count */
            if (!has_payload || n % 4 || n < expected_ops[i].hdr_len + 8u) {
                CHECK(!ok);
            } else {
                uint8_t f[FRAME_MAX];
                SofthcaUdpFrame u;

                /* the same datagram cut to n bytes of RoCE */
                CHECK(ok);
                memcpy(f, frame, roce_off + n);
                put16(f + ETH_LEN + 2, IPV4_LEN + UDP_LEN + n);
                ipv4_fix(f + ETH_LEN);
                put16(f + ETH_LEN + IPV4_LEN + 4, UDP_LEN + n);
                CHECK(softhca_parse_udp(f, roce_off + n, &u));
                CHECK(softhca_parse_roce(f + roce_off, n, &got));
                CHECK(!softhca_icrc_check(f, &u));
            }
        }
    }
}

static void test_pad(void)
{
    uint8_t frame[128], pkt[64], payload[8] = "abcdefgh";
    SofthcaRoceEnvelope env;
    SofthcaRocePacket p, got;
    SofthcaUdpFrame u;

    make_env(&env, false);
    for (size_t n = 0; n <= 8; n++) {
        size_t len;

        make_packet(&p, SOFTHCA_TRANSPORT_UC | SOFTHCA_OP_SEND_ONLY, n);
        len = softhca_build_roce(frame, sizeof(frame), &env, &p, payload);
        CHECK(parse_frame(frame, len, &u, &got));
        CHECK_EQ(got.bth.pad, (4 - n % 4) % 4);
        CHECK_EQ(got.payload_len, n);
        /* the pad bytes are zeros */
        for (size_t i = n; i < n + got.bth.pad; i++) {
            CHECK_EQ(frame[u.payload_off + got.payload_off + i], 0);
        }
    }

    /* a pad count larger than the payload */
    memset(pkt, 0, sizeof(pkt));
    pkt[0] = SOFTHCA_TRANSPORT_RC | SOFTHCA_OP_SEND_ONLY;
    pkt[1] = 1 << 4;
    CHECK(!softhca_parse_roce(pkt, 12 + 4, &got));
    pkt[1] = 3 << 4;                    /* 1 byte of payload */
    CHECK(softhca_parse_roce(pkt, 12 + 4 + 4, &got));
    CHECK_EQ(got.payload_len, 1);

    /* a pad count on a packet without payload */
    pkt[0] = SOFTHCA_TRANSPORT_RC | SOFTHCA_OP_ACKNOWLEDGE;
    pkt[1] = 2 << 4;
    CHECK(!softhca_parse_roce(pkt, 12 + 4 + 4, &got));
}

static void test_malformed(void)
{
    uint8_t pkt[64];
    SofthcaRocePacket got;

    memset(pkt, 0, sizeof(pkt));
    pkt[0] = SOFTHCA_TRANSPORT_RC | SOFTHCA_OP_SEND_ONLY;
    CHECK(softhca_parse_roce(pkt, 12 + 8 + 4, &got));

    /* transport header version */
    for (int tver = 1; tver < 16; tver++) {
        pkt[1] = tver;
        CHECK(!softhca_parse_roce(pkt, 12 + 8 + 4, &got));
    }
    pkt[1] = 0;

    /* not a whole number of words */
    for (size_t n = 12 + 8 + 1; n < 12 + 8 + 4; n++) {
        CHECK(!softhca_parse_roce(pkt, n, &got));
    }

    /* every opcode that is not in the table */
    for (unsigned int op = 0; op < 256; op++) {
        pkt[0] = op;
        if (!softhca_opcode_info(op)) {
            CHECK(!softhca_parse_roce(pkt, sizeof(pkt), &got));
        }
    }

    /* payload on an opcode that has none */
    pkt[0] = SOFTHCA_TRANSPORT_RC | SOFTHCA_OP_ACKNOWLEDGE;
    CHECK(softhca_parse_roce(pkt, 12 + 4 + 4, &got));
    CHECK(!softhca_parse_roce(pkt, 12 + 4 + 4 + 4, &got));
    pkt[0] = SOFTHCA_TRANSPORT_RC | SOFTHCA_OP_RDMA_READ_REQUEST;
    CHECK(softhca_parse_roce(pkt, 12 + 16 + 4, &got));
    CHECK(!softhca_parse_roce(pkt, 12 + 16 + 4 + 4, &got));

    /* reserved bits are ignored, as IBA wants of a receiver */
    pkt[0] = SOFTHCA_TRANSPORT_RC | SOFTHCA_OP_SEND_ONLY;
    pkt[4] = 0x3f;
    pkt[8] = 0x7f;
    CHECK(softhca_parse_roce(pkt, 12 + 8 + 4, &got));
    CHECK(!got.bth.fecn && !got.bth.becn && !got.bth.ack_req);
    CHECK_EQ(got.bth.dest_qpn, 0);
    CHECK_EQ(got.bth.psn, 0);
}

static void test_build_refused(void)
{
    uint8_t frame[FRAME_MAX];
    SofthcaRoceEnvelope env;
    SofthcaRocePacket p;
    size_t len;

    make_env(&env, false);
    make_packet(&p, 0x15, 0);           /* reserved opcode */
    CHECK_EQ(softhca_build_roce(frame, sizeof(frame), &env, &p, NULL), 0);
    CHECK_EQ(softhca_roce_payload_off(&env, 0x15), 0);

    make_packet(&p, SOFTHCA_TRANSPORT_RC | SOFTHCA_OP_ACKNOWLEDGE, 4);
    CHECK_EQ(softhca_build_roce(frame, sizeof(frame), &env, &p, frame), 0);

    make_packet(&p, SOFTHCA_TRANSPORT_RC | SOFTHCA_OP_SEND_ONLY, 65536);
    CHECK_EQ(softhca_build_roce(frame, SIZE_MAX, &env, &p, frame), 0);

    /* one IPv4 and one IPv6 GID */
    env.dst_gid[10] = 0;
    make_packet(&p, SOFTHCA_TRANSPORT_RC | SOFTHCA_OP_ACKNOWLEDGE, 0);
    CHECK_EQ(softhca_build_roce(frame, sizeof(frame), &env, &p, NULL), 0);

    /* a buffer one byte too small is not written past */
    make_env(&env, true);
    make_packet(&p, SOFTHCA_TRANSPORT_UD | SOFTHCA_OP_SEND_ONLY_IMM, 3);
    len = softhca_build_roce(frame, sizeof(frame), &env, &p, "abc");
    CHECK_EQ(len, ETH_LEN + IPV6_LEN + UDP_LEN + 24 + 4 + 4);
    for (size_t n = 0; n < len; n++) {
        uint8_t *buf = malloc(n ? n : 1);

        CHECK_EQ(softhca_build_roce(buf, n, &env, &p, "abc"), 0);
        free(buf);
    }
}

/* What routers may rewrite is out of the ICRC; anything else is in. */
static void test_icrc_masking(void)
{
    static const size_t v4_masked[] = { 15, 22, 24, 25 };
    static const size_t v6_masked[] = { 14, 15, 16, 17, 21 };
    static const size_t v4_covered[] = { 14, 16, 18, 19, 20, 23, 26, 33 };
    static const size_t v6_covered[] = { 18, 19, 20, 22, 37, 53 };
    uint8_t frame[128], payload[6] = "ICRC!!";

    for (int ipv6 = 0; ipv6 < 2; ipv6++) {
        const size_t *masked = ipv6 ? v6_masked : v4_masked;
        const size_t *covered = ipv6 ? v6_covered : v4_covered;
        size_t n_masked = ipv6 ? 5 : 4, n_covered = ipv6 ? 6 : 8;
        size_t udp = ETH_LEN + (ipv6 ? IPV6_LEN : IPV4_LEN), len, bth;
        SofthcaRoceEnvelope env;
        SofthcaRocePacket p;
        SofthcaUdpFrame u;

        make_env(&env, ipv6);
        make_packet(&p, SOFTHCA_TRANSPORT_RC | SOFTHCA_OP_SEND_ONLY, 6);
        len = softhca_build_roce(frame, sizeof(frame), &env, &p, payload);
        CHECK(softhca_parse_udp(frame, len, &u));
        bth = u.payload_off;
        CHECK(softhca_icrc_check(frame, &u));
        for (size_t i = 0; i < n_masked; i++) {
            frame[masked[i]] ^= 0x0f;    /* not IPv6's version */
        }
        frame[udp + 6] ^= 0xff;         /* UDP checksum */
        frame[udp + 7] ^= 0x01;
        frame[bth + 4] ^= 0xff;         /* FECN, BECN, reserved */
        CHECK(softhca_icrc_check(frame, &u));

        /* IP length, ID, flags, addresses; UDP; other BTH bytes; payload */
        for (size_t i = 0; i < n_covered; i++) {
            frame[covered[i]] ^= 0x01;
            CHECK(!softhca_icrc_check(frame, &u));
            frame[covered[i]] ^= 0x01;
        }
        for (size_t i = udp; i < udp + 6; i++) {
            frame[i] ^= 0x01;
            CHECK(!softhca_icrc_check(frame, &u));
            frame[i] ^= 0x01;
        }
        for (size_t i = bth; i < len; i++) {
            if (i == bth + 4) {
                continue;
            }
            frame[i] ^= 0x80;
            CHECK(!softhca_icrc_check(frame, &u));
            frame[i] ^= 0x80;
        }
        CHECK(softhca_icrc_check(frame, &u));

        /* too short to hold a BTH and an ICRC */
        u.payload_len = SOFTHCA_BTH_LEN + SOFTHCA_ICRC_LEN - 1;
        CHECK(!softhca_icrc_check(frame, &u));
    }
}

static void test_src_port(void)
{
    /* the flow label folded to 14 bits: 0x2345 ^ 0x4 */
    CHECK_EQ(softhca_roce_src_port(0x12345, 1, 2), 0xc000 | 0x2341);
    /* symmetric in the QP numbers, and within 0xc000..0xffff */
    CHECK_EQ(softhca_roce_src_port(0, 0x11, 0x2a),
             softhca_roce_src_port(0, 0x2a, 0x11));
    CHECK_EQ(softhca_roce_src_port(0, 0xffffff, 0xffffff) & 0xc000, 0xc000);
}

/* Rebuild a parsed frame from its fields. */
static size_t rebuild(const uint8_t *f, const SofthcaUdpFrame *u,
                      const SofthcaRocePacket *p, uint8_t *out)
{
    const uint8_t *ip = f + ETH_LEN;
    SofthcaRoceEnvelope env;

    memcpy(env.dst_mac, f, 6);
    memcpy(env.src_mac, f + 6, 6);
    memcpy(env.src_gid, u->src_gid, 16);
    memcpy(env.dst_gid, u->dst_gid, 16);
    env.src_port = u->src_port;
    if (u->ipv6) {
        env.traffic_class = (ip[0] << 4 | ip[1] >> 4) & 0xff;
        env.flow_label = (ip[1] & 0xf) << 16 | get16(ip + 2);
        env.hop_limit = ip[7];
        env.ip_id = 0;
    } else {
        env.traffic_class = ip[1];
        env.flow_label = 0;
        env.hop_limit = ip[8];
        env.ip_id = get16(ip + 4);
    }
    return softhca_build_roce(out, FRAME_MAX, &env, p,
                              f + u->payload_off + p->payload_off);
}

/*
 * Frames from rdma_rxe: decoded as tshark decodes them, their ICRC
 * matches ours, and rebuilt from their fields they are byte-identical.
 */
static void test_rxe_frames(void)
{
    for (size_t i = 0; i < sizeof(roce_frames) / sizeof(roce_frames[0]); i++) {
        const RoceFrame *r = &roce_frames[i];
        uint8_t f[FRAME_MAX], again[FRAME_MAX];
        size_t len = hex_decode(r->hex, f);
        SofthcaRocePacket p;
        SofthcaUdpFrame u;
        uint16_t xh;

        CHECK_EQ(len * 2, strlen(r->hex));
        if (!parse_frame(f, len, &u, &p)) {
            fprintf(stderr, "%s: not parsed\n", r->name);
            CHECK(false);
            continue;
        }
        xh = p.xh;
        CHECK_EQ(p.bth.opcode, r->opcode);
        CHECK_EQ(p.bth.solicited, r->se);
        CHECK_EQ(p.bth.mig_req, r->mig_req);
        CHECK_EQ(p.bth.pad, r->pad);
        CHECK_EQ(p.bth.pkey, r->pkey);
        CHECK_EQ(p.bth.dest_qpn, r->dest_qpn);
        CHECK_EQ(p.bth.ack_req, r->ack_req);
        CHECK_EQ(p.bth.psn, r->psn);
        CHECK_EQ(p.payload_len, r->payload_len);
        if (xh & SOFTHCA_XH_RETH) {
            CHECK(p.reth.va == r->va);
            CHECK_EQ(p.reth.rkey, r->rkey);
            CHECK_EQ(p.reth.dma_len, r->dma_len);
        }
        if (xh & SOFTHCA_XH_ATOMICETH) {
            CHECK(p.atomic.va == r->va);
            CHECK_EQ(p.atomic.rkey, r->rkey);
            CHECK(p.atomic.swap_add == r->swap_add);
            CHECK(p.atomic.compare == r->compare);
        }
        if (xh & SOFTHCA_XH_AETH) {
            CHECK_EQ(p.aeth.syndrome, r->syndrome);
            CHECK_EQ(p.aeth.msn, r->msn);
        }
        if (xh & SOFTHCA_XH_ATOMICACKETH) {
            CHECK(p.atomic_ack == r->orig);
        }
        if (xh & SOFTHCA_XH_DETH) {
            CHECK_EQ(p.deth.qkey, r->qkey);
            CHECK_EQ(p.deth.src_qpn, r->src_qpn);
        }
        if (xh & SOFTHCA_XH_IMMDT) {
            CHECK_EQ(p.imm, r->imm);
        }
        /*
         * rxe's connected QPs take the UDP port of rdma_get_udp_sport();
         * both nodes number their QPs alike in these captures.
         */
        if ((r->opcode & SOFTHCA_TRANSPORT_MASK) != SOFTHCA_TRANSPORT_UD) {
            CHECK_EQ(u.src_port,
                     softhca_roce_src_port(0, r->dest_qpn, r->dest_qpn));
        }

        CHECK_EQ(rebuild(f, &u, &p, again), len);
        CHECK(!memcmp(again, f, len));

        f[len - 5] ^= 1;                /* the last byte before the ICRC */
        CHECK(!softhca_icrc_check(f, &u));
    }
}

/*
 * A FLUSH (GLOBAL, RANGE, 64 bytes) from rdma_rxe of Linux 6.12.95,
 * captured in the lab (tests/guest/aw-flush as client on rxe0): its ICRC
 * covers the BTH, FETH and RETH a second time.  It is accepted; the same
 * packet built again carries the correct ICRC, and x-rxe-flush-icrc's
 * rewrite gives back rxe's bytes.  Other opcodes get no second chance.
 */
static void test_rxe_flush_icrc(void)
{
    static const char hex[] =
        "52540000000152540000000208004500004062b640004011c3f40a000002"
        "0a000001c02c12b7002c00001c00ffff0000000280fff102000000010000"
        "561fbf6110000000020500000040e2aefd96";
    uint8_t f[FRAME_MAX], again[FRAME_MAX];
    size_t len = hex_decode(hex, f);
    SofthcaRocePacket p;
    SofthcaUdpFrame u;

    CHECK_EQ(len, 78);
    CHECK(parse_frame(f, len, &u, &p));
    CHECK_EQ(p.bth.opcode, SOFTHCA_OP_FLUSH);
    CHECK_EQ(p.feth, 1);                        /* GLOBAL, level RANGE */
    CHECK_EQ(p.reth.rkey, 0x205);
    CHECK_EQ(p.reth.dma_len, 64);
    CHECK_EQ(p.payload_len, 0);

    CHECK_EQ(rebuild(f, &u, &p, again), len);
    CHECK(memcmp(again, f, len - SOFTHCA_ICRC_LEN) == 0);
    CHECK(memcmp(again + len - 4, f + len - 4, 4) != 0);
    CHECK(softhca_icrc_check(again, &u));
    CHECK(softhca_icrc_set_rxe_flush(again, len));
    CHECK(memcmp(again, f, len) == 0);

    f[len - 5] ^= 1;                            /* in the RETH */
    CHECK(!softhca_icrc_check(f, &u));
    f[len - 5] ^= 1;
    f[u.payload_off] = SOFTHCA_OP_RDMA_READ_REQUEST;
    CHECK(!softhca_icrc_check(f, &u));
    CHECK(!softhca_icrc_set_rxe_flush(f, len));
}

int main(void)
{
    RUN(test_opcode_table);
    RUN(test_roundtrip);
    RUN(test_payload_in_place);
    RUN(test_gather);
    RUN(test_truncated_packet);
    RUN(test_pad);
    RUN(test_malformed);
    RUN(test_build_refused);
    RUN(test_icrc_masking);
    RUN(test_src_port);
    RUN(test_rxe_frames);
    RUN(test_rxe_flush_icrc);
    return unit_summary();
}
