/*
 * libFuzzer harness for softhca's receive path: frames from the network
 * through the parser into the RC, UC, UD and GSI transports and the NIC,
 * over a device holding real QPs, CQs and memory regions: an XRC target
 * QP with its XRC SRQ, an RC QP on an SRQ armed at its limit, memory
 * windows of both types, a fast-registration MR, UD QPs in a multicast
 * group, and a QP connected to itself through the device's loopback.
 *
 * An input is a list of records (see the RX_* kinds below).  Most build a
 * RoCEv2 frame from fields the fuzzer picks, so that the envelope and the
 * ICRC are right and the mutations reach the transport; others put raw
 * bytes on the wire, post a WQE so that responses have something to
 * answer, send a frame from the NIC function, take the link down and up,
 * stop the VM for a while, or move the clock so that timers fire.  With
 * SOFTHCA_FUZZ_SEEDS set to a folder, the harness writes its seed corpus
 * there and exits.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "fuzz.h"
#include "net/net.h"
#include "qapi/error.h"
#include "qapi/qapi-commands-net.h"
#include "system/runstate.h"
#include "../softhca-qtest.h"
#include "hw/softhca/softhca-wire.h"
#include "softhca_fuzz.h"

enum {
    RX_ROCE,        /* RX_ROCE_HDR bytes of fields, then the payload */
    RX_RAW,         /* flags, le16 length, the frame */
    RX_POST,        /* WR opcode and RO_*, flags (RP_*): a WQE on a QP */
    RX_CLOCK,       /* n: the clock moves n + 1 ms */
    RX_NIC_TX,      /* le16 descriptor length, the frame: a NIC TX frame */
    RX_LINK,        /* the link goes down, then (bit 0 set) up again */
    RX_STOP,        /* n: the VM stops, the clock moves n + 1 ms, it runs */
    RX_KINDS
};

/* RX_ROCE fields, at these offsets; multi-byte ones little-endian */
enum {
    RF_OPCODE = 0,
    RF_TARGET = 1,      /* bits 5:0 the QP (RT_*), 6 IPv6, 7 a stranger */
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
    RK_KEY_SHIFT = 5,   /* bits 7:5: whose key RK_* put (RX_KEY_*) */
};

/* RF_TARGET bits 5:0: the QP a frame goes to (rx_qpn()) */
enum {
    RT_RC, RT_UC, RT_UD, RT_GSI,
    RT_MCAST_QPN,       /* QPN 0xffffff, to the unicast GID: dropped */
    /* 5..7: QPNs no QP has */
    RT_XRC = 8,         /* XRC target QP: XRC opcodes, XRCETH its SRQ */
    RT_SRQ_RC,          /* RC QP on the SRQ armed at its limit */
    RT_MCAST,           /* QPN 0xffffff to the group's GID and MAC */
    RT_MCAST_UD,        /* the group's second UD QP, by its QPN */
    RT_LOOP,            /* the QP connected to itself */
    /* 13..63: as their bits 2:0 */
};

/* The keys RK_* and RP_KEY_* name, with the range each grants */
enum {
    RX_KEY_MR,          /* the MR */
    RX_KEY_MW1,         /* a type 1 window over its first half */
    RX_KEY_MW2,         /* a type 2 window over its second half, RC QP */
    RX_KEY_FR,          /* the fast-registration MR, two pages */
    RX_KEYS,            /* 4..7: the MR */
};

/* RX_POST's first byte: bits 4:0 the WR opcode, and these */
enum {
    RO_OPCODE_MASK = 0x1f,
    RO_INLINE = 1 << 5,     /* 32 bytes inline instead of an SGE */
    RO_LONG = 1 << 6,       /* 8192 bytes through the MR, past the MTU */
};

/* RX_POST flags */
enum {
    RP_UC = 1 << 0,     /* on the UC QP (else the RC QP) */
    RP_LOOP = 1 << 1,   /* on the QP connected to itself */
    RP_FENCE = SHCA_WQE_FENCE,
    RP_MCAST = 1 << 3,  /* a SEND from the UD QP to the multicast group */
    RP_KEY_SHIFT = 4,   /* bits 6:4: 0 a key of nothing, else RX_KEY_* + 1 */
    RP_LONG = 1 << 7,   /* RP_MCAST: 4096 bytes, past the path MTU */
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
#define RX_OWN_MAC      "\x52\x54\x00\x12\x34\x56"   /* QEMU's default */
#define RX_MCAST_MAC    "\x01\x00\x5e\x00\x00\x05"
#define RX_FR_IOVA      0x7654321000ull
#define RX_FR_LEN       8192
#define RX_SRQ_LIMIT    3       /* of SRQ_LOG's 8, with 4 posted */
#define RX_LONG_LEN     8192    /* RO_LONG: eight packets at the path MTU */
#define RX_INLINE_LEN   32

typedef struct RxKey {
    uint32_t key;
    uint64_t va, len;
} RxKey;

typedef struct RxWorld {
    Rdma r;
    Loop rc, uc, srq_rc, loop;
    Ud ud, gsi, mc;
    Srq srq, xsrq;
    Nic nic;
    uint64_t mr_buf;
    uint32_t mr_key;
    uint32_t xrcdn, xrc_qpn;
    RxKey keys[RX_KEYS];
    uint16_t sq_pi[3];      /* RC, UC, the loop QP */
    uint16_t ud_pi;
    uint8_t mac[6];
} RxWorld;

static RxWorld world;
static int wire[2];         /* [0] the harness's end, [1] the netdev's */

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

static uint32_t rx_access(uint8_t type)
{
    return SHCA_ACCESS_REMOTE_WRITE | SHCA_ACCESS_REMOTE_READ |
           (type == SHCA_QPT_RC ? SHCA_ACCESS_REMOTE_ATOMIC |
                                  SHCA_ACCESS_FLUSH_GLOBAL : 0);
}

/* 16 receive WQEs on a loop QP's RQ (none with an SRQ). */
static void rx_loop_recvs(Rdma *r, Loop *l)
{
    for (uint16_t i = 0; i < 16; i++) {
        loop_recv(r, l, i, i, l->rq + 2048, 1024);
    }
    rdma_db(r, 0, SHCA_DB_RQ, 16u << 16 | l->qpn);
}

/*
 * A QP connected to the peer, as peer_start() in the qtests does; with
 * srqn, it receives through that SRQ.
 */
static void rx_connect(Rdma *r, Loop *l, uint8_t type, uint32_t srqn)
{
    loop_create(r, l, type, 7, srqn ? SHCA_QP_F_SRQ : 0, srqn);
    l->access = rx_access(type);
    loop_connect_peer(r, l);
    if (!srqn) {
        rx_loop_recvs(r, l);
    }
}

/* n receive WQEs of 512 bytes each on an SRQ. */
static void rx_srq_fill(Rdma *r, Srq *q, unsigned n)
{
    uint64_t buf = guest_alloc(&r->h.alloc, 4096);

    for (unsigned i = 0; i < n; i++) {
        srq_post(r, q, i, buf + i * 512, 512, world.rc.key);
    }
}

/*
 * An XRC domain, an XRC SRQ of it armed at RX_SRQ_LIMIT, and a target QP
 * of it in RTR from the peer, whose requests name the SRQ in an XRCETH.
 */
static void rx_xrc_build(Rdma *r)
{
    uint64_t cqbuf;

    g_assert_cmpuint(hca_simple(&r->h, SHCA_AQ_ALLOC_XRCD, 0, &world.xrcdn),
                     ==, SHCA_AQ_OK);
    softhca_fuzz_srq(r, &world.xsrq, RX_SRQ_LIMIT, world.xrcdn,
                     rdma_cq(r, 0, LOOP_CQ_LOG, &cqbuf));
    rx_srq_fill(r, &world.xsrq, RX_SRQ_LIMIT + 1);
    world.xrc_qpn = softhca_fuzz_xrc_tgt(r, world.xrcdn,
                                         rx_access(SHCA_QPT_RC));
}

/* A UD QP like world.ud, and both in the group of UD_MCAST_IP. */
static void rx_mcast_build(Rdma *r)
{
    ud_start(r, &world.mc, SHCA_QPT_UD, UD_QKEY);
    rx_recvs(r, world.mc.rq, world.mc.qpn, world.rc.key);
    softhca_fuzz_mcast(r, world.ud.qpn, UD_MCAST_IP);
    softhca_fuzz_mcast(r, world.mc.qpn, UD_MCAST_IP);
}

/* A WQE the RC QP runs alone (a bind, a registration), and its success. */
static void rx_rc_local(Rdma *r, const void *wqe)
{
    struct shca_cqe cqe;

    loop_write_send(r, &world.rc, world.sq_pi[0], wqe, NULL, 0);
    world.sq_pi[0]++;
    rdma_db(r, 0, SHCA_DB_SQ, (uint32_t)world.sq_pi[0] << 16 |
            world.rc.qpn);
    cqe = loop_send_cqe(r, &world.rc);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
}

/* The key with the next tag, as software picks it for a bind. */
static uint32_t rx_next_tag(uint32_t key)
{
    return (key & ~0xffu) | ((key + 1) & 0xff);
}

#define RX_REMOTE   (SHCA_ACCESS_REMOTE_WRITE | SHCA_ACCESS_REMOTE_READ | \
                     SHCA_ACCESS_REMOTE_ATOMIC)

/* A fast-registration MR made valid over two pages by a REG_MR WQE. */
static void rx_fast_reg_build(Rdma *r)
{
    struct shca_buf_desc list_desc = { 0 };
    uint64_t list = guest_alloc(&r->h.alloc, 4096);
    struct shca_fast_reg_wqe w = {
        .opcode = SHCA_WR_REG_MR,
        .flags = SHCA_WQE_SIGNALED,
        .page_shift = 12,
        .access = cpu_to_le32(SHCA_ACCESS_LOCAL_WRITE | RX_REMOTE),
        .iova = cpu_to_le64(RX_FR_IOVA),
        .length = cpu_to_le64(RX_FR_LEN),
        .npages = cpu_to_le32(2),
    };
    uint32_t key;

    for (int i = 0; i < 2; i++) {
        qtest_writeq(r->h.qts, list + i * 8,
                     cpu_to_le64(guest_alloc(&r->h.alloc, 4096)));
    }
    buf_direct(&list_desc, list, 4);
    g_assert_cmpuint(rdma_reg_mr(r, SHCA_ACCESS_FAST_REG, 0, 0, 0, &list_desc,
                                 &key), ==, SHCA_AQ_OK);
    w.key = cpu_to_le32(rx_next_tag(key));
    rx_rc_local(r, &w);
    world.keys[RX_KEY_FR] = (RxKey) { rx_next_tag(key), RX_FR_IOVA,
                                      RX_FR_LEN };
}

/*
 * The world's keys: the MR, a window of each type bound over half of it
 * (type 2 to the RC QP), and the fast-registration MR; all with every
 * remote right.
 */
static void rx_keys_build(Rdma *r)
{
    struct shca_aq_entry cmd = { .opcode = SHCA_AQ_ALLOC_MW };
    uint32_t key;

    world.keys[RX_KEY_MR] = (RxKey) { world.mr_key, RX_MR_IOVA, RX_MR_LEN };
    cmd.alloc_mw.pdn = cpu_to_le32(r->pd);
    for (uint8_t type = 1; type <= 2; type++) {
        struct shca_bind_mw_wqe w = {
            .opcode = SHCA_WR_BIND_MW,
            .flags = SHCA_WQE_SIGNALED,
            .mr_key = cpu_to_le32(world.mr_key),
            .access = cpu_to_le32(RX_REMOTE),
            .addr = cpu_to_le64(RX_MR_IOVA + (type - 1) * RX_MR_LEN / 2),
            .length = cpu_to_le64(RX_MR_LEN / 2),
        };

        cmd.alloc_mw.type = type;
        g_assert_cmpuint(hca_cmd(&r->h, &cmd, &key), ==, SHCA_AQ_OK);
        w.mw_key = cpu_to_le32(key);
        w.new_key = cpu_to_le32(rx_next_tag(key));
        rx_rc_local(r, &w);
        world.keys[RX_KEY_MW1 + type - 1] = (RxKey) {
            rx_next_tag(key), le64_to_cpu(w.addr), RX_MR_LEN / 2,
        };
    }
    rx_fast_reg_build(r);
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

    rx_connect(r, &world.rc, SHCA_QPT_RC, 0);
    rx_connect(r, &world.uc, SHCA_QPT_UC, 0);
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
                                 SHCA_ACCESS_FLUSH_GLOBAL |
                                 SHCA_ACCESS_MW_BIND,
                                 RX_MR_IOVA, RX_MR_LEN, 0, &pages,
                                 &world.mr_key), ==, SHCA_AQ_OK);
    rx_keys_build(r);

    softhca_fuzz_srq(r, &world.srq, RX_SRQ_LIMIT, 0, 0);
    rx_srq_fill(r, &world.srq, RX_SRQ_LIMIT + 1);
    rx_connect(r, &world.srq_rc, SHCA_QPT_RC, world.srq.srqn);
    rx_xrc_build(r);
    rx_mcast_build(r);
    loop_start(r, &world.loop, SHCA_QPT_RC, 7);
    world.loop.access = rx_access(SHCA_QPT_RC);
    loop_connect(r, &world.loop, false);
    rx_loop_recvs(r, &world.loop);
    nic_start(&r->h, &world.nic);
    for (int i = 0; i < (1 << NIC_LOG) - 1; i++) {
        nic_post_rx(&r->h, &world.nic);
    }
}

/* RT_* of RF_TARGET's bits 5:0 */
static uint8_t rx_target(uint8_t target)
{
    target &= 0x3f;
    return target <= RT_LOOP ? target : target & 7;
}

static uint32_t rx_qpn(uint8_t target)
{
    switch (rx_target(target)) {
    case RT_RC: return world.rc.qpn;
    case RT_UC: return world.uc.qpn;
    case RT_UD: return world.ud.qpn;
    case RT_GSI: return world.gsi.qpn;
    case RT_MCAST_QPN: return SHCA_MCAST_QPN;
    case RT_XRC: return world.xrc_qpn;
    case RT_SRQ_RC: return world.srq_rc.qpn;
    case RT_MCAST: return SHCA_MCAST_QPN;
    case RT_MCAST_UD: return world.mc.qpn;
    case RT_LOOP: return world.loop.qpn;
    default: return world.rc.qpn + (target & 7);    /* none */
    }
}

/* An IPv4-mapped GID, or fd00::(low byte of ip); multicast: ff0e:: */
static void rx_gid(uint8_t *gid, uint32_t ip, bool ipv6)
{
    memset(gid, 0, 16);
    if (ipv6) {
        gid[0] = (ip >> 28) == 0xe ? 0xff : 0xfd;
        gid[1] = (ip >> 28) == 0xe ? 0x0e : 0;
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
    uint8_t rt = rx_target(target);
    const RxKey *k = &world.keys[(keys >> RK_KEY_SHIFT) % RX_KEYS];
    const SofthcaOpInfo *info;
    bool response = opcode >= SOFTHCA_OP_READ_RESPONSE_FIRST &&
                    opcode <= SOFTHCA_OP_ATOMIC_ACKNOWLEDGE;
    SofthcaRoceEnvelope env = {
        .src_port = 0xc000,
        .hop_limit = 64,
    };
    SofthcaRocePacket p;
    size_t payload = 0, len;

    /* an RC request to the XRC target is its XRC twin */
    if (rt == RT_XRC && (opcode & SOFTHCA_TRANSPORT_MASK) ==
        SOFTHCA_TRANSPORT_RC) {
        opcode |= SOFTHCA_TRANSPORT_XRC;
    }
    info = softhca_opcode_info(opcode);
    p = (SofthcaRocePacket) {
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
        /* to the XRC target, the field XORs its SRQ's number */
        .xrc_srqn = (ldl_le_p(d + RF_XRC_SRQN) ^
                     (rt == RT_XRC ? world.xsrq.srqn : 0)) & 0xffffff,
        .feth = ldl_le_p(d + RF_FETH),
    };

    if (info && (info->flags & SOFTHCA_OPF_PAYLOAD)) {
        payload = MIN(lduw_le_p(d + RF_PAYLOAD) % (RX_PAYLOAD_MAX + 1),
                      n - RX_ROCE_HDR);
    }
    if (keys & RK_RETH) {
        p.reth.rkey = k->key;
        p.reth.va = k->va + p.reth.va % k->len;
    }
    if (keys & RK_ATOMIC) {
        p.atomic.rkey = k->key;
        p.atomic.va = k->va + (p.atomic.va % k->len & ~7ull);
    }
    if (keys & RK_IETH) {
        p.inv_rkey = k->key;
    }
    if (keys & RK_QKEY) {
        p.deth.qkey = rt == RT_GSI ? SHCA_GSI_QKEY : UD_QKEY;
    }
    if (keys & RK_SRC) {
        p.deth.src_qpn = RX_PEER_QPN;
    }
    p.payload_len = payload;
    if (rt == RT_MCAST) {
        memcpy(env.dst_mac, RX_MCAST_MAC, 6);
    } else {
        memcpy(env.dst_mac, world.mac, 6);
    }
    memcpy(env.src_mac, RX_PEER_MAC, 6);
    rx_gid(env.src_gid, target & 0x80 ? RX_STRANGER_IP : RX_PEER_IP,
           target & 0x40);
    rx_gid(env.dst_gid, rt == RT_MCAST ? UD_MCAST_IP : 0x0a000001,
           target & 0x40);
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

/*
 * A WQE of the fuzzer's opcode (SEND, SEND_IMM or a bad one) from the UD
 * QP to the multicast group: 64 bytes (or RP_LONG's 4096) through the
 * QP's own key, or through a key of the world that does not cover them.
 */
static void rx_post_mcast(Rdma *r, uint8_t opcode, uint8_t flags,
                          const RxKey *k)
{
    struct shca_av av = ud_av(r, UD_MCAST_IP);
    struct shca_send_wqe w = {
        .wr_id = cpu_to_le64(world.ud_pi),
        .opcode = opcode,
        .flags = SHCA_WQE_SIGNALED | (flags & RP_FENCE),
        .remote_qpn = cpu_to_le32(SHCA_MCAST_QPN),
        .remote_qkey = cpu_to_le32(UD_QKEY),
    };

    ud_send(r, &world.ud, world.ud_pi++, &w, &av, world.ud.rq,
            flags & RP_LONG ? 4096 : 64, k ? k->key : world.rc.key);
}

/*
 * With a key chosen (RP_KEY_*), REG_MR registers the fast-registration MR
 * anew and BIND_MW binds a window (the chosen one, else type 1) anew, each
 * with the next tag, as the verbs would write them.
 */
static bool rx_post_mem(Loop *l, uint16_t i, uint8_t opcode, uint8_t flags,
                        uint8_t sel)
{
    const RxKey *fr = &world.keys[RX_KEY_FR];
    const RxKey *mw = &world.keys[sel == RX_KEY_MW2 ? RX_KEY_MW2 :
                                  RX_KEY_MW1];
    union {
        struct shca_send_wqe send;
        struct shca_fast_reg_wqe reg;
        struct shca_bind_mw_wqe bind;
    } w;

    if (opcode == SHCA_WR_REG_MR) {
        w.reg = (struct shca_fast_reg_wqe) {
            .wr_id = cpu_to_le64(i),
            .opcode = opcode,
            .flags = SHCA_WQE_SIGNALED | (flags & RP_FENCE),
            .page_shift = 12,
            .access = cpu_to_le32(SHCA_ACCESS_LOCAL_WRITE | RX_REMOTE),
            .iova = cpu_to_le64(fr->va),
            .length = cpu_to_le64(fr->len),
            .key = cpu_to_le32(rx_next_tag(fr->key)),
            .npages = cpu_to_le32(2),
        };
    } else if (opcode == SHCA_WR_BIND_MW) {
        w.bind = (struct shca_bind_mw_wqe) {
            .wr_id = cpu_to_le64(i),
            .opcode = opcode,
            .flags = SHCA_WQE_SIGNALED | (flags & RP_FENCE),
            .mw_key = cpu_to_le32(mw->key),
            .new_key = cpu_to_le32(rx_next_tag(mw->key)),
            .mr_key = cpu_to_le32(world.mr_key),
            .access = cpu_to_le32(RX_REMOTE),
            .addr = cpu_to_le64(mw->va),
            .length = cpu_to_le64(mw->len),
        };
    } else {
        return false;
    }
    loop_write_send(&world.r, l, i, &w.send, NULL, 0);
    return true;
}

/*
 * A signaled WQE of the fuzzer's opcode, 256 bytes each way (RO_LONG:
 * RX_LONG_LEN from the world's MR; RO_INLINE: RX_INLINE_LEN inline): to
 * the peer (RC or UC QP) or to itself (the loop QP), through a key of
 * nothing or of the world (RP_KEY_*); or a SEND to the multicast group.
 */
static void rx_post(const uint8_t *d)
{
    Rdma *r = &world.r;
    uint8_t flags = d[1], sel = (flags >> RP_KEY_SHIFT) & 7;
    unsigned q = flags & RP_LOOP ? 2 : flags & RP_UC;
    Loop *l = q == 2 ? &world.loop : q ? &world.uc : &world.rc;
    uint16_t *pi = &world.sq_pi[q];
    const RxKey *k = sel && sel <= RX_KEYS ? &world.keys[sel - 1] : NULL;
    uint8_t opcode = (d[0] & RO_OPCODE_MASK) % (SHCA_WR_ATOMIC_WRITE + 1);
    bool atomic = opcode == SHCA_WR_ATOMIC_CMP_SWP ||
                  opcode == SHCA_WR_ATOMIC_FETCH_ADD;
    /* FLUSH and ATOMIC_WRITE carry no data: their SGE is the WQE's */
    bool no_sge = opcode == SHCA_WR_FLUSH || opcode == SHCA_WR_ATOMIC_WRITE;
    struct shca_send_wqe w = {
        .wr_id = cpu_to_le64(*pi),
        .opcode = opcode,
        .flags = SHCA_WQE_SIGNALED | (flags & RP_FENCE),
        .num_sge = !no_sge,
        .imm = cpu_to_le32(k ? k->key : 0),     /* LOCAL_INV, SEND_INV */
        .remote_addr = cpu_to_le64(k ? k->va : 0x10000),
        .rkey = cpu_to_le32(k ? k->key : 0x1234),
        .compare_add = cpu_to_le64(d[0] & RO_LONG ? RX_LONG_LEN : 1),
        .feth = opcode == SHCA_WR_FLUSH ? SHCA_FLUSH_GLOBAL : 0,
    };
    struct shca_sge sge = {
        .addr = cpu_to_le64(l->rq + 1024),
        .length = cpu_to_le32(atomic ? 8 : 256),
        .lkey = cpu_to_le32(l->key),
    };
    uint8_t data[RX_INLINE_LEN];

    if (flags & RP_MCAST) {
        rx_post_mcast(r, opcode, flags, k);
        return;
    }
    if (d[0] & RO_LONG) {
        sge.addr = cpu_to_le64(RX_MR_IOVA);
        sge.length = cpu_to_le32(atomic ? 8 : RX_LONG_LEN);
        sge.lkey = cpu_to_le32(world.mr_key);
    }
    if (k && rx_post_mem(l, *pi, opcode, flags, sel - 1)) {
        /* a bind or a registration */
    } else if (d[0] & RO_INLINE) {
        w.flags |= SHCA_WQE_INLINE;
        w.num_sge = 0;
        w.inline_len = cpu_to_le32(sizeof(data));
        memset(data, *pi, sizeof(data));
        loop_write_send(r, l, *pi, &w, data, sizeof(data));
    } else {
        loop_write_send(r, l, *pi, &w, &sge, sizeof(sge));
    }
    (*pi)++;
    rdma_db(r, 0, SHCA_DB_SQ, (uint32_t)*pi << 16 | l->qpn);
}

/*
 * A frame from the NIC function, of the input's bytes and then zeros, its
 * descriptor's length as the input says.
 */
static size_t rx_nic_tx(QTestState *s, const uint8_t *d, size_t n)
{
    static uint8_t frame[NIC_TX_BUF];
    size_t len;

    if (n < 2) {
        return n;
    }
    len = MIN(MIN(lduw_le_p(d), n - 2), NIC_TX_BUF);
    memset(frame, 0, sizeof(frame));
    memcpy(frame, d + 2, len);
    nic_send(&world.r.h, &world.nic, frame, lduw_le_p(d));
    return 2 + len;
}

/* The link down, and up again if the input says so, as set_link does. */
static void rx_link(uint8_t up)
{
    qmp_set_link("n0", false, &error_abort);
    if (up & 1) {
        qmp_set_link("n0", true, &error_abort);
    }
}

/* The VM stopped while the clock moves, as for a migration or a pause. */
static void rx_stop(QTestState *s, uint8_t ms)
{
    vm_stop(RUN_STATE_PAUSED);
    qtest_clock_step(s, (ms + 1) * 1000 * 1000);
    flush_events(s);
    vm_start();
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
        case RX_NIC_TX:
            used = rx_nic_tx(s, data, size);
            break;
        case RX_LINK:
            used = MIN(size, 1);
            rx_link(used ? data[0] : 1);
            break;
        case RX_STOP:
            used = MIN(size, 1);
            rx_stop(s, used ? data[0] : 0);
            break;
        }
        flush_events(s);
        rx_wire_drain();
        data += used;
        size -= used;
    }
    /* a reset leaves the link as it is: the next input finds it up */
    qmp_set_link("n0", true, &error_abort);
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

static void seed_post(GByteArray *b, uint8_t wr_opcode, uint8_t flags)
{
    uint8_t h[3] = { RX_POST, wr_opcode, flags };

    g_byte_array_append(b, h, sizeof(h));
}

static void seed_clock(GByteArray *b, uint8_t ms)
{
    uint8_t h[2] = { RX_CLOCK, ms };

    g_byte_array_append(b, h, sizeof(h));
}

static void seed_kind(GByteArray *b, uint8_t kind, uint8_t arg)
{
    uint8_t h[2] = { kind, arg };

    g_byte_array_append(b, h, sizeof(h));
}

/* A NIC frame of len bytes (its descriptor saying desc_len) to mac */
static void seed_nic_tx(GByteArray *b, const char *mac, uint16_t len,
                        uint16_t desc_len)
{
    uint8_t h[3] = { RX_NIC_TX };
    uint8_t frame[128] = { 0 };

    stw_le_p(h + 1, desc_len);
    memcpy(frame, mac, 6);
    memcpy(frame + 6, RX_PEER_MAC, 6);
    stw_be_p(frame + 12, 0x88b5);       /* local experimental EtherType */
    g_byte_array_append(b, h, sizeof(h));
    g_byte_array_append(b, frame, MIN(len, sizeof(frame)));
}

/* RK_* aimed at key RX_KEY_* */
#define SEED_KEY(keys, which) ((keys) | (which) << RK_KEY_SHIFT)
/* RX_POST flags with key RX_KEY_* */
#define SEED_POST_KEY(flags, which) ((flags) | ((which) + 1) << RP_KEY_SHIFT)

/* Seeds for the XRC, SRQ, window, fast-registration, multicast and loop QPs */
static void rx_write_world_seeds(const char *dir)
{
    static const struct {
        const char *name;
        uint8_t opcode, target, keys;
        uint16_t payload;
    } requests[] = {
        { "xrc-send-only", SOFTHCA_TRANSPORT_XRC | SOFTHCA_OP_SEND_ONLY,
          RT_XRC, 0, 64 },
        { "xrc-send-only-imm", SOFTHCA_TRANSPORT_XRC |
          SOFTHCA_OP_SEND_ONLY_IMM, RT_XRC, 0, 32 },
        { "xrc-write-only", SOFTHCA_TRANSPORT_XRC | SOFTHCA_OP_RDMA_WRITE_ONLY,
          RT_XRC, RK_RETH, 64 },
        { "xrc-read", SOFTHCA_TRANSPORT_XRC | SOFTHCA_OP_RDMA_READ_REQUEST,
          RT_XRC, RK_RETH, 0 },
        { "xrc-fetch-add", SOFTHCA_OP_FETCH_ADD, RT_XRC, RK_ATOMIC, 0 },
        { "srq-send-only", SOFTHCA_OP_SEND_ONLY, RT_SRQ_RC, 0, 64 },
        { "mw1-write", SOFTHCA_OP_RDMA_WRITE_ONLY, RT_RC,
          SEED_KEY(RK_RETH, RX_KEY_MW1), 64 },
        { "mw1-read", SOFTHCA_OP_RDMA_READ_REQUEST, RT_RC,
          SEED_KEY(RK_RETH, RX_KEY_MW1), 0 },
        { "mw1-cmp-swap", SOFTHCA_OP_COMPARE_SWAP, RT_RC,
          SEED_KEY(RK_ATOMIC, RX_KEY_MW1), 0 },
        { "mw2-write", SOFTHCA_OP_RDMA_WRITE_ONLY, RT_RC,
          SEED_KEY(RK_RETH, RX_KEY_MW2), 64 },
        { "mw2-write-other-qp", SOFTHCA_OP_RDMA_WRITE_ONLY, RT_SRQ_RC,
          SEED_KEY(RK_RETH, RX_KEY_MW2), 64 },
        { "mw2-send-inv", SOFTHCA_OP_SEND_ONLY_INV, RT_RC,
          SEED_KEY(RK_IETH, RX_KEY_MW2), 16 },
        { "mw1-send-inv", SOFTHCA_OP_SEND_ONLY_INV, RT_RC,
          SEED_KEY(RK_IETH, RX_KEY_MW1), 16 },
        { "fr-write", SOFTHCA_OP_RDMA_WRITE_ONLY, RT_RC,
          SEED_KEY(RK_RETH, RX_KEY_FR), 64 },
        { "fr-read", SOFTHCA_OP_RDMA_READ_REQUEST, RT_RC,
          SEED_KEY(RK_RETH, RX_KEY_FR), 0 },
        { "fr-send-inv", SOFTHCA_OP_SEND_ONLY_INV, RT_RC,
          SEED_KEY(RK_IETH, RX_KEY_FR), 16 },
        { "mcast-send", SOFTHCA_TRANSPORT_UD | SOFTHCA_OP_SEND_ONLY,
          RT_MCAST, RK_QKEY | RK_SRC, 64 },
        { "mcast-send-imm", SOFTHCA_TRANSPORT_UD | SOFTHCA_OP_SEND_ONLY_IMM,
          RT_MCAST, RK_QKEY | RK_SRC, 32 },
        { "mcast-ud-send", SOFTHCA_TRANSPORT_UD | SOFTHCA_OP_SEND_ONLY,
          RT_MCAST_UD, RK_QKEY | RK_SRC, 64 },
        { "loop-send-from-peer", SOFTHCA_OP_SEND_ONLY, RT_LOOP, 0, 64 },
    };
    static const struct {
        const char *name;
        uint8_t opcode, flags;
    } posts[] = {
        { "loop-send", SHCA_WR_SEND, RP_LOOP },
        { "loop-write", SHCA_WR_RDMA_WRITE,
          SEED_POST_KEY(RP_LOOP, RX_KEY_MR) },
        { "loop-write-imm", SHCA_WR_RDMA_WRITE_IMM,
          SEED_POST_KEY(RP_LOOP, RX_KEY_MW1) },
        { "loop-read", SHCA_WR_RDMA_READ, SEED_POST_KEY(RP_LOOP, RX_KEY_MR) },
        { "loop-fetch-add", SHCA_WR_ATOMIC_FETCH_ADD,
          SEED_POST_KEY(RP_LOOP, RX_KEY_MR) },
        { "loop-send-inv", SHCA_WR_SEND_INV,
          SEED_POST_KEY(RP_LOOP, RX_KEY_FR) },
        { "loop-bad-key", SHCA_WR_RDMA_WRITE, RP_LOOP },
        { "post-bind-mw1", SHCA_WR_BIND_MW, SEED_POST_KEY(0, RX_KEY_MW1) },
        { "post-bind-mw2", SHCA_WR_BIND_MW, SEED_POST_KEY(0, RX_KEY_MW2) },
        { "post-local-inv-mw2", SHCA_WR_LOCAL_INV,
          SEED_POST_KEY(0, RX_KEY_MW2) },
        { "post-reg-mr", SHCA_WR_REG_MR, SEED_POST_KEY(0, RX_KEY_FR) },
        { "mcast-post", SHCA_WR_SEND, RP_MCAST },
    };
    GByteArray *b;

    for (size_t i = 0; i < ARRAY_SIZE(requests); i++) {
        b = g_byte_array_new();
        seed_roce(b, requests[i].opcode, requests[i].target, 0,
                  requests[i].keys, requests[i].payload, 0);
        seed_roce(b, requests[i].opcode, requests[i].target, 1,
                  requests[i].keys, requests[i].payload, 0);
        softhca_fuzz_write_seed(dir, requests[i].name, b);
    }
    for (size_t i = 0; i < ARRAY_SIZE(posts); i++) {
        b = g_byte_array_new();
        seed_post(b, posts[i].opcode, posts[i].flags);
        seed_post(b, posts[i].opcode, posts[i].flags);
        seed_clock(b, 10);
        softhca_fuzz_write_seed(dir, posts[i].name, b);
    }

    /* a message of three packets into the XRC SRQ */
    b = g_byte_array_new();
    seed_roce(b, SOFTHCA_OP_SEND_FIRST, RT_XRC, 0, 0, 1024, 0);
    seed_roce(b, SOFTHCA_OP_SEND_MIDDLE, RT_XRC, 1, 0, 1024, 0);
    seed_roce(b, SOFTHCA_OP_SEND_LAST, RT_XRC, 2, 0, 100, 0);
    softhca_fuzz_write_seed(dir, "xrc-send-multi", b);

    /* the SRQ below its limit, then empty: RNR */
    b = g_byte_array_new();
    for (uint32_t psn = 0; psn < RX_SRQ_LIMIT + 3; psn++) {
        seed_roce(b, SOFTHCA_OP_SEND_ONLY, RT_SRQ_RC, psn, 0, 64, 0);
    }
    softhca_fuzz_write_seed(dir, "srq-limit", b);

    /* the fast-registration MR invalidated, registered anew, written */
    b = g_byte_array_new();
    seed_post(b, SHCA_WR_LOCAL_INV, SEED_POST_KEY(0, RX_KEY_FR));
    seed_post(b, SHCA_WR_REG_MR, SEED_POST_KEY(0, RX_KEY_FR));
    seed_roce(b, SOFTHCA_OP_RDMA_WRITE_ONLY, RT_RC, 0,
              SEED_KEY(RK_RETH, RX_KEY_FR), 64, 0);
    softhca_fuzz_write_seed(dir, "fr-reregister", b);
}

/*
 * Seeds for the requester's rarer paths (long and inline WQEs, FLUSH,
 * atomic write, responses with gaps, each NAK), the NIC function, the
 * link and a stopped VM.
 */
static void rx_write_engine_seeds(const char *dir)
{
    static const struct {
        const char *name;
        uint8_t opcode, flags;
    } posts[] = {
        { "rc-flush-post", SHCA_WR_FLUSH, SEED_POST_KEY(0, RX_KEY_MR) },
        { "rc-atomic-write-post", SHCA_WR_ATOMIC_WRITE,
          SEED_POST_KEY(0, RX_KEY_MR) },
        { "rc-inline-send", SHCA_WR_SEND | RO_INLINE, 0 },
        { "uc-inline-write", SHCA_WR_RDMA_WRITE | RO_INLINE, RP_UC },
        { "loop-inline-send", SHCA_WR_SEND | RO_INLINE, RP_LOOP },
        { "loop-long-read", SHCA_WR_RDMA_READ | RO_LONG,
          SEED_POST_KEY(RP_LOOP, RX_KEY_MR) },
        { "loop-long-write", SHCA_WR_RDMA_WRITE | RO_LONG,
          SEED_POST_KEY(RP_LOOP, RX_KEY_MR) },
        { "loop-flush", SHCA_WR_FLUSH, SEED_POST_KEY(RP_LOOP, RX_KEY_MR) },
        { "loop-atomic-write", SHCA_WR_ATOMIC_WRITE,
          SEED_POST_KEY(RP_LOOP, RX_KEY_MR) },
        { "rc-long-send", SHCA_WR_SEND | RO_LONG, 0 },
    };
    /* AETH syndromes: PSN sequence error, invalid request, access, op */
    static const uint8_t naks[] = { 0x60, 0x61, 0x62, 0x63 };
    GByteArray *b;

    for (size_t i = 0; i < ARRAY_SIZE(posts); i++) {
        b = g_byte_array_new();
        seed_post(b, posts[i].opcode, posts[i].flags);
        seed_roce(b, SOFTHCA_OP_ACKNOWLEDGE, 0, 0, 0, 0, 0);
        seed_clock(b, 10);
        softhca_fuzz_write_seed(dir, posts[i].name, b);
    }
    for (size_t i = 0; i < ARRAY_SIZE(naks); i++) {
        g_autofree char *name = g_strdup_printf("rc-nak-%02x", naks[i]);

        b = g_byte_array_new();
        seed_post(b, SHCA_WR_RDMA_WRITE, SEED_POST_KEY(0, RX_KEY_MR));
        seed_post(b, SHCA_WR_SEND, 0);
        seed_roce(b, SOFTHCA_OP_ACKNOWLEDGE, 0, 0, 0, 0, naks[i]);
        softhca_fuzz_write_seed(dir, name, b);
    }

    /* a READ of eight responses: two, a gap, the rest */
    b = g_byte_array_new();
    seed_post(b, SHCA_WR_RDMA_READ | RO_LONG, SEED_POST_KEY(0, RX_KEY_MR));
    seed_roce(b, SOFTHCA_OP_READ_RESPONSE_FIRST, 0, 0, 0, 1024, 0);
    seed_roce(b, SOFTHCA_OP_READ_RESPONSE_MIDDLE, 0, 1, 0, 1024, 0);
    seed_roce(b, SOFTHCA_OP_READ_RESPONSE_MIDDLE, 0, 3, 0, 1024, 0);
    seed_roce(b, SOFTHCA_OP_READ_RESPONSE_MIDDLE, 0, 2, 0, 1024, 0);
    seed_roce(b, SOFTHCA_OP_READ_RESPONSE_LAST, 0, 7, 0, 1024, 0);
    softhca_fuzz_write_seed(dir, "rc-read-responses-gap", b);

    /* an ACK past a READ whose responses got lost */
    b = g_byte_array_new();
    seed_post(b, SHCA_WR_RDMA_READ, SEED_POST_KEY(0, RX_KEY_MR));
    seed_post(b, SHCA_WR_SEND, 0);
    seed_roce(b, SOFTHCA_OP_ACKNOWLEDGE, 0, 1, 0, 0, 0);
    seed_clock(b, 10);
    softhca_fuzz_write_seed(dir, "rc-ack-past-read", b);

    b = g_byte_array_new();
    seed_nic_tx(b, RX_PEER_MAC, 64, 64);
    seed_nic_tx(b, RX_OWN_MAC, 64, 64);      /* to itself */
    seed_nic_tx(b, RX_PEER_MAC, 64, 8);         /* shorter than a header */
    softhca_fuzz_write_seed(dir, "nic-tx", b);

    b = g_byte_array_new();
    seed_post(b, SHCA_WR_SEND, 0);
    seed_kind(b, RX_LINK, 0);
    seed_post(b, SHCA_WR_SEND, RP_LOOP);
    seed_kind(b, RX_LINK, 1);
    softhca_fuzz_write_seed(dir, "link-down-up", b);

    /* a stopped VM with an RNR wait and a retransmission armed */
    b = g_byte_array_new();
    seed_post(b, SHCA_WR_SEND, 0);
    seed_post(b, SHCA_WR_RDMA_WRITE, SEED_POST_KEY(RP_UC, RX_KEY_MR));
    seed_roce(b, SOFTHCA_OP_ACKNOWLEDGE, 0, 0, 0, 0, 0x21);     /* RNR */
    seed_kind(b, RX_STOP, 20);
    seed_post(b, SHCA_WR_SEND, RP_LOOP);
    seed_kind(b, RX_STOP, 0);
    seed_clock(b, 50);
    softhca_fuzz_write_seed(dir, "stopped", b);
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
    seed_post(b, SHCA_WR_SEND, 0);
    seed_roce(b, SOFTHCA_OP_ACKNOWLEDGE, 0, 0, 0, 0, 0);
    softhca_fuzz_write_seed(dir, "rc-ack", b);

    b = g_byte_array_new();
    seed_post(b, SHCA_WR_SEND, 0);
    seed_post(b, SHCA_WR_SEND, 0);
    seed_roce(b, SOFTHCA_OP_ACKNOWLEDGE, 0, 0, 0, 0, 0x60);  /* PSN seq */
    seed_roce(b, SOFTHCA_OP_ACKNOWLEDGE, 0, 1, 0, 0, 0x2e);  /* RNR */
    seed_clock(b, 100);
    seed_roce(b, SOFTHCA_OP_ACKNOWLEDGE, 0, 1, 0, 0, 0x63);  /* access */
    softhca_fuzz_write_seed(dir, "rc-nak", b);

    b = g_byte_array_new();
    seed_post(b, SHCA_WR_RDMA_READ, 0);
    seed_roce(b, SOFTHCA_OP_READ_RESPONSE_ONLY, 0, 0, 0, 256, 0);
    softhca_fuzz_write_seed(dir, "rc-read-response", b);

    b = g_byte_array_new();
    seed_post(b, SHCA_WR_ATOMIC_FETCH_ADD, 0);
    seed_roce(b, SOFTHCA_OP_ATOMIC_ACKNOWLEDGE, 0, 0, 0, 0, 0);
    softhca_fuzz_write_seed(dir, "rc-atomic-ack", b);

    b = g_byte_array_new();
    seed_post(b, SHCA_WR_RDMA_WRITE, 0);
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

    rx_write_world_seeds(dir);
    rx_write_engine_seeds(dir);
}

static void rx_pre_fuzz(QTestState *s)
{
    softhca_fuzz_seeds(s, NULL, rx_write_seeds);
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
