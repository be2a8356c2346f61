/*
 * QTest testcase for the softhca RDMA adapter, driven with no guest: the
 * doorbell rules of spec §14 for doorbells rung at once and for those
 * handed off through a page's queue (x-doorbell-handoff=on), across
 * resets of every kind; doorbells rung from the wrong page.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "libqtest.h"
#include "libqos/pci.h"
#include "qemu/bswap.h"
#include "hw/pci/pci_regs.h"
#include "hw/softhca/softhca_hw.h"
#include "softhca-qtest.h"

#define STALE_DOORBELLS 20

typedef enum ResetKind {
    RESET_CTRL_EN,
    RESET_REGISTER,
    RESET_FLR,
} ResetKind;

static void reset_function(Rdma *r, ResetKind how)
{
    uint8_t exp;
    uint16_t devctl;

    switch (how) {
    case RESET_CTRL_EN:
        wr(&r->h, SHCA_REG_CTRL, 0);
        break;
    case RESET_REGISTER:
        wr(&r->h, SHCA_REG_RESET, SHCA_RESET_MAGIC);
        break;
    case RESET_FLR:
        exp = qpci_find_capability(r->h.dev, PCI_CAP_ID_EXP, 0);
        devctl = qpci_config_readw(r->h.dev, exp + PCI_EXP_DEVCTL);
        qpci_config_writew(r->h.dev, exp + PCI_EXP_DEVCTL,
                           devctl | PCI_EXP_DEVCTL_BCR_FLR);
        qpci_device_enable(r->h.dev);
        r->h.bar = qpci_iomap(r->h.dev, SHCA_BAR_REGS, NULL);
        r->db = qpci_iomap(r->h.dev, SHCA_BAR_DB, NULL);
        break;
    }
    g_assert_cmphex(rd(&r->h, SHCA_REG_STATUS), ==, 0);
}

/* Frames that reach the wire until none came for wait_ms of VM time. */
static unsigned wire_frames(Rdma *r, Wire *w, int wait_ms)
{
    uint8_t f[4200];
    unsigned n = 0;

    for (int t = 0; t < wait_ms; t += 10) {
        if (wire_recv(w, f, sizeof(f), 10)) {
            n++;
            t = 0;
        } else {
            qtest_clock_step(r->h.qts, 1000 * 1000);
        }
    }
    return n;
}

/*
 * A wire for the peer, a device on it (every doorbell handed off if
 * handoff), and a UC QP of the device connected to the peer.
 */
static void uc_peer_start(Wire *w, Rdma *r, Loop *l, bool handoff)
{
    g_autofree char *props = NULL;

    wire_open(w);
    props = g_strdup_printf("%s%s", handoff ? ",x-doorbell-handoff=on" : "",
                            w->netdev);
    rdma_start_with(r, props);
    loop_start(r, l, SHCA_QPT_UC, 7);
    loop_connect_peer(r, l);
}

/*
 * Issue 25, defect 1: 20 SQ doorbells of a UC QP, a reset, 20 more
 * doorbells; then the driver enables the device again and creates a QP
 * that gets the same number, with valid WQEs in its ring that it never
 * rings.  Some doorbell state outlived the reset: that QP sent frames.
 * A reset forgets everything queued (spec §10, §14), so nothing leaves.
 */
static void doorbells_outlive_reset(ResetKind how, bool handoff)
{
    uint32_t qpn;
    Wire w;
    Rdma r;
    Loop l;

    uc_peer_start(&w, &r, &l, handoff);
    qpn = l.qpn;
    for (uint16_t i = 0; i < STALE_DOORBELLS; i++) {
        loop_send(&r, &l, i, 0x100 + i, 0, 0, SHCA_WQE_SIGNALED);
    }
    for (uint16_t i = 0; i < STALE_DOORBELLS; i++) {
        rdma_db(&r, 0, SHCA_DB_SQ, (uint32_t)(i + 1) << 16 | qpn);
    }
    reset_function(&r, how);
    for (uint16_t i = 0; i < STALE_DOORBELLS; i++) {
        rdma_db(&r, 0, SHCA_DB_SQ,
                (uint32_t)(STALE_DOORBELLS + i + 1) << 16 | qpn);
    }
    /* what the first QP sent before the reset */
    wire_frames(&r, &w, 100);

    rdma_init(&r);
    loop_start(&r, &l, SHCA_QPT_UC, 7);
    g_assert_cmpuint(l.qpn, ==, qpn);
    for (uint16_t i = 0; i < 2 * STALE_DOORBELLS; i++) {
        loop_send(&r, &l, i, 0x200 + i, 0, 0, SHCA_WQE_SIGNALED);
    }
    loop_connect_peer(&r, &l);
    g_assert_cmpuint(wire_frames(&r, &w, 200), ==, 0);
    g_assert_false(loop_cqe_ready(&r, l.scqbuf, 0));

    /* rung now, the new QP sends what it was given, once */
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | qpn);
    g_assert_cmpuint(wire_frames(&r, &w, 200), ==, 1);
    hca_stop(&r.h);
    wire_close(&w);
}

/*
 * Frames the port handed its netdev before a reset, and that the netdev
 * still held (it holds them while the VM is stopped, or while its socket
 * is full), left after the reset: a reset drops what is queued (spec §10).
 */
static void test_reset_drops_queued_frames(void)
{
    Wire w;
    Rdma r;
    Loop l;

    uc_peer_start(&w, &r, &l, false);
    for (uint16_t i = 0; i < 4; i++) {
        loop_send(&r, &l, i, 0x300 + i, 0, 0, SHCA_WQE_SIGNALED);
    }
    qtest_qmp_assert_success(r.h.qts, "{'execute': 'stop'}");
    rdma_db(&r, 0, SHCA_DB_SQ, 4 << 16 | l.qpn);
    reset_function(&r, RESET_CTRL_EN);
    qtest_qmp_assert_success(r.h.qts, "{'execute': 'cont'}");
    g_assert_cmpuint(wire_frames(&r, &w, 200), ==, 0);
    hca_stop(&r.h);
    wire_close(&w);
}

/*
 * Doorbells written before an admin command take effect before it, on the
 * objects they named, and never on one created after it (spec §14): an SQ
 * doorbell of a UC QP, then DESTROY_QP and a CREATE_QP that gets the same
 * number, its ring full of valid WQEs, brought to RTS.  The VM is stopped
 * meanwhile, so that no bottom half runs between the writes.  The doorbell
 * sends the old QP's first packet (an idle QP's doorbell sends one itself,
 * its bottom half the rest, which the QP does not live to see); the new QP
 * sends nothing until it is rung.
 */
static void doorbells_before_admin(bool handoff)
{
    uint32_t qpn;
    Wire w;
    Rdma r;
    Loop l;

    uc_peer_start(&w, &r, &l, handoff);
    qpn = l.qpn;
    for (uint16_t i = 0; i < 4; i++) {
        loop_send(&r, &l, i, 0x100 + i, 0, 0, SHCA_WQE_SIGNALED);
    }
    qtest_qmp_assert_success(r.h.qts, "{'execute': 'stop'}");
    rdma_db(&r, 0, SHCA_DB_SQ, 4 << 16 | qpn);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DESTROY_QP, qpn, NULL), ==,
                     SHCA_AQ_OK);
    loop_start(&r, &l, SHCA_QPT_UC, 7);
    g_assert_cmpuint(l.qpn, ==, qpn);
    for (uint16_t i = 0; i < 8; i++) {
        loop_send(&r, &l, i, 0x200 + i, 0, 0, SHCA_WQE_SIGNALED);
    }
    loop_connect_peer(&r, &l);
    qtest_qmp_assert_success(r.h.qts, "{'execute': 'cont'}");
    g_assert_cmpuint(wire_frames(&r, &w, 200), ==, 1);
    g_assert_false(loop_cqe_ready(&r, l.scqbuf, 0));

    rdma_db(&r, 0, SHCA_DB_SQ, 2 << 16 | qpn);
    g_assert_cmpuint(wire_frames(&r, &w, 200), ==, 2);
    hca_stop(&r.h);
    wire_close(&w);
}

static void test_before_admin(void)
{
    doorbells_before_admin(false);
}

static void test_before_admin_handoff(void)
{
    doorbells_before_admin(true);
}

#define OVERFLOW_DOORBELLS  100     /* past a page's queue of 64 */

/*
 * More doorbells than a page's hand-off queue holds, written while the VM
 * is stopped so that the bottom half cannot empty it: the write that finds
 * it full rings what it holds first, and then itself (spec §14).  Each
 * doorbell posts one more 0-byte UC SEND, 100 over a ring of 32; one taken
 * out of order would name a WQE behind the ring and move the QP to ERR.
 * Every SEND leaves, in PSN order, and the QP stays in RTS.  Direct
 * doorbells, the same.
 */
static void doorbells_overflow_in_order(bool handoff)
{
    uint8_t f[4200];
    uint32_t psn = 0;
    unsigned n = 0;
    Wire w;
    Rdma r;
    Loop l;

    uc_peer_start(&w, &r, &l, handoff);
    for (uint16_t i = 0; i < loop_sq_size(&l); i++) {
        loop_send(&r, &l, i, 0x100 + i, 0, 0, 0);
    }
    qtest_qmp_assert_success(r.h.qts, "{'execute': 'stop'}");
    for (uint32_t i = 1; i <= OVERFLOW_DOORBELLS; i++) {
        rdma_db(&r, 0, SHCA_DB_SQ, i << 16 | l.qpn);
    }
    qtest_qmp_assert_success(r.h.qts, "{'execute': 'cont'}");
    for (int t = 0; t < 200; t += 10) {
        size_t len = wire_recv(&w, f, sizeof(f), 10);
        uint32_t got;

        if (!len) {
            qtest_clock_step(r.h.qts, 1000 * 1000);
            continue;
        }
        got = ldl_be_p(f + ROCE_OFF + 8) & 0xffffff;
        if (n) {
            g_assert_cmphex(got, ==, (psn + 1) & 0xffffff);
        }
        psn = got;
        n++;
        t = 0;
    }
    g_assert_cmpuint(n, ==, OVERFLOW_DOORBELLS);
    g_assert_cmpuint(rdma_state(&r, l.qpn), ==, SHCA_QPS_RTS);
    hca_stop(&r.h);
    wire_close(&w);
}

static void test_overflow_in_order(void)
{
    doorbells_overflow_in_order(false);
}

static void test_overflow_in_order_handoff(void)
{
    doorbells_overflow_in_order(true);
}

static void test_ctrl_en(void)
{
    doorbells_outlive_reset(RESET_CTRL_EN, false);
}

static void test_ctrl_en_handoff(void)
{
    doorbells_outlive_reset(RESET_CTRL_EN, true);
}

static void test_register(void)
{
    doorbells_outlive_reset(RESET_REGISTER, false);
}

static void test_register_handoff(void)
{
    doorbells_outlive_reset(RESET_REGISTER, true);
}

static void test_flr(void)
{
    doorbells_outlive_reset(RESET_FLR, false);
}

static void test_flr_handoff(void)
{
    doorbells_outlive_reset(RESET_FLR, true);
}

/*
 * Regression: a doorbell the SQ record overtook was fatal.  A queued
 * doorbell (a KVM vCPU's, or any with the engine in an iothread) may take
 * effect after the device has read a later count from the SQ record and
 * consumed those WQEs; its count is then behind the device's consumer,
 * which the device took for a count running past the ring, and the QP
 * went to ERR (ib_write_bw between two nodes in iothreads, at 4 KiB).  A
 * count at or behind the device's is old news.
 */
static void test_stale_count(void)
{
    uint64_t buf;
    Rdma r;
    Loop l;

    rdma_start(&r);
    loop_start(&r, &l, SHCA_QPT_RC, 7);
    loop_connect(&r, &l, false);
    buf = guest_alloc(&r.h.alloc, 4096);
    for (uint16_t i = 0; i < 3; i++) {
        loop_recv(&r, &l, i, 0x100 + i, buf, 4096);
    }
    rdma_db(&r, 0, SHCA_DB_RQ, 3 << 16 | l.qpn);
    for (uint16_t i = 0; i < 2; i++) {
        loop_send(&r, &l, i, 0x200 + i, buf, 64, SHCA_WQE_SIGNALED);
    }
    rdma_db(&r, 0, SHCA_DB_SQ, 2 << 16 | l.qpn);
    for (int i = 0; i < 2; i++) {
        g_assert_cmpuint(loop_send_cqe(&r, &l).status, ==, SHCA_CQE_SUCCESS);
        g_assert_cmpuint(loop_recv_cqe(&r, &l).status, ==, SHCA_CQE_SUCCESS);
    }

    /* the first doorbell again, late: nothing new */
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    g_assert_cmpuint(rdma_state(&r, l.qpn), ==, SHCA_QPS_RTS);
    loop_send(&r, &l, 2, 0x202, buf, 64, SHCA_WQE_SIGNALED);
    rdma_db(&r, 0, SHCA_DB_SQ, 3 << 16 | l.qpn);
    g_assert_cmpuint(loop_send_cqe(&r, &l).status, ==, SHCA_CQE_SUCCESS);
    g_assert_cmpuint(loop_recv_cqe(&r, &l).status, ==, SHCA_CQE_SUCCESS);
    hca_stop(&r.h);
}

/*
 * Doorbells of a queue rung from another context's page are ignored; a
 * count running ahead of the ring is fatal to the QP.
 */
static void test_doorbell_wrong_page(void)
{
    struct shca_aq_entry cmd;
    struct shca_qp_attr a = rc_attr(SHCA_QPS_INIT);
    uint32_t uctx, cq, qpn;
    uint64_t cqbuf, sq, rq;
    struct shca_eqe eqe;
    Rdma r;

    rdma_start(&r);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_ALLOC_UCTX, 0, &uctx), ==,
                     SHCA_AQ_OK);
    cq = rdma_cq(&r, uctx, 4, &cqbuf);
    sq = guest_alloc(&r.h.alloc, 4096);
    rq = guest_alloc(&r.h.alloc, 4096);
    rdma_qp_cmd(&r, &cmd, uctx, SHCA_QPT_RC, cq, cq, sq, rq);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, &qpn), ==, SHCA_AQ_OK);
    g_assert_cmpuint(rdma_modify(&r, qpn, RC_INIT_MASK, &a), ==, SHCA_AQ_OK);

    /* 100 WQEs on a 16-entry ring, from the kernel's page and page 2 */
    rdma_db(&r, 0, SHCA_DB_RQ, 100 << 16 | qpn);
    rdma_db(&r, 2, SHCA_DB_RQ, 100 << 16 | qpn);
    rdma_db(&r, 0, SHCA_DB_SQ, 100 << 16 | qpn);
    g_assert_cmpuint(rdma_state(&r, qpn), ==, SHCA_QPS_INIT);
    /* a CQ armed from the wrong page stays disarmed */
    rdma_db(&r, 0, SHCA_DB_CQ, cq | SHCA_DB_CQ_ARM);
    /* an unknown doorbell offset */
    rdma_db(&r, uctx, 0x10, 100 << 16 | qpn);
    g_assert_cmpuint(rdma_state(&r, qpn), ==, SHCA_QPS_INIT);

    /* the same from the context's page: QP_FATAL on EQ 0, flushed to ERR */
    rdma_post_recv(&r, rq, 0, 0x9000);
    rdma_db(&r, uctx, SHCA_DB_RQ, 1 << 16 | qpn);
    rdma_db(&r, uctx, SHCA_DB_RQ, 100 << 16 | qpn);
    g_assert_cmpuint(rdma_state(&r, qpn), ==, SHCA_QPS_ERR);
    eqe = rdma_eqe(&r, r.eq0, 0);
    g_assert_cmpuint(eqe.type, ==, SHCA_EQE_QP_FATAL);
    g_assert_cmpuint(le32_to_cpu(eqe.obj), ==, qpn);
    g_assert_cmpuint(rdma_eqe(&r, r.eq1, 0).type, ==, 0);   /* not armed */
    g_assert_cmpuint(rdma_cqe(&r, cqbuf, 0).status, ==,
                     SHCA_CQE_WR_FLUSH_ERR);

    /* armed from the right page: the next completion posts COMPLETION */
    rdma_db(&r, uctx, SHCA_DB_CQ, cq | SHCA_DB_CQ_ARM | SHCA_DB_CQ_SOLICITED);
    rdma_post_recv(&r, rq, 1, 0x9001);
    rdma_db(&r, uctx, SHCA_DB_RQ, 2 << 16 | qpn);
    g_assert_cmpuint(rdma_cqe(&r, cqbuf, 1).status, ==,
                     SHCA_CQE_WR_FLUSH_ERR);
    eqe = rdma_eqe(&r, r.eq1, 0);
    g_assert_cmpuint(eqe.type, ==, SHCA_EQE_COMPLETION);
    g_assert_cmpuint(le32_to_cpu(eqe.obj), ==, cq);
    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    hca_stop(&r.h);
}

/*
 * x-doorbell-handoff=on queues every doorbell as a write without the BQL
 * does (spec §14): the bottom half rings them, in order, and full rings
 * of sends and receives complete as without it.
 */
static void test_doorbell_handoff(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    g_autofree char *extra = g_strdup_printf(",x-doorbell-handoff=on%s",
                                             netdev);
    const uint16_t n = 1u << LOOP_CQ_LOG;       /* the CQs and the RQ */
    Rdma r;
    Loop l;

    rdma_start_with(&r, extra);
    loop_start(&r, &l, SHCA_QPT_RC, 8);        /* 16 WQEs */
    loop_connect(&r, &l, false);
    for (uint16_t i = 0; i < n; i++) {
        loop_recv(&r, &l, i, 0x100 + i, 0, 0);
        rdma_db(&r, 0, SHCA_DB_RQ, (uint32_t)(i + 1) << 16 | l.qpn);
        loop_send(&r, &l, i, 0x200 + i, 0, 0, SHCA_WQE_SIGNALED);
        rdma_db(&r, 0, SHCA_DB_SQ, (uint32_t)(i + 1) << 16 | l.qpn);
    }
    for (uint16_t i = 0; i < n; i++) {
        struct shca_cqe sc = loop_send_cqe(&r, &l);
        struct shca_cqe rc = loop_recv_cqe(&r, &l);

        g_assert_cmpuint(sc.status, ==, SHCA_CQE_SUCCESS);
        g_assert_cmphex(le64_to_cpu(sc.wr_id), ==, 0x200 + i);
        g_assert_cmpuint(rc.status, ==, SHCA_CQE_SUCCESS);
        g_assert_cmphex(le64_to_cpu(rc.wr_id), ==, 0x100 + i);
    }
    /* a write to no doorbell is refused before it is queued */
    rdma_db(&r, 0, 0x10, 1 << 16 | l.qpn);
    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    hca_stop(&r.h);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/softhca/doorbell/reset-forgets/ctrl-en", test_ctrl_en);
    qtest_add_func("/softhca/doorbell/reset-forgets/ctrl-en-handoff",
                   test_ctrl_en_handoff);
    qtest_add_func("/softhca/doorbell/reset-forgets/register", test_register);
    qtest_add_func("/softhca/doorbell/reset-forgets/register-handoff",
                   test_register_handoff);
    qtest_add_func("/softhca/doorbell/reset-forgets/flr", test_flr);
    qtest_add_func("/softhca/doorbell/reset-forgets/flr-handoff",
                   test_flr_handoff);
    qtest_add_func("/softhca/doorbell/reset-forgets/queued-frames",
                   test_reset_drops_queued_frames);
    qtest_add_func("/softhca/doorbell/stale-count-after-record",
                   test_stale_count);
    qtest_add_func("/softhca/doorbell/before-admin", test_before_admin);
    qtest_add_func("/softhca/doorbell/before-admin-handoff",
                   test_before_admin_handoff);
    qtest_add_func("/softhca/doorbell/overflow-in-order",
                   test_overflow_in_order);
    qtest_add_func("/softhca/doorbell/overflow-in-order-handoff",
                   test_overflow_in_order_handoff);
    qtest_add_func("/softhca/doorbell/wrong-page", test_doorbell_wrong_page);
    qtest_add_func("/softhca/doorbell/handoff", test_doorbell_handoff);

    return g_test_run();
}
