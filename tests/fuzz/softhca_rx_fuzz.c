/*
 * libFuzzer harness for softhca's receive path: frames from the network
 * through the parser into the RC, UC, UD and GSI transports and the NIC,
 * over a device holding real QPs, CQs and memory regions.
 *
 * An input is a list of records (see the RX_* kinds below).  Most build a
 * RoCEv2 frame from fields the fuzzer picks, so that the envelope and the
 * ICRC are right and the mutations reach the transport; others put raw
 * bytes on the wire, post a WQE so that responses have something to
 * answer, or move the clock so that timers fire.  With SOFTHCA_FUZZ_SEEDS
 * set to a folder, the harness writes its seed corpus there and exits.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "fuzz.h"
#include "../softhca-qtest.h"
#include "hw/softhca/softhca-wire.h"
#include "softhca_fuzz.h"

enum {
    RX_ROCE,        /* RX_ROCE_HDR bytes of fields, then the payload */
    RX_RAW,         /* flags, le16 length, the frame */
    RX_POST,        /* WR opcode, flags: a WQE on the RC (or UC) QP */
    RX_CLOCK,       /* n: the clock moves n + 1 ms */
    RX_KINDS
};

/* RX_ROCE fields, at these offsets; multi-byte ones little-endian */
enum {
    RF_OPCODE = 0,
    RF_TARGET = 1,      /* bits 2:0 the QP (rx_qpn()), 6 IPv6, 7 a stranger */
    RF_BTH = 2,         /* bit 0 SE, 1 M, 2 A, 3 FECN, 4 BECN */
    RF_KEYS = 3,        /* RK_*: fields aimed at the world's MR and QPs */
    RF_PSN = 4,         /* added to the PSN the QP expects */
    RF_PKEY = 8,        /* XORed with the default P_Key */
    RF_PAYLOAD = 10,    /* payload length, modulo RX_PAYLOAD_MAX + 1 */
    RF_VA = 12,
    RF_RKEY = 20,
    RF_DMA_LEN = 24,
    RF_QKEY = 28,
    RF_SRC_QPN = 32,
    RF_SYNDROME = 36,
    RF_MSN = 37,        /* 3 bytes */
    RF_SWAP = 40,
    RF_COMPARE = 48,
    RF_IMM = 56,
    RF_INV_RKEY = 60,
    RF_XRC_SRQN = 64,
    RF_FETH = 68,
    RX_ROCE_HDR = 72,
};

enum {
    RK_RETH = 1 << 0,   /* RETH: the MR's key, a VA inside it */
    RK_ATOMIC = 1 << 1, /* AtomicETH: likewise, 8-byte aligned */
    RK_IETH = 1 << 2,   /* the invalidated key is the MR's */
    RK_QKEY = 1 << 3,   /* DETH: the Q_Key of the target QP */
    RK_SRC = 1 << 4,    /* DETH: the peer's QPN */
};

enum {
    RAW_RETARGET = 1 << 0,  /* to the device, from the peer, to a world QP */
    RAW_FIX = 1 << 1,       /* lengths, IPv4 checksum and ICRC made right */
};

#define RX_PAYLOAD_MAX  4096
#define RX_MR_LEN       (64 * 1024)
#define RX_MR_IOVA      0x7f0000000000ull
#define RX_PEER_QPN     0x123456    /* rc_attr()'s dest_qpn and PSNs */
#define RX_PEER_PSN     0xabcdef
#define RX_OWN_PSN      0x000100
#define RX_PEER_IP      0x0a000002
#define RX_STRANGER_IP  0x0a000063
#define RX_PEER_MAC     "\x52\x54\x00\x12\x34\x99"

typedef struct RxWorld {
    Rdma r;
    Loop rc, uc;
    Ud ud, gsi;
    Nic nic;
    uint64_t mr_buf;
    uint32_t mr_key;
    uint16_t sq_pi[2];      /* RC, UC */
    uint8_t mac[6];
} RxWorld;

static RxWorld world;
static int wire[2];         /* [0] the harness's end, [1] the netdev's */

/* A QP connected to the peer, as peer_start() in the qtests does. */
static void rx_connect(Rdma *r, Loop *l, uint8_t type)
{
    loop_start(r, l, type, 7);
    l->access = SHCA_ACCESS_REMOTE_WRITE | SHCA_ACCESS_REMOTE_READ |
                (type == SHCA_QPT_RC ? SHCA_ACCESS_REMOTE_ATOMIC |
                                       SHCA_ACCESS_FLUSH_GLOBAL : 0);
    loop_connect_peer(r, l);
    for (uint16_t i = 0; i < 16; i++) {
        loop_recv(r, l, i, i, l->rq + 2048, 1024);
    }
    rdma_db(r, 0, SHCA_DB_RQ, 16u << 16 | l->qpn);
}

static void rx_recvs(Rdma *r, uint64_t rq, uint32_t qpn, uint32_t key)
{
    for (uint16_t i = 0; i < 16; i++) {
        struct shca_recv_wqe w = { .wr_id = cpu_to_le64(i), .num_sge = 1 };
        struct shca_sge sge = {
            .addr = cpu_to_le64(rq + 2048),
            .length = cpu_to_le32(1024),
            .lkey = cpu_to_le32(key),
        };

        qtest_memwrite(r->h.qts, rq + i * 32, &w, sizeof(w));
        qtest_memwrite(r->h.qts, rq + i * 32 + sizeof(w), &sge, sizeof(sge));
    }
    rdma_db(r, 0, SHCA_DB_RQ, 16u << 16 | qpn);
}

/* The device, its objects and the NIC rings, made afresh for each input. */
static void rx_world_build(QTestState *s)
{
    struct shca_aq_entry cmd = { .opcode = SHCA_AQ_SET_GID };
    struct shca_buf_desc pages = { 0 };
    Rdma *r = &world.r;

    memset(&world, 0, sizeof(world));
    hca_attach(&r->h, s);
    r->h.settle = flush_events;
    rdma_init(r);
    /* GID 1: fd00::1, so that IPv6 frames have somewhere to go */
    cmd.set_gid.index = cpu_to_le32(1);
    cmd.set_gid.flags = cpu_to_le32(SHCA_GID_VALID);
    cmd.set_gid.gid[0] = 0xfd;
    cmd.set_gid.gid[15] = 1;
    g_assert_cmpuint(hca_cmd(&r->h, &cmd, NULL), ==, SHCA_AQ_OK);

    rx_connect(r, &world.rc, SHCA_QPT_RC);
    rx_connect(r, &world.uc, SHCA_QPT_UC);
    memcpy(world.mac, world.rc.mac, 6);
    ud_start(r, &world.ud, SHCA_QPT_UD, UD_QKEY);
    ud_start(r, &world.gsi, SHCA_QPT_GSI, SHCA_GSI_QKEY);
    rx_recvs(r, world.ud.rq, world.ud.qpn, world.rc.key);
    rx_recvs(r, world.gsi.rq, world.gsi.qpn, world.rc.key);

    world.mr_buf = guest_alloc(&r->h.alloc, RX_MR_LEN);
    buf_direct(&pages, world.mr_buf, RX_MR_LEN / 4096);
    g_assert_cmpuint(rdma_reg_mr(r, SHCA_ACCESS_LOCAL_WRITE |
                                 SHCA_ACCESS_REMOTE_WRITE |
                                 SHCA_ACCESS_REMOTE_READ |
                                 SHCA_ACCESS_REMOTE_ATOMIC |
                                 SHCA_ACCESS_FLUSH_GLOBAL,
                                 RX_MR_IOVA, RX_MR_LEN, 0, &pages,
                                 &world.mr_key), ==, SHCA_AQ_OK);
    nic_start(&r->h, &world.nic);
    for (int i = 0; i < (1 << NIC_LOG) - 1; i++) {
        nic_post_rx(&r->h, &world.nic);
    }
}

static uint32_t rx_qpn(uint8_t target)
{
    switch (target & 7) {
    case 0: return world.rc.qpn;
    case 1: return world.uc.qpn;
    case 2: return world.ud.qpn;
    case 3: return world.gsi.qpn;
    case 4: return 0xffffff;                /* multicast QPN */
    default: return world.rc.qpn + (target & 7);    /* none */
    }
}

static void rx_gid(uint8_t *gid, uint32_t ip, bool ipv6)
{
    memset(gid, 0, 16);
    if (ipv6) {
        gid[0] = 0xfd;
        gid[15] = ip & 0xff;
    } else {
        gid[10] = gid[11] = 0xff;
        stl_be_p(gid + 12, ip);
    }
}

/*
 * Put a frame on the wire, a datagram socket: whole or not at all.  When
 * the device takes none (its rings are full or it is off), QEMU stops
 * reading the socket, and a frame that finds it full is lost, as on a
 * real link.
 */
static void rx_wire_send(QTestState *s, const uint8_t *frame, size_t len)
{
    if (write(wire[0], frame, len) < 0) {
        flush_events(s);
        if (write(wire[0], frame, len) < 0) {
            g_assert(errno == EAGAIN || errno == ENOBUFS);
        }
    }
    flush_events(s);
}

/* Take and drop what the device sent. */
static void rx_wire_drain(void)
{
    uint8_t buf[4096];

    while (read(wire[0], buf, sizeof(buf)) > 0) {
        continue;
    }
}

static size_t rx_roce(QTestState *s, const uint8_t *d, size_t n)
{
    static uint8_t frame[SHCA_NIC_FRAME_MAX + 64];
    uint8_t opcode = d[RF_OPCODE], target = d[RF_TARGET];
    uint8_t keys = d[RF_KEYS], bth = d[RF_BTH];
    const SofthcaOpInfo *info = softhca_opcode_info(opcode);
    bool response = opcode >= SOFTHCA_OP_READ_RESPONSE_FIRST &&
                    opcode <= SOFTHCA_OP_ATOMIC_ACKNOWLEDGE;
    SofthcaRoceEnvelope env = {
        .src_port = 0xc000,
        .hop_limit = 64,
    };
    SofthcaRocePacket p = {
        .bth = {
            .opcode = opcode,
            .solicited = bth & 1,
            .mig_req = bth & 2,
            .ack_req = bth & 4,
            .fecn = bth & 8,
            .becn = bth & 16,
            .pkey = 0xffff ^ lduw_le_p(d + RF_PKEY),
            .dest_qpn = rx_qpn(target),
            .psn = ((response ? RX_OWN_PSN : RX_PEER_PSN) +
                    ldl_le_p(d + RF_PSN)) & 0xffffff,
        },
        .reth = {
            .va = ldq_le_p(d + RF_VA),
            .rkey = ldl_le_p(d + RF_RKEY),
            .dma_len = ldl_le_p(d + RF_DMA_LEN),
        },
        .deth = {
            .qkey = ldl_le_p(d + RF_QKEY),
            .src_qpn = ldl_le_p(d + RF_SRC_QPN) & 0xffffff,
        },
        .aeth = {
            .syndrome = d[RF_SYNDROME],
            .msn = ldl_le_p(d + RF_SYNDROME) >> 8,
        },
        .atomic = {
            .va = ldq_le_p(d + RF_VA),
            .rkey = ldl_le_p(d + RF_RKEY),
            .swap_add = ldq_le_p(d + RF_SWAP),
            .compare = ldq_le_p(d + RF_COMPARE),
        },
        .atomic_ack = ldq_le_p(d + RF_SWAP),
        .imm = ldl_le_p(d + RF_IMM),
        .inv_rkey = ldl_le_p(d + RF_INV_RKEY),
        .xrc_srqn = ldl_le_p(d + RF_XRC_SRQN) & 0xffffff,
        .feth = ldl_le_p(d + RF_FETH),
    };
    size_t payload = 0, len;

    if (info && (info->flags & SOFTHCA_OPF_PAYLOAD)) {
        payload = MIN(lduw_le_p(d + RF_PAYLOAD) % (RX_PAYLOAD_MAX + 1),
                      n - RX_ROCE_HDR);
    }
    if (keys & RK_RETH) {
        p.reth.rkey = world.mr_key;
        p.reth.va = RX_MR_IOVA + p.reth.va % RX_MR_LEN;
    }
    if (keys & RK_ATOMIC) {
        p.atomic.rkey = world.mr_key;
        p.atomic.va = RX_MR_IOVA + (p.atomic.va % RX_MR_LEN & ~7ull);
    }
    if (keys & RK_IETH) {
        p.inv_rkey = world.mr_key;
    }
    if (keys & RK_QKEY) {
        p.deth.qkey = (target & 7) == 3 ? SHCA_GSI_QKEY : UD_QKEY;
    }
    if (keys & RK_SRC) {
        p.deth.src_qpn = RX_PEER_QPN;
    }
    p.payload_len = payload;
    memcpy(env.dst_mac, world.mac, 6);
    memcpy(env.src_mac, RX_PEER_MAC, 6);
    rx_gid(env.src_gid, target & 0x80 ? RX_STRANGER_IP : RX_PEER_IP,
           target & 0x40);
    rx_gid(env.dst_gid, 0x0a000001, target & 0x40);
    len = softhca_build_roce(frame, sizeof(frame), &env, &p,
                             d + RX_ROCE_HDR);
    if (len) {
        rx_wire_send(s, frame, len);
    }
    return RX_ROCE_HDR + payload;
}

/* Aim a raw frame at the device and a world QP, and mend what RAW_FIX says */
static void rx_raw_fix(uint8_t *f, size_t len, uint8_t flags)
{
    SofthcaUdpFrame u;
    size_t ip = 14;

    if (len < 14 + 20 || lduw_be_p(f + 12) != 0x0800) {
        return;                 /* IPv4 only; anything else goes as it is */
    }
    if (flags & RAW_RETARGET) {
        memcpy(f, world.mac, 6);
        stl_be_p(f + ip + 12, RX_PEER_IP);
        stl_be_p(f + ip + 16, 0x0a000001);
    }
    if (flags & RAW_FIX) {
        size_t ihl = (f[ip] & 0xf) * 4;
        uint32_t sum = 0;

        stw_be_p(f + ip + 2, len - ip);
        if (ihl >= 20 && ip + ihl + 8 <= len) {
            stw_be_p(f + ip + ihl + 4, len - ip - ihl);
        }
        stw_be_p(f + ip + 10, 0);
        for (size_t i = 0; i < MIN(ihl, 60) && ip + i + 1 < len; i += 2) {
            sum += lduw_be_p(f + ip + i);
        }
        while (sum >> 16) {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        stw_be_p(f + ip + 10, ~sum);
    }
    if (!softhca_parse_udp(f, len, &u) ||
        u.payload_len < SOFTHCA_BTH_LEN + SOFTHCA_ICRC_LEN) {
        return;
    }
    if (flags & RAW_RETARGET) {
        uint8_t *bth = f + u.payload_off;

        stl_be_p(bth + 4, (ldl_be_p(bth + 4) & 0xff000000) |
                 rx_qpn(bth[0] >> 5 == 3 ? 2 : bth[0] >> 5 == 1));
    }
    if (flags & RAW_FIX) {
        stl_le_p(f + u.payload_off + u.payload_len - SOFTHCA_ICRC_LEN,
                 softhca_icrc(f, &u));
    }
}

static size_t rx_raw(QTestState *s, const uint8_t *d, size_t n)
{
    static uint8_t frame[SHCA_NIC_FRAME_MAX];
    size_t len;

    if (n < 3) {
        return n;
    }
    len = MIN(MIN(lduw_le_p(d + 1), n - 3), sizeof(frame));
    if (len == 0) {
        /* QEMU's dgram netdev takes an empty datagram for a hang-up */
        return 3;
    }
    memcpy(frame, d + 3, len);
    rx_raw_fix(frame, len, d[0]);
    rx_wire_send(s, frame, len);
    return 3 + len;
}

/* A signaled WQE of the fuzzer's opcode to the peer, 256 bytes each way. */
static void rx_post(const uint8_t *d)
{
    Rdma *r = &world.r;
    bool uc = d[1] & 1;
    Loop *l = uc ? &world.uc : &world.rc;
    uint16_t *pi = &world.sq_pi[uc];
    struct shca_send_wqe w = {
        .wr_id = cpu_to_le64(*pi),
        .opcode = d[0] % (SHCA_WR_ATOMIC_WRITE + 1),
        .flags = SHCA_WQE_SIGNALED | (d[1] & SHCA_WQE_FENCE),
        .num_sge = 1,
        .remote_addr = cpu_to_le64(0x10000),
        .rkey = cpu_to_le32(0x1234),
        .compare_add = cpu_to_le64(1),
        .feth = SHCA_FLUSH_GLOBAL,
    };
    struct shca_sge sge = {
        .addr = cpu_to_le64(l->rq + 1024),
        .length = cpu_to_le32(w.opcode == SHCA_WR_ATOMIC_CMP_SWP ||
                              w.opcode == SHCA_WR_ATOMIC_FETCH_ADD ? 8 : 256),
        .lkey = cpu_to_le32(l->key),
    };

    loop_write_send(r, l, *pi, &w, &sge, sizeof(sge));
    (*pi)++;
    rdma_db(r, 0, SHCA_DB_SQ, (uint32_t)*pi << 16 | l->qpn);
}

static void rx_fuzz(QTestState *s, const unsigned char *data, size_t size)
{
    rx_world_build(s);
    flush_events(s);
    rx_wire_drain();
    while (size > 0) {
        uint8_t kind = *data % RX_KINDS;
        size_t used = 0;

        data++;
        size--;
        switch (kind) {
        case RX_ROCE:
            if (size >= RX_ROCE_HDR) {
                used = rx_roce(s, data, size);
            } else {
                used = size;
            }
            break;
        case RX_RAW:
            used = rx_raw(s, data, size);
            break;
        case RX_POST:
            if (size >= 2) {
                rx_post(data);
                used = 2;
            } else {
                used = size;
            }
            break;
        case RX_CLOCK:
            if (size >= 1) {
                qtest_clock_step(s, (data[0] + 1) * 1000 * 1000);
                used = 1;
            }
            break;
        }
        flush_events(s);
        rx_wire_drain();
        data += used;
        size -= used;
    }
    hca_detach(&world.r.h);
    fuzz_reset(s);
}

/* --- The seed corpus ------------------------------------------------------ */

static void seed_roce(GByteArray *b, uint8_t opcode, uint8_t target,
                      uint32_t psn, uint8_t keys, uint16_t payload,
                      uint8_t syndrome)
{
    uint8_t h[1 + RX_ROCE_HDR] = { RX_ROCE };
    uint8_t *d = h + 1;

    d[RF_OPCODE] = opcode;
    d[RF_TARGET] = target;
    d[RF_BTH] = 4;
    d[RF_KEYS] = keys;
    stl_le_p(d + RF_PSN, psn);
    stw_le_p(d + RF_PAYLOAD, payload);
    stq_le_p(d + RF_VA, 0x100);
    stl_le_p(d + RF_DMA_LEN, payload ? payload : 64);
    d[RF_SYNDROME] = syndrome;
    stq_le_p(d + RF_SWAP, 5);
    stq_le_p(d + RF_COMPARE, 0);
    stl_le_p(d + RF_FETH, SHCA_FLUSH_GLOBAL);
    g_byte_array_append(b, h, sizeof(h));
    for (uint16_t i = 0; i < payload; i++) {
        uint8_t c = i;

        g_byte_array_append(b, &c, 1);
    }
}

static void seed_post(GByteArray *b, uint8_t wr_opcode, bool uc)
{
    uint8_t h[3] = { RX_POST, wr_opcode, uc };

    g_byte_array_append(b, h, sizeof(h));
}

static void seed_clock(GByteArray *b, uint8_t ms)
{
    uint8_t h[2] = { RX_CLOCK, ms };

    g_byte_array_append(b, h, sizeof(h));
}

static void rx_write_seeds(const char *dir)
{
    static const struct {
        const char *name;
        uint8_t opcode, keys;
        uint16_t payload;
    } rc_requests[] = {
        { "rc-send-only", SOFTHCA_OP_SEND_ONLY, 0, 64 },
        { "rc-send-only-imm", SOFTHCA_OP_SEND_ONLY_IMM, 0, 32 },
        { "rc-send-only-inv", SOFTHCA_OP_SEND_ONLY_INV, RK_IETH, 16 },
        { "rc-write-only", SOFTHCA_OP_RDMA_WRITE_ONLY, RK_RETH, 64 },
        { "rc-write-only-imm", SOFTHCA_OP_RDMA_WRITE_ONLY_IMM, RK_RETH, 8 },
        { "rc-read", SOFTHCA_OP_RDMA_READ_REQUEST, RK_RETH, 0 },
        { "rc-cmp-swap", SOFTHCA_OP_COMPARE_SWAP, RK_ATOMIC, 0 },
        { "rc-fetch-add", SOFTHCA_OP_FETCH_ADD, RK_ATOMIC, 0 },
        { "rc-flush", SOFTHCA_OP_FLUSH, RK_RETH, 0 },
        { "rc-atomic-write", SOFTHCA_OP_ATOMIC_WRITE, RK_RETH, 8 },
        { "uc-send-only", SOFTHCA_TRANSPORT_UC | SOFTHCA_OP_SEND_ONLY, 0, 64 },
        { "uc-write-only", SOFTHCA_TRANSPORT_UC | SOFTHCA_OP_RDMA_WRITE_ONLY,
          RK_RETH, 64 },
    };
    GByteArray *b;

    for (size_t i = 0; i < ARRAY_SIZE(rc_requests); i++) {
        uint8_t target = rc_requests[i].opcode & SOFTHCA_TRANSPORT_UC ? 1 : 0;

        b = g_byte_array_new();
        seed_roce(b, rc_requests[i].opcode, target, 0, rc_requests[i].keys,
                  rc_requests[i].payload, 0);
        /* the same again: a duplicate */
        seed_roce(b, rc_requests[i].opcode, target, 0, rc_requests[i].keys,
                  rc_requests[i].payload, 0);
        softhca_fuzz_write_seed(dir, rc_requests[i].name, b);
    }

    /* a message of three packets, in order and then one out of order */
    b = g_byte_array_new();
    seed_roce(b, SOFTHCA_OP_SEND_FIRST, 0, 0, 0, 1024, 0);
    seed_roce(b, SOFTHCA_OP_SEND_MIDDLE, 0, 1, 0, 1024, 0);
    seed_roce(b, SOFTHCA_OP_SEND_LAST, 0, 2, 0, 100, 0);
    seed_roce(b, SOFTHCA_OP_RDMA_WRITE_FIRST, 0, 4, RK_RETH, 1024, 0);
    softhca_fuzz_write_seed(dir, "rc-send-multi", b);

    b = g_byte_array_new();
    seed_roce(b, SOFTHCA_OP_RDMA_WRITE_FIRST, 0, 0, RK_RETH, 1024, 0);
    seed_roce(b, SOFTHCA_OP_RDMA_WRITE_MIDDLE, 0, 1, 0, 1024, 0);
    seed_roce(b, SOFTHCA_OP_RDMA_WRITE_LAST_IMM, 0, 2, 0, 1024, 0);
    softhca_fuzz_write_seed(dir, "rc-write-multi", b);

    /* responses to what the device sent */
    b = g_byte_array_new();
    seed_post(b, SHCA_WR_SEND, false);
    seed_roce(b, SOFTHCA_OP_ACKNOWLEDGE, 0, 0, 0, 0, 0);
    softhca_fuzz_write_seed(dir, "rc-ack", b);

    b = g_byte_array_new();
    seed_post(b, SHCA_WR_SEND, false);
    seed_post(b, SHCA_WR_SEND, false);
    seed_roce(b, SOFTHCA_OP_ACKNOWLEDGE, 0, 0, 0, 0, 0x60);  /* PSN seq */
    seed_roce(b, SOFTHCA_OP_ACKNOWLEDGE, 0, 1, 0, 0, 0x2e);  /* RNR */
    seed_clock(b, 100);
    seed_roce(b, SOFTHCA_OP_ACKNOWLEDGE, 0, 1, 0, 0, 0x63);  /* access */
    softhca_fuzz_write_seed(dir, "rc-nak", b);

    b = g_byte_array_new();
    seed_post(b, SHCA_WR_RDMA_READ, false);
    seed_roce(b, SOFTHCA_OP_READ_RESPONSE_ONLY, 0, 0, 0, 256, 0);
    softhca_fuzz_write_seed(dir, "rc-read-response", b);

    b = g_byte_array_new();
    seed_post(b, SHCA_WR_ATOMIC_FETCH_ADD, false);
    seed_roce(b, SOFTHCA_OP_ATOMIC_ACKNOWLEDGE, 0, 0, 0, 0, 0);
    softhca_fuzz_write_seed(dir, "rc-atomic-ack", b);

    b = g_byte_array_new();
    seed_post(b, SHCA_WR_RDMA_WRITE, false);
    seed_clock(b, 255);
    seed_clock(b, 255);
    softhca_fuzz_write_seed(dir, "rc-retransmit", b);

    b = g_byte_array_new();
    seed_roce(b, SOFTHCA_TRANSPORT_UD | SOFTHCA_OP_SEND_ONLY, 2, 0,
              RK_QKEY | RK_SRC, 64, 0);
    seed_roce(b, SOFTHCA_TRANSPORT_UD | SOFTHCA_OP_SEND_ONLY_IMM, 0x42, 0,
              RK_QKEY | RK_SRC, 64, 0);
    softhca_fuzz_write_seed(dir, "ud-send", b);

    b = g_byte_array_new();
    seed_roce(b, SOFTHCA_TRANSPORT_UD | SOFTHCA_OP_SEND_ONLY, 3, 0,
              RK_QKEY | RK_SRC, 256, 0);
    softhca_fuzz_write_seed(dir, "gsi-mad", b);

    b = g_byte_array_new();
    seed_roce(b, SOFTHCA_OP_SEND_ONLY, 0x80, 0, 0, 64, 0);
    softhca_fuzz_write_seed(dir, "rc-stranger", b);
}

static void rx_pre_fuzz(QTestState *s)
{
    const char *dir = getenv("SOFTHCA_FUZZ_SEEDS");

    if (dir) {
        rx_write_seeds(dir);
        _exit(0);   /* not exit(): libFuzzer takes that for a crash */
    }
}

static GString *rx_cmdline(FuzzTarget *t)
{
    int ret = socketpair(PF_UNIX, SOCK_DGRAM, 0, wire);
    GString *cmd = g_string_new(NULL);

    g_assert_cmpint(ret, !=, -1);
    g_unix_set_fd_nonblocking(wire[0], true, NULL);
    /* SOFTHCA_FUZZ_ARGS: more arguments, e.g. -trace softhca_tp_rx* */
    g_string_printf(cmd, TARGET_NAME " -machine q35,accel=qtest -m 128 "
                    "-nodefaults -display none "
                    "-device softhca,netdev=n0 "
                    "-netdev dgram,id=n0,local.type=fd,local.str=%d %s",
                    wire[1], getenv("SOFTHCA_FUZZ_ARGS") ?: "");
    return cmd;
}

static void register_softhca_rx_fuzz_target(void)
{
    fuzz_add_target(&(FuzzTarget){
        .name = "softhca-rx",
        .description = "Fuzz softhca's receive path with RoCEv2 and raw "
                       "frames against RC, UC, UD and GSI QPs",
        .get_init_cmdline = rx_cmdline,
        .pre_fuzz = rx_pre_fuzz,
        .fuzz = rx_fuzz,
    });
}

fuzz_target_init(register_softhca_rx_fuzz_target);
