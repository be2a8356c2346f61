/*
 * Unit tests of the transport's sequence arithmetic
 * (qemu-device/softhca-seq.h): 24-bit PSNs, segmentation, the opcode of
 * each packet, the responder's order rule, ACK requests, timer codes.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "softhca-seq.h"
#include "unit.h"

static void test_psn_wrap(void)
{
    CHECK_EQ(softhca_psn_add(0xfffffe, 1), 0xffffff);
    CHECK_EQ(softhca_psn_add(0xffffff, 1), 0);
    CHECK_EQ(softhca_psn_add(0xffffff, 5), 4);
    CHECK_EQ(softhca_psn_add(0, -1), 0xffffff);
    CHECK_EQ(softhca_psn_diff(0, 0xffffff), 1);
    CHECK_EQ(softhca_psn_diff(0xffffff, 0), -1);
    CHECK_EQ(softhca_psn_diff(5, 0xfffffb), 10);
    CHECK_EQ(softhca_psn_diff(100, 100), 0);
    /* half the circle ahead is still "after", one more is "before" */
    CHECK_EQ(softhca_psn_diff(0x7fffff, 0), 0x7fffff);
    CHECK(softhca_psn_diff(0x800000, 0) < 0);
}

static void test_segmentation(void)
{
    CHECK_EQ(softhca_mtu_bytes(1), 256);
    CHECK_EQ(softhca_mtu_bytes(3), 1024);
    CHECK_EQ(softhca_mtu_bytes(5), 4096);
    CHECK_EQ(softhca_mtu_bytes(0), 0);
    CHECK_EQ(softhca_mtu_bytes(6), 0);
    CHECK_EQ(softhca_msg_pkts(0, 1024), 1);
    CHECK_EQ(softhca_msg_pkts(1, 1024), 1);
    CHECK_EQ(softhca_msg_pkts(1024, 1024), 1);
    CHECK_EQ(softhca_msg_pkts(1025, 1024), 2);
    CHECK_EQ(softhca_msg_pkts(1ull << 30, 256), 1u << 22);
}

static void test_req_opcode(void)
{
    const uint8_t rc = SOFTHCA_TRANSPORT_RC, uc = SOFTHCA_TRANSPORT_UC;

    CHECK_EQ(softhca_req_opcode(SHCA_WR_SEND, true, true, rc),
             SOFTHCA_OP_SEND_ONLY);
    CHECK_EQ(softhca_req_opcode(SHCA_WR_SEND, true, false, rc),
             SOFTHCA_OP_SEND_FIRST);
    CHECK_EQ(softhca_req_opcode(SHCA_WR_SEND, false, false, rc),
             SOFTHCA_OP_SEND_MIDDLE);
    CHECK_EQ(softhca_req_opcode(SHCA_WR_SEND_IMM, false, true, rc),
             SOFTHCA_OP_SEND_LAST_IMM);
    CHECK_EQ(softhca_req_opcode(SHCA_WR_SEND_IMM, true, false, rc),
             SOFTHCA_OP_SEND_FIRST);
    CHECK_EQ(softhca_req_opcode(SHCA_WR_SEND_INV, true, true, rc),
             SOFTHCA_OP_SEND_ONLY_INV);
    CHECK_EQ(softhca_req_opcode(SHCA_WR_RDMA_WRITE_IMM, true, true, rc),
             SOFTHCA_OP_RDMA_WRITE_ONLY_IMM);
    CHECK_EQ(softhca_req_opcode(SHCA_WR_RDMA_WRITE_IMM, false, true, rc),
             SOFTHCA_OP_RDMA_WRITE_LAST_IMM);
    CHECK_EQ(softhca_req_opcode(SHCA_WR_RDMA_WRITE, true, false, uc),
             SOFTHCA_TRANSPORT_UC | SOFTHCA_OP_RDMA_WRITE_FIRST);
    CHECK_EQ(softhca_req_opcode(SHCA_WR_RDMA_READ, true, true, rc),
             SOFTHCA_OP_RDMA_READ_REQUEST);
    CHECK_EQ(softhca_req_opcode(SHCA_WR_ATOMIC_FETCH_ADD, true, true, rc),
             SOFTHCA_OP_FETCH_ADD);
    /* UC carries neither READ, atomics nor SEND with invalidate */
    CHECK_EQ(softhca_req_opcode(SHCA_WR_RDMA_READ, true, true, uc), -1);
    CHECK_EQ(softhca_req_opcode(SHCA_WR_ATOMIC_CMP_SWP, true, true, uc), -1);
    CHECK_EQ(softhca_req_opcode(SHCA_WR_SEND_INV, true, true, uc), -1);
    CHECK_EQ(softhca_req_opcode(0x42, true, true, rc), -1);
}

static void test_order_rule(void)
{
    /* between messages: only a packet that starts one */
    CHECK(softhca_op_follows(SOFTHCA_OP_SEND_ONLY, SOFTHCA_OP_SEND_FIRST));
    CHECK(softhca_op_follows(SOFTHCA_OP_SEND_LAST,
                             SOFTHCA_OP_RDMA_WRITE_ONLY));
    CHECK(softhca_op_follows(SOFTHCA_OP_RDMA_READ_REQUEST,
                             SOFTHCA_OP_FETCH_ADD));
    CHECK(!softhca_op_follows(SOFTHCA_OP_SEND_ONLY, SOFTHCA_OP_SEND_MIDDLE));
    CHECK(!softhca_op_follows(SOFTHCA_OP_RDMA_WRITE_LAST,
                              SOFTHCA_OP_RDMA_WRITE_LAST));
    /* inside a message: its MIDDLE or LAST, nothing else */
    CHECK(softhca_op_follows(SOFTHCA_OP_SEND_FIRST, SOFTHCA_OP_SEND_MIDDLE));
    CHECK(softhca_op_follows(SOFTHCA_OP_SEND_MIDDLE,
                             SOFTHCA_OP_SEND_LAST_IMM));
    CHECK(softhca_op_follows(SOFTHCA_OP_SEND_FIRST, SOFTHCA_OP_SEND_LAST_INV));
    CHECK(softhca_op_follows(SOFTHCA_OP_RDMA_WRITE_FIRST,
                             SOFTHCA_OP_RDMA_WRITE_LAST_IMM));
    CHECK(!softhca_op_follows(SOFTHCA_OP_SEND_FIRST, SOFTHCA_OP_SEND_ONLY));
    CHECK(!softhca_op_follows(SOFTHCA_OP_SEND_FIRST,
                              SOFTHCA_OP_RDMA_WRITE_MIDDLE));
    CHECK(!softhca_op_follows(SOFTHCA_OP_RDMA_WRITE_MIDDLE,
                              SOFTHCA_OP_RDMA_READ_REQUEST));
}

static void test_ack_req(void)
{
    uint32_t since = 0, asked = 0;

    CHECK(softhca_ack_req(true, 0));
    CHECK(!softhca_ack_req(false, 0));
    /* a long message asks every SOFTHCA_PKTS_PER_ACK packets */
    for (int i = 0; i < 1000; i++) {
        bool a = softhca_ack_req(i == 999, since);

        asked += a;
        since = a ? 0 : since + 1;
        CHECK(since < SOFTHCA_PKTS_PER_ACK);
    }
    CHECK_EQ(asked, 1000 / SOFTHCA_PKTS_PER_ACK + 1);
}

static void test_timers(void)
{
    CHECK_EQ(softhca_ack_timeout_ns(0), 0);
    CHECK_EQ(softhca_ack_timeout_ns(1), 8192);
    CHECK_EQ(softhca_ack_timeout_ns(14), 4096ull << 14);   /* ~67 ms */
    CHECK_EQ(softhca_ack_timeout_ns(31), 4096ull << 31);
    CHECK_EQ(softhca_rnr_timer_ns(0), 655360000);
    CHECK_EQ(softhca_rnr_timer_ns(1), 10000);
    CHECK_EQ(softhca_rnr_timer_ns(12), 640000);
    CHECK_EQ(softhca_rnr_timer_ns(31), 491520000);
}

int main(void)
{
    RUN(test_psn_wrap);
    RUN(test_segmentation);
    RUN(test_req_opcode);
    RUN(test_order_rule);
    RUN(test_ack_req);
    RUN(test_timers);
    return unit_failed_tests ? EXIT_FAILURE : EXIT_SUCCESS;
}
