/*
 * QTest testcase for the softhca RDMA adapter, driven with no guest:
 * the connected transports: RC and UC messages, acknowledgements and
 * retries, the SQ record, and port loopback.
 * The expected behaviour is spec/softhca.md.
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

static void test_wqe_send_self(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    uint8_t data[3000], got[3000], inl[48];
    struct shca_send_wqe w = {
        .wr_id = cpu_to_le64(0x2223),
        .opcode = SHCA_WR_SEND,
        .flags = SHCA_WQE_SIGNALED | SHCA_WQE_INLINE,
        .inline_len = cpu_to_le32(sizeof(inl)),
    };
    uint64_t tx, rx;
    struct shca_cqe cqe;
    Rdma r;
    Loop l;

    /*
     * The NIC rings stay disabled: RoCEv2 frames reach the transport
     * without them (regression: the port once held every frame back while
     * the NIC function had no RX buffer).
     */
    rdma_start_with(&r, netdev);
    loop_start(&r, &l, SHCA_QPT_RC, 7);
    loop_connect(&r, &l, false);
    tx = guest_alloc(&r.h.alloc, 4096);
    rx = guest_alloc(&r.h.alloc, 8192);
    for (size_t i = 0; i < sizeof(data); i++) {
        data[i] = i * 7 + 1;
    }
    qtest_memwrite(r.h.qts, tx, data, sizeof(data));
    qtest_memset(r.h.qts, rx, 0, 8192);

    /* 3000 bytes at a 1024-byte MTU: three packets into one receive */
    loop_recv(&r, &l, 0, 0x1111, rx, 4096);
    loop_recv(&r, &l, 1, 0x1112, rx + 4096, 4096);
    rdma_db(&r, 0, SHCA_DB_RQ, 2 << 16 | l.qpn);
    loop_send(&r, &l, 0, 0x2222, tx, sizeof(data), SHCA_WQE_SIGNALED);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);

    cqe = loop_recv_cqe(&r, &l);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    g_assert_cmphex(cqe.opcode, ==, SHCA_CQE_OP_RECV);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x1111);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, sizeof(data));
    g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, l.qpn);
    g_assert_cmpuint(le16_to_cpu(cqe.wqe_index), ==, 0);
    cqe = loop_send_cqe(&r, &l);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    g_assert_cmphex(cqe.opcode, ==, SHCA_CQE_OP_SEND);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x2222);
    g_assert_cmpuint(le16_to_cpu(cqe.wqe_index), ==, 0);
    qtest_memread(r.h.qts, rx, got, sizeof(got));
    g_assert(memcmp(got, data, sizeof(data)) == 0);

    /* inline data travels in the WQE itself */
    memset(inl, 0x5a, sizeof(inl));
    loop_write_send(&r, &l, 1, &w, inl, sizeof(inl));
    rdma_db(&r, 0, SHCA_DB_SQ, 2 << 16 | l.qpn);
    cqe = loop_recv_cqe(&r, &l);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x1112);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, sizeof(inl));
    g_assert_cmpuint(le16_to_cpu(cqe.wqe_index), ==, 1);
    cqe = loop_send_cqe(&r, &l);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x2223);
    qtest_memread(r.h.qts, rx + 4096, got, sizeof(inl));
    g_assert(memcmp(got, inl, sizeof(inl)) == 0);
    g_assert_cmpuint(rdma_state(&r, l.qpn), ==, SHCA_QPS_RTS);
    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    hca_stop(&r.h);
}

/* Wait (bounded) for CQE n of a CQ with the VM clock stopped. */
static void loop_wait_cqe_frozen(Rdma *r, uint64_t cqbuf, uint32_t n)
{
    for (int tries = 0; tries < 400 && !loop_cqe_ready(r, cqbuf, n); tries++) {
        g_usleep(5 * 1000);
    }
    g_assert(loop_cqe_ready(r, cqbuf, n));
}

static uint64_t loop_tx_packets(Rdma *r)
{
    uint64_t stats[SHCA_STAT_COUNT];

    rdma_stats(r, stats);
    return stats[SHCA_STAT_TX_PACKETS];
}

/*
 * Post SEND i (signaled, 64 bytes at buf) and wait, with the VM clock
 * stopped, until it is received; then long enough for an ACK that goes
 * at once to have gone.
 */
static void loop_send_received(Rdma *r, Loop *l, uint16_t i, uint64_t wr_id,
                               uint64_t buf)
{
    loop_send(r, l, i, wr_id, buf, 64, SHCA_WQE_SIGNALED);
    rdma_db(r, 0, SHCA_DB_SQ, (i + 1) << 16 | l->qpn);
    loop_wait_cqe_frozen(r, l->rcqbuf, i);
    g_usleep(50 * 1000);
}

/*
 * A QP that sends requests holds its ACKs back for the next one (spec §16):
 * the ACK goes out just before it, or when the ACK delay runs out on the
 * VM clock.  The loop QP answers its own requests, so it is such a QP.
 */
static void test_rc_ack_rides(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    uint64_t buf;
    Rdma r;
    Loop l;

    rdma_start_with(&r, netdev);
    loop_start(&r, &l, SHCA_QPT_RC, 7);
    loop_connect(&r, &l, false);
    buf = guest_alloc(&r.h.alloc, 4096);
    loop_recv(&r, &l, 0, 0x31, buf, 2048);
    loop_recv(&r, &l, 1, 0x32, buf + 2048, 2048);
    rdma_db(&r, 0, SHCA_DB_RQ, 2 << 16 | l.qpn);

    /* the SEND arrives; its ACK waits, so the SEND is not complete */
    loop_send_received(&r, &l, 0, 0x41, buf);
    g_assert_cmpuint(loop_tx_packets(&r), ==, 1);
    g_assert(!loop_cqe_ready(&r, l.scqbuf, 0));

    /* the next request takes the ACK with it, ahead of itself */
    loop_send_received(&r, &l, 1, 0x42, buf);
    loop_wait_cqe_frozen(&r, l.scqbuf, 0);
    g_assert_cmphex(le64_to_cpu(rdma_cqe(&r, l.scqbuf, 0).wr_id), ==, 0x41);
    g_assert_cmpuint(loop_tx_packets(&r), ==, 3);
    g_assert(!loop_cqe_ready(&r, l.scqbuf, 1));

    /* with no request to ride, the ACK goes when its delay runs out */
    qtest_clock_step(r.h.qts, SHCA_ACK_DELAY_NS);
    loop_wait_cqe_frozen(&r, l.scqbuf, 1);
    g_assert_cmphex(le64_to_cpu(rdma_cqe(&r, l.scqbuf, 1).wr_id), ==, 0x42);
    g_assert_cmpuint(loop_tx_packets(&r), ==, 4);
    g_assert_cmpuint(rdma_state(&r, l.qpn), ==, SHCA_QPS_RTS);

    /*
     * A held ACK is not lost when the QP stops answering: a program that
     * has its last receive may move its QP on (or destroy it) at once.
     */
    loop_recv(&r, &l, 2, 0x33, buf, 2048);
    rdma_db(&r, 0, SHCA_DB_RQ, 3 << 16 | l.qpn);
    loop_send_received(&r, &l, 2, 0x43, buf);
    g_assert_cmpuint(loop_tx_packets(&r), ==, 5);
    loop_connect(&r, &l, true);         /* RTS -> RESET -> INIT */
    g_assert_cmpuint(loop_tx_packets(&r), ==, 6);
    hca_stop(&r.h);
}

#define LOOP_SQ_RECORD(l) ((l)->sq + 4096)

static uint32_t loop_polling(Rdma *r, Loop *l)
{
    return qtest_readl(r->h.qts, LOOP_SQ_RECORD(l) +
                       offsetof(struct shca_sq_record, device));
}

static void loop_record_pi(Rdma *r, Loop *l, uint32_t pi)
{
    qtest_writel(r->h.qts, LOOP_SQ_RECORD(l) +
                 offsetof(struct shca_sq_record, pi), pi);
}

/*
 * The SQ record (spec §14): POLLING is set while the QP has packets
 * unacknowledged, WQEs posted with the record alone then go out, and it
 * is clear again once all are acknowledged.  A count in the record runs
 * past the ring as a doorbell's does.
 */
static void test_rc_sq_record(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    struct shca_aq_entry cmd;
    uint64_t buf;
    uint32_t qpn;
    Rdma r;
    Loop l;

    rdma_start_with(&r, netdev);
    g_assert_cmphex(rd(&r.h, SHCA_REG_CAPS) & SHCA_CAP_SQ_RECORD, ==,
                    SHCA_CAP_SQ_RECORD);
    loop_create(&r, &l, SHCA_QPT_RC, 7, SHCA_QP_F_SQ_RECORD, 0);
    /* the ring fills the buffer: no room for the record */
    rdma_qp_cmd(&r, &cmd, 0, SHCA_QPT_RC, l.scq, l.rcq,
                guest_alloc(&r.h.alloc, 4096), 0);
    cmd.create_qp.sq_log_size = 6;
    cmd.create_qp.flags = SHCA_QP_F_SQ_RECORD;
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, &qpn), ==, SHCA_AQ_BAD_PARAM);
    cmd.create_qp.flags = 0x80;
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, &qpn), ==, SHCA_AQ_BAD_PARAM);

    loop_connect(&r, &l, false);
    buf = guest_alloc(&r.h.alloc, 4096);
    for (int i = 0; i < 3; i++) {
        loop_recv(&r, &l, i, 0x30 + i, buf + 1024 * i, 1024);
    }
    rdma_db(&r, 0, SHCA_DB_RQ, 3 << 16 | l.qpn);
    g_assert_cmphex(loop_polling(&r, &l), ==, 0);

    /*
     * two SENDs by record and doorbell: the second leaves from the
     * scheduler
     */
    loop_send(&r, &l, 0, 0x40, buf, 64, SHCA_WQE_SIGNALED);
    loop_send(&r, &l, 1, 0x41, buf, 64, SHCA_WQE_SIGNALED);
    loop_record_pi(&r, &l, 2);
    rdma_db(&r, 0, SHCA_DB_SQ, 2 << 16 | l.qpn);
    loop_wait_cqe_frozen(&r, l.rcqbuf, 1);
    g_assert_cmphex(loop_polling(&r, &l), ==, SHCA_SQ_RECORD_POLLING);

    /* a third by the record alone: the held ACK's arrival starts it */
    loop_send(&r, &l, 2, 0x42, buf, 64, SHCA_WQE_SIGNALED);
    loop_record_pi(&r, &l, 3);
    qtest_clock_step(r.h.qts, SHCA_ACK_DELAY_NS);
    loop_wait_cqe_frozen(&r, l.rcqbuf, 2);
    g_assert_cmphex(le64_to_cpu(rdma_cqe(&r, l.rcqbuf, 2).wr_id), ==, 0x32);

    /* all acknowledged: POLLING clear, software rings again */
    qtest_clock_step(r.h.qts, SHCA_ACK_DELAY_NS);
    loop_wait_cqe_frozen(&r, l.scqbuf, 2);
    g_assert_cmphex(le64_to_cpu(rdma_cqe(&r, l.scqbuf, 2).wr_id), ==, 0x42);
    g_assert_cmphex(loop_polling(&r, &l), ==, 0);

    /* a record that runs past the ring, read as the QP enters RTS */
    loop_connect(&r, &l, true);
    loop_record_pi(&r, &l, loop_sq_size(&l) + 1);
    loop_connect_rts(&r, &l);
    g_assert_cmpuint(rdma_eqe(&r, r.eq0, 0).type, ==, SHCA_EQE_QP_FATAL);
    g_assert_cmpuint(rdma_state(&r, l.qpn), ==, SHCA_QPS_ERR);
    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    hca_stop(&r.h);
}

/*
 * The port's loopback (spec §7.1): RC between a QP and itself never
 * reaches the wire, yet every packet is counted as sent and as received.
 * A NIC frame to the port's MAC comes back to the rings, in order with the
 * rest; a broadcast leaves the port and does not come back.
 */
static void test_port_loopback(void)
{
    uint8_t data[3000], got[3000], frame[64];
    uint64_t tx, rx, stats[SHCA_STAT_COUNT];
    struct shca_cqe cqe;
    Wire w;
    Rdma r;
    Loop l;
    Nic n;

    wire_open(&w);
    rdma_start_with(&r, w.netdev);
    g_assert_cmphex(rd(&r.h, SHCA_REG_CAPS) & SHCA_CAP_LOOPBACK, ==,
                    SHCA_CAP_LOOPBACK);
    loop_start(&r, &l, SHCA_QPT_RC, 7);
    loop_connect(&r, &l, false);
    tx = guest_alloc(&r.h.alloc, 4096);
    rx = guest_alloc(&r.h.alloc, 4096);
    for (size_t i = 0; i < sizeof(data); i++) {
        data[i] = i * 13 + 5;
    }
    qtest_memwrite(r.h.qts, tx, data, sizeof(data));
    qtest_memset(r.h.qts, rx, 0, 4096);
    loop_recv(&r, &l, 0, 0x1111, rx, 4096);
    rdma_db(&r, 0, SHCA_DB_RQ, 1 << 16 | l.qpn);
    loop_send(&r, &l, 0, 0x2222, tx, sizeof(data), SHCA_WQE_SIGNALED);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    cqe = loop_recv_cqe(&r, &l);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, sizeof(data));
    cqe = loop_send_cqe(&r, &l);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    qtest_memread(r.h.qts, rx, got, sizeof(got));
    g_assert(memcmp(got, data, sizeof(data)) == 0);

    /* three requests and an ACK at least, each sent once, received once */
    rdma_stats(&r, stats);
    g_assert_cmpuint(stats[SHCA_STAT_TX_PACKETS], >=, 4);
    g_assert_cmpuint(stats[SHCA_STAT_RX_PACKETS], ==,
                     stats[SHCA_STAT_TX_PACKETS]);
    g_assert_cmpuint(stats[SHCA_STAT_RETRANSMITS], ==, 0);
    g_assert_cmpuint(stats[SHCA_STAT_LOOPBACK_DROPPED], ==, 0);
    g_assert_cmpuint(wire_recv(&w, got, sizeof(got), 50), ==, 0);

    loop_nic(&r, &n);
    make_udp_frame(frame, l.mac, 0x0a000002, 5000);
    g_assert_cmpuint(nic_send(&r.h, &n, frame, sizeof(frame)), ==,
                     SHCA_NIC_DESC_DONE);
    g_assert_cmpuint(nic_wait_rx(&r.h, &n, 0), ==, sizeof(frame));
    qtest_memread(r.h.qts, n.rxbuf, got, sizeof(frame));
    g_assert(memcmp(got, frame, sizeof(frame)) == 0);
    make_udp_frame(frame, (const uint8_t *)"\xff\xff\xff\xff\xff\xff",
                   0x0a0000ff, 5000);
    g_assert_cmpuint(nic_send(&r.h, &n, frame, sizeof(frame)), ==,
                     SHCA_NIC_DESC_DONE);
    g_assert_cmpuint(wire_recv(&w, got, sizeof(got), 1000), ==, sizeof(frame));
    g_assert(memcmp(got, frame, sizeof(frame)) == 0);
    /* the next frame to ourselves is the next one the rings get */
    make_udp_frame(frame, l.mac, 0x0a000002, 5001);
    g_assert_cmpuint(nic_send(&r.h, &n, frame, sizeof(frame)), ==,
                     SHCA_NIC_DESC_DONE);
    g_assert_cmpuint(nic_wait_rx(&r.h, &n, 1), ==, sizeof(frame));
    qtest_memread(r.h.qts, n.rxbuf + NIC_BUF, got, sizeof(frame));
    g_assert(memcmp(got, frame, sizeof(frame)) == 0);
    hca_stop(&r.h);
    wire_close(&w);
}

#define LOOPBACK_QUEUE  512     /* spec §7.1 */
#define FULL_SQ_LOG     10
#define FULL_SENDS      600

/*
 * Issue 11, defect 3: a UC message of more than the requester's window
 * (128 packets) never completed, the window waiting on ACKs UC never
 * gets.  256 MTUs now go, paced by the requester's per-callback budget.
 */
static void test_uc_message_over_window(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    const uint32_t len = 256 * 1024;
    struct shca_cqe cqe;
    uint64_t tx, rx;
    Rdma r;
    Loop l;

    rdma_start_with(&r, netdev);
    loop_start(&r, &l, SHCA_QPT_UC, 7);
    loop_connect(&r, &l, false);
    tx = guest_alloc(&r.h.alloc, len);
    rx = guest_alloc(&r.h.alloc, len);
    for (uint32_t i = 0; i < len; i += 4096) {
        qtest_memset(r.h.qts, tx + i, i / 4096 + 1, 4096);
    }
    loop_recv(&r, &l, 0, 0x55, rx, len);
    rdma_db(&r, 0, SHCA_DB_RQ, 1 << 16 | l.qpn);
    loop_send(&r, &l, 0, 0x66, tx, len, SHCA_WQE_SIGNALED);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    cqe = loop_send_cqe(&r, &l);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    cqe = loop_recv_cqe(&r, &l);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, len);
    g_assert_cmpuint(qtest_readb(r.h.qts, rx + len - 1), ==, len / 4096);
    hca_stop(&r.h);
}

/*
 * An ACK past a READ whose responses were lost made the requester ask
 * again, and so did every ACK after, before the responses it asked for
 * could come: under reordering the ACKs of the requests it sent again
 * after the READ spent all its retries in a few milliseconds
 * (tests/guest/rdma-soak with 64 QPs).  One retry per gap, as for a gap in
 * the responses; the timer covers a retry that got lost.
 */
static void test_ack_past_read_retries_once(void)
{
    const uint32_t first = 0x100;
    uint64_t stats[SHCA_STAT_COUNT], buf;
    struct shca_send_wqe w = {
        .wr_id = cpu_to_le64(0xa1), .opcode = SHCA_WR_RDMA_READ,
        .flags = SHCA_WQE_SIGNALED, .num_sge = 1,
        .remote_addr = cpu_to_le64(0x10000), .rkey = cpu_to_le32(0x1234),
    };
    struct shca_sge sge = { .length = cpu_to_le32(2048) };
    unsigned reads = 0;
    uint8_t f[4200];
    Wire wire;
    Rdma r;
    Loop l;

    peer_start(&wire, &r, &l, SHCA_ACCESS_REMOTE_READ);
    buf = guest_alloc(&r.h.alloc, 4096);
    sge.addr = cpu_to_le64(buf);
    sge.lkey = cpu_to_le32(l.key);
    loop_write_send(&r, &l, 0, &w, &sge, sizeof(sge));
    loop_send(&r, &l, 1, 0xa2, 0, 0, SHCA_WQE_SIGNALED);
    rdma_db(&r, 0, SHCA_DB_SQ, 2 << 16 | l.qpn);
    /* the READ (PSNs 0x100, 0x101 for its two responses), the SEND */
    g_assert_cmpuint(peer_requests(&r, &wire, 300, &(uint32_t){ 0 }), ==, 2);

    /* the SEND acknowledged three times, no READ response ever */
    for (int i = 0; i < 3; i++) {
        peer_ack(&wire, l.mac, l.qpn, first + 2, 1);
    }
    for (int t = 0; t < 300; t += 10) {
        size_t n = wire_recv(&wire, f, sizeof(f), 10);

        if (n > ROCE_OFF && f[ROCE_OFF] == 0x0c /* RDMA READ request */) {
            g_assert_cmphex(ldl_be_p(f + ROCE_OFF + 8) & 0xffffff, ==, first);
            reads++;
        }
    }
    g_assert_cmpuint(reads, ==, 1);
    rdma_stats(&r, stats);
    g_assert_cmpuint(stats[SHCA_STAT_RETRANSMITS], ==, 1);
    hca_stop(&r.h);
    wire_close(&wire);
}

/* Whether the ICRC of IPv4 frame f, len bytes, is right. */
static bool frame_icrc_ok(const uint8_t *f, size_t len)
{
    return peer_icrc(f, len - ROCE_OFF - 4) == ldl_le_p(f + len - 4);
}

/*
 * An RDMA WRITE whose packets gather their payload from guest memory in
 * pieces: two SGEs, on an MR whose pages lie in reverse order,
 * so that packets cross an SGE and page boundaries.  At path MTU 1024 the
 * first three packets leave gathered, the last (928 bytes) copied; every
 * frame on the wire has the payload, in order, and a right ICRC.
 */
static void test_rc_gathered_frames(void)
{
    const uint32_t len0 = 1500, len1 = 2500;
    uint8_t want[1500 + 2500], got[sizeof(want)], f[2048];
    struct shca_send_wqe w = {
        .wr_id = cpu_to_le64(0x9a), .opcode = SHCA_WR_RDMA_WRITE,
        .flags = SHCA_WQE_SIGNALED, .num_sge = 2,
        .remote_addr = cpu_to_le64(0x10000), .rkey = cpu_to_le32(0x1234),
    };
    struct shca_sge sge[2];
    struct shca_buf_desc d;
    uint64_t data, list;
    size_t at = 0;
    uint32_t key;
    Wire wire;
    Rdma r;
    Loop l;

    peer_start(&wire, &r, &l, 0);
    data = guest_alloc(&r.h.alloc, 3 * 4096);
    list = guest_alloc(&r.h.alloc, 4096);
    for (int i = 0; i < 3; i++) {
        qtest_writeq(r.h.qts, list + 8 * i, data + (2 - i) * 4096);
    }
    d = (struct shca_buf_desc) {
        .addr = cpu_to_le64(list), .npages = cpu_to_le32(3), .page_shift = 12,
    };
    g_assert_cmpuint(rdma_reg_mr(&r, SHCA_ACCESS_LOCAL_WRITE, 0, 3 * 4096, 0,
                                 &d, &key), ==, SHCA_AQ_OK);
    /* iova 100.. (page 0), then iova 7892.. (the end of page 1, page 2) */
    for (size_t i = 0; i < sizeof(want); i++) {
        want[i] = i * 13 + i / 251;
    }
    qtest_memwrite(r.h.qts, data + 2 * 4096 + 100, want, len0);
    qtest_memwrite(r.h.qts, data + 4096 + 3796, want + len0, 300);
    qtest_memwrite(r.h.qts, data, want + len0 + 300, len1 - 300);
    sge[0] = (struct shca_sge) {
        .addr = cpu_to_le64(100), .length = cpu_to_le32(len0),
        .lkey = cpu_to_le32(key),
    };
    sge[1] = (struct shca_sge) {
        .addr = cpu_to_le64(2 * 4096 - 300), .length = cpu_to_le32(len1),
        .lkey = cpu_to_le32(key),
    };
    loop_write_send(&r, &l, 0, &w, sge, sizeof(sge));
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);

    for (int pkt = 0; pkt < 4; pkt++) {
        size_t n = wire_recv(&wire, f, sizeof(f), 1000);
        size_t hdr = ROCE_OFF + 12 + (pkt == 0 ? 16 : 0);
        size_t plen = MIN(1024, sizeof(want) - at);

        g_assert_cmpuint(n, ==, hdr + plen + 4);
        g_assert_cmphex(f[ROCE_OFF], ==, pkt == 0 ? 0x06 : pkt == 3 ? 0x08 :
                                         0x07);
        g_assert_true(frame_icrc_ok(f, n));
        memcpy(got + at, f + hdr, plen);
        at += plen;
    }
    g_assert_cmpmem(got, sizeof(got), want, sizeof(want));
    hca_stop(&r.h);
    wire_close(&wire);
}

/*
 * 32 RC QPs to the port itself, 32 WRITEs of 2 bytes each, rung while
 * the VM is stopped: 1024 requests, twice what the loopback queue holds,
 * and one scheduler run's budget fills it.  The requesters wait for the
 * queue (spec §7.1): nothing is dropped, nothing retransmitted, every
 * WRITE completes.  They used to fill it up and lose what their ACKs then
 * found no room for, and in an iothread the retransmissions found none
 * either, until the QPs failed with RETRY_EXC_ERR.
 */
#define WAIT_QPS        32
#define WAIT_WRITES     32

static void test_port_loopback_requests_wait(void)
{
    struct shca_send_wqe w = {
        .opcode = SHCA_WR_RDMA_WRITE, .num_sge = 1,
    };
    struct shca_sge sge;
    uint64_t stats[SHCA_STAT_COUNT], buf;
    Loop l[WAIT_QPS];
    uint32_t key;
    Rdma r;

    rdma_start(&r);
    buf = guest_alloc(&r.h.alloc, 4096);
    qtest_memset(r.h.qts, buf, 0x5a, 4096);
    g_assert_cmpuint(rdma_reg_mr(&r, SHCA_ACCESS_PHYS |
                                 SHCA_ACCESS_LOCAL_WRITE |
                                 SHCA_ACCESS_REMOTE_WRITE, buf, 4096, 0, NULL,
                                 &key), ==, SHCA_AQ_OK);
    sge = (struct shca_sge) {
        .addr = cpu_to_le64(buf), .length = cpu_to_le32(2),
        .lkey = cpu_to_le32(key),
    };
    w.remote_addr = cpu_to_le64(buf + 2048);
    w.rkey = cpu_to_le32(key);
    for (int q = 0; q < WAIT_QPS; q++) {
        loop_start(&r, &l[q], SHCA_QPT_RC, 7);
        loop_connect(&r, &l[q], false);
        g_assert_cmpuint(loop_sq_size(&l[q]), ==, WAIT_WRITES);
        for (int i = 0; i < WAIT_WRITES; i++) {
            w.wr_id = cpu_to_le64(q << 8 | i);
            w.flags = i == WAIT_WRITES - 1 ? SHCA_WQE_SIGNALED : 0;
            loop_write_send(&r, &l[q], i, &w, &sge, sizeof(sge));
        }
    }
    qtest_qmp_assert_success(r.h.qts, "{'execute': 'stop'}");
    for (int q = 0; q < WAIT_QPS; q++) {
        rdma_db(&r, 0, SHCA_DB_SQ, WAIT_WRITES << 16 | l[q].qpn);
    }
    qtest_qmp_assert_success(r.h.qts, "{'execute': 'cont'}");
    for (int q = 0; q < WAIT_QPS; q++) {
        struct shca_cqe cqe = loop_send_cqe(&r, &l[q]);

        g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
        g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==,
                        q << 8 | (WAIT_WRITES - 1));
    }
    rdma_stats(&r, stats);
    g_assert_cmpuint(stats[SHCA_STAT_LOOPBACK_DROPPED], ==, 0);
    g_assert_cmpuint(stats[SHCA_STAT_RETRANSMITS], ==, 0);
    g_assert_cmpuint(stats[SHCA_STAT_RX_PACKETS], ==,
                     stats[SHCA_STAT_TX_PACKETS]);
    hca_stop(&r.h);
}

/*
 * Two UD QPs of 600 sends each to the port itself, rung while the VM is
 * stopped: each doorbell sends what its work budget allows (spec §19.3),
 * together more than the loopback queue holds.  The queue takes 512
 * frames and counts the rest as dropped (spec §7.1), the device stays
 * ready, every send completes, and every frame is delivered or counted.
 */
static void test_port_loopback_full(void)
{
    struct shca_sge sge = { .length = cpu_to_le32(16) };
    uint64_t stats[SHCA_STAT_COUNT];
    struct shca_cqe cqe;
    struct shca_av av;
    Rdma r;
    Ud u[2];

    rdma_start(&r);
    sge.lkey = cpu_to_le32(ud_phys_key(&r));
    sge.addr = cpu_to_le64(guest_alloc(&r.h.alloc, 4096));
    for (int q = 0; q < 2; q++) {
        ud_start_sq(&r, &u[q], SHCA_QPT_UD, UD_QKEY, FULL_SQ_LOG);
    }
    av = ud_av(&r, UD_IP);
    /* stopped, no bottom half drains the queue between the doorbells */
    qtest_qmp_assert_success(r.h.qts, "{'execute': 'stop'}");
    for (int q = 0; q < 2; q++) {
        ud_write_sends(&r, &u[q], FULL_SQ_LOG, FULL_SENDS, u[0].qpn, &av,
                       &sge);
        rdma_db(&r, 0, SHCA_DB_SQ, FULL_SENDS << 16 | u[q].qpn);
    }
    rdma_stats(&r, stats);
    g_assert_cmpuint(stats[SHCA_STAT_LOOPBACK_DROPPED], >, 0);
    qtest_qmp_assert_success(r.h.qts, "{'execute': 'cont'}");

    for (int q = 0; q < 2; q++) {
        cqe = loop_wait_cqe(&r, u[q].scqbuf, u[q].scq_n++);
        g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
        g_assert_cmpuint(le64_to_cpu(cqe.wr_id), ==, FULL_SENDS - 1);
    }
    /* the QP has no receive WQE: every datagram delivered is counted */
    for (int tries = 0; tries < 400; tries++) {
        rdma_stats(&r, stats);
        if (stats[SHCA_STAT_RX_NO_RECV_WQE] +
            stats[SHCA_STAT_LOOPBACK_DROPPED] >= 2 * FULL_SENDS) {
            break;
        }
        g_usleep(5 * 1000);
        qtest_clock_step(r.h.qts, 1000 * 1000);
    }
    g_assert_cmpuint(stats[SHCA_STAT_TX_PACKETS], ==, 2 * FULL_SENDS);
    g_assert_cmpuint(stats[SHCA_STAT_RX_NO_RECV_WQE] +
                     stats[SHCA_STAT_LOOPBACK_DROPPED], ==, 2 * FULL_SENDS);
    g_assert_cmpuint(stats[SHCA_STAT_RX_NO_RECV_WQE], >=, LOOPBACK_QUEUE);
    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    g_assert_cmpuint(rdma_state(&r, u[0].qpn), ==, SHCA_QPS_RTS);
    hca_stop(&r.h);
}

/*
 * Issue 25: an RDMA READ that starts in the remote MR and runs past its
 * end was answered up to the MR's end and then no more, so the requester
 * waited out its retries (or its caller's patience).  The responder checks
 * the whole range first and NAKs the READ: the requester completes it with
 * REM_ACCESS_ERR and flushes the rest; the responder goes to ERR (class C).
 */
static void test_rc_read_past_mr_end(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    uint64_t stats[SHCA_STAT_COUNT], src, dst;
    struct shca_cqe cqe;
    uint32_t mr;
    Rdma r;
    Loop a, b;

    rdma_start_with(&r, netdev);
    loop_start(&r, &a, SHCA_QPT_RC, 7);
    loop_start(&r, &b, SHCA_QPT_RC, 7);
    b.access = SHCA_ACCESS_REMOTE_READ;
    loop_pair(&r, &a, &b);
    src = guest_alloc(&r.h.alloc, 4096);
    dst = guest_alloc(&r.h.alloc, 4096);
    g_assert_cmpuint(rdma_reg_mr(&r, SHCA_ACCESS_PHYS |
                                 SHCA_ACCESS_LOCAL_WRITE |
                                 SHCA_ACCESS_REMOTE_READ, src, 2048, 0, NULL,
                                 &mr), ==, SHCA_AQ_OK);

    /*
     * 3 KiB from a 2 KiB MR: the first two of its three MTUs lie in it.
     * The SEND behind it has a receive WQE: nothing but the READ fails.
     */
    loop_recv(&r, &b, 0, 0x1110, dst, 1024);
    rdma_db(&r, 0, SHCA_DB_RQ, 1 << 16 | b.qpn);
    loop_post_op(&r, &a, 0, SHCA_WR_RDMA_READ, mr, src, dst, 3072);
    loop_send(&r, &a, 1, 0xf1, 0, 0, SHCA_WQE_SIGNALED);
    rdma_db(&r, 0, SHCA_DB_SQ, 2 << 16 | a.qpn);
    cqe = loop_send_cqe(&r, &a);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_REM_ACCESS_ERR);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0xf000);
    cqe = loop_send_cqe(&r, &a);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_WR_FLUSH_ERR);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0xf1);
    g_assert_cmpuint(rdma_state(&r, a.qpn), ==, SHCA_QPS_ERR);
    g_assert_cmpuint(rdma_state(&r, b.qpn), ==, SHCA_QPS_ERR);
    rdma_stats(&r, stats);
    g_assert_cmpuint(stats[SHCA_STAT_NAKS_SENT], ==, 1);
    g_assert_cmpuint(stats[SHCA_STAT_RETRANSMITS], ==, 0);
    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    hca_stop(&r.h);
}

/*
 * Issue 25 reports that a requester whose peer QP is in RESET, INIT or ERR
 * (which drop what they get) did not complete in time.  It gives up with
 * RETRY_EXC_ERR just when its ACK timeout has run out retry_cnt + 1 times:
 * 8 x 1 ms of VM time here, neither sooner nor later.
 */
static void test_rc_peer_not_ready(void)
{
    static const uint8_t states[] = {
        SHCA_QPS_RESET, SHCA_QPS_INIT, SHCA_QPS_ERR,
    };
    const uint64_t timeout_ns = 4096ull << 8, step_ns = 100 * 1000;
    g_autofree char *netdev = dgram_loop_netdev();
    struct shca_qp_attr attr;
    struct shca_cqe cqe;
    uint64_t t;
    Rdma r;
    Loop a, b;

    rdma_start_with(&r, netdev);
    loop_start(&r, &a, SHCA_QPT_RC, 7);
    loop_start(&r, &b, SHCA_QPT_RC, 7);
    for (unsigned i = 0; i < ARRAY_SIZE(states); i++) {
        loop_pair(&r, &a, &b);
        if (states[i] == SHCA_QPS_INIT) {
            loop_connect(&r, &b, true);
        } else {
            attr = rc_attr(states[i]);
            g_assert_cmpuint(rdma_modify(&r, b.qpn, SHCA_QP_ATTR_STATE,
                                         &attr), ==, SHCA_AQ_OK);
        }
        g_assert_cmpuint(rdma_state(&r, b.qpn), ==, states[i]);
        loop_send(&r, &a, 0, 0x700 + i, 0, 0, SHCA_WQE_SIGNALED);
        rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | a.qpn);
        for (t = 0; !loop_cqe_ready(&r, a.scqbuf, a.scq_n); t += step_ns) {
            g_assert_cmpuint(t, <=, 8 * timeout_ns + step_ns);
            g_usleep(2 * 1000);
            qtest_clock_step(r.h.qts, step_ns);
        }
        g_assert_cmpuint(t, >=, 8 * timeout_ns);
        cqe = loop_send_cqe(&r, &a);
        g_assert_cmpuint(cqe.status, ==, SHCA_CQE_RETRY_EXC_ERR);
        g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x700 + i);
        g_assert_cmpuint(rdma_state(&r, a.qpn), ==, SHCA_QPS_ERR);
    }
    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    hca_stop(&r.h);
}

/*
 * Issue 25: a WRITE with immediate through a bad rkey took its receive
 * WQE at the responder, which then went to ERR and flushed it like the
 * WQEs never reached.  The WQE the request took carries the error,
 * LOC_ACCESS_ERR as verbs define it for this case and mlx5 reports it;
 * only those after it are flushed.  The requester completes with
 * REM_ACCESS_ERR from the NAK.
 */
static void test_rc_write_imm_bad_rkey(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    uint64_t buf, rx;
    struct shca_cqe cqe;
    Rdma r;
    Loop a, b;

    rdma_start_with(&r, netdev);
    loop_start(&r, &a, SHCA_QPT_RC, 7);
    loop_start(&r, &b, SHCA_QPT_RC, 7);
    loop_pair(&r, &a, &b);
    buf = guest_alloc(&r.h.alloc, 4096);
    rx = guest_alloc(&r.h.alloc, 4096);
    loop_recv(&r, &b, 0, 0x1110, rx, 1024);
    loop_recv(&r, &b, 1, 0x1111, rx + 1024, 1024);
    rdma_db(&r, 0, SHCA_DB_RQ, 2 << 16 | b.qpn);

    /* an rkey of no MR (index 0x123456 is past the MR table) */
    loop_post_op(&r, &a, 0, SHCA_WR_RDMA_WRITE_IMM, 0x12345600, buf, buf, 64);
    loop_send(&r, &a, 1, 0xf1, 0, 0, SHCA_WQE_SIGNALED);
    rdma_db(&r, 0, SHCA_DB_SQ, 2 << 16 | a.qpn);
    cqe = loop_recv_cqe(&r, &b);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_LOC_ACCESS_ERR);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x1110);
    g_assert_cmpuint(le16_to_cpu(cqe.wqe_index), ==, 0);
    g_assert_cmpuint(cqe.opcode & SHCA_CQE_OP_RECV, ==, SHCA_CQE_OP_RECV);
    cqe = loop_recv_cqe(&r, &b);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_WR_FLUSH_ERR);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x1111);
    g_assert_cmpuint(rdma_state(&r, b.qpn), ==, SHCA_QPS_ERR);

    cqe = loop_send_cqe(&r, &a);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_REM_ACCESS_ERR);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0xf000);
    cqe = loop_send_cqe(&r, &a);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_WR_FLUSH_ERR);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0xf1);
    g_assert_cmpuint(rdma_state(&r, a.qpn), ==, SHCA_QPS_ERR);
    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    hca_stop(&r.h);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/softhca/rc/uc-message-over-window",
                   test_uc_message_over_window);
    qtest_add_func("/softhca/rc/ack-past-read-retries-once",
                   test_ack_past_read_retries_once);
    qtest_add_func("/softhca/rc/send-self", test_wqe_send_self);
    qtest_add_func("/softhca/rc/ack-rides", test_rc_ack_rides);
    qtest_add_func("/softhca/rc/gathered-frames", test_rc_gathered_frames);
    qtest_add_func("/softhca/rc/sq-record", test_rc_sq_record);
    qtest_add_func("/softhca/rc/loopback", test_port_loopback);
    qtest_add_func("/softhca/rc/loopback-full", test_port_loopback_full);
    qtest_add_func("/softhca/rc/loopback-requests-wait",
                   test_port_loopback_requests_wait);
    qtest_add_func("/softhca/rc/read-past-mr-end-completes-rem-access-err",
                   test_rc_read_past_mr_end);
    qtest_add_func("/softhca/rc/peer-not-ready-completes-retry-exc-err",
                   test_rc_peer_not_ready);
    qtest_add_func("/softhca/rc/write-imm-bad-rkey-completes-access-err",
                   test_rc_write_imm_bad_rkey);

    return g_test_run();
}
