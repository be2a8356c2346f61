/*
 * Unit tests of the provider's queue geometry and entry formats
 * (guest-provider/softhca_queue.c) against the byte layouts of spec §13–§17,
 * read at fixed offsets rather than through the structs they check; and of
 * the two ways to post sends, post_send and the ibv_wr_* API
 * (softhca_post.c, softhca_qp_ex.c), on QPs without a kernel.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "softhca.h"
#include "unit.h"

static const struct softhca_limits lim = {
    .max_qp_wr = 16384, .max_sge = 16, .max_cqe = 65536, .max_inline = 256,
};

static uint64_t le(const void *buf, size_t off, size_t len)
{
    const uint8_t *p = (const uint8_t *)buf + off;
    uint64_t v = 0;

    while (len--) {
        v = v << 8 | p[len];
    }
    return v;
}

static void put_le(void *buf, size_t off, uint64_t v, size_t len)
{
    uint8_t *p = (uint8_t *)buf + off;

    for (size_t i = 0; i < len; i++, v >>= 8) {
        p[i] = v;
    }
}

static void provider_cq_sizes(void)
{
    struct softhca_limits none = lim;
    uint8_t log;

    none.max_cqe = 0;
    CHECK_EQ(softhca_cq_log_size(&lim, 1, &log), 0);
    CHECK_EQ(log, 1);
    CHECK_EQ(softhca_cq_log_size(&lim, 15, &log), 0);
    CHECK_EQ(log, 4);
    CHECK_EQ(softhca_cq_log_size(&lim, 16, &log), 0);
    CHECK_EQ(log, 5);
    CHECK_EQ(softhca_cq_log_size(&lim, 65536, &log), 0);
    CHECK_EQ(log, 16);                  /* capped by MAX_CQE */
    CHECK_EQ(softhca_cq_log_size(&lim, 65537, &log), EINVAL);
    CHECK_EQ(softhca_cq_log_size(&lim, -1, &log), EINVAL);
    CHECK_EQ(softhca_cq_log_size(&none, 1, &log), EOPNOTSUPP);
}

/* create_cq and resize_cq of 0 entries: EINVAL, as mlx5 and rxe answer. */
static void provider_cq_zero_entries_einval(void)
{
    uint8_t log = 0xaa;

    CHECK_EQ(softhca_cq_log_size(&lim, 0, &log), EINVAL);
    CHECK_EQ(log, 0xaa);
}

static void provider_sq_shapes(void)
{
    struct ibv_qp_cap cap = { .max_send_wr = 100, .max_send_sge = 2 };
    struct softhca_wq_shape s;

    CHECK_EQ(softhca_sq_shape(&lim, &cap, false, &s), 0);
    CHECK_EQ(s.log_size, 7);
    CHECK_EQ(s.wqe_shift, 7);           /* 64 + 2 * 16 = 96 */
    CHECK_EQ(cap.max_send_wr, 128);
    CHECK_EQ(cap.max_send_sge, 4);
    CHECK_EQ(cap.max_inline_data, 64);

    cap = (struct ibv_qp_cap){ .max_send_wr = 1, .max_inline_data = 200 };
    CHECK_EQ(softhca_sq_shape(&lim, &cap, false, &s), 0);
    CHECK_EQ(s.log_size, 1);
    CHECK_EQ(s.wqe_shift, 9);           /* 64 + 200 = 264 */
    CHECK_EQ(cap.max_send_sge, 16);     /* 448 / 16 = 28, MAX_SGE 16 */
    CHECK_EQ(cap.max_inline_data, 256); /* MAX_INLINE */

    cap = (struct ibv_qp_cap){ .max_send_wr = 0 };
    CHECK_EQ(softhca_sq_shape(&lim, &cap, false, &s), 0);
    CHECK_EQ(s.wqe_shift, 6);           /* the smallest stride */
    CHECK_EQ(cap.max_send_sge, 0);

    cap = (struct ibv_qp_cap){ .max_send_wr = 16384 };
    CHECK_EQ(softhca_sq_shape(&lim, &cap, false, &s), 0);
    CHECK_EQ(s.log_size, 14);
    cap = (struct ibv_qp_cap){ .max_send_wr = 16385 };
    CHECK_EQ(softhca_sq_shape(&lim, &cap, false, &s), EINVAL);
    cap = (struct ibv_qp_cap){ .max_send_wr = 1, .max_send_sge = 17 };
    CHECK_EQ(softhca_sq_shape(&lim, &cap, false, &s), EINVAL);
    cap = (struct ibv_qp_cap){ .max_send_wr = 1, .max_inline_data = 257 };
    CHECK_EQ(softhca_sq_shape(&lim, &cap, false, &s), EINVAL);
}

/* UD: the 32-byte AV after the header takes room from SGEs and inline. */
static void provider_sq_shapes_ud(void)
{
    struct ibv_qp_cap cap = { .max_send_wr = 16, .max_send_sge = 2 };
    struct softhca_wq_shape s;

    CHECK_EQ(softhca_sq_shape(&lim, &cap, true, &s), 0);
    CHECK_EQ(s.log_size, 5);
    CHECK_EQ(s.wqe_shift, 7);           /* 64 + 32 + 2 * 16 = 128 */
    CHECK_EQ(cap.max_send_sge, 2);
    CHECK_EQ(cap.max_inline_data, 32);

    cap = (struct ibv_qp_cap){ .max_send_wr = 16, .max_send_sge = 3 };
    CHECK_EQ(softhca_sq_shape(&lim, &cap, true, &s), 0);
    CHECK_EQ(s.wqe_shift, 8);           /* 144 */
    CHECK_EQ(cap.max_send_sge, 10);     /* (256 - 96) / 16 */
    CHECK_EQ(cap.max_inline_data, 160);

    cap = (struct ibv_qp_cap){ .max_send_wr = 1, .max_inline_data = 256 };
    CHECK_EQ(softhca_sq_shape(&lim, &cap, true, &s), 0);
    CHECK_EQ(s.wqe_shift, 9);           /* 96 + 256 = 352 */
    CHECK_EQ(cap.max_inline_data, 256);

    /* The smallest stride has no room for an SGE once the AV is in. */
    cap = (struct ibv_qp_cap){ .max_send_wr = 1 };
    CHECK_EQ(softhca_sq_shape(&lim, &cap, true, &s), 0);
    CHECK_EQ(s.wqe_shift, 7);           /* 96 > 64 */
    CHECK_EQ(cap.max_send_sge, 2);
}

static void provider_rq_shapes(void)
{
    struct ibv_qp_cap cap = { .max_recv_wr = 500, .max_recv_sge = 1 };
    struct softhca_wq_shape s;

    CHECK_EQ(softhca_rq_shape(&lim, &cap, &s), 0);
    CHECK_EQ(s.log_size, 9);
    CHECK_EQ(s.wqe_shift, 5);           /* 16 + 16 */
    CHECK_EQ(cap.max_recv_wr, 512);
    CHECK_EQ(cap.max_recv_sge, 1);

    cap = (struct ibv_qp_cap){ .max_recv_wr = 4, .max_recv_sge = 0 };
    CHECK_EQ(softhca_rq_shape(&lim, &cap, &s), 0);
    CHECK_EQ(s.wqe_shift, 4);

    cap = (struct ibv_qp_cap){ .max_recv_wr = 0, .max_recv_sge = 3 };
    CHECK_EQ(softhca_rq_shape(&lim, &cap, &s), 0);
    CHECK_EQ(s.log_size, 0);
    CHECK_EQ(s.wqe_shift, 0);
    CHECK_EQ(cap.max_recv_sge, 0);
}

static void provider_send_wqe_sges(void)
{
    struct softhca_wqe_limits wl = { .max_sge = 4, .max_inline = 64 };
    struct ibv_sge sg[2] = {
        { .addr = 0x1122334455667788ull, .length = 100, .lkey = 0x0101 },
        { .addr = 0x1000, .length = 8, .lkey = 0x0202 },
    };
    struct ibv_send_wr wr = {
        .wr_id = 0xdeadbeefcafef00dull, .sg_list = sg, .num_sge = 2,
        .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
        .send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED,
        .imm_data = htonl(0x11223344),
        .wr.rdma = { .remote_addr = 0xabcdef00ull, .rkey = 0x4321 },
    };
    uint8_t slot[128];
    const uint8_t *imm = slot + 12;

    memset(slot, 0xa5, sizeof(slot));
    CHECK_EQ(softhca_build_send_wqe(slot, &wr, &wl), 0);
    CHECK_EQ(le(slot, 0, 8), 0xdeadbeefcafef00dull);
    CHECK_EQ(slot[8], SHCA_WR_RDMA_WRITE_IMM);
    CHECK_EQ(slot[9], SHCA_WQE_SIGNALED | SHCA_WQE_SOLICITED);
    CHECK_EQ(slot[10], 2);
    CHECK_EQ(slot[11], 0);
    CHECK(imm[0] == 0x11 && imm[1] == 0x22 && imm[2] == 0x33 &&
          imm[3] == 0x44);              /* as on the wire */
    CHECK_EQ(le(slot, 16, 8), 0xabcdef00ull);
    CHECK_EQ(le(slot, 24, 4), 0x4321);
    CHECK_EQ(le(slot, 28, 4), 0);       /* inline_len */
    CHECK_EQ(le(slot, 32, 8), 0);
    CHECK_EQ(le(slot, 48, 8), 0);       /* UD fields, reserved */
    CHECK_EQ(le(slot, 56, 8), 0);
    CHECK_EQ(le(slot, 64, 8), 0x1122334455667788ull);
    CHECK_EQ(le(slot, 72, 4), 100);
    CHECK_EQ(le(slot, 76, 4), 0x0101);
    CHECK_EQ(le(slot, 80, 8), 0x1000);
    CHECK_EQ(le(slot, 88, 4), 8);
    CHECK_EQ(le(slot, 92, 4), 0x0202);

    /* sq_sig_all signals a WQE whose WR does not ask for it. */
    wr.send_flags = IBV_SEND_FENCE;
    wl.sig_all = true;
    CHECK_EQ(softhca_build_send_wqe(slot, &wr, &wl), 0);
    CHECK_EQ(slot[9], SHCA_WQE_SIGNALED | SHCA_WQE_FENCE);
    wl.sig_all = false;
    CHECK_EQ(softhca_build_send_wqe(slot, &wr, &wl), 0);
    CHECK_EQ(slot[9], SHCA_WQE_FENCE);

    wr.num_sge = 5;
    CHECK_EQ(softhca_build_send_wqe(slot, &wr, &wl), EINVAL);
    wr.num_sge = 1;
    /* LOCAL_INV of a window (spec §13.6): the key in imm, no data */
    wr.opcode = IBV_WR_LOCAL_INV;
    wr.invalidate_rkey = 0x4321;
    CHECK_EQ(softhca_build_send_wqe(slot, &wr, &wl), 0);
    CHECK_EQ(slot[8], SHCA_WR_LOCAL_INV);
    CHECK_EQ(le(slot, 12, 4), 0x4321);
    CHECK_EQ(slot[10], 0);
    wr.opcode = IBV_WR_SEND_WITH_INV;
    wr.invalidate_rkey = 0x12345678;
    CHECK_EQ(softhca_build_send_wqe(slot, &wr, &wl), 0);
    CHECK_EQ(slot[8], SHCA_WR_SEND_INV);
    CHECK_EQ(le(slot, 12, 4), 0x12345678);
    CHECK_EQ(le(slot, 16, 8), 0);       /* no remote address for a send */
}

static void provider_send_wqe_inline(void)
{
    struct softhca_wqe_limits wl = { .max_sge = 1, .max_inline = 16 };
    char a[] = "hello", b[] = " world";
    struct ibv_sge sg[2] = {
        { .addr = (uintptr_t)a, .length = 5, .lkey = 1 },
        { .addr = (uintptr_t)b, .length = 6, .lkey = 2 },
    };
    struct ibv_send_wr wr = {
        .wr_id = 7, .sg_list = sg, .num_sge = 2, .opcode = IBV_WR_SEND,
        .send_flags = IBV_SEND_INLINE,
    };
    uint8_t slot[128];

    memset(slot, 0xa5, sizeof(slot));
    /* More SGEs than the stride holds: inline data does not use them. */
    CHECK_EQ(softhca_build_send_wqe(slot, &wr, &wl), 0);
    CHECK_EQ(slot[8], SHCA_WR_SEND);
    CHECK_EQ(slot[9], SHCA_WQE_INLINE);
    CHECK_EQ(slot[10], 0);
    CHECK_EQ(le(slot, 28, 4), 11);
    CHECK(memcmp(slot + 64, "hello world", 11) == 0);

    sg[1].length = 12;                  /* 17 bytes > 16 */
    CHECK_EQ(softhca_build_send_wqe(slot, &wr, &wl), EINVAL);
    sg[1].length = 6;
    wr.opcode = IBV_WR_RDMA_READ;       /* nothing to send inline */
    CHECK_EQ(softhca_build_send_wqe(slot, &wr, &wl), EINVAL);
}

static void provider_send_wqe_atomic(void)
{
    struct softhca_wqe_limits wl = { .max_sge = 2 };
    struct ibv_sge sg = { .addr = 0x2000, .length = 8, .lkey = 3 };
    struct ibv_send_wr wr = {
        .wr_id = 1, .sg_list = &sg, .num_sge = 1,
        .opcode = IBV_WR_ATOMIC_CMP_AND_SWP,
        .wr.atomic = { .remote_addr = 0x8000, .compare_add = 0x1111,
                       .swap = 0x2222, .rkey = 0x99 },
    };
    uint8_t slot[128];

    CHECK_EQ(softhca_build_send_wqe(slot, &wr, &wl), 0);
    CHECK_EQ(slot[8], SHCA_WR_ATOMIC_CMP_SWP);
    CHECK_EQ(le(slot, 16, 8), 0x8000);
    CHECK_EQ(le(slot, 24, 4), 0x99);
    CHECK_EQ(le(slot, 32, 8), 0x1111);
    CHECK_EQ(le(slot, 40, 8), 0x2222);
    CHECK_EQ(le(slot, 64, 8), 0x2000);

}

/*
 * Atomics of the wrong alignment or size post, as on mlx5: the device
 * completes them with LOC_QP_OP_ERR (spec §15).
 */
static void provider_atomic_bad_size_align_posts(void)
{
    struct softhca_wqe_limits wl = { .max_sge = 2 };
    struct ibv_sge sg[2] = {
        { .addr = 0x2000, .length = 8, .lkey = 3 },
        { .addr = 0x3000, .length = 8, .lkey = 3 },
    };
    struct ibv_send_wr wr = {
        .wr_id = 1, .sg_list = sg, .num_sge = 1,
        .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
        .wr.atomic = { .remote_addr = 0x8004, .compare_add = 1,
                       .rkey = 0x99 },
    };
    uint8_t slot[128];

    CHECK_EQ(softhca_build_send_wqe(slot, &wr, &wl), 0);
    CHECK_EQ(slot[8], SHCA_WR_ATOMIC_FETCH_ADD);
    CHECK_EQ(le(slot, 16, 8), 0x8004);          /* as given */
    wr.wr.atomic.remote_addr = 0x8000;
    wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
    sg[0].length = 4;
    CHECK_EQ(softhca_build_send_wqe(slot, &wr, &wl), 0);
    CHECK_EQ(le(slot, 72, 4), 4);               /* the SGE as given */
    sg[0].length = 8;
    wr.num_sge = 2;
    CHECK_EQ(softhca_build_send_wqe(slot, &wr, &wl), 0);
    CHECK_EQ(slot[10], 2);
    wr.num_sge = 0;
    CHECK_EQ(softhca_build_send_wqe(slot, &wr, &wl), 0);
    CHECK_EQ(slot[10], 0);
}

static const uint8_t gid_v4[16] = {
    [10] = 0xff, [11] = 0xff, [12] = 10, [13] = 0, [14] = 0, [15] = 2,
};
static const uint8_t mac2[6] = { 0x52, 0x54, 0x00, 0x00, 0x00, 0x02 };

static void provider_av(void)
{
    struct ibv_ah_attr attr = {
        .is_global = 1, .port_num = 1, .sl = 3, .dlid = 7,
        .grh = { .flow_label = 0xfff12345, .sgid_index = 5, .hop_limit = 64,
                 .traffic_class = 0x28 },
    };
    uint8_t av[32];

    memcpy(attr.grh.dgid.raw, gid_v4, 16);
    memset(av, 0xa5, sizeof(av));
    CHECK_EQ(softhca_av_init((struct shca_av *)av, &attr, mac2), 0);
    CHECK(memcmp(av, gid_v4, 16) == 0);
    CHECK(memcmp(av + 16, mac2, 6) == 0);
    CHECK_EQ(av[22], 64);                       /* hop_limit */
    CHECK_EQ(av[23], 0x28);                     /* traffic_class */
    CHECK_EQ(le(av, 24, 4), 0x12345);           /* 20-bit flow label */
    CHECK_EQ(le(av, 28, 2), 5);                 /* sgid_index */
    CHECK_EQ(le(av, 30, 2), 0);                 /* udp_sport: the device's */

    attr.is_global = 0;                         /* RoCE needs a GRH */
    CHECK_EQ(softhca_av_init((struct shca_av *)av, &attr, mac2), EINVAL);
}

/* A UD send WQE: header, the AH's AV at 64, then SGEs or inline data. */
static void provider_send_wqe_ud(void)
{
    struct softhca_wqe_limits wl = { .max_sge = 2, .max_inline = 32,
                                     .dgram = true };
    struct ibv_ah_attr attr = {
        .is_global = 1, .port_num = 1,
        .grh = { .sgid_index = 1, .hop_limit = 1, .flow_label = 9 },
    };
    struct softhca_ah ah;
    struct ibv_sge sg = { .addr = 0x4000, .length = 1024, .lkey = 0x77 };
    struct ibv_send_wr wr = {
        .wr_id = 0x55, .sg_list = &sg, .num_sge = 1,
        .opcode = IBV_WR_SEND_WITH_IMM, .send_flags = IBV_SEND_SIGNALED,
        .imm_data = htonl(0xa1b2c3d4),
        .wr.ud = { .ah = &ah.ibvah, .remote_qpn = 0x123456,
                   .remote_qkey = 0x11111111 },
    };
    uint8_t slot[256];
    char msg[] = "datagram";

    memcpy(attr.grh.dgid.raw, gid_v4, 16);
    CHECK_EQ(softhca_av_init(&ah.av, &attr, mac2), 0);
    memset(slot, 0xa5, sizeof(slot));
    CHECK_EQ(softhca_build_send_wqe(slot, &wr, &wl), 0);
    CHECK_EQ(le(slot, 0, 8), 0x55);
    CHECK_EQ(slot[8], SHCA_WR_SEND_IMM);
    CHECK_EQ(slot[9], SHCA_WQE_SIGNALED);
    CHECK_EQ(slot[10], 1);
    CHECK(slot[12] == 0xa1 && slot[13] == 0xb2 && slot[14] == 0xc3 &&
          slot[15] == 0xd4);
    CHECK_EQ(le(slot, 16, 8), 0);       /* no remote address */
    CHECK_EQ(le(slot, 24, 4), 0);
    CHECK_EQ(le(slot, 48, 4), 0x123456);        /* remote_qpn */
    CHECK_EQ(le(slot, 52, 4), 0x11111111);      /* remote_qkey */
    CHECK_EQ(le(slot, 56, 8), 0);
    CHECK(memcmp(slot + 64, gid_v4, 16) == 0);  /* the AV */
    CHECK(memcmp(slot + 80, mac2, 6) == 0);
    CHECK_EQ(slot[86], 1);
    CHECK_EQ(slot[87], 0);
    CHECK_EQ(le(slot, 88, 4), 9);
    CHECK_EQ(le(slot, 92, 2), 1);
    CHECK_EQ(le(slot, 94, 2), 0);
    CHECK_EQ(le(slot, 96, 8), 0x4000);          /* the SGE after the AV */
    CHECK_EQ(le(slot, 104, 4), 1024);
    CHECK_EQ(le(slot, 108, 4), 0x77);

    /* Inline data follows the AV; bit 31 of the Q_Key: the QP's own. */
    sg.addr = (uintptr_t)msg;
    sg.length = sizeof(msg);
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_INLINE;
    wr.wr.ud.remote_qkey = 0x80000000;
    wr.wr.ud.remote_qpn = SHCA_MCAST_QPN;
    memset(slot, 0xa5, sizeof(slot));
    CHECK_EQ(softhca_build_send_wqe(slot, &wr, &wl), 0);
    CHECK_EQ(slot[8], SHCA_WR_SEND);
    CHECK_EQ(slot[9], SHCA_WQE_INLINE);
    CHECK_EQ(slot[10], 0);
    CHECK_EQ(le(slot, 28, 4), sizeof(msg));
    CHECK_EQ(le(slot, 48, 4), 0xffffff);
    CHECK_EQ(le(slot, 52, 4), 0x80000000);
    CHECK(memcmp(slot + 64, gid_v4, 16) == 0);
    CHECK(memcmp(slot + 96, msg, sizeof(msg)) == 0);

    /* Datagrams are sends through an AH. */
    wr.send_flags = 0;
    wr.opcode = IBV_WR_RDMA_WRITE;
    CHECK_EQ(softhca_build_send_wqe(slot, &wr, &wl), EINVAL);
    wr.opcode = IBV_WR_SEND_WITH_INV;
    CHECK_EQ(softhca_build_send_wqe(slot, &wr, &wl), EINVAL);
    wr.opcode = IBV_WR_SEND;
    wr.wr.ud.ah = NULL;
    CHECK_EQ(softhca_build_send_wqe(slot, &wr, &wl), EINVAL);
    wr.wr.ud.ah = &ah.ibvah;
    wr.num_sge = 3;
    CHECK_EQ(softhca_build_send_wqe(slot, &wr, &wl), EINVAL);
    wr.num_sge = 1;
    CHECK_EQ(softhca_build_send_wqe(slot, &wr, &wl), 0);
}

static void provider_recv_wqe(void)
{
    struct softhca_wqe_limits wl = { .max_sge = 2 };
    struct ibv_sge sg = { .addr = 0x3000, .length = 4096, .lkey = 0x55 };
    struct ibv_recv_wr wr = { .wr_id = 42, .sg_list = &sg, .num_sge = 1 };
    uint8_t slot[64];

    memset(slot, 0xa5, sizeof(slot));
    CHECK_EQ(softhca_build_recv_wqe(slot, &wr, &wl), 0);
    CHECK_EQ(le(slot, 0, 8), 42);
    CHECK_EQ(slot[8], 1);
    CHECK_EQ(le(slot, 9, 7), 0);
    CHECK_EQ(le(slot, 16, 8), 0x3000);
    CHECK_EQ(le(slot, 24, 4), 4096);
    CHECK_EQ(le(slot, 28, 4), 0x55);
    wr.num_sge = 3;
    CHECK_EQ(softhca_build_recv_wqe(slot, &wr, &wl), EINVAL);
}

static void provider_cqe_to_wc(void)
{
    uint8_t cqe[SHCA_CQE_SIZE] = { 0 };
    struct ibv_wc wc;

    put_le(cqe, 0, 0x0123456789abcdefull, 8);
    put_le(cqe, 8, 1000, 4);
    cqe[12] = 0xaa, cqe[13] = 0xbb, cqe[14] = 0xcc, cqe[15] = 0xdd;
    put_le(cqe, 16, 17, 4);
    put_le(cqe, 20, 18, 4);
    put_le(cqe, 24, 3, 2);
    cqe[26] = SHCA_CQE_SUCCESS;
    cqe[27] = SHCA_CQE_OP_RECV_RDMA_IMM;
    cqe[28] = SHCA_CQE_WITH_IMM;
    cqe[31] = 1;
    softhca_cqe_to_wc((const struct shca_cqe *)cqe, &wc);
    CHECK_EQ(wc.wr_id, 0x0123456789abcdefull);
    CHECK_EQ(wc.status, IBV_WC_SUCCESS);
    CHECK_EQ(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
    CHECK_EQ(wc.byte_len, 1000);
    CHECK_EQ(wc.qp_num, 17);
    CHECK_EQ(wc.src_qp, 18);
    CHECK_EQ(wc.wc_flags, IBV_WC_WITH_IMM);
    CHECK_EQ(ntohl(wc.imm_data), 0xaabbccdd);   /* network order kept */
    CHECK(softhca_cqe_is_recv((const struct shca_cqe *)cqe));

    cqe[26] = SHCA_CQE_WR_FLUSH_ERR;
    cqe[27] = SHCA_CQE_OP_RDMA_READ;
    cqe[28] = 0;
    cqe[29] = 0x42;
    softhca_cqe_to_wc((const struct shca_cqe *)cqe, &wc);
    CHECK_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
    CHECK_EQ(wc.opcode, IBV_WC_RDMA_READ);
    CHECK_EQ(wc.vendor_err, 0x42);
    CHECK_EQ(wc.wc_flags, 0);
    CHECK(!softhca_cqe_is_recv((const struct shca_cqe *)cqe));

    cqe[26] = 0x7f;                     /* unknown */
    cqe[28] = SHCA_CQE_WITH_INV;
    put_le(cqe, 12, 0x1234, 4);
    softhca_cqe_to_wc((const struct shca_cqe *)cqe, &wc);
    CHECK_EQ(wc.status, IBV_WC_GENERAL_ERR);
    CHECK_EQ(wc.wc_flags, IBV_WC_WITH_INV);
    CHECK_EQ(wc.invalidated_rkey, 0x1234);
}

/*
 * Bug: successful BIND_MW and LOCAL_INV completions reached the
 * application as IBV_WC_SEND.  Every send-side CQE opcode maps to its own.
 */
static void provider_cqe_opcode_bind_mw_local_inv(void)
{
    static const struct {
        uint8_t cqe;
        enum ibv_wc_opcode wc;
    } ops[] = {
        { SHCA_CQE_OP_SEND, IBV_WC_SEND },
        { SHCA_CQE_OP_RDMA_WRITE, IBV_WC_RDMA_WRITE },
        { SHCA_CQE_OP_RDMA_READ, IBV_WC_RDMA_READ },
        { SHCA_CQE_OP_COMP_SWAP, IBV_WC_COMP_SWAP },
        { SHCA_CQE_OP_FETCH_ADD, IBV_WC_FETCH_ADD },
        { SHCA_CQE_OP_BIND_MW, IBV_WC_BIND_MW },
        { SHCA_CQE_OP_LOCAL_INV, IBV_WC_LOCAL_INV },
        { SHCA_CQE_OP_FLUSH, IBV_WC_FLUSH },
        { SHCA_CQE_OP_ATOMIC_WRITE, IBV_WC_ATOMIC_WRITE },
    };
    uint8_t cqe[SHCA_CQE_SIZE] = { 0 };
    struct ibv_wc wc;

    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        cqe[27] = ops[i].cqe;
        softhca_cqe_to_wc((const struct shca_cqe *)cqe, &wc);
        CHECK_EQ(wc.opcode, ops[i].wc);
    }
}

/*
 * Issue 25: a bind refused for the MR's rights (MW_BIND_ERR from the
 * device) reached the application as IBV_WC_GENERAL_ERR.  Every status
 * of enum shca_cqe_status maps to its own.
 */
static void provider_cqe_status_mw_bind_err(void)
{
    static const struct {
        uint8_t cqe;
        enum ibv_wc_status wc;
    } st[] = {
        { SHCA_CQE_SUCCESS, IBV_WC_SUCCESS },
        { SHCA_CQE_LOC_LEN_ERR, IBV_WC_LOC_LEN_ERR },
        { SHCA_CQE_LOC_QP_OP_ERR, IBV_WC_LOC_QP_OP_ERR },
        { SHCA_CQE_LOC_PROT_ERR, IBV_WC_LOC_PROT_ERR },
        { SHCA_CQE_WR_FLUSH_ERR, IBV_WC_WR_FLUSH_ERR },
        { SHCA_CQE_MW_BIND_ERR, IBV_WC_MW_BIND_ERR },
        { SHCA_CQE_BAD_RESP_ERR, IBV_WC_BAD_RESP_ERR },
        { SHCA_CQE_LOC_ACCESS_ERR, IBV_WC_LOC_ACCESS_ERR },
        { SHCA_CQE_REM_INV_REQ_ERR, IBV_WC_REM_INV_REQ_ERR },
        { SHCA_CQE_REM_ACCESS_ERR, IBV_WC_REM_ACCESS_ERR },
        { SHCA_CQE_REM_OP_ERR, IBV_WC_REM_OP_ERR },
        { SHCA_CQE_RETRY_EXC_ERR, IBV_WC_RETRY_EXC_ERR },
        { SHCA_CQE_RNR_RETRY_EXC_ERR, IBV_WC_RNR_RETRY_EXC_ERR },
        { SHCA_CQE_GENERAL_ERR, IBV_WC_GENERAL_ERR },
    };
    uint8_t cqe[SHCA_CQE_SIZE] = { 0 };
    struct ibv_wc wc;

    for (size_t i = 0; i < sizeof(st) / sizeof(st[0]); i++) {
        cqe[26] = st[i].cqe;
        softhca_cqe_to_wc((const struct shca_cqe *)cqe, &wc);
        CHECK_EQ(wc.status, st[i].wc);
    }
}

/* A UD receive: source QP, GRH, immediate; no SL, LID or P_Key index. */
static void provider_cqe_to_wc_ud(void)
{
    uint8_t cqe[SHCA_CQE_SIZE] = { 0 };
    struct ibv_wc wc;

    memset(&wc, 0xa5, sizeof(wc));
    put_le(cqe, 0, 9, 8);
    put_le(cqe, 8, 40 + 512, 4);
    cqe[12] = 0x01, cqe[13] = 0x02, cqe[14] = 0x03, cqe[15] = 0x04;
    put_le(cqe, 16, 33, 4);
    put_le(cqe, 20, 0xabcdef, 4);
    cqe[27] = SHCA_CQE_OP_RECV;
    cqe[28] = SHCA_CQE_GRH | SHCA_CQE_IPV4 | SHCA_CQE_WITH_IMM;
    cqe[31] = 1;
    softhca_cqe_to_wc((const struct shca_cqe *)cqe, &wc);
    CHECK_EQ(wc.status, IBV_WC_SUCCESS);
    CHECK_EQ(wc.opcode, IBV_WC_RECV);
    CHECK_EQ(wc.byte_len, 552);                 /* GRH included */
    CHECK_EQ(wc.qp_num, 33);
    CHECK_EQ(wc.src_qp, 0xabcdef);
    CHECK_EQ(wc.wc_flags, IBV_WC_GRH | IBV_WC_WITH_IMM);
    CHECK_EQ(ntohl(wc.imm_data), 0x01020304);
    CHECK_EQ(wc.sl, 2);                         /* IPv4, as mlx5 says it */
    CHECK_EQ(wc.slid, 0);
    CHECK_EQ(wc.dlid_path_bits, 0);
    CHECK_EQ(wc.pkey_index, 0);
}

/* Ownership by phase: 1 on the first pass over the ring, 0 on the next. */
static void provider_cqe_phase(void)
{
    struct shca_cqe ring[4];

    memset(ring, 0, sizeof(ring));
    CHECK(!softhca_owned_cqe(ring, 0, 2));
    ring[0].phase = 1;
    CHECK(softhca_owned_cqe(ring, 0, 2) == &ring[0]);
    CHECK(!softhca_owned_cqe(ring, 4, 2));      /* second pass wants 0 */
    ring[0].phase = 0;
    CHECK(softhca_owned_cqe(ring, 4, 2) == &ring[0]);
    ring[3].phase = 1;
    CHECK(softhca_owned_cqe(ring, 0xffffffffu, 2) == NULL);
    CHECK(softhca_owned_cqe(ring, 3, 2) == &ring[3]);
}

static void provider_wq_counts(void)
{
    CHECK_EQ(softhca_wq_consumed(0, 0, 3), 1);
    CHECK_EQ(softhca_wq_consumed(5, 7, 3), 8); /* frees unsignaled 5, 6 */
    CHECK_EQ(softhca_wq_consumed(14, 1, 3), 18); /* slots 6, 7, 0, 1 */
    CHECK_EQ(softhca_wq_consumed(0xfffffffeu, 0x3fff, 14), 0); /* wraps */
    CHECK_EQ(softhca_wq_doorbell(0x12345, 7), 0x23450007u);
    CHECK_EQ(softhca_wq_doorbell(3, 0x10002), 0x00030002u);
}

/*
 * A QP without a kernel: an SQ of 8 slots of 128 bytes, a context whose
 * doorbell page is memory, the ibv_wr_* calls of send_ops.
 */
#define FAKE_QPN 5
#define FAKE_SQ_LOG 3
#define FAKE_SQ_SHIFT 7

struct fake_qp {
    struct softhca_context ctx;
    uint32_t db[SHCA_DB_PAGE_SIZE / 4];
    struct shca_sq_record record;
    struct softhca_qp qp;
    uint8_t ring[(1 << FAKE_SQ_LOG) << FAKE_SQ_SHIFT];
};

/* A device with CAPS.ATOMIC_WRITE and CAPS.FLUSH, and one without. */
static const struct softhca_limits aw_flush_lim = {
    .rc_send_ops = IBV_QP_EX_WITH_ATOMIC_WRITE | IBV_QP_EX_WITH_FLUSH,
};
static const struct softhca_limits no_aw_flush_lim;

static struct ibv_qp_ex *fake_qp_init(struct fake_qp *f,
                                      enum ibv_qp_type type,
                                      uint64_t send_ops)
{
    struct ibv_qp_init_attr_ex attr = {
        .qp_type = type, .comp_mask = IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
        .send_ops_flags = send_ops,
    };
    bool dgram = type == IBV_QPT_UD;

    memset(f, 0, sizeof(*f));
    memset(f->ring, 0xa5, sizeof(f->ring));
    f->ctx.db = f->db;
    f->qp.vqp.qp.context = &f->ctx.ibvctx.context;
    f->qp.vqp.qp.qp_num = FAKE_QPN;
    f->qp.vqp.qp.qp_type = type;
    f->qp.vqp.qp.state = IBV_QPS_RTS;
    f->qp.sq.buf.addr = f->ring;
    f->qp.sq.buf.size = sizeof(f->ring);
    f->qp.sq.shape = (struct softhca_wq_shape){ FAKE_SQ_LOG, FAKE_SQ_SHIFT };
    /* what softhca_sq_shape() gives a 128-byte stride */
    f->qp.sq.lim = (struct softhca_wqe_limits){
        .max_sge = dgram ? 2 : 4, .max_inline = dgram ? 32 : 64,
        .dgram = dgram, .xrc = type == IBV_QPT_XRC_SEND,
    };
    pthread_spin_init(&f->qp.sq.lock, PTHREAD_PROCESS_PRIVATE);
    CHECK_EQ(softhca_qp_ex_init(&f->qp, &attr, &aw_flush_lim), 0);
    return &f->qp.vqp.qp_ex;
}

/* Post wr with post_send; 0 or its error, bad_wr checked. */
static int fake_post(struct fake_qp *f, struct ibv_send_wr *wr)
{
    struct ibv_send_wr *bad = NULL;
    int err = softhca_post_send(&f->qp.vqp.qp, wr, &bad);

    CHECK(err ? bad != NULL : bad == NULL);
    return err;
}

static void wr_begin(struct ibv_qp_ex *qx, uint64_t wr_id, unsigned int flags)
{
    qx->wr_id = wr_id;
    qx->wr_flags = flags;
}

#define RC_ALL_OPS                                                      \
    (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |               \
     IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_RDMA_WRITE |         \
     IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ |    \
     IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |                                \
     IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_BIND_MW |     \
     IBV_QP_EX_WITH_LOCAL_INV)

/* Every RC opcode: the same bytes in every slot, one doorbell for all. */
static void provider_wr_same_wqes_rc(void)
{
    static struct fake_qp a, b;
    struct ibv_qp_ex *qx;
    char hello[] = "hello", world[] = " world";
    struct ibv_sge sg[3] = {
        { .addr = 0x1122334455667788ull, .length = 100, .lkey = 0x0101 },
        { .addr = 0x1000, .length = 8, .lkey = 0x0202 },
        { .addr = 0x2000, .length = 0, .lkey = 0x0303 },
    };
    struct ibv_sge inl[2] = {
        { .addr = (uintptr_t)hello, .length = 5 },
        { .addr = (uintptr_t)world, .length = 6 },
    };
    struct ibv_data_buf bufs[2] = { { hello, 5 }, { world, 6 } };
    struct ibv_send_wr wr[8] = {
        { .wr_id = 0x10, .sg_list = sg, .num_sge = 2,
          .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED },
        { .wr_id = 0x11, .sg_list = inl, .num_sge = 2,
          .opcode = IBV_WR_SEND_WITH_IMM,
          .send_flags = IBV_SEND_SOLICITED | IBV_SEND_INLINE,
          .imm_data = htonl(0x11223344) },
        { .wr_id = 0x12, .sg_list = &sg[1], .num_sge = 1,
          .opcode = IBV_WR_SEND_WITH_INV, .send_flags = IBV_SEND_FENCE,
          .invalidate_rkey = 0x12345678 },
        { .wr_id = 0x13, .opcode = IBV_WR_RDMA_WRITE,
          .wr.rdma = { .remote_addr = 0xabcdef00ull, .rkey = 0x4321 } },
        { .wr_id = 0x14, .sg_list = &sg[2], .num_sge = 1,
          .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
          .imm_data = htonl(0xa1b2c3d4),
          .wr.rdma = { .remote_addr = 0x8000, .rkey = 0x99 } },
        { .wr_id = 0x15, .sg_list = sg, .num_sge = 3,
          .opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED,
          .wr.rdma = { .remote_addr = 0x9000, .rkey = 0x98 } },
        { .wr_id = 0x16, .sg_list = &sg[1], .num_sge = 1,
          .opcode = IBV_WR_ATOMIC_CMP_AND_SWP,
          .wr.atomic = { .remote_addr = 0x8008, .compare_add = 0x1111,
                         .swap = 0x2222, .rkey = 0x97 } },
        { .wr_id = 0x17, .sg_list = &sg[1], .num_sge = 1,
          .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
          .wr.atomic = { .remote_addr = 0x8010, .compare_add = 3,
                         .rkey = 0x96 } },
    };

    for (int i = 0; i < 7; i++) {
        wr[i].next = &wr[i + 1];
    }
    fake_qp_init(&a, IBV_QPT_RC, RC_ALL_OPS);
    CHECK_EQ(fake_post(&a, wr), 0);

    qx = fake_qp_init(&b, IBV_QPT_RC, RC_ALL_OPS);
    ibv_wr_start(qx);
    wr_begin(qx, 0x10, IBV_SEND_SIGNALED);
    ibv_wr_send(qx);
    ibv_wr_set_sge_list(qx, 2, sg);
    wr_begin(qx, 0x11, IBV_SEND_SOLICITED);     /* inline by the setter */
    ibv_wr_send_imm(qx, htonl(0x11223344));
    ibv_wr_set_inline_data_list(qx, 2, bufs);
    wr_begin(qx, 0x12, IBV_SEND_FENCE);
    ibv_wr_send_inv(qx, 0x12345678);
    ibv_wr_set_sge(qx, sg[1].lkey, sg[1].addr, sg[1].length);
    wr_begin(qx, 0x13, 0);
    ibv_wr_rdma_write(qx, 0x4321, 0xabcdef00ull);
    ibv_wr_set_sge_list(qx, 0, NULL);
    wr_begin(qx, 0x14, 0);
    ibv_wr_rdma_write_imm(qx, 0x99, 0x8000, htonl(0xa1b2c3d4));
    ibv_wr_set_sge(qx, sg[2].lkey, sg[2].addr, 0);
    wr_begin(qx, 0x15, IBV_SEND_SIGNALED);
    ibv_wr_rdma_read(qx, 0x98, 0x9000);
    ibv_wr_set_sge_list(qx, 3, sg);
    wr_begin(qx, 0x16, 0);
    ibv_wr_atomic_cmp_swp(qx, 0x97, 0x8008, 0x1111, 0x2222);
    ibv_wr_set_sge(qx, sg[1].lkey, sg[1].addr, 8);
    wr_begin(qx, 0x17, 0);
    ibv_wr_atomic_fetch_add(qx, 0x96, 0x8010, 3);
    ibv_wr_set_sge(qx, sg[1].lkey, sg[1].addr, 8);
    CHECK_EQ(ibv_wr_complete(qx), 0);

    CHECK(memcmp(a.ring, b.ring, sizeof(a.ring)) == 0);
    CHECK_EQ(a.qp.sq.pi, 8);
    CHECK_EQ(b.qp.sq.pi, 8);
    CHECK_EQ(a.db[SHCA_DB_SQ / 4], softhca_wq_doorbell(8, FAKE_QPN));
    CHECK_EQ(b.db[SHCA_DB_SQ / 4], softhca_wq_doorbell(8, FAKE_QPN));
    /* spot checks that the bytes compared are the WQEs */
    CHECK_EQ(b.ring[1 << FAKE_SQ_SHIFT | 9], SHCA_WQE_SOLICITED |
                                             SHCA_WQE_INLINE);
    CHECK(memcmp(b.ring + (1 << FAKE_SQ_SHIFT) + 64, "hello world", 11) ==
          0);
    CHECK_EQ(le(b.ring, 6 << FAKE_SQ_SHIFT | 40, 8), 0x2222);
    CHECK_EQ(le(b.ring, 7 << FAKE_SQ_SHIFT | 32, 8), 3);
}

/* UD: the AV and destination, before or after the data. */
static void provider_wr_same_wqes_ud(void)
{
    static struct fake_qp a, b;
    struct ibv_ah_attr attr = {
        .is_global = 1, .port_num = 1,
        .grh = { .sgid_index = 1, .hop_limit = 1, .flow_label = 9 },
    };
    struct softhca_ah ah;
    char msg[] = "datagram";
    struct ibv_sge sg[2] = {
        { .addr = 0x4000, .length = 1024, .lkey = 0x77 },
        { .addr = 0x5000, .length = 16, .lkey = 0x78 },
    };
    struct ibv_sge inl = { .addr = (uintptr_t)msg, .length = sizeof(msg) };
    struct ibv_send_wr wr[3] = {
        { .wr_id = 1, .sg_list = sg, .num_sge = 1, .opcode = IBV_WR_SEND,
          .send_flags = IBV_SEND_SIGNALED,
          .wr.ud = { .ah = &ah.ibvah, .remote_qpn = 0x123456,
                     .remote_qkey = 0x11111111 } },
        { .wr_id = 2, .sg_list = &inl, .num_sge = 1,
          .opcode = IBV_WR_SEND_WITH_IMM, .send_flags = IBV_SEND_INLINE,
          .imm_data = htonl(7),
          .wr.ud = { .ah = &ah.ibvah, .remote_qpn = 2,
                     .remote_qkey = 0x80000000 } },
        { .wr_id = 3, .sg_list = sg, .num_sge = 2, .opcode = IBV_WR_SEND,
          .wr.ud = { .ah = &ah.ibvah, .remote_qpn = SHCA_MCAST_QPN,
                     .remote_qkey = 0x22222222 } },
    };
    struct ibv_qp_ex *qx;
    const uint64_t ops = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;

    memcpy(attr.grh.dgid.raw, gid_v4, 16);
    CHECK_EQ(softhca_av_init(&ah.av, &attr, mac2), 0);
    wr[0].next = &wr[1];
    wr[1].next = &wr[2];
    fake_qp_init(&a, IBV_QPT_UD, ops);
    CHECK_EQ(fake_post(&a, wr), 0);

    qx = fake_qp_init(&b, IBV_QPT_UD, ops);
    ibv_wr_start(qx);
    wr_begin(qx, 1, IBV_SEND_SIGNALED);
    ibv_wr_send(qx);
    ibv_wr_set_ud_addr(qx, &ah.ibvah, 0x123456, 0x11111111);
    ibv_wr_set_sge(qx, 0x77, 0x4000, 1024);
    wr_begin(qx, 2, 0);
    ibv_wr_send_imm(qx, htonl(7));
    ibv_wr_set_inline_data(qx, msg, sizeof(msg));
    ibv_wr_set_ud_addr(qx, &ah.ibvah, 2, 0x80000000);
    wr_begin(qx, 3, 0);
    ibv_wr_send(qx);
    ibv_wr_set_sge_list(qx, 2, sg);
    ibv_wr_set_ud_addr(qx, &ah.ibvah, SHCA_MCAST_QPN, 0x22222222);
    CHECK_EQ(ibv_wr_complete(qx), 0);

    CHECK(memcmp(a.ring, b.ring, sizeof(a.ring)) == 0);
    CHECK_EQ(b.db[SHCA_DB_SQ / 4], softhca_wq_doorbell(3, FAKE_QPN));
    CHECK(memcmp(b.ring + 64, gid_v4, 16) == 0);
    CHECK(memcmp(b.ring + (1 << FAKE_SQ_SHIFT) + 96, msg, sizeof(msg)) == 0);

    /* A datagram needs an AH and a 24-bit QPN. */
    ibv_wr_start(qx);
    ibv_wr_send(qx);
    ibv_wr_set_ud_addr(qx, NULL, 2, 1);
    ibv_wr_set_sge(qx, 0x77, 0x4000, 1);
    CHECK_EQ(ibv_wr_complete(qx), EINVAL);
    CHECK_EQ(b.qp.sq.pi, 3);
}

/*
 * A datagram to a QPN no QP has posts, whatever its bits above the 24 the
 * BTH carries: the receiver drops it (spec §17.2), as hardware does.
 */
static void provider_ud_any_qpn_posts(void)
{
    static struct fake_qp f;
    struct ibv_ah_attr attr = {
        .is_global = 1, .port_num = 1, .grh = { .hop_limit = 1 },
    };
    struct softhca_ah ah;
    struct ibv_sge sg = { .addr = 0x4000, .length = 16, .lkey = 0x77 };
    struct ibv_send_wr wr = {
        .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND,
        .wr.ud = { .ah = &ah.ibvah, .remote_qpn = 0x12fedcba,
                   .remote_qkey = 1 },
    };
    struct ibv_qp_ex *qx =
        fake_qp_init(&f, IBV_QPT_UD, IBV_QP_EX_WITH_SEND);

    memcpy(attr.grh.dgid.raw, gid_v4, 16);
    CHECK_EQ(softhca_av_init(&ah.av, &attr, mac2), 0);
    CHECK_EQ(fake_post(&f, &wr), 0);
    CHECK_EQ(le(f.ring, 48, 4), 0xfedcba);
    ibv_wr_start(qx);
    ibv_wr_send(qx);
    ibv_wr_set_ud_addr(qx, &ah.ibvah, 0x1000000, 1);
    ibv_wr_set_sge(qx, 0x77, 0x4000, 16);
    CHECK_EQ(ibv_wr_complete(qx), 0);
    CHECK_EQ(le(f.ring + (1 << FAKE_SQ_SHIFT), 48, 4), 0);
    CHECK_EQ(f.qp.sq.pi, 2);
}

/*
 * XRC send QP (spec §13.7): RC's WQEs, with the target XRC SRQ in
 * remote_qpn; local operations name none.  The same bytes either way.
 */
static void provider_wr_same_wqes_xrc(void)
{
    static struct fake_qp a, b;
    struct ibv_qp_ex *qx;
    struct ibv_sge sg[2] = {
        { .addr = 0x1000, .length = 64, .lkey = 0x0101 },
        { .addr = 0x2000, .length = 8, .lkey = 0x0202 },
    };
    struct ibv_send_wr wr[4] = {
        { .wr_id = 1, .sg_list = sg, .num_sge = 1, .opcode = IBV_WR_SEND,
          .send_flags = IBV_SEND_SIGNALED,
          .qp_type.xrc.remote_srqn = 0x123456 },
        { .wr_id = 2, .sg_list = sg, .num_sge = 2,
          .opcode = IBV_WR_RDMA_WRITE_WITH_IMM, .imm_data = htonl(9),
          .wr.rdma = { .remote_addr = 0x8000, .rkey = 0x99 },
          .qp_type.xrc.remote_srqn = 7 },
        { .wr_id = 3, .sg_list = &sg[1], .num_sge = 1,
          .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
          .wr.atomic = { .remote_addr = 0x8010, .compare_add = 3,
                         .rkey = 0x96 },
          .qp_type.xrc.remote_srqn = 0xffffff },
        { .wr_id = 4, .opcode = IBV_WR_LOCAL_INV, .invalidate_rkey = 0x500,
          .qp_type.xrc.remote_srqn = 0x42 },
    };

    for (int i = 0; i < 3; i++) {
        wr[i].next = &wr[i + 1];
    }
    fake_qp_init(&a, IBV_QPT_XRC_SEND, RC_ALL_OPS);
    CHECK_EQ(fake_post(&a, wr), 0);

    qx = fake_qp_init(&b, IBV_QPT_XRC_SEND, RC_ALL_OPS);
    ibv_wr_start(qx);
    wr_begin(qx, 1, IBV_SEND_SIGNALED);
    ibv_wr_send(qx);
    ibv_wr_set_xrc_srqn(qx, 0x123456);
    ibv_wr_set_sge(qx, sg[0].lkey, sg[0].addr, sg[0].length);
    wr_begin(qx, 2, 0);
    ibv_wr_rdma_write_imm(qx, 0x99, 0x8000, htonl(9));
    ibv_wr_set_sge_list(qx, 2, sg);
    ibv_wr_set_xrc_srqn(qx, 7);         /* after the data as well */
    wr_begin(qx, 3, 0);
    ibv_wr_atomic_fetch_add(qx, 0x96, 0x8010, 3);
    ibv_wr_set_xrc_srqn(qx, 0xffffff);
    ibv_wr_set_sge(qx, sg[1].lkey, sg[1].addr, 8);
    wr_begin(qx, 4, 0);
    ibv_wr_local_inv(qx, 0x500);
    ibv_wr_set_xrc_srqn(qx, 0x42);
    CHECK_EQ(ibv_wr_complete(qx), 0);

    CHECK(memcmp(a.ring, b.ring, sizeof(a.ring)) == 0);
    CHECK_EQ(b.db[SHCA_DB_SQ / 4], softhca_wq_doorbell(4, FAKE_QPN));
    CHECK_EQ(le(b.ring, 0 << FAKE_SQ_SHIFT | 48, 4), 0x123456);
    CHECK_EQ(le(b.ring, 1 << FAKE_SQ_SHIFT | 48, 4), 7);
    CHECK_EQ(le(b.ring, 2 << FAKE_SQ_SHIFT | 48, 4), 0xffffff);
    CHECK_EQ(le(b.ring, 3 << FAKE_SQ_SHIFT | 48, 4), 0);
    CHECK_EQ(le(b.ring, 0 << FAKE_SQ_SHIFT | 64, 8), 0x1000); /* no AV */
    CHECK_EQ(le(b.ring, 1 << FAKE_SQ_SHIFT | 16, 8), 0x8000);

    /* The XRCETH carries 24 bits. */
    wr[0].next = NULL;
    wr[0].qp_type.xrc.remote_srqn = 0x1000000;
    CHECK_EQ(fake_post(&a, wr), EINVAL);
    ibv_wr_start(qx);
    ibv_wr_send(qx);
    ibv_wr_set_xrc_srqn(qx, 0x1000000);
    ibv_wr_set_sge(qx, 1, 0x1000, 1);
    CHECK_EQ(ibv_wr_complete(qx), EINVAL);
    CHECK_EQ(a.qp.sq.pi, 4);
    CHECK_EQ(b.qp.sq.pi, 4);
}

/* Build one SEND with an SGE of length len in the open batch. */
static void wr_send_one(struct ibv_qp_ex *qx, uint32_t len)
{
    wr_begin(qx, len, IBV_SEND_SIGNALED);
    ibv_wr_send(qx);
    ibv_wr_set_sge(qx, 1, 0x1000, len);
}

/* The batch: one doorbell at wr_complete, none for an abort or an error. */
static void provider_wr_batch(void)
{
    static struct fake_qp f;
    struct ibv_qp_ex *qx = fake_qp_init(&f, IBV_QPT_RC, RC_ALL_OPS);
    uint32_t *sq_db = &f.db[SHCA_DB_SQ / 4];
    struct ibv_sge sg[5] = { { 0 } };
    char big[65] = { 0 };

    ibv_wr_start(qx);
    wr_send_one(qx, 1);
    ibv_wr_abort(qx);
    CHECK_EQ(f.qp.sq.pi, 0);
    CHECK_EQ(*sq_db, 0);

    ibv_wr_start(qx);
    wr_send_one(qx, 2);
    wr_send_one(qx, 3);
    CHECK_EQ(*sq_db, 0);                /* nothing before wr_complete */
    CHECK_EQ(ibv_wr_complete(qx), 0);
    CHECK_EQ(f.qp.sq.pi, 2);
    CHECK_EQ(*sq_db, softhca_wq_doorbell(2, FAKE_QPN));
    CHECK_EQ(le(f.ring, 1 << FAKE_SQ_SHIFT | 72, 4), 3);

    /* An error anywhere drops the whole batch, the good WQEs too. */
    *sq_db = 0;
    ibv_wr_start(qx);
    wr_send_one(qx, 4);
    ibv_wr_send(qx);
    ibv_wr_set_sge_list(qx, 5, sg);     /* max_sge is 4 */
    wr_send_one(qx, 5);
    CHECK_EQ(ibv_wr_complete(qx), EINVAL);
    ibv_wr_start(qx);
    ibv_wr_rdma_read(qx, 1, 0x8000);
    ibv_wr_set_inline_data(qx, big, 1); /* nothing to send */
    CHECK_EQ(ibv_wr_complete(qx), EINVAL);
    ibv_wr_start(qx);
    ibv_wr_send(qx);
    ibv_wr_set_inline_data(qx, big, sizeof(big));   /* max_inline is 64 */
    CHECK_EQ(ibv_wr_complete(qx), EINVAL);
    CHECK_EQ(f.qp.sq.pi, 2);
    CHECK_EQ(*sq_db, 0);

    /* A full ring: ENOMEM, and nothing of the batch is posted. */
    ibv_wr_start(qx);
    for (int i = 0; i < 7; i++) {
        wr_send_one(qx, i);
    }
    CHECK_EQ(ibv_wr_complete(qx), ENOMEM);
    CHECK_EQ(f.qp.sq.pi, 2);
    ibv_wr_start(qx);
    for (int i = 0; i < 6; i++) {
        wr_send_one(qx, i);
    }
    CHECK_EQ(ibv_wr_complete(qx), 0);
    CHECK_EQ(f.qp.sq.pi, 8);
    CHECK_EQ(*sq_db, softhca_wq_doorbell(8, FAKE_QPN));

    /* The device polls the SQ record: pi there, no doorbell (spec §14). */
    atomic_store(&f.qp.sq.ci, 8);
    f.qp.sq.record = &f.record;
    f.record.device = htole32(SHCA_SQ_RECORD_POLLING);
    *sq_db = 0;
    ibv_wr_start(qx);
    wr_send_one(qx, 1);
    CHECK_EQ(ibv_wr_complete(qx), 0);
    CHECK_EQ(le32toh(f.record.pi), 9);
    CHECK_EQ(*sq_db, 0);
    f.record.device = 0;
    ibv_wr_start(qx);
    wr_send_one(qx, 1);
    CHECK_EQ(ibv_wr_complete(qx), 0);
    CHECK_EQ(le32toh(f.record.pi), 10);
    CHECK_EQ(*sq_db, softhca_wq_doorbell(10, FAKE_QPN));

    /* IBA: no sends before RTS, by either API. */
    f.qp.vqp.qp.state = IBV_QPS_RTR;
    ibv_wr_start(qx);
    wr_send_one(qx, 1);
    CHECK_EQ(ibv_wr_complete(qx), EINVAL);
    CHECK_EQ(f.qp.sq.pi, 10);
}

/* BIND_MW (spec §13.6): struct shca_bind_mw_wqe, field by field. */
static void provider_bind_mw_wqe(void)
{
    uint8_t slot[128];
    struct ibv_mw mw = { .rkey = 0x500 };
    struct ibv_mr mr = { .lkey = 0x700 };
    struct softhca_wqe_limits wl = { .max_sge = 4, .max_inline = 64 };
    struct ibv_send_wr wr = {
        .wr_id = 0x42,
        .opcode = IBV_WR_BIND_MW,
        .send_flags = IBV_SEND_SIGNALED,
        .bind_mw = {
            .mw = &mw,
            .rkey = 0x501,
            .bind_info = {
                .mr = &mr,
                .addr = 0x10000,
                .length = 0x2000,
                /* local write means nothing for a window: ignored */
                .mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
                                   IBV_ACCESS_REMOTE_READ |
                                   IBV_ACCESS_LOCAL_WRITE,
            },
        },
    };

    memset(slot, 0xee, sizeof(slot));
    CHECK_EQ(softhca_build_send_wqe(slot, &wr, &wl), 0);
    CHECK_EQ(le(slot, 0, 8), 0x42);
    CHECK_EQ(slot[8], SHCA_WR_BIND_MW);
    CHECK_EQ(slot[9], SHCA_WQE_SIGNALED);
    CHECK_EQ(le(slot, 12, 4), 0x500);
    CHECK_EQ(le(slot, 16, 4), 0x501);
    CHECK_EQ(le(slot, 20, 4), 0x700);
    CHECK_EQ(le(slot, 24, 4), SHCA_ACCESS_REMOTE_WRITE |
                              SHCA_ACCESS_REMOTE_READ);
    CHECK_EQ(le(slot, 32, 8), 0x10000);
    CHECK_EQ(le(slot, 40, 8), 0x2000);
    /* zero-based windows, a range without an MR, a UD QP: refused */
    wr.bind_mw.bind_info.mw_access_flags |= IBV_ACCESS_ZERO_BASED;
    CHECK_EQ(softhca_build_send_wqe(slot, &wr, &wl), EINVAL);
    wr.bind_mw.bind_info.mw_access_flags = 0;
    wr.bind_mw.bind_info.mr = NULL;
    CHECK_EQ(softhca_build_send_wqe(slot, &wr, &wl), EINVAL);
    wr.bind_mw.bind_info.length = 0;
    wr.bind_mw.bind_info.addr = 0;
    CHECK_EQ(softhca_build_send_wqe(slot, &wr, &wl), 0);  /* type 1 unbind */
    wl.dgram = true;
    CHECK_EQ(softhca_build_send_wqe(slot, &wr, &wl), EINVAL);
}

/* ibv_wr_atomic_write and ibv_wr_flush: spec §15's WQEs, no SGEs. */
static void provider_wr_atomic_write_flush(void)
{
    static struct fake_qp f;
    const uint8_t data[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    struct ibv_qp_ex *qx = fake_qp_init(&f, IBV_QPT_RC,
                                        IBV_QP_EX_WITH_ATOMIC_WRITE |
                                        IBV_QP_EX_WITH_FLUSH);
    const uint8_t *w0 = f.ring, *w1 = f.ring + (1 << FAKE_SQ_SHIFT);

    ibv_wr_start(qx);
    wr_begin(qx, 0x21, IBV_SEND_SIGNALED);
    ibv_wr_atomic_write(qx, 0x55, 0x7008, data);
    wr_begin(qx, 0x22, 0);
    ibv_wr_flush(qx, 0x56, 0x9000, 4096, IBV_FLUSH_GLOBAL, IBV_FLUSH_MR);
    CHECK_EQ(ibv_wr_complete(qx), 0);
    CHECK_EQ(w0[8], SHCA_WR_ATOMIC_WRITE);
    CHECK_EQ(w0[10], 0);                        /* num_sge */
    CHECK_EQ(le(w0, 16, 8), 0x7008);
    CHECK_EQ(le(w0, 24, 4), 0x55);
    CHECK(memcmp(w0 + 32, data, 8) == 0);       /* as they lie in memory */
    CHECK_EQ(w1[8], SHCA_WR_FLUSH);
    CHECK_EQ(w1[11], SHCA_FLUSH_GLOBAL | SHCA_FLUSH_LEVEL_MR);
    CHECK_EQ(le(w1, 16, 8), 0x9000);
    CHECK_EQ(le(w1, 24, 4), 0x56);
    CHECK_EQ(le(w1, 32, 8), 4096);
    CHECK_EQ(f.qp.sq.pi, 2);

    /* no placement type, a level past MR, over 2^31 bytes */
    ibv_wr_start(qx);
    ibv_wr_flush(qx, 0x56, 0x9000, 64, 0, IBV_FLUSH_RANGE);
    CHECK_EQ(ibv_wr_complete(qx), EINVAL);
    ibv_wr_start(qx);
    ibv_wr_flush(qx, 0x56, 0x9000, 64, IBV_FLUSH_GLOBAL, 2);
    CHECK_EQ(ibv_wr_complete(qx), EINVAL);
    ibv_wr_start(qx);
    ibv_wr_flush(qx, 0x56, 0x9000, (1ull << 31) + 1, IBV_FLUSH_PERSISTENT,
                 IBV_FLUSH_RANGE);
    CHECK_EQ(ibv_wr_complete(qx), EINVAL);
    CHECK_EQ(f.qp.sq.pi, 2);

    /* misaligned: posted, for the device to complete with an error */
    ibv_wr_start(qx);
    ibv_wr_atomic_write(qx, 0x55, 0x7004, data);
    CHECK_EQ(ibv_wr_complete(qx), 0);
    CHECK_EQ(f.qp.sq.pi, 3);
}

/* create_qp_ex: the operations the device carries on each QP type. */
static void provider_wr_send_ops(void)
{
    static const struct {
        enum ibv_qp_type type;
        uint64_t ops;
        int err;
    } cases[] = {
        { IBV_QPT_RC, RC_ALL_OPS, 0 },
        { IBV_QPT_UC, IBV_QP_EX_WITH_BIND_MW, EOPNOTSUPP },
        { IBV_QPT_UD, IBV_QP_EX_WITH_LOCAL_INV, EOPNOTSUPP },
        { IBV_QPT_RC, IBV_QP_EX_WITH_ATOMIC_WRITE | IBV_QP_EX_WITH_FLUSH,
          0 },
        { IBV_QPT_UC, IBV_QP_EX_WITH_ATOMIC_WRITE, EOPNOTSUPP },
        { IBV_QPT_UC, IBV_QP_EX_WITH_FLUSH, EOPNOTSUPP },
        { IBV_QPT_RC, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_TSO, EOPNOTSUPP },
        { IBV_QPT_UC, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
                      IBV_QP_EX_WITH_RDMA_WRITE |
                      IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM, 0 },
        { IBV_QPT_UC, IBV_QP_EX_WITH_SEND_WITH_INV, EOPNOTSUPP },
        { IBV_QPT_UC, IBV_QP_EX_WITH_RDMA_READ, EOPNOTSUPP },
        { IBV_QPT_UC, IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD, EOPNOTSUPP },
        { IBV_QPT_UD, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM, 0 },
        { IBV_QPT_UD, IBV_QP_EX_WITH_RDMA_WRITE, EOPNOTSUPP },
        { IBV_QPT_RAW_PACKET, IBV_QP_EX_WITH_SEND, EOPNOTSUPP },
        { IBV_QPT_XRC_SEND, RC_ALL_OPS, 0 },
        { IBV_QPT_XRC_SEND, IBV_QP_EX_WITH_ATOMIC_WRITE, EOPNOTSUPP },
        { IBV_QPT_XRC_RECV, IBV_QP_EX_WITH_SEND, EOPNOTSUPP },
    };
    static struct softhca_qp qp;
    struct ibv_qp_ex *qx = &qp.vqp.qp_ex;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ibv_qp_init_attr_ex attr = {
            .qp_type = cases[i].type,
            .comp_mask = IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
            .send_ops_flags = cases[i].ops,
        };

        memset(&qp, 0, sizeof(qp));
        CHECK_EQ(softhca_qp_ex_init(&qp, &attr, &aw_flush_lim), cases[i].err);
    }
    /* without the device's CAPS bits, RC has neither */
    memset(&qp, 0, sizeof(qp));
    CHECK_EQ(softhca_qp_ex_init(&qp, &(struct ibv_qp_init_attr_ex){
        .qp_type = IBV_QPT_RC, .send_ops_flags = IBV_QP_EX_WITH_FLUSH },
        &no_aw_flush_lim), EOPNOTSUPP);
    CHECK_EQ(softhca_qp_ex_init(&qp, &(struct ibv_qp_init_attr_ex){
        .qp_type = IBV_QPT_RC, .send_ops_flags = IBV_QP_EX_WITH_ATOMIC_WRITE },
        &no_aw_flush_lim), EOPNOTSUPP);

    /* Each operation asked for, and only those; the setters always. */
    memset(&qp, 0, sizeof(qp));
    CHECK_EQ(softhca_qp_ex_init(&qp, &(struct ibv_qp_init_attr_ex){
        .qp_type = IBV_QPT_RC, .send_ops_flags = RC_ALL_OPS },
        &aw_flush_lim), 0);
    CHECK(qx->wr_send && qx->wr_send_imm && qx->wr_send_inv &&
          qx->wr_rdma_write && qx->wr_rdma_write_imm && qx->wr_rdma_read &&
          qx->wr_atomic_cmp_swp && qx->wr_atomic_fetch_add &&
          qx->wr_local_inv && qx->wr_bind_mw);
    CHECK(!qx->wr_atomic_write && !qx->wr_flush && !qx->wr_send_tso &&
          !qx->wr_set_ud_addr && !qx->wr_set_xrc_srqn);
    memset(&qp, 0, sizeof(qp));
    CHECK_EQ(softhca_qp_ex_init(&qp, &(struct ibv_qp_init_attr_ex){
        .qp_type = IBV_QPT_XRC_SEND, .send_ops_flags = IBV_QP_EX_WITH_SEND },
        &aw_flush_lim), 0);
    CHECK(qx->wr_send && qx->wr_set_xrc_srqn && !qx->wr_set_ud_addr);
    memset(&qp, 0, sizeof(qp));
    CHECK_EQ(softhca_qp_ex_init(&qp, &(struct ibv_qp_init_attr_ex){
        .qp_type = IBV_QPT_UD, .send_ops_flags = IBV_QP_EX_WITH_SEND },
        &aw_flush_lim), 0);
    CHECK(qx->wr_send && !qx->wr_send_imm && !qx->wr_rdma_write);
    CHECK(qx->wr_set_ud_addr && qx->wr_set_sge && qx->wr_set_sge_list &&
          qx->wr_set_inline_data && qx->wr_set_inline_data_list &&
          qx->wr_start && qx->wr_complete && qx->wr_abort);
}

int main(void)
{
    RUN(provider_cq_sizes);
    RUN(provider_cq_zero_entries_einval);
    RUN(provider_sq_shapes);
    RUN(provider_sq_shapes_ud);
    RUN(provider_rq_shapes);
    RUN(provider_send_wqe_sges);
    RUN(provider_send_wqe_inline);
    RUN(provider_send_wqe_atomic);
    RUN(provider_atomic_bad_size_align_posts);
    RUN(provider_bind_mw_wqe);
    RUN(provider_av);
    RUN(provider_send_wqe_ud);
    RUN(provider_recv_wqe);
    RUN(provider_cqe_to_wc);
    RUN(provider_cqe_to_wc_ud);
    RUN(provider_cqe_opcode_bind_mw_local_inv);
    RUN(provider_cqe_status_mw_bind_err);
    RUN(provider_wr_atomic_write_flush);
    RUN(provider_cqe_phase);
    RUN(provider_wq_counts);
    RUN(provider_wr_same_wqes_rc);
    RUN(provider_wr_same_wqes_ud);
    RUN(provider_ud_any_qpn_posts);
    RUN(provider_wr_same_wqes_xrc);
    RUN(provider_wr_batch);
    RUN(provider_wr_send_ops);
    return unit_summary();
}
