/*
 * QTest testcase for the softhca RDMA adapter, driven with no guest: the
 * engine in an iothread (spec §12.1).  Register accesses, resets and
 * stops cross to the engine's thread; frames and MSI-X messages cross
 * back to the main loop, and the engine waits for them rather than drop
 * anything.  The expected behaviour is spec/softhca.md.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/pci-pc.h"
#include "libqos/malloc-pc.h"
#include "qemu/bswap.h"
#include "qobject/qdict.h"
#include "hw/pci/pci_regs.h"
#include "hw/softhca/softhca_hw.h"
#include "softhca-qtest.h"

#define IOTHREAD_PROP   ",iothread=io0"
#define IOTHREAD_OBJ    " -object iothread,id=io0"
#define IOTHREAD        IOTHREAD_PROP IOTHREAD_OBJ
#define BIG_SEND    (1u << 20)
#define LONG_LEN    (1u << 20)      /* each WRITE of a long run */
#define LONG_WRITES 32              /* the SQ of a loop QP: one page */

/* The device in an iothread, on netdev (its -device options first). */
static char *iothread_netdev(const char *netdev)
{
    return g_strconcat(IOTHREAD_PROP, netdev, IOTHREAD_OBJ, NULL);
}

static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

/* The device in an iothread, on a wire whose other end the test plays. */
static void wire_start(Wire *w, Rdma *r)
{
    g_autofree char *extra = NULL;

    wire_open(w);
    extra = iothread_netdev(w->netdev);
    rdma_start_with(r, extra);
}

/* The main loop raises the engine's MSI-X messages: wait (bounded) for one. */
static bool wait_irq(Hca *h, unsigned vector)
{
    for (int tries = 0; tries < 200; tries++) {
        if (hca_take_irq(h, vector)) {
            return true;
        }
        g_usleep(5 * 1000);
    }
    return false;
}

/*
 * A loop QP's SEND of BIG_SEND bytes to itself, 1024 frames at its MTU,
 * completed on both sides and landed whole and in order.
 */
static void big_send(Rdma *r, unsigned seed)
{
    g_autofree uint8_t *data = g_malloc(BIG_SEND);
    g_autofree uint8_t *got = g_malloc(BIG_SEND);
    uint64_t src, dst;
    struct shca_cqe cqe;
    Loop l;

    loop_start(r, &l, SHCA_QPT_RC, 7);
    loop_connect(r, &l, false);
    src = guest_alloc(&r->h.alloc, BIG_SEND);
    dst = guest_alloc(&r->h.alloc, BIG_SEND);
    for (size_t i = 0; i < BIG_SEND; i++) {
        data[i] = i * seed + (i >> 12);
    }
    qtest_memwrite(r->h.qts, src, data, BIG_SEND);
    loop_recv(r, &l, 0, 0x1111, dst, BIG_SEND);
    rdma_db(r, 0, SHCA_DB_RQ, 1 << 16 | l.qpn);
    loop_send(r, &l, 0, 0x2222, src, BIG_SEND, SHCA_WQE_SIGNALED);
    rdma_db(r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);

    cqe = loop_recv_cqe(r, &l);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, BIG_SEND);
    cqe = loop_send_cqe(r, &l);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x2222);
    qtest_memread(r->h.qts, dst, got, BIG_SEND);
    g_assert(memcmp(got, data, BIG_SEND) == 0);
}

/*
 * Through the netdev: more frames than the outbox and the inbox hold, so
 * the scheduler waits for the main loop.
 */
static void test_iothread_send_over_netdev(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    g_autofree char *extra = iothread_netdev(netdev);
    Rdma r;

    rdma_start_with(&r, extra);
    big_send(&r, 7);
    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    hca_stop(&r.h);
}

/*
 * Through the port's own loopback nothing may be lost: the RC QP's
 * frames are counted once each way, without a retransmission, and the
 * completions' interrupts reach the test through the main loop.
 */
static void test_iothread_loopback(void)
{
    uint64_t stats[SHCA_STAT_COUNT];
    Rdma r;

    rdma_start_with(&r, IOTHREAD);
    big_send(&r, 13);
    rdma_stats(&r, stats);
    g_assert_cmpuint(stats[SHCA_STAT_RX_PACKETS], ==,
                     stats[SHCA_STAT_TX_PACKETS]);
    g_assert_cmpuint(stats[SHCA_STAT_RETRANSMITS], ==, 0);
    g_assert_cmpuint(stats[SHCA_STAT_LOOPBACK_DROPPED], ==, 0);
    /* the admin queue's interrupt, raised by the main loop for the engine */
    g_assert(wait_irq(&r.h, SHCA_VEC_ADMIN));
    hca_stop(&r.h);
}

/* The NIC function's frames cross both ways: out, and in to its rings. */
static void test_iothread_nic(void)
{
    uint8_t frame[64], got[64];
    Wire w;
    Rdma r;
    Nic n;

    wire_start(&w, &r);
    loop_nic(&r, &n);
    make_udp_frame(frame, bcast, 0x0a0000ff, 5000);
    g_assert_cmpuint(nic_send(&r.h, &n, frame, sizeof(frame)), ==,
                     SHCA_NIC_DESC_DONE);
    g_assert_cmpuint(wire_recv(&w, got, sizeof(got), 1000), ==, sizeof(frame));
    g_assert(memcmp(got, frame, sizeof(frame)) == 0);

    make_udp_frame(frame, bcast, 0x0a000001, 5001);
    wire_send(&w, frame, sizeof(frame));
    g_assert_cmpuint(nic_wait_rx(&r.h, &n, 0), ==, sizeof(frame));
    qtest_memread(r.h.qts, n.rxbuf, got, sizeof(frame));
    g_assert(memcmp(got, frame, sizeof(frame)) == 0);
    hca_stop(&r.h);
    wire_close(&w);
}

#define LONG_IOVA   0x40000000ull

/* dst, LONG_LEN bytes, as an MR the loop QP may WRITE to at LONG_IOVA. */
static uint32_t long_run_mr(Rdma *r, uint64_t dst)
{
    struct shca_buf_desc pages;
    uint32_t key;

    buf_direct(&pages, dst, LONG_LEN / 4096);
    g_assert_cmpuint(rdma_reg_mr(r, SHCA_ACCESS_LOCAL_WRITE |
                                 SHCA_ACCESS_REMOTE_WRITE, LONG_IOVA,
                                 LONG_LEN, 0, &pages, &key), ==, SHCA_AQ_OK);
    return key;
}

#define BURST_FRAMES    4000

/*
 * Regression: a full inbox held the netdev for good.  The net layer asks
 * can_receive before it delivers, and queues what finds it false without
 * calling receive; nothing then told the main loop to flush that queue, so
 * the port never received again.  A burst of frames from the wire fills
 * the inbox; a frame sent after it still reaches the NIC's ring.
 */
static void test_iothread_inbox_full(void)
{
    uint8_t frame[64], got[64];
    Wire w;
    Rdma r;
    Nic n;

    wire_start(&w, &r);
    nic_start(&r.h, &n);
    make_udp_frame(frame, bcast, 0x0a000001, 5002);
    for (int i = 0; i < BURST_FRAMES; i++) {
        wire_send(&w, frame, sizeof(frame));
    }
    g_usleep(200 * 1000);
    /* the burst found no buffer; the last frame finds one */
    nic_post_rx(&r.h, &n);
    make_udp_frame(frame, bcast, 0x0a000001, 5003);
    for (int tries = 0; tries < 10; tries++) {
        wire_send(&w, frame, sizeof(frame));
        qtest_memread(r.h.qts, n.rxr, got, 16);
        if (got[15] & SHCA_NIC_DESC_DONE) {
            break;
        }
        g_usleep(100 * 1000);
    }
    g_assert_cmpuint(nic_wait_rx(&r.h, &n, 0), ==, sizeof(frame));
    qtest_memread(r.h.qts, n.rxbuf, got, sizeof(frame));
    g_assert(memcmp(got, frame, sizeof(frame)) == 0);
    hca_stop(&r.h);
    wire_close(&w);
}

/*
 * LONG_WRITES WRITEs of LONG_LEN from src to dst, the last one signaled:
 * 32 MiB through the loopback.  Under qtest the loop QP's ACK waits for
 * the VM clock, so each step of the clock lets one window of it go.
 */
static void post_long_run(Rdma *r, Loop *l, uint64_t src, uint64_t dst)
{
    uint32_t rkey = long_run_mr(r, dst);

    for (uint16_t i = 0; i < LONG_WRITES; i++) {
        struct shca_send_wqe wqe = {
            .wr_id = cpu_to_le64(0x3000 + i),
            .opcode = SHCA_WR_RDMA_WRITE,
            .flags = i == LONG_WRITES - 1 ? SHCA_WQE_SIGNALED : 0,
            .num_sge = 1,
            .remote_addr = cpu_to_le64(LONG_IOVA),
            .rkey = cpu_to_le32(rkey),
        };
        struct shca_sge sge = {
            .addr = cpu_to_le64(src),
            .length = cpu_to_le32(LONG_LEN),
            .lkey = cpu_to_le32(l->key),
        };

        loop_write_send(r, l, i, &wqe, &sge, sizeof(sge));
    }
    rdma_db(r, 0, SHCA_DB_SQ, LONG_WRITES << 16 | l->qpn);
}

/* Move the VM clock step by step, giving the engine's thread time. */
static void clock_steps(Rdma *r, int n)
{
    for (int i = 0; i < n; i++) {
        g_usleep(2 * 1000);
        qtest_clock_step(r->h.qts, 200 * 1000);
    }
}

/*
 * While the VM is stopped the engine's thread does nothing: no bottom
 * half of the device is woken, no completion is written, whatever the VM
 * clock does; the run goes on when the VM does.
 */
static void test_iothread_stopped(void)
{
    uint64_t src, dst, woken;
    struct shca_cqe cqe;
    Rdma r;
    Loop l;

    rdma_start_with(&r, IOTHREAD);
    loop_start(&r, &l, SHCA_QPT_RC, 7);
    loop_connect(&r, &l, false);
    src = guest_alloc(&r.h.alloc, LONG_LEN);
    dst = guest_alloc(&r.h.alloc, LONG_LEN);
    hca_fill(&r.h, src, 0x5c, LONG_LEN);
    post_long_run(&r, &l, src, dst);
    clock_steps(&r, 5);
    qtest_qmp_assert_success(r.h.qts, "{'execute': 'stop'}");
    woken = hca_prop(&r.h, "x-wakeups");
    g_assert_cmpuint(woken, >, 0);
    clock_steps(&r, 50);
    g_assert_cmpuint(hca_prop(&r.h, "x-wakeups"), ==, woken);
    g_assert(!loop_cqe_ready(&r, l.scqbuf, 0));
    qtest_qmp_assert_success(r.h.qts, "{'execute': 'cont'}");

    cqe = loop_send_cqe(&r, &l);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x3000 + LONG_WRITES - 1);
    g_assert_cmpuint(hca_prop(&r.h, "x-wakeups"), >, woken);
    g_assert_cmphex(qtest_readb(r.h.qts, dst + LONG_LEN - 1), ==, 0x5c);
    hca_stop(&r.h);
}

/*
 * RESET and CTRL.EN cleared in the middle of a long run: the engine's
 * thread forgets it between two of its callbacks, and the device comes
 * back for a SEND that completes.
 */
static void test_iothread_reset_under_traffic(void)
{
    uint64_t src, dst;
    Rdma r;
    Loop l;

    rdma_start_with(&r, IOTHREAD);
    for (int round = 0; round < 2; round++) {
        loop_start(&r, &l, SHCA_QPT_RC, 7);
        loop_connect(&r, &l, false);
        src = guest_alloc(&r.h.alloc, LONG_LEN);
        dst = guest_alloc(&r.h.alloc, LONG_LEN);
        post_long_run(&r, &l, src, dst);
        clock_steps(&r, 3);
        if (round == 0) {
            wr(&r.h, SHCA_REG_RESET, SHCA_RESET_MAGIC);
        } else {
            wr(&r.h, SHCA_REG_CTRL, 0);
        }
        g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, 0);
        guest_free(&r.h.alloc, src);
        guest_free(&r.h.alloc, dst);
        rdma_init(&r);
    }

    loop_start(&r, &l, SHCA_QPT_RC, 7);
    loop_connect(&r, &l, false);
    src = guest_alloc(&r.h.alloc, 4096);
    dst = guest_alloc(&r.h.alloc, 4096);
    hca_fill(&r.h, src, 0x77, 4096);
    loop_recv(&r, &l, 0, 0x1111, dst, 4096);
    rdma_db(&r, 0, SHCA_DB_RQ, 1 << 16 | l.qpn);
    loop_send(&r, &l, 0, 0x2222, src, 4096, SHCA_WQE_SIGNALED);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    g_assert_cmpuint(loop_recv_cqe(&r, &l).status, ==, SHCA_CQE_SUCCESS);
    g_assert_cmpuint(loop_send_cqe(&r, &l).status, ==, SHCA_CQE_SUCCESS);
    g_assert_cmphex(qtest_readb(r.h.qts, dst + 4095), ==, 0x77);
    hca_stop(&r.h);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/softhca/iothread/send-over-netdev",
                   test_iothread_send_over_netdev);
    qtest_add_func("/softhca/iothread/loopback", test_iothread_loopback);
    qtest_add_func("/softhca/iothread/nic", test_iothread_nic);
    qtest_add_func("/softhca/iothread/inbox-full-held-netdev",
                   test_iothread_inbox_full);
    qtest_add_func("/softhca/iothread/stopped", test_iothread_stopped);
    qtest_add_func("/softhca/iothread/reset-under-traffic",
                   test_iothread_reset_under_traffic);

    return g_test_run();
}
