/*
 * softhca: the RoCEv2 wire format: parsing and building of frames, ICRC
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "softhca-crc32.h"
#include "softhca-wire.h"

#define ETH_HDR_LEN     14
#define ETHERTYPE_IPV4  0x0800
#define ETHERTYPE_IPV6  0x86dd
#define IPV4_HDR_MIN    20
#define IPV6_HDR_LEN    40
#define UDP_HDR_LEN     8
#define IP_PROTO_UDP_   17

static uint16_t rd_be16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t rd_be24(const uint8_t *p)
{
    return (uint32_t)p[0] << 16 | p[1] << 8 | p[2];
}

static uint32_t rd_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | rd_be24(p + 1);
}

static uint64_t rd_be64(const uint8_t *p)
{
    return (uint64_t)rd_be32(p) << 32 | rd_be32(p + 4);
}

static void wr_be16(uint8_t *p, uint16_t v)
{
    p[0] = v >> 8;
    p[1] = v;
}

static void wr_be24(uint8_t *p, uint32_t v)
{
    p[0] = v >> 16;
    p[1] = v >> 8;
    p[2] = v;
}

static void wr_be32(uint8_t *p, uint32_t v)
{
    p[0] = v >> 24;
    wr_be24(p + 1, v);
}

static void wr_be64(uint8_t *p, uint64_t v)
{
    wr_be32(p, v >> 32);
    wr_be32(p + 4, v);
}

/* The one's complement of the one's complement sum of 16-bit words */
static uint16_t ip_checksum(const uint8_t *p, size_t len)
{
    uint32_t sum = 0;

    for (size_t i = 0; i < len; i += 2) {
        sum += rd_be16(p + i);
    }
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return ~sum;
}

/*
 * Returns the offset of the UDP header, or 0 if this is not IPv4/UDP or
 * its header is damaged: a datagram QP hands the header to software (as
 * its GRH), so the lengths and the header checksum must be right.
 */
static size_t softhca_parse_ipv4(const uint8_t *ip, size_t len,
                                 SofthcaUdpFrame *f)
{
    size_t ihl, total;

    if (len < IPV4_HDR_MIN || (ip[0] >> 4) != 4) {
        return 0;
    }
    ihl = (ip[0] & 0xf) * 4;
    total = rd_be16(ip + 2);
    /* more fragments, or a fragment offset: not a whole datagram */
    if (ihl < IPV4_HDR_MIN || total < ihl || total > len ||
        (rd_be16(ip + 6) & 0x3fff) || ip[9] != IP_PROTO_UDP_ ||
        ip_checksum(ip, ihl) != 0) {
        return 0;
    }
    memset(f->src_gid, 0, 10);
    f->src_gid[10] = f->src_gid[11] = 0xff;
    memcpy(f->src_gid + 12, ip + 12, 4);
    memset(f->dst_gid, 0, 10);
    f->dst_gid[10] = f->dst_gid[11] = 0xff;
    memcpy(f->dst_gid + 12, ip + 16, 4);
    f->ipv6 = false;
    f->payload_len = total - ihl;       /* of IP, UDP header included */
    return ihl;
}

static size_t softhca_parse_ipv6(const uint8_t *ip, size_t len,
                                 SofthcaUdpFrame *f)
{
    size_t payload;

    if (len < IPV6_HDR_LEN || (ip[0] >> 4) != 6 || ip[6] != IP_PROTO_UDP_) {
        return 0;
    }
    payload = rd_be16(ip + 4);
    if (payload > len - IPV6_HDR_LEN) {
        return 0;
    }
    memcpy(f->src_gid, ip + 8, 16);
    memcpy(f->dst_gid, ip + 24, 16);
    f->ipv6 = true;
    f->payload_len = payload;
    return IPV6_HDR_LEN;
}

bool softhca_parse_udp(const uint8_t *buf, size_t len, SofthcaUdpFrame *f)
{
    const uint8_t *ip = buf + ETH_HDR_LEN;
    size_t ip_len, l4, udp_len;

    if (len < ETH_HDR_LEN) {
        return false;
    }
    ip_len = len - ETH_HDR_LEN;
    switch (rd_be16(buf + 12)) {
    case ETHERTYPE_IPV4:
        l4 = softhca_parse_ipv4(ip, ip_len, f);
        break;
    case ETHERTYPE_IPV6:
        l4 = softhca_parse_ipv6(ip, ip_len, f);
        break;
    default:
        return false;
    }
    /* f->payload_len holds the IP payload length here */
    if (l4 == 0 || f->payload_len < UDP_HDR_LEN) {
        return false;
    }
    udp_len = rd_be16(ip + l4 + 4);
    if (udp_len < UDP_HDR_LEN || udp_len > f->payload_len) {
        return false;
    }
    f->src_port = rd_be16(ip + l4);
    f->dst_port = rd_be16(ip + l4 + 2);
    f->payload_off = ETH_HDR_LEN + l4 + UDP_HDR_LEN;
    f->payload_len = udp_len - UDP_HDR_LEN;
    return true;
}

/* --- RoCEv2 ------------------------------------------------------------ */

#define XH_LEN(xh)                                                      \
    (((xh) & SOFTHCA_XH_XRCETH ? SOFTHCA_XRCETH_LEN : 0) +              \
     ((xh) & SOFTHCA_XH_FETH ? SOFTHCA_FETH_LEN : 0) +                  \
     ((xh) & SOFTHCA_XH_DETH ? SOFTHCA_DETH_LEN : 0) +                  \
     ((xh) & SOFTHCA_XH_RETH ? SOFTHCA_RETH_LEN : 0) +                  \
     ((xh) & SOFTHCA_XH_ATOMICETH ? SOFTHCA_ATOMICETH_LEN : 0) +        \
     ((xh) & SOFTHCA_XH_AETH ? SOFTHCA_AETH_LEN : 0) +                  \
     ((xh) & SOFTHCA_XH_ATOMICACKETH ? SOFTHCA_ATOMICACKETH_LEN : 0) +  \
     ((xh) & SOFTHCA_XH_IMMDT ? SOFTHCA_IMMDT_LEN : 0) +                \
     ((xh) & SOFTHCA_XH_IETH ? SOFTHCA_IETH_LEN : 0))

#define OP(tr, op, xh_, flags_)                                         \
    [SOFTHCA_TRANSPORT_##tr | SOFTHCA_OP_##op] = {                      \
        .xh = (xh_), .flags = (flags_),                                 \
        .hdr_len = SOFTHCA_BTH_LEN + XH_LEN(xh_),                       \
    }

#define P               SOFTHCA_OPF_PAYLOAD
#define F               SOFTHCA_OPF_FIRST
#define L               SOFTHCA_OPF_LAST
#define DETH            SOFTHCA_XH_DETH
#define RETH            SOFTHCA_XH_RETH
#define ATOMICETH       SOFTHCA_XH_ATOMICETH
#define AETH            SOFTHCA_XH_AETH
#define ATOMICACKETH    SOFTHCA_XH_ATOMICACKETH
#define IMM             SOFTHCA_XH_IMMDT
#define IETH            SOFTHCA_XH_IETH
#define XRC             SOFTHCA_XH_XRCETH
#define FETH            SOFTHCA_XH_FETH

/*
 * Indexed by opcode; hdr_len 0 marks an unsupported one.  UC has RC's
 * sends and writes; UD only sends a message in one packet; XRC has RC's
 * operations, its requests with an XRCETH first.
 */
static const SofthcaOpInfo softhca_opcodes[256] = {
    OP(RC, SEND_FIRST,           0,                   P | F),
    OP(RC, SEND_MIDDLE,          0,                   P),
    OP(RC, SEND_LAST,            0,                   P | L),
    OP(RC, SEND_LAST_IMM,        IMM,                 P | L),
    OP(RC, SEND_ONLY,            0,                   P | F | L),
    OP(RC, SEND_ONLY_IMM,        IMM,                 P | F | L),
    OP(RC, RDMA_WRITE_FIRST,     RETH,                P | F),
    OP(RC, RDMA_WRITE_MIDDLE,    0,                   P),
    OP(RC, RDMA_WRITE_LAST,      0,                   P | L),
    OP(RC, RDMA_WRITE_LAST_IMM,  IMM,                 P | L),
    OP(RC, RDMA_WRITE_ONLY,      RETH,                P | F | L),
    OP(RC, RDMA_WRITE_ONLY_IMM,  RETH | IMM,          P | F | L),
    OP(RC, RDMA_READ_REQUEST,    RETH,                F | L),
    OP(RC, READ_RESPONSE_FIRST,  AETH,                P | F),
    OP(RC, READ_RESPONSE_MIDDLE, 0,                   P),
    OP(RC, READ_RESPONSE_LAST,   AETH,                P | L),
    OP(RC, READ_RESPONSE_ONLY,   AETH,                P | F | L),
    OP(RC, ACKNOWLEDGE,          AETH,                F | L),
    OP(RC, ATOMIC_ACKNOWLEDGE,   AETH | ATOMICACKETH, F | L),
    OP(RC, COMPARE_SWAP,         ATOMICETH,           F | L),
    OP(RC, FETCH_ADD,            ATOMICETH,           F | L),
    OP(RC, SEND_LAST_INV,        IETH,                P | L),
    OP(RC, SEND_ONLY_INV,        IETH,                P | F | L),
    OP(RC, FLUSH,                FETH | RETH,         F | L),
    OP(RC, ATOMIC_WRITE,         RETH,                P | F | L),
    OP(UC, SEND_FIRST,           0,                   P | F),
    OP(UC, SEND_MIDDLE,          0,                   P),
    OP(UC, SEND_LAST,            0,                   P | L),
    OP(UC, SEND_LAST_IMM,        IMM,                 P | L),
    OP(UC, SEND_ONLY,            0,                   P | F | L),
    OP(UC, SEND_ONLY_IMM,        IMM,                 P | F | L),
    OP(UC, RDMA_WRITE_FIRST,     RETH,                P | F),
    OP(UC, RDMA_WRITE_MIDDLE,    0,                   P),
    OP(UC, RDMA_WRITE_LAST,      0,                   P | L),
    OP(UC, RDMA_WRITE_LAST_IMM,  IMM,                 P | L),
    OP(UC, RDMA_WRITE_ONLY,      RETH,                P | F | L),
    OP(UC, RDMA_WRITE_ONLY_IMM,  RETH | IMM,          P | F | L),
    OP(UD, SEND_ONLY,            DETH,                P | F | L),
    OP(UD, SEND_ONLY_IMM,        DETH | IMM,          P | F | L),
    OP(XRC, SEND_FIRST,          XRC,                 P | F),
    OP(XRC, SEND_MIDDLE,         XRC,                 P),
    OP(XRC, SEND_LAST,           XRC,                 P | L),
    OP(XRC, SEND_LAST_IMM,       XRC | IMM,           P | L),
    OP(XRC, SEND_ONLY,           XRC,                 P | F | L),
    OP(XRC, SEND_ONLY_IMM,       XRC | IMM,           P | F | L),
    OP(XRC, RDMA_WRITE_FIRST,    XRC | RETH,          P | F),
    OP(XRC, RDMA_WRITE_MIDDLE,   XRC,                 P),
    OP(XRC, RDMA_WRITE_LAST,     XRC,                 P | L),
    OP(XRC, RDMA_WRITE_LAST_IMM, XRC | IMM,           P | L),
    OP(XRC, RDMA_WRITE_ONLY,     XRC | RETH,          P | F | L),
    OP(XRC, RDMA_WRITE_ONLY_IMM, XRC | RETH | IMM,    P | F | L),
    OP(XRC, RDMA_READ_REQUEST,   XRC | RETH,          F | L),
    OP(XRC, READ_RESPONSE_FIRST, AETH,                P | F),
    OP(XRC, READ_RESPONSE_MIDDLE, 0,                  P),
    OP(XRC, READ_RESPONSE_LAST,  AETH,                P | L),
    OP(XRC, READ_RESPONSE_ONLY,  AETH,                P | F | L),
    OP(XRC, ACKNOWLEDGE,         AETH,                F | L),
    OP(XRC, ATOMIC_ACKNOWLEDGE,  AETH | ATOMICACKETH, F | L),
    OP(XRC, COMPARE_SWAP,        XRC | ATOMICETH,     F | L),
    OP(XRC, FETCH_ADD,           XRC | ATOMICETH,     F | L),
    OP(XRC, SEND_LAST_INV,       XRC | IETH,          P | L),
    OP(XRC, SEND_ONLY_INV,       XRC | IETH,          P | F | L),
};

#undef P
#undef F
#undef L
#undef DETH
#undef RETH
#undef ATOMICETH
#undef AETH
#undef ATOMICACKETH
#undef IMM
#undef IETH
#undef XRC

const SofthcaOpInfo *softhca_opcode_info(uint8_t opcode)
{
    const SofthcaOpInfo *info = &softhca_opcodes[opcode];

    return info->hdr_len ? info : NULL;
}

/* BTH byte 1: SE, M, pad count, transport header version */
#define BTH_SE          0x80
#define BTH_MIG         0x40
#define BTH_PAD_SHIFT   4
#define BTH_TVER_MASK   0x0f
/* BTH byte 4, and byte 8 */
#define BTH_FECN        0x80
#define BTH_BECN        0x40
#define BTH_ACK_REQ     0x80

static void parse_bth(const uint8_t *b, SofthcaBth *bth)
{
    bth->opcode = b[0];
    bth->solicited = b[1] & BTH_SE;
    bth->mig_req = b[1] & BTH_MIG;
    bth->pad = (b[1] >> BTH_PAD_SHIFT) & 3;
    bth->pkey = rd_be16(b + 2);
    bth->fecn = b[4] & BTH_FECN;
    bth->becn = b[4] & BTH_BECN;
    bth->dest_qpn = rd_be24(b + 5);
    bth->ack_req = b[8] & BTH_ACK_REQ;
    bth->psn = rd_be24(b + 9);
}

bool softhca_parse_roce(const uint8_t *buf, size_t len, SofthcaRocePacket *p)
{
    const SofthcaOpInfo *info;
    const uint8_t *x;
    size_t body;

    if (len < SOFTHCA_BTH_LEN + SOFTHCA_ICRC_LEN || len % 4) {
        return false;
    }
    info = softhca_opcode_info(buf[0]);
    if (!info || (buf[1] & BTH_TVER_MASK) ||
        len < (size_t)info->hdr_len + SOFTHCA_ICRC_LEN) {
        return false;
    }
    parse_bth(buf, &p->bth);
    /* payload and pad; a whole number of words since len is */
    body = len - info->hdr_len - SOFTHCA_ICRC_LEN;
    if ((body && !(info->flags & SOFTHCA_OPF_PAYLOAD)) || p->bth.pad > body) {
        return false;
    }
    p->xh = info->xh;
    x = buf + SOFTHCA_BTH_LEN;
    if (p->xh & SOFTHCA_XH_XRCETH) {
        p->xrc_srqn = rd_be24(x + 1);
        x += SOFTHCA_XRCETH_LEN;
    }
    if (p->xh & SOFTHCA_XH_FETH) {
        p->feth = rd_be32(x);
        x += SOFTHCA_FETH_LEN;
    }
    if (p->xh & SOFTHCA_XH_DETH) {
        p->deth.qkey = rd_be32(x);
        p->deth.src_qpn = rd_be24(x + 5);
        x += SOFTHCA_DETH_LEN;
    }
    if (p->xh & SOFTHCA_XH_RETH) {
        p->reth.va = rd_be64(x);
        p->reth.rkey = rd_be32(x + 8);
        p->reth.dma_len = rd_be32(x + 12);
        x += SOFTHCA_RETH_LEN;
    }
    if (p->xh & SOFTHCA_XH_ATOMICETH) {
        p->atomic.va = rd_be64(x);
        p->atomic.rkey = rd_be32(x + 8);
        p->atomic.swap_add = rd_be64(x + 12);
        p->atomic.compare = rd_be64(x + 20);
        x += SOFTHCA_ATOMICETH_LEN;
    }
    if (p->xh & SOFTHCA_XH_AETH) {
        p->aeth.syndrome = x[0];
        p->aeth.msn = rd_be24(x + 1);
        x += SOFTHCA_AETH_LEN;
    }
    if (p->xh & SOFTHCA_XH_ATOMICACKETH) {
        p->atomic_ack = rd_be64(x);
        x += SOFTHCA_ATOMICACKETH_LEN;
    }
    if (p->xh & SOFTHCA_XH_IMMDT) {
        p->imm = rd_be32(x);
        x += SOFTHCA_IMMDT_LEN;
    }
    if (p->xh & SOFTHCA_XH_IETH) {
        p->inv_rkey = rd_be32(x);
    }
    p->payload_off = info->hdr_len;
    p->payload_len = body - p->bth.pad;
    return true;
}

/* Writes the BTH and the extended headers; returns their length. */
static size_t build_headers(uint8_t *b, const SofthcaOpInfo *info,
                            const SofthcaRocePacket *p, uint8_t pad)
{
    const SofthcaBth *bth = &p->bth;
    uint8_t *x = b + SOFTHCA_BTH_LEN;

    memset(b, 0, info->hdr_len);
    b[0] = bth->opcode;
    b[1] = (bth->solicited ? BTH_SE : 0) | (bth->mig_req ? BTH_MIG : 0) |
           pad << BTH_PAD_SHIFT;
    wr_be16(b + 2, bth->pkey);
    b[4] = (bth->fecn ? BTH_FECN : 0) | (bth->becn ? BTH_BECN : 0);
    wr_be24(b + 5, bth->dest_qpn);
    b[8] = bth->ack_req ? BTH_ACK_REQ : 0;
    wr_be24(b + 9, bth->psn);
    if (info->xh & SOFTHCA_XH_XRCETH) {
        wr_be24(x + 1, p->xrc_srqn);
        x += SOFTHCA_XRCETH_LEN;
    }
    if (info->xh & SOFTHCA_XH_FETH) {
        wr_be32(x, p->feth);
        x += SOFTHCA_FETH_LEN;
    }
    if (info->xh & SOFTHCA_XH_DETH) {
        wr_be32(x, p->deth.qkey);
        wr_be24(x + 5, p->deth.src_qpn);
        x += SOFTHCA_DETH_LEN;
    }
    if (info->xh & SOFTHCA_XH_RETH) {
        wr_be64(x, p->reth.va);
        wr_be32(x + 8, p->reth.rkey);
        wr_be32(x + 12, p->reth.dma_len);
        x += SOFTHCA_RETH_LEN;
    }
    if (info->xh & SOFTHCA_XH_ATOMICETH) {
        wr_be64(x, p->atomic.va);
        wr_be32(x + 8, p->atomic.rkey);
        wr_be64(x + 12, p->atomic.swap_add);
        wr_be64(x + 20, p->atomic.compare);
        x += SOFTHCA_ATOMICETH_LEN;
    }
    if (info->xh & SOFTHCA_XH_AETH) {
        x[0] = p->aeth.syndrome;
        wr_be24(x + 1, p->aeth.msn);
        x += SOFTHCA_AETH_LEN;
    }
    if (info->xh & SOFTHCA_XH_ATOMICACKETH) {
        wr_be64(x, p->atomic_ack);
        x += SOFTHCA_ATOMICACKETH_LEN;
    }
    if (info->xh & SOFTHCA_XH_IMMDT) {
        wr_be32(x, p->imm);
        x += SOFTHCA_IMMDT_LEN;
    }
    if (info->xh & SOFTHCA_XH_IETH) {
        wr_be32(x, p->inv_rkey);
    }
    return info->hdr_len;
}

static bool gid_is_ipv4(const uint8_t *gid)
{
    static const uint8_t v4_mapped[12] = { [10] = 0xff, [11] = 0xff };

    return !memcmp(gid, v4_mapped, sizeof(v4_mapped));
}

bool softhca_gid_is_mcast(const uint8_t *gid)
{
    return gid_is_ipv4(gid) ? (gid[12] & 0xf0) == 0xe0 : gid[0] == 0xff;
}

#define IPV4_DF         0x4000
#define IPV4_TTL_OFF    8
#define IPV4_CSUM_OFF   10
#define IPV6_HLIM_OFF   7
#define UDP_CSUM_OFF    6

/* Writes the IP header for a datagram of udp_len bytes; returns its length */
static size_t build_ip(uint8_t *ip, const SofthcaRoceEnvelope *env,
                       size_t udp_len, bool ipv4)
{
    if (ipv4) {
        memset(ip, 0, IPV4_HDR_MIN);
        ip[0] = 0x45;                   /* version 4, 5 words */
        ip[1] = env->traffic_class;
        wr_be16(ip + 2, IPV4_HDR_MIN + udp_len);
        wr_be16(ip + 4, env->ip_id);
        wr_be16(ip + 6, IPV4_DF);
        ip[IPV4_TTL_OFF] = env->hop_limit;
        ip[9] = IP_PROTO_UDP_;
        memcpy(ip + 12, env->src_gid + 12, 4);
        memcpy(ip + 16, env->dst_gid + 12, 4);
        wr_be16(ip + IPV4_CSUM_OFF, ip_checksum(ip, IPV4_HDR_MIN));
        return IPV4_HDR_MIN;
    }
    wr_be32(ip, 6u << 28 | (uint32_t)env->traffic_class << 20 |
            (env->flow_label & 0xfffff));
    wr_be16(ip + 4, udp_len);
    ip[6] = IP_PROTO_UDP_;
    ip[IPV6_HLIM_OFF] = env->hop_limit;
    memcpy(ip + 8, env->src_gid, 16);
    memcpy(ip + 24, env->dst_gid, 16);
    return IPV6_HDR_LEN;
}

/* IP, UDP and BTH, the part of the ICRC input that has masked fields */
#define ICRC_LRH_LEN    8
#define ICRC_MASKED_MAX (60 + UDP_HDR_LEN + SOFTHCA_BTH_LEN)

/*
 * The ICRC state after the frame whose UDP header is at udp_off, up to
 * frame[end]: the ICRC's input, or the part of it in one piece.  The
 * masked fields are those a router may rewrite: IPv4 TOS, TTL and
 * checksum; IPv6 traffic class, flow label and hop limit; the UDP
 * checksum; the BTH byte with FECN, BECN and reserved bits.
 *
 * The CRC runs over the masked copy and then the rest of the frame.  The
 * copy takes a few bytes of the rest along, up to a multiple of 16 bytes,
 * so that all of it goes through softhca_crc32()'s folding loop: only the
 * last few bytes of the frame fall to zlib's byte-wise loop.
 */
static uint32_t icrc_span(const uint8_t *frame, size_t udp_off, size_t end)
{
    uint8_t masked[ICRC_LRH_LEN + ICRC_MASKED_MAX + 16];
    size_t ip_len = udp_off - ETH_HDR_LEN;
    size_t bth_off = ICRC_LRH_LEN + ip_len + UDP_HDR_LEN;
    size_t masked_len = bth_off + SOFTHCA_BTH_LEN;
    size_t rest_len = end - ETH_HDR_LEN - (masked_len - ICRC_LRH_LEN);
    size_t extra = -masked_len & 15;
    uint8_t *ip = masked + ICRC_LRH_LEN;

    if (extra > rest_len) {
        extra = rest_len;
    }
    memset(masked, 0xff, ICRC_LRH_LEN);
    memcpy(ip, frame + ETH_HDR_LEN, masked_len - ICRC_LRH_LEN + extra);
    if ((ip[0] >> 4) == 4) {
        ip[1] = 0xff;
        ip[IPV4_TTL_OFF] = 0xff;
        memset(ip + IPV4_CSUM_OFF, 0xff, 2);
    } else {
        ip[0] |= 0x0f;
        memset(ip + 1, 0xff, 3);
        ip[IPV6_HLIM_OFF] = 0xff;
    }
    memset(ip + ip_len + UDP_CSUM_OFF, 0xff, 2);
    masked[bth_off + 4] = 0xff;

    return softhca_crc32(softhca_crc32(0, masked, masked_len + extra),
                         frame + ETH_HDR_LEN + masked_len - ICRC_LRH_LEN +
                         extra, rest_len - extra);
}

/* The ICRC of the frame whose UDP header is at udp_off and ICRC ends at end */
static uint32_t icrc_compute(const uint8_t *frame, size_t udp_off, size_t end)
{
    return icrc_span(frame, udp_off, end - SOFTHCA_ICRC_LEN);
}

static void wr_le32(uint8_t *p, uint32_t v)
{
    p[0] = v;
    p[1] = v >> 8;
    p[2] = v >> 16;
    p[3] = v >> 24;
}

/* Where the BTH starts in a frame for env: after Ethernet, IP and UDP. */
static size_t roce_off(const SofthcaRoceEnvelope *env)
{
    return ETH_HDR_LEN +
           (gid_is_ipv4(env->src_gid) ? IPV4_HDR_MIN : IPV6_HDR_LEN) +
           UDP_HDR_LEN;
}

size_t softhca_roce_payload_off(const SofthcaRoceEnvelope *env,
                                uint8_t opcode)
{
    const SofthcaOpInfo *info = softhca_opcode_info(opcode);

    return info ? roce_off(env) + info->hdr_len : 0;
}

/*
 * Check that p's frame for env fits in size bytes (its headers only, if
 * gather: the rest lies elsewhere), and write its headers, Ethernet to the
 * last extended header, and unless gather the pad after the payload.
 * Returns the offset the ICRC has in the frame, 0 if it cannot be built.
 */
static size_t build_around_payload(uint8_t *frame, size_t size,
                                   const SofthcaRoceEnvelope *env,
                                   const SofthcaRocePacket *p, bool gather)
{
    const SofthcaOpInfo *info = softhca_opcode_info(p->bth.opcode);
    bool ipv4 = gid_is_ipv4(env->src_gid);
    uint8_t pad = -p->payload_len & 3;
    size_t bth_off = roce_off(env);
    size_t udp_off = bth_off - UDP_HDR_LEN;
    size_t roce_len, payload_off;

    if (!info || ipv4 != gid_is_ipv4(env->dst_gid) ||
        (p->payload_len && !(info->flags & SOFTHCA_OPF_PAYLOAD)) ||
        p->payload_len > UINT16_MAX) {
        return 0;
    }
    roce_len = info->hdr_len + p->payload_len + pad + SOFTHCA_ICRC_LEN;
    payload_off = bth_off + info->hdr_len;
    /* the IPv4 total length, or the UDP length, must fit in 16 bits */
    if (roce_len + UDP_HDR_LEN + (ipv4 ? IPV4_HDR_MIN : 0) > UINT16_MAX ||
        size < (gather ? payload_off : bth_off + roce_len)) {
        return 0;
    }
    if (!gather) {
        memset(frame + payload_off + p->payload_len, 0, pad);
    }

    memcpy(frame, env->dst_mac, 6);
    memcpy(frame + 6, env->src_mac, 6);
    wr_be16(frame + 12, ipv4 ? ETHERTYPE_IPV4 : ETHERTYPE_IPV6);
    build_ip(frame + ETH_HDR_LEN, env, UDP_HDR_LEN + roce_len, ipv4);
    wr_be16(frame + udp_off, env->src_port);
    wr_be16(frame + udp_off + 2, SOFTHCA_ROCE_UDP_PORT);
    wr_be16(frame + udp_off + 4, UDP_HDR_LEN + roce_len);
    wr_be16(frame + udp_off + UDP_CSUM_OFF, 0);
    build_headers(frame + bth_off, info, p, pad);
    return bth_off + roce_len - SOFTHCA_ICRC_LEN;
}

size_t softhca_build_roce(uint8_t *frame, size_t size,
                          const SofthcaRoceEnvelope *env,
                          const SofthcaRocePacket *p, const void *payload)
{
    size_t icrc_off = build_around_payload(frame, size, env, p, false);
    size_t payload_off;

    if (!icrc_off) {
        return 0;
    }
    payload_off = icrc_off - (-p->payload_len & 3) - p->payload_len;
    /* payload may be NULL when there is none, or already in place */
    if (p->payload_len && payload != frame + payload_off) {
        memmove(frame + payload_off, payload, p->payload_len);
    }
    wr_le32(frame + icrc_off,
            icrc_compute(frame, roce_off(env) - UDP_HDR_LEN,
                         icrc_off + SOFTHCA_ICRC_LEN));
    return icrc_off + SOFTHCA_ICRC_LEN;
}

size_t softhca_build_roce_gather(uint8_t *frame, size_t size,
                                 const SofthcaRoceEnvelope *env,
                                 const SofthcaRocePacket *p,
                                 const struct iovec *payload, int n,
                                 uint8_t *tail, size_t *tail_len)
{
    size_t payload_off = softhca_roce_payload_off(env, p->bth.opcode);
    uint8_t pad = -p->payload_len & 3;
    uint32_t crc;

    if (!build_around_payload(frame, size, env, p, true)) {
        return 0;
    }
    crc = icrc_span(frame, roce_off(env) - UDP_HDR_LEN, payload_off);
    for (int i = 0; i < n; i++) {
        crc = softhca_crc32(crc, payload[i].iov_base, payload[i].iov_len);
    }
    memset(tail, 0, pad);
    crc = softhca_crc32(crc, tail, pad);
    wr_le32(tail + pad, crc);
    *tail_len = pad + SOFTHCA_ICRC_LEN;
    return payload_off;
}

uint16_t softhca_roce_src_port(uint32_t flow_label, uint32_t lqpn,
                               uint32_t rqpn)
{
    uint32_t fl = flow_label & 0xfffff;

    if (!fl) {
        uint64_t v = (uint64_t)lqpn * rqpn;

        v ^= v >> 20;
        v ^= v >> 40;
        fl = v & 0xfffff;
    }
    /* 14 bits above 0xc000, the range IANA leaves to dynamic ports */
    return 0xc000 | ((fl & 0x3fff) ^ (fl >> 14));
}

uint32_t softhca_icrc(const uint8_t *frame, const SofthcaUdpFrame *u)
{
    return icrc_compute(frame, u->payload_off - UDP_HDR_LEN,
                        u->payload_off + u->payload_len);
}

/*
 * rdma_rxe of Linux 6.12 has no payload offset for FLUSH, so its ICRC goes
 * on over the BTH and extended headers a second time, unmasked.
 */
static uint32_t icrc_rxe_flush(uint32_t icrc, const uint8_t *frame,
                               const SofthcaUdpFrame *u)
{
    return softhca_crc32(icrc, frame + u->payload_off,
                         u->payload_len - SOFTHCA_ICRC_LEN);
}

static bool is_rc_flush(const uint8_t *frame, const SofthcaUdpFrame *u)
{
    return frame[u->payload_off] == (SOFTHCA_TRANSPORT_RC | SOFTHCA_OP_FLUSH);
}

bool softhca_icrc_set_rxe_flush(uint8_t *frame, size_t len)
{
    SofthcaUdpFrame u;

    if (!softhca_parse_udp(frame, len, &u) ||
        u.payload_len < SOFTHCA_BTH_LEN + SOFTHCA_ICRC_LEN ||
        !is_rc_flush(frame, &u)) {
        return false;
    }
    wr_le32(frame + u.payload_off + u.payload_len - SOFTHCA_ICRC_LEN,
            icrc_rxe_flush(softhca_icrc(frame, &u), frame, &u));
    return true;
}

bool softhca_icrc_check(const uint8_t *frame, const SofthcaUdpFrame *u)
{
    const uint8_t *icrc;
    uint32_t want, crc;

    if (u->payload_len < SOFTHCA_BTH_LEN + SOFTHCA_ICRC_LEN) {
        return false;
    }
    icrc = frame + u->payload_off + u->payload_len - SOFTHCA_ICRC_LEN;
    want = (uint32_t)icrc[3] << 24 | icrc[2] << 16 | icrc[1] << 8 | icrc[0];
    crc = softhca_icrc(frame, u);
    return crc == want ||
           (is_rc_flush(frame, u) && icrc_rxe_flush(crc, frame, u) == want);
}
