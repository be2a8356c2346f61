/*
 * softhca qtests: migration and snapshots (spec §20).  A device with
 * objects and traffic in flight migrates to a second QEMU, which the test
 * then drives, and the traffic completes there; a stream with corrupted
 * device state is refused and crashes nothing.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qobject/qdict.h"
#include "softhca-qtest.h"

#define PAYLOAD     3000        /* three packets at the path MTU of 1024 */

/* Fill len bytes at addr with bytes that depend on seed and position. */
static void fill_pattern(Rdma *r, uint64_t addr, size_t len, uint8_t seed)
{
    g_autofree uint8_t *b = g_malloc(len);

    for (size_t i = 0; i < len; i++) {
        b[i] = seed + i * 7;
    }
    qtest_memwrite(r->h.qts, addr, b, len);
}

static void check_pattern(Rdma *r, uint64_t addr, size_t len, uint8_t seed)
{
    g_autofree uint8_t *b = g_malloc(len);

    qtest_memread(r->h.qts, addr, b, len);
    for (size_t i = 0; i < len; i++) {
        g_assert_cmphex(b[i], ==, (uint8_t)(seed + i * 7));
    }
}

/* A device with options opts and an RC QP l that talks to itself. */
static void self_rc_start(Rdma *r, Loop *l, const char *opts)
{
    rdma_start_with(r, opts);
    loop_start(r, l, SHCA_QPT_RC, 7);
    loop_connect(r, l, false);
}

/* A SEND of len bytes from src into a receive WQE at dst, signaled. */
static void loop_send_recv(Rdma *r, Loop *l, uint16_t i, uint64_t src,
                           uint64_t dst, uint32_t len)
{
    loop_recv(r, l, i, 0x100 + i, dst, len);
    loop_send(r, l, i, 0x200 + i, src, len, SHCA_WQE_SIGNALED);
}

static void check_cqe(struct shca_cqe cqe, uint8_t status, uint64_t wr_id)
{
    g_assert_cmpuint(cqe.status, ==, status);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, wr_id);
}

/* SEND i of PAYLOAD bytes of pattern i + 1 from src to dst, completed. */
static void send_round(Rdma *r, Loop *l, uint16_t i, uint64_t src,
                       uint64_t dst)
{
    fill_pattern(r, src, PAYLOAD, i + 1);
    loop_send_recv(r, l, i, src, dst, PAYLOAD);
    rdma_db(r, 0, SHCA_DB_RQ, (uint32_t)(i + 1) << 16 | l->qpn);
    rdma_db(r, 0, SHCA_DB_SQ, (uint32_t)(i + 1) << 16 | l->qpn);
    check_cqe(loop_send_cqe(r, l), SHCA_CQE_SUCCESS, 0x200 + i);
    check_cqe(loop_recv_cqe(r, l), SHCA_CQE_SUCCESS, 0x100 + i);
    check_pattern(r, dst, PAYLOAD, i + 1);
}

/*
 * An RC QP that talks to itself, with a SEND done before the migration:
 * after it, the same QP, CQs, MR and PD carry another, and a new QP can be
 * made beside them.
 */
static void test_migration_idle_device(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    g_autofree char *netdev2 = dgram_loop_netdev();
    uint64_t src, dst;
    Rdma r;
    Loop l, l2;

    self_rc_start(&r, &l, netdev);
    src = guest_alloc(&r.h.alloc, PAYLOAD);
    dst = guest_alloc(&r.h.alloc, PAYLOAD);
    send_round(&r, &l, 0, src, dst);

    hca_migrate(&r.h, netdev2);

    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    g_assert_cmpuint(rdma_state(&r, l.qpn), ==, SHCA_QPS_RTS);
    send_round(&r, &l, 1, src, dst);
    /* the tables go on from where they were: a new QP has a new number */
    loop_start(&r, &l2, SHCA_QPT_RC, 7);
    g_assert_cmpuint(l2.qpn, !=, l.qpn);
    hca_stop(&r.h);
}

/*
 * Bug: a PD freed before the migration kept the user context it had, and
 * the destination refused the state for it ("PD 2"): a user process had
 * run and exited before a savevm.  The PD's number is free after the
 * migration, as its context's.
 */
static void test_migration_freed_user_pd(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    g_autofree char *netdev2 = dgram_loop_netdev();
    uint32_t uctx, pdn, again;
    Rdma r;

    rdma_start_with(&r, netdev);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_ALLOC_UCTX, 0, &uctx), ==,
                     SHCA_AQ_OK);
    pdn = rdma_user_pd(&r, uctx);
    g_assert_cmpuint(pdn, !=, 0);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEALLOC_PD, pdn, NULL), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEALLOC_UCTX, uctx, NULL), ==,
                     SHCA_AQ_OK);

    hca_migrate(&r.h, netdev2);

    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_ALLOC_PD, 0, &again), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(again, ==, pdn);
    hca_stop(&r.h);
}

/*
 * A CQ holding as many CQEs as it has slots when the machine moves: they
 * are all there after it, and the next CQE wraps to slot 0 with the phase
 * turned, once the driver has consumed them.
 */
static void test_migration_full_cq(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    g_autofree char *netdev2 = dgram_loop_netdev();
    const unsigned slots = 1u << LOOP_CQ_LOG;
    uint64_t src, dst;
    Rdma r;
    Loop l;

    self_rc_start(&r, &l, netdev);
    src = guest_alloc(&r.h.alloc, 64);
    dst = guest_alloc(&r.h.alloc, 64 * slots);
    fill_pattern(&r, src, 64, 3);
    for (unsigned i = 0; i < slots; i++) {
        loop_send_recv(&r, &l, i, src, dst + 64 * i, 64);
    }
    rdma_db(&r, 0, SHCA_DB_RQ, slots << 16 | l.qpn);
    rdma_db(&r, 0, SHCA_DB_SQ, slots << 16 | l.qpn);
    for (int t = 0; !loop_cqe_ready(&r, l.scqbuf, slots - 1) ||
                    !loop_cqe_ready(&r, l.rcqbuf, slots - 1); t++) {
        g_assert_cmpint(t, <, 1000);
        g_usleep(2 * 1000);
        qtest_clock_step(r.h.qts, 200 * 1000);      /* delayed ACKs */
    }

    hca_migrate(&r.h, netdev2);

    for (unsigned i = 0; i < slots; i++) {
        check_cqe(loop_send_cqe(&r, &l), SHCA_CQE_SUCCESS, 0x200 + i);
        check_cqe(loop_recv_cqe(&r, &l), SHCA_CQE_SUCCESS, 0x100 + i);
        check_pattern(&r, dst + 64 * i, 64, 3);
    }
    loop_send_recv(&r, &l, slots, src, dst, 64);
    rdma_db(&r, 0, SHCA_DB_RQ, (slots + 1) << 16 | l.qpn);
    rdma_db(&r, 0, SHCA_DB_SQ, (slots + 1) << 16 | l.qpn);
    check_cqe(loop_send_cqe(&r, &l), SHCA_CQE_SUCCESS, 0x200 + slots);
    check_cqe(loop_recv_cqe(&r, &l), SHCA_CQE_SUCCESS, 0x100 + slots);
    hca_stop(&r.h);
}

/* The PSN of an IPv4 RoCEv2 frame f, and its opcode. */
static uint32_t frame_psn(const uint8_t *f)
{
    return ldl_be_p(f + ROCE_OFF + 8) & 0xffffff;
}

/* Wait for a RoCEv2 frame from the device on the wire: its length. */
static size_t wire_roce(Wire *w, uint8_t *f, size_t size)
{
    for (int t = 0; t < 200; t++) {
        size_t len = wire_recv(w, f, size, 10);

        if (len > ROCE_OFF + 12 && lduw_be_p(f + 36) == 4791) {
            return len;
        }
    }
    g_assert_not_reached();
}

/*
 * A SEND of three packets to a peer that acknowledges none of them until
 * the machine has moved: the new one retransmits all three from the copy
 * of the WQE it brought, byte for byte, and completes on the ACK.
 */
static void test_migration_rc_mid_retransmission(void)
{
    const uint32_t first = 0x100;
    uint8_t sent[3][1200], f[1200];
    size_t sent_len[3];
    uint64_t src, stats[SHCA_STAT_COUNT];
    Wire w;
    Rdma r;
    Loop l;

    peer_start(&w, &r, &l, 0);
    src = guest_alloc(&r.h.alloc, PAYLOAD);
    fill_pattern(&r, src, PAYLOAD, 5);
    loop_send(&r, &l, 0, 0x5e, src, PAYLOAD, SHCA_WQE_SIGNALED);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    for (int i = 0; i < 3; i++) {
        sent_len[i] = wire_roce(&w, sent[i], sizeof(sent[i]));
        g_assert_cmphex(frame_psn(sent[i]), ==, first + i);
    }
    wire_netdev_again(&w);
    hca_migrate(&r.h, w.netdev);
    g_assert_false(loop_cqe_ready(&r, l.scqbuf, 0));

    for (int i = 0; i < 3; i++) {
        size_t len = 0;

        /* the ACK timeout (67 ms), then the packets; not the announce */
        for (int t = 0; len <= ROCE_OFF || lduw_be_p(f + 36) != 4791; t++) {
            g_assert_cmpint(t, <, 100);
            qtest_clock_step(r.h.qts, 20 * 1000 * 1000);
            len = wire_recv(&w, f, sizeof(f), 10);
        }
        g_assert_cmpuint(len, ==, sent_len[i]);
        /* the same packet but for the IP header's identification */
        g_assert_cmphex(frame_psn(f), ==, first + i);
        g_assert_cmpmem(f + ROCE_OFF, len - ROCE_OFF - 4,
                        sent[i] + ROCE_OFF, len - ROCE_OFF - 4);
    }
    peer_ack(&w, l.mac, l.qpn, first + 2, 1);
    check_cqe(loop_send_cqe(&r, &l), SHCA_CQE_SUCCESS, 0x5e);
    rdma_stats(&r, stats);
    g_assert_cmpuint(stats[SHCA_STAT_RETRANSMITS], >=, 1);
    hca_stop(&r.h);
    wire_close(&w);
}

/*
 * A READ and a FETCH_ADD outstanding at the peer when the machine moves:
 * their responses reach the new one, which places the data and the
 * original value and completes both.
 */
static void test_migration_read_atomic_outstanding(void)
{
    const uint32_t first = 0x100;
    const uint64_t orig = 0x1122334455667788ull;
    uint8_t f[256], *b = f + ROCE_OFF;
    struct shca_send_wqe w = {
        .wr_id = cpu_to_le64(0xa1), .opcode = SHCA_WR_RDMA_READ,
        .flags = SHCA_WQE_SIGNALED, .num_sge = 1,
        .remote_addr = cpu_to_le64(0x10000), .rkey = cpu_to_le32(0x1234),
    };
    struct shca_send_wqe a = {
        .wr_id = cpu_to_le64(0xa2), .opcode = SHCA_WR_ATOMIC_FETCH_ADD,
        .flags = SHCA_WQE_SIGNALED, .num_sge = 1,
        .remote_addr = cpu_to_le64(0x20000), .rkey = cpu_to_le32(0x1234),
        .compare_add = cpu_to_le64(5),
    };
    struct shca_sge sge = { .length = cpu_to_le32(64) };
    uint64_t buf;
    Wire wire;
    Rdma r;
    Loop l;

    peer_start(&wire, &r, &l, 0);
    buf = guest_alloc(&r.h.alloc, 4096);
    hca_fill(&r.h, buf, 0, 4096);
    sge.addr = cpu_to_le64(buf);
    sge.lkey = cpu_to_le32(l.key);
    loop_write_send(&r, &l, 0, &w, &sge, sizeof(sge));
    sge.addr = cpu_to_le64(buf + 128);
    sge.length = cpu_to_le32(8);
    loop_write_send(&r, &l, 1, &a, &sge, sizeof(sge));
    rdma_db(&r, 0, SHCA_DB_SQ, 2 << 16 | l.qpn);
    g_assert_cmpuint(wire_roce(&wire, f, sizeof(f)), >, 0);
    g_assert_cmphex(b[0], ==, 0x0c);            /* RDMA READ request */
    g_assert_cmpuint(wire_roce(&wire, f, sizeof(f)), >, 0);
    g_assert_cmphex(b[0], ==, 0x14);            /* FETCH_ADD */
    g_assert_cmphex(frame_psn(f), ==, first + 1);

    wire_netdev_again(&wire);
    hca_migrate(&r.h, wire.netdev);

    /* READ response only: BTH, AETH, 64 bytes */
    peer_bth(b, 0x10, l.qpn, first, false);
    stl_be_p(b + 12, 0x1f000000 | 1);
    for (int i = 0; i < 64; i++) {
        b[16 + i] = 0x40 + i;
    }
    wire_send(&wire, f, peer_frame(f, l.mac, 16 + 64));
    /* ATOMIC ACKNOWLEDGE: BTH, AETH, the original value */
    peer_bth(b, 0x12, l.qpn, first + 1, false);
    stl_be_p(b + 12, 0x1f000000 | 2);
    stq_be_p(b + 16, orig);
    wire_send(&wire, f, peer_frame(f, l.mac, 24));

    check_cqe(loop_send_cqe(&r, &l), SHCA_CQE_SUCCESS, 0xa1);
    check_cqe(loop_send_cqe(&r, &l), SHCA_CQE_SUCCESS, 0xa2);
    for (int i = 0; i < 64; i++) {
        g_assert_cmphex(qtest_readb(r.h.qts, buf + i), ==, 0x40 + i);
    }
    g_assert_cmphex(qtest_readq(r.h.qts, buf + 128), ==, orig);
    hca_stop(&r.h);
    wire_close(&wire);
}

/*
 * The peer's zero-length READ, answered (one response, no payload), still
 * in the responder's slot as the VM migrates: the slot has sent one
 * response for 0 bytes.  The incoming side once compared those two as if
 * both were bytes and refused the QP (vm/migrate-rdma-verify under load);
 * now the new QEMU takes it, and answers the READ's duplicate again.
 */
static void test_migration_zero_length_read_answered(void)
{
    const uint32_t psn = 0xabcdef;      /* the device's rq_psn (rc_attr) */
    uint8_t f[128], *b = f + ROCE_OFF;
    Wire wire;
    Rdma r;
    Loop l;

    peer_start(&wire, &r, &l, SHCA_ACCESS_REMOTE_READ);
    for (int round = 0; round < 2; round++) {
        peer_bth(b, 0x0c, l.qpn, psn, true);    /* RC RDMA READ request */
        stq_be_p(b + 12, 0);
        stl_be_p(b + 20, 0);
        stl_be_p(b + 24, 0);
        wire_send(&wire, f, peer_frame(f, l.mac, 28));
        g_assert_cmpuint(wire_roce(&wire, f, sizeof(f)), >, 0);
        g_assert_cmphex(b[0], ==, 0x10);        /* READ response only */
        g_assert_cmphex(frame_psn(f), ==, psn);
        if (!round) {
            wire_netdev_again(&wire);
            hca_migrate(&r.h, wire.netdev);
        }
    }
    hca_stop(&r.h);
    wire_close(&wire);
}

/*
 * The VM stopped with doorbells queued on their page (the hand-off path)
 * and a frame in the loopback queue: the new machine, once it runs, rings
 * the former and delivers the latter.
 */
static void test_migration_queued_work(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    g_autofree char *netdev2 = dgram_loop_netdev();
    g_autofree char *opts = g_strdup_printf(",x-doorbell-handoff=on%s",
                                            netdev);
    g_autofree char *opts2 = g_strdup_printf(",x-doorbell-handoff=on%s",
                                             netdev2);
    uint64_t src, dst;
    Rdma r;
    Loop l;

    self_rc_start(&r, &l, opts);
    src = guest_alloc(&r.h.alloc, PAYLOAD);
    dst = guest_alloc(&r.h.alloc, 2 * PAYLOAD);
    fill_pattern(&r, src, PAYLOAD, 9);
    loop_send_recv(&r, &l, 0, src, dst, PAYLOAD);
    loop_send_recv(&r, &l, 1, src, dst + PAYLOAD, PAYLOAD);

    qtest_qmp_assert_success(r.h.qts, "{'execute': 'stop'}");
    rdma_db(&r, 0, SHCA_DB_RQ, 2 << 16 | l.qpn);
    rdma_db(&r, 0, SHCA_DB_SQ, 2 << 16 | l.qpn);
    hca_migrate(&r.h, opts2);
    g_assert_false(hca_running(r.h.qts));
    g_assert_false(loop_cqe_ready(&r, l.scqbuf, 0));
    qtest_qmp_assert_success(r.h.qts, "{'execute': 'cont'}");

    for (unsigned i = 0; i < 2; i++) {
        check_cqe(loop_send_cqe(&r, &l), SHCA_CQE_SUCCESS, 0x200 + i);
        check_cqe(loop_recv_cqe(&r, &l), SHCA_CQE_SUCCESS, 0x100 + i);
        check_pattern(&r, dst + PAYLOAD * i, PAYLOAD, 9);
    }
    hca_stop(&r.h);
}

/*
 * An SRQ armed with a limit of 2 and three WQEs: one SEND before the
 * migration leaves it at the limit, the next, after, takes it below, and
 * the limit event fires on the new machine, once.
 */
static void test_migration_srq_at_limit(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    g_autofree char *netdev2 = dgram_loop_netdev();
    uint64_t tx, rx;
    struct shca_eqe eqe;
    uint32_t limit;
    Rdma r;
    Loop l;
    Srq q;

    rdma_start_with(&r, netdev);
    srq_rc_start(&r, &q, &l, 2, &tx, &rx);
    loop_send(&r, &l, 0, 0x900, tx, 20, SHCA_WQE_SIGNALED);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    check_srq_recv(loop_recv_cqe(&r, &l), 0x500, 0, 20, l.qpn);
    check_cqe(loop_send_cqe(&r, &l), SHCA_CQE_SUCCESS, 0x900);
    g_assert_cmpuint(rdma_eqe(&r, r.eq0, 0).type, ==, 0);

    hca_migrate(&r.h, netdev2);

    loop_send(&r, &l, 1, 0x901, tx, 20, SHCA_WQE_SIGNALED);
    rdma_db(&r, 0, SHCA_DB_SQ, 2 << 16 | l.qpn);
    check_srq_recv(loop_recv_cqe(&r, &l), 0x501, 1, 20, l.qpn);
    check_cqe(loop_send_cqe(&r, &l), SHCA_CQE_SUCCESS, 0x901);
    g_assert_cmpuint(srq_record_ci(&r, &q), ==, 2);
    eqe = rdma_eqe(&r, r.eq0, 0);
    g_assert_cmpuint(eqe.type, ==, SHCA_EQE_SRQ_LIMIT);
    g_assert_cmpuint(le32_to_cpu(eqe.obj), ==, q.srqn);
    g_assert_cmpuint(rdma_eqe(&r, r.eq0, 1).type, ==, 0);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_QUERY_SRQ, q.srqn, &limit), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(limit, ==, 0);
    hca_stop(&r.h);
}

/*
 * An XRC domain with an XRC SRQ in a PD of its own, a target QP and a
 * send QP: after the migration a SEND lands in the SRQ through the
 * target, and the domain is still busy with them.
 */
static void test_migration_xrc(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    g_autofree char *netdev2 = dgram_loop_netdev();
    uint32_t xrcdn, xsrq, ini, tgt, key, xkey, xpd, kpd, tcq, scq;
    uint64_t sq, srqbuf, tcqbuf, scqbuf, tx, rx;
    uint8_t got[28];
    Loop l = { .sq_shift = 7 };
    Rdma r;
    Srq q;

    rdma_start_with(&r, netdev);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_ALLOC_XRCD, 0, &xrcdn), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(rdma_reg_mr(&r, SHCA_ACCESS_PHYS |
                                 SHCA_ACCESS_LOCAL_WRITE, 0, RAM_TOP, 0, NULL,
                                 &key), ==, SHCA_AQ_OK);
    tcq = rdma_cq(&r, 0, LOOP_CQ_LOG, &tcqbuf);
    scq = rdma_cq(&r, 0, LOOP_CQ_LOG, &scqbuf);
    kpd = r.pd;
    xpd = r.pd = rdma_user_pd(&r, 0);
    g_assert_cmpuint(rdma_reg_mr(&r, SHCA_ACCESS_PHYS |
                                 SHCA_ACCESS_LOCAL_WRITE, 0, RAM_TOP, 0, NULL,
                                 &xkey), ==, SHCA_AQ_OK);
    r.pd = kpd;
    srqbuf = guest_alloc(&r.h.alloc, 4096);
    qtest_memset(r.h.qts, srqbuf, 0, 4096);
    g_assert_cmpuint(xrc_srq_cmd(&r, xpd, xrcdn, tcq, srqbuf, &xsrq), ==,
                     SHCA_AQ_OK);
    q = (Srq) { .srqn = xsrq, .buf = srqbuf, .log_size = SRQ_LOG };
    g_assert_cmpuint(xrc_create_qp(&r, SHCA_QPT_XRC_TGT, xrcdn, 0, 0, &tgt),
                     ==, SHCA_AQ_OK);
    sq = guest_alloc(&r.h.alloc, 4096);
    g_assert_cmpuint(xrc_create_qp(&r, SHCA_QPT_XRC_INI, r.pd, scq, sq, &ini),
                     ==, SHCA_AQ_OK);
    xrc_connect(&r, ini, tgt);
    xrc_connect(&r, tgt, ini);

    hca_migrate(&r.h, netdev2);

    l.qpn = ini;
    l.sq = sq;
    l.key = key;
    l.scqbuf = scqbuf;
    tx = guest_alloc(&r.h.alloc, 4096);
    rx = guest_alloc(&r.h.alloc, 4096);
    qtest_memwrite(r.h.qts, tx, "extended reliable connection", 28);
    srq_post(&r, &q, 0x800, rx, 1024, xkey);
    loop_send(&r, &l, 0, 0x900, tx, 28, SHCA_WQE_SIGNALED);
    qtest_writel(r.h.qts, sq + offsetof(struct shca_send_wqe, remote_qpn),
                 cpu_to_le32(xsrq));
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | ini);
    check_srq_recv(loop_wait_cqe(&r, tcqbuf, 0), 0x800, 0, 28, tgt);
    qtest_memread(r.h.qts, rx, got, 28);
    g_assert(memcmp(got, "extended reliable connection", 28) == 0);
    check_cqe(loop_send_cqe(&r, &l), SHCA_CQE_SUCCESS, 0x900);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEALLOC_XRCD, xrcdn, NULL), ==,
                     SHCA_AQ_BUSY);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEALLOC_PD, xpd, NULL), ==,
                     SHCA_AQ_BUSY);
    hca_stop(&r.h);
}

/*
 * Sixteen SENDs of 3000 bytes ring at once, on a port (props: the
 * device's fault properties) that drops some of their frames, and the
 * machine moves while the ACK timer, on the VM clock that only the test
 * moves, holds those back: every SEND completes, in order, with its
 * data.  The generators and a held frame move too; with objects, the
 * engine runs in an iothread on both sides.
 */
static void migrate_under_traffic(const char *props, const char *objects)
{
    g_autofree char *netdev = dgram_loop_netdev();
    g_autofree char *netdev2 = dgram_loop_netdev();
    g_autofree char *opts = g_strdup_printf("%s%s%s", props, netdev,
                                            objects);
    g_autofree char *opts2 = g_strdup_printf("%s%s%s", props, netdev2,
                                             objects);
    const unsigned n = 16;
    uint64_t src, dst;
    Rdma r;
    Loop l;

    self_rc_start(&r, &l, opts);
    src = guest_alloc(&r.h.alloc, PAYLOAD);
    dst = guest_alloc(&r.h.alloc, n * PAYLOAD);
    fill_pattern(&r, src, PAYLOAD, 11);
    for (unsigned i = 0; i < n; i++) {
        loop_send_recv(&r, &l, i, src, dst + i * PAYLOAD, PAYLOAD);
    }
    rdma_db(&r, 0, SHCA_DB_RQ, n << 16 | l.qpn);
    rdma_db(&r, 0, SHCA_DB_SQ, n << 16 | l.qpn);

    hca_migrate(&r.h, opts2);

    for (unsigned i = 0; i < n; i++) {
        check_cqe(loop_send_cqe(&r, &l), SHCA_CQE_SUCCESS, 0x200 + i);
        check_cqe(loop_recv_cqe(&r, &l), SHCA_CQE_SUCCESS, 0x100 + i);
        check_pattern(&r, dst + i * PAYLOAD, PAYLOAD, 11);
    }
    g_assert_cmpuint(rdma_state(&r, l.qpn), ==, SHCA_QPS_RTS);
    hca_stop(&r.h);
}

/* The drops hold the SENDs back for the ACK timer: they are in flight. */
static void test_migration_iothread(void)
{
    migrate_under_traffic(",iothread=io0,fault-tx-drop=100",
                          " -object iothread,id=io0");
}

static void test_migration_faults(void)
{
    migrate_under_traffic(",fault-tx-drop=50,fault-tx-dup=50,"
                          "fault-tx-reorder=100,fault-rx-reorder=100,"
                          "fault-seed=7", "");
}

/* --- a corrupted stream -------------------------------------------------- */

/*
 * Where the object tables lie in a saved stream of the device: after the
 * PD table (4097 words, all 0 here: every PD is the kernel's) and before
 * the counters (spec §13.4 and 7 of the device's own), which the loopback
 * queue's subsection follows.
 */
static void find_tables(const uint8_t *s, size_t len, size_t *start,
                        size_t *n)
{
    static const uint8_t zeros[4 * 4097];
    const uint8_t *name = memmem(s, len, "/softhca", 8);
    const uint8_t *at, *sub;

    g_assert(name);
    at = memmem(name, len - (name - s), zeros, sizeof(zeros));
    g_assert(at);
    while (*at == 0) {
        at++;
    }
    sub = memmem(at, len - (at - s), "softhca/state/loopback", 22);
    g_assert(sub);
    /* QEMU_VM_SUBSECTION and the name's length byte come first */
    sub -= 2 + 8 * (SHCA_STAT_COUNT + 7);
    g_assert(sub > at);
    *start = at - s;
    *n = sub - at;
}

/* Load the stream at path into a new QEMU: whether it took it. */
static bool load_stream(const char *path, bool *ran)
{
    g_autofree char *netdev = dgram_loop_netdev();
    g_autofree char *uri = g_strdup_printf("file:%s", path);
    g_autofree char *status = NULL;
    QTestState *qts;
    QDict *rsp;

    qts = qtest_initf("-machine q35 -m 128 -nodefaults "
                      "-device softhca,id=hca%s -incoming defer", netdev);
    rsp = qtest_qmp(qts, "{'execute': 'migrate-incoming', 'arguments': "
                    "{'uri': %s, 'exit-on-error': false}}", uri);
    g_assert(qdict_haskey(rsp, "return"));
    qobject_unref(rsp);
    status = hca_migration_status(qts);
    *ran = !strcmp(status, "completed");
    if (*ran) {
        /* what passed the checks runs: its timers expire, its QP sends */
        qtest_qmp_assert_success(qts, "{'execute': 'cont'}");
        for (int i = 0; i < 10; i++) {
            g_usleep(1000);
            qtest_clock_step(qts, 20 * 1000 * 1000);
        }
    }
    /* whatever the outcome, the machine answers and resets */
    qtest_qmp_assert_success(qts, "{'execute': 'system_reset'}");
    qtest_quit(qts);
    return *ran;
}

/*
 * A snapshot of a device with objects and a SEND in flight, saved to a
 * file, loads whole; with bytes of its objects overwritten, a load either
 * refuses it or takes a state that passed every check, and nothing
 * crashes either way.
 */
static void test_migration_corrupt_state_refused(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    g_autofree char *dir = g_dir_make_tmp("softhca-stream-XXXXXX", NULL);
    g_autofree char *path = g_strdup_printf("%s/good", dir);
    g_autofree char *uri = g_strdup_printf("file:%s", path);
    g_autofree char *bad = g_strdup_printf("%s/bad", dir);
    g_autofree uint8_t *stream = NULL;
    g_autofree char *saved = NULL;
    unsigned refused = 0;
    size_t len, start, n;
    uint64_t src, dst;
    GRand *rng = g_rand_new_with_seed(0x50f7);
    bool ran;
    Rdma r;
    Loop l;

    self_rc_start(&r, &l, netdev);
    src = guest_alloc(&r.h.alloc, PAYLOAD);
    dst = guest_alloc(&r.h.alloc, PAYLOAD);
    loop_send_recv(&r, &l, 0, src, dst, PAYLOAD);
    qtest_qmp_assert_success(r.h.qts, "{'execute': 'stop'}");
    rdma_db(&r, 0, SHCA_DB_RQ, 1 << 16 | l.qpn);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    qtest_qmp_assert_success(r.h.qts, "{'execute': 'migrate', 'arguments': "
                             "{'uri': %s}}", uri);
    saved = hca_migration_status(r.h.qts);
    g_assert_cmpstr(saved, ==, "completed");
    hca_stop(&r.h);

    g_assert(g_file_get_contents(path, (gchar **)&stream, &len, NULL));
    find_tables(stream, len, &start, &n);
    g_assert(load_stream(path, &ran));

    for (int i = 0; i < 40; i++) {
        g_autofree uint8_t *copy = g_memdup2(stream, len);
        size_t at = start + g_rand_int_range(rng, 0, n - 4);

        /* a word of ones, of a large count, or flipped bits */
        switch (i % 3) {
        case 0:
            stl_be_p(copy + at, 0xffffffff);
            break;
        case 1:
            stl_be_p(copy + at, 0x7fff0000 + i);
            break;
        default:
            copy[at] ^= 1u << (i % 8);
            copy[at + 2] ^= 0x80;
            break;
        }
        g_assert(g_file_set_contents(bad, (gchar *)copy, len, NULL));
        refused += !load_stream(bad, &ran);
    }
    g_test_message("%u of 40 streams with corrupted objects refused "
                   "(%zu bytes of objects)", refused, n);
    g_assert_cmpuint(refused, >, 0);
    g_rand_free(rng);
    unlink(path);
    unlink(bad);
    rmdir(dir);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/softhca/migration/idle-device",
                   test_migration_idle_device);
    qtest_add_func("/softhca/migration/freed-user-pd",
                   test_migration_freed_user_pd);
    qtest_add_func("/softhca/migration/full-cq", test_migration_full_cq);
    qtest_add_func("/softhca/migration/rc-mid-retransmission",
                   test_migration_rc_mid_retransmission);
    qtest_add_func("/softhca/migration/read-atomic-outstanding",
                   test_migration_read_atomic_outstanding);
    qtest_add_func("/softhca/migration/zero-length-read-answered",
                   test_migration_zero_length_read_answered);
    qtest_add_func("/softhca/migration/queued-work",
                   test_migration_queued_work);
    qtest_add_func("/softhca/migration/srq-at-limit",
                   test_migration_srq_at_limit);
    qtest_add_func("/softhca/migration/xrc", test_migration_xrc);
    qtest_add_func("/softhca/migration/iothread", test_migration_iothread);
    qtest_add_func("/softhca/migration/faults", test_migration_faults);
    qtest_add_func("/softhca/migration/corrupt-state-refused",
                   test_migration_corrupt_state_refused);
    return g_test_run();
}
