/*
 * Unit tests of the provider's CQs (guest-provider/softhca_cq.c and
 * softhca_cq_ex.c) on a ring in host memory: what ibv_create_cq_ex()
 * accepts, the accessors it installs, and the start/next/end_poll
 * iterator, which shares the CQE path of poll_cq.  The kernel commands and
 * the ring allocation are stubbed; the device is the test, writing CQEs.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "softhca.h"
#include "unit.h"

#define TEST_CQN 5
#define TEST_QPN 7

/* --- stubs of libibverbs and softhca_verbs.c ---------------------------- */

static struct {
    int calls;
    bool ex;
    uint32_t cqe;
    uint32_t comp_vector;
    struct ibv_comp_channel *channel;
    struct softhca_ibv_create_cq req;
    int resize_err;             /* what RESIZE_CQ answers, if not 0 */
} kernel;

void __verbs_log(struct verbs_context *ctx, uint32_t level,
                 const char *fmt, ...)
{
}

int ibv_cmd_create_cq(struct ibv_context *context, int cqe,
                      struct ibv_comp_channel *channel, int comp_vector,
                      struct ibv_cq *cq, struct ibv_create_cq *cmd,
                      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp,
                      size_t resp_size)
{
    CHECK_EQ(cmd_size, sizeof(struct softhca_create_cq));
    CHECK_EQ(resp_size, sizeof(struct softhca_create_cq_resp));
    kernel.calls++;
    kernel.ex = false;
    kernel.cqe = cqe;
    kernel.comp_vector = comp_vector;
    kernel.channel = channel;
    kernel.req = ((struct softhca_create_cq *)cmd)->drv_payload;
    ((struct softhca_create_cq_resp *)resp)->cqn = TEST_CQN;
    cq->context = context;
    cq->cqe = cqe;
    return 0;
}

int ibv_cmd_create_cq_ex(struct ibv_context *context,
                         const struct ibv_cq_init_attr_ex *cq_attr,
                         struct verbs_cq *cq, struct ibv_create_cq_ex *cmd,
                         size_t cmd_size,
                         struct ib_uverbs_ex_create_cq_resp *resp,
                         size_t resp_size, uint32_t cmd_flags)
{
    CHECK_EQ(cmd_size, sizeof(struct softhca_create_cq_ex));
    CHECK_EQ(resp_size, sizeof(struct softhca_create_cq_ex_resp));
    kernel.calls++;
    kernel.ex = true;
    kernel.cqe = cq_attr->cqe;
    kernel.comp_vector = cq_attr->comp_vector;
    kernel.channel = cq_attr->channel;
    kernel.req = ((struct softhca_create_cq_ex *)cmd)->drv_payload;
    ((struct softhca_create_cq_ex_resp *)resp)->cqn = TEST_CQN;
    cq->cq.context = context;
    cq->cq.cqe = cq_attr->cqe;
    return 0;
}

int ibv_cmd_destroy_cq(struct ibv_cq *cq)
{
    return 0;
}

/*
 * RESIZE_CQ as the device does it (spec §13.1): the CQEs after the
 * record's ci move to the first slots of the new ring, with phase 1.
 */
int ibv_cmd_resize_cq(struct ibv_cq *ibcq, int cqe, struct ibv_resize_cq *cmd,
                      size_t cmd_size, struct ib_uverbs_resize_cq_resp *resp,
                      size_t resp_size)
{
    struct softhca_ibv_create_cq *req =
        &((struct softhca_resize_cq *)cmd)->drv_payload;
    struct softhca_cq *cq = to_scq(ibcq);
    struct shca_cqe *ring = (void *)(uintptr_t)req->buf_addr;
    uint32_t old_mask = (1u << cq->log_size) - 1;
    uint32_t ci = le32toh(cq->record->ci), n = 0;

    CHECK_EQ(cmd_size, sizeof(struct softhca_resize_cq));
    CHECK_EQ(resp_size, sizeof(struct softhca_resize_cq_resp));
    CHECK_EQ(cqe, 1 << req->log_size);
    CHECK(req->buf_size >= (sizeof(*ring) << req->log_size) +
                           sizeof(struct shca_cq_record));
    kernel.calls++;
    if (kernel.resize_err) {
        return kernel.resize_err;
    }
    while ((cq->cqes[(ci + n) & old_mask].phase & SHCA_PHASE_BIT) ==
           !(((ci + n) >> cq->log_size) & 1)) {
        n++;
    }
    if (n > 1u << req->log_size) {
        return EINVAL;
    }
    for (uint32_t k = 0; k < n; k++) {
        ring[k] = cq->cqes[(ci + k) & old_mask];
        ring[k].phase = SHCA_PHASE_BIT;
    }
    ((struct softhca_resize_cq_resp *)resp)->copied = n;
    ibcq->cqe = cqe;
    return 0;
}

int softhca_buf_alloc(struct softhca_buf *buf, size_t size)
{
    buf->size = size;
    buf->addr = calloc(1, size);
    return buf->addr ? 0 : ENOMEM;
}

void softhca_buf_free(struct softhca_buf *buf)
{
    free(buf->addr);
}

/* --- a context with one QP, and the device's side of the ring ----------- */

static struct ibv_device ibdev = { .name = "softhca0" };
static struct ibv_comp_channel channel;
static struct softhca_qp qp;
static struct softhca_qp *qp_table[4];
static struct softhca_context ctx = {
    .ibvctx.context.device = &ibdev,
    .lim = { .max_cqe = 64 },
    .qp_table = qp_table,
    .qp_table_mask = 3,
};

static void add_qp(void)
{
    memset(&qp, 0, sizeof(qp));
    qp.vqp.qp.qp_num = TEST_QPN;
    qp.cap.max_send_wr = 8;
    qp.cap.max_recv_wr = 8;
    qp.sq.shape.log_size = 3;
    qp.rq.shape.log_size = 3;
    qp_table[TEST_QPN & 3] = &qp;
}

/* Write the device's pi-th CQE, with the phase of pi's pass. */
static void put_cqe(struct softhca_cq *cq, uint32_t pi, uint64_t wr_id,
                    uint8_t opcode, uint8_t flags, uint32_t imm,
                    uint16_t wqe_index)
{
    struct shca_cqe *cqe = &cq->cqes[pi & ((1u << cq->log_size) - 1)];

    memset(cqe, 0, offsetof(struct shca_cqe, phase));
    cqe->wr_id = htole64(wr_id);
    cqe->byte_len = htole32(100 + wr_id);
    cqe->imm = imm;
    cqe->qpn = htole32(TEST_QPN);
    cqe->src_qp = htole32(0x123);
    cqe->wqe_index = htole16(wqe_index);
    cqe->opcode = opcode;
    cqe->flags = flags;
    cqe->phase = !((pi >> cq->log_size) & 1);
}

static uint32_t record_ci(struct softhca_cq *cq)
{
    return le32toh(cq->record->ci);
}

static bool held(struct softhca_cq *cq)
{
    if (pthread_spin_trylock(&cq->lock)) {
        return true;
    }
    pthread_spin_unlock(&cq->lock);
    return false;
}

/*
 * The CQ's lock is free, as poll_cq and a batch's end must leave it; if it
 * is not, free it, so that the failure does not hang the tests after it.
 */
static bool unlocked(struct softhca_cq *cq)
{
    if (held(cq)) {
        pthread_spin_unlock(&cq->lock);
        return false;
    }
    return true;
}

static struct ibv_cq_ex *create_ex(uint64_t wc_flags, uint32_t comp_mask,
                                   uint32_t flags)
{
    struct ibv_cq_init_attr_ex attr = {
        .cqe = 4, .channel = &channel, .comp_vector = 1,
        .wc_flags = wc_flags, .comp_mask = comp_mask, .flags = flags,
    };

    errno = 0;
    return softhca_create_cq_ex(&ctx.ibvctx.context, &attr);
}

/* --- tests --------------------------------------------------------------- */

/* What the CQE cannot tell is refused, before the kernel hears of it. */
static void provider_cq_ex_refused(void)
{
    static const struct {
        uint64_t wc_flags;
        uint32_t comp_mask, flags;
    } bad[] = {
        { IBV_WC_EX_WITH_COMPLETION_TIMESTAMP, 0, 0 },
        { IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK, 0, 0 },
        { IBV_WC_EX_WITH_CVLAN, 0, 0 },
        { IBV_WC_EX_WITH_FLOW_TAG, 0, 0 },
        { IBV_WC_EX_WITH_TM_INFO, 0, 0 },
        { IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP, 0, 0 },
        { 0, IBV_CQ_INIT_ATTR_MASK_PD, 0 },
        { 0, 1u << 7, 0 },
        { 0, IBV_CQ_INIT_ATTR_MASK_FLAGS, IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN },
        { 0, IBV_CQ_INIT_ATTR_MASK_FLAGS, 1u << 5 },
    };

    kernel.calls = 0;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CHECK(!create_ex(bad[i].wc_flags, bad[i].comp_mask, bad[i].flags));
        CHECK_EQ(errno, EOPNOTSUPP);
    }
    CHECK_EQ(kernel.calls, 0);
}

/* The extended command with create_cq's driver data and ring. */
static void provider_cq_ex_create(void)
{
    struct ibv_cq_ex *ex;
    struct softhca_cq *cq;

    kernel.calls = 0;
    ex = create_ex(IBV_WC_STANDARD_FLAGS, 0, 0);
    CHECK(ex);
    if (!ex) {
        return;
    }
    cq = to_scq(ibv_cq_ex_to_cq(ex));
    CHECK_EQ(kernel.calls, 1);
    CHECK(kernel.ex);
    CHECK_EQ(kernel.cqe, 8);            /* the ring: 4 + 1 rounded up */
    CHECK(kernel.channel == &channel);
    CHECK_EQ(kernel.comp_vector, 1);
    CHECK_EQ(kernel.req.log_size, 3);
    CHECK_EQ(kernel.req.buf_addr, (uintptr_t)cq->cqes);
    CHECK_EQ(kernel.req.buf_size,
             8 * sizeof(struct shca_cqe) + sizeof(struct shca_cq_record));
    CHECK_EQ(cq->cqn, TEST_CQN);
    CHECK(!cq->single_threaded);
    CHECK(ex->start_poll && ex->next_poll && ex->end_poll);
    CHECK(ex->read_opcode && ex->read_vendor_err && ex->read_wc_flags);
    CHECK(ex->read_byte_len && ex->read_imm_data && ex->read_qp_num &&
          ex->read_src_qp && ex->read_slid && ex->read_sl &&
          ex->read_dlid_path_bits);
    CHECK(!ex->read_completion_ts && !ex->read_cvlan && !ex->read_flow_tag &&
          !ex->read_tm_info && !ex->read_completion_wallclock_ns);
    CHECK_EQ(softhca_destroy_cq(ibv_cq_ex_to_cq(ex)), 0);

    /* Only what wc_flags asks for; flags count only with their mask bit. */
    ex = create_ex(IBV_WC_EX_WITH_QP_NUM, 0, IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN);
    CHECK(ex);
    if (!ex) {
        return;
    }
    CHECK(ex->read_qp_num && ex->read_opcode);
    CHECK(!ex->read_byte_len && !ex->read_imm_data && !ex->read_src_qp &&
          !ex->read_slid && !ex->read_sl && !ex->read_dlid_path_bits);
    CHECK_EQ(softhca_destroy_cq(ibv_cq_ex_to_cq(ex)), 0);

    ex = create_ex(0, IBV_CQ_INIT_ATTR_MASK_FLAGS,
                   IBV_CREATE_CQ_ATTR_SINGLE_THREADED);
    CHECK(ex);
    if (ex) {
        CHECK(to_scq(ibv_cq_ex_to_cq(ex))->single_threaded);
        CHECK_EQ(softhca_destroy_cq(ibv_cq_ex_to_cq(ex)), 0);
    }

    /* Sizes as create_cq's: EINVAL past MAX_CQE. */
    struct ibv_cq_init_attr_ex big = { .cqe = 65 };

    CHECK(!softhca_create_cq_ex(&ctx.ibvctx.context, &big));
    CHECK_EQ(errno, EINVAL);
    big.cqe = 0x80000000u;
    CHECK(!softhca_create_cq_ex(&ctx.ibvctx.context, &big));
    CHECK_EQ(errno, EINVAL);
}

/* One batch: every CQE consumed, the record written once, at its end. */
static void provider_cq_ex_poll(void)
{
    struct ibv_poll_cq_attr attr = {};
    struct ibv_cq_ex *ex;
    struct softhca_cq *cq;

    add_qp();
    ex = create_ex(IBV_WC_STANDARD_FLAGS, 0, 0);
    CHECK(ex);
    if (!ex) {
        return;
    }
    cq = to_scq(ibv_cq_ex_to_cq(ex));

    CHECK_EQ(ibv_start_poll(ex, &attr), ENOENT);
    CHECK(unlocked(cq));

    put_cqe(cq, 0, 1, SHCA_CQE_OP_RDMA_WRITE, 0, 0, 2);
    put_cqe(cq, 1, 2, SHCA_CQE_OP_RECV, SHCA_CQE_WITH_IMM | SHCA_CQE_GRH,
            htobe32(0xaabbccdd), 0);
    put_cqe(cq, 2, 3, SHCA_CQE_OP_RECV, SHCA_CQE_WITH_INV, htole32(0x4321), 1);

    attr.comp_mask = 1;
    CHECK_EQ(ibv_start_poll(ex, &attr), EINVAL);
    CHECK(unlocked(cq));
    attr.comp_mask = 0;

    CHECK_EQ(ibv_start_poll(ex, &attr), 0);
    CHECK(held(cq));                    /* for the whole batch */
    CHECK_EQ(ex->wr_id, 1);
    CHECK_EQ(ex->status, IBV_WC_SUCCESS);
    CHECK_EQ(ibv_wc_read_opcode(ex), IBV_WC_RDMA_WRITE);
    CHECK_EQ(ibv_wc_read_byte_len(ex), 101);
    CHECK_EQ(ibv_wc_read_qp_num(ex), TEST_QPN);
    CHECK_EQ(ibv_wc_read_wc_flags(ex), 0);
    CHECK_EQ(qp.sq.ci, 3);              /* slots 0..2 free */

    CHECK_EQ(ibv_next_poll(ex), 0);
    CHECK_EQ(ex->wr_id, 2);
    CHECK_EQ(ibv_wc_read_opcode(ex), IBV_WC_RECV);
    CHECK_EQ(ibv_wc_read_wc_flags(ex), IBV_WC_WITH_IMM | IBV_WC_GRH);
    CHECK_EQ(be32toh(ibv_wc_read_imm_data(ex)), 0xaabbccdd);
    CHECK_EQ(ibv_wc_read_src_qp(ex), 0x123);
    CHECK_EQ(ibv_wc_read_slid(ex), 0);
    CHECK_EQ(ibv_wc_read_sl(ex), 1);   /* an IPv6 GRH */
    CHECK_EQ(ibv_wc_read_dlid_path_bits(ex), 0);
    CHECK_EQ(qp.rq.ci, 1);

    CHECK_EQ(ibv_next_poll(ex), 0);
    CHECK_EQ(ex->wr_id, 3);
    CHECK_EQ(ibv_wc_read_wc_flags(ex), IBV_WC_WITH_INV);
    CHECK_EQ(ibv_wc_read_invalidated_rkey(ex), 0x4321);
    CHECK_EQ(qp.rq.ci, 2);

    /* Nothing more yet: the batch stays open and sees a later CQE. */
    CHECK_EQ(ibv_next_poll(ex), ENOENT);
    CHECK_EQ(record_ci(cq), 0);         /* not before end_poll */
    put_cqe(cq, 3, 4, SHCA_CQE_OP_SEND, 0, 0, 3);
    cq->cqes[3].status = SHCA_CQE_RETRY_EXC_ERR;
    cq->cqes[3].vendor_err = 0x42;
    CHECK_EQ(ibv_next_poll(ex), 0);
    CHECK_EQ(ex->wr_id, 4);
    CHECK_EQ(ex->status, IBV_WC_RETRY_EXC_ERR);
    CHECK_EQ(ibv_wc_read_vendor_err(ex), 0x42);
    CHECK_EQ(ibv_next_poll(ex), ENOENT);
    ibv_end_poll(ex);
    CHECK_EQ(record_ci(cq), 4);
    CHECK(unlocked(cq));

    /* Around the ring: the second pass has phase 0. */
    for (uint32_t pi = 4; pi < 12; pi++) {
        put_cqe(cq, pi, pi + 1, SHCA_CQE_OP_SEND, 0, 0, pi & 7);
    }
    CHECK_EQ(ibv_start_poll(ex, &attr), 0);
    for (uint32_t pi = 5; pi < 12; pi++) {
        CHECK_EQ(ibv_next_poll(ex), 0);
        CHECK_EQ(ex->wr_id, pi + 1);
    }
    CHECK_EQ(ibv_next_poll(ex), ENOENT);
    ibv_end_poll(ex);
    CHECK_EQ(record_ci(cq), 12);
    CHECK_EQ(ibv_start_poll(ex, &attr), ENOENT);
    CHECK(unlocked(cq));

    /* ibv_poll_cq() on the same CQ takes the same CQEs. */
    struct ibv_wc wc[4];

    put_cqe(cq, 12, 13, SHCA_CQE_OP_RECV, SHCA_CQE_WITH_INV, htole32(9), 2);
    CHECK_EQ(softhca_poll_cq(ibv_cq_ex_to_cq(ex), 4, wc), 1);
    CHECK_EQ(wc[0].wr_id, 13);
    CHECK_EQ(wc[0].invalidated_rkey, 9);
    CHECK_EQ(record_ci(cq), 13);
    CHECK(unlocked(cq));
    CHECK_EQ(softhca_destroy_cq(ibv_cq_ex_to_cq(ex)), 0);
    qp_table[TEST_QPN & 3] = NULL;
}

/* A SINGLE_THREADED CQ polls without its lock. */
static void provider_cq_ex_single_threaded(void)
{
    struct ibv_poll_cq_attr attr = {};
    struct ibv_cq_ex *ex;
    struct softhca_cq *cq;

    ex = create_ex(0, IBV_CQ_INIT_ATTR_MASK_FLAGS,
                   IBV_CREATE_CQ_ATTR_SINGLE_THREADED);
    CHECK(ex);
    if (!ex) {
        return;
    }
    cq = to_scq(ibv_cq_ex_to_cq(ex));
    put_cqe(cq, 0, 1, SHCA_CQE_OP_SEND, 0, 0, 0);
    CHECK_EQ(ibv_start_poll(ex, &attr), 0);
    CHECK(unlocked(cq));
    CHECK_EQ(ex->wr_id, 1);
    ibv_end_poll(ex);
    CHECK_EQ(record_ci(cq), 1);
    CHECK_EQ(softhca_destroy_cq(ibv_cq_ex_to_cq(ex)), 0);
}

/*
 * Receives through an SRQ free no RQ slots: those of a QP with an SRQ, and
 * those of an XRC SRQ, which name a QP of the kernel (spec §13.7) that no
 * table here holds; both reach the application with their qpn.
 */
static void provider_cq_srq_receives(void)
{
    const uint32_t tgt_qpn = TEST_QPN + 1;    /* another slot of the table */
    struct ibv_cq *ibcq;
    struct softhca_cq *cq;
    struct ibv_wc wc[3];

    add_qp();
    qp.cap.max_recv_wr = 0;                   /* receives through an SRQ */
    qp.rq.shape.log_size = 0;
    ibcq = softhca_create_cq(&ctx.ibvctx.context, 4, NULL, 0);
    CHECK(ibcq);
    if (!ibcq) {
        return;
    }
    cq = to_scq(ibcq);
    put_cqe(cq, 0, 1, SHCA_CQE_OP_RECV, 0, 0, 5);
    put_cqe(cq, 1, 2, SHCA_CQE_OP_RECV, 0, 0, 6);
    cq->cqes[1].qpn = htole32(tgt_qpn);
    put_cqe(cq, 2, 3, SHCA_CQE_OP_SEND, 0, 0, 2);
    CHECK_EQ(softhca_poll_cq(ibcq, 3, wc), 3);
    CHECK_EQ(wc[0].qp_num, TEST_QPN);
    CHECK_EQ(wc[1].qp_num, tgt_qpn);
    CHECK_EQ(wc[1].opcode, IBV_WC_RECV);
    CHECK_EQ(wc[1].wr_id, 2);
    CHECK_EQ(qp.rq.ci, 0);
    CHECK_EQ(qp.sq.ci, 3);                    /* sends still free slots */
    CHECK_EQ(record_ci(cq), 3);
    CHECK_EQ(softhca_destroy_cq(ibcq), 0);
    qp_table[TEST_QPN & 3] = NULL;
}

/*
 * resize_cq: the consumed count reaches the record before the command,
 * polling goes on in the new ring from its first slot, and a refused
 * resize leaves the CQ as it was.
 */
static void provider_cq_resize(void)
{
    struct softhca_cq *cq;
    struct ibv_cq *ibcq;
    struct ibv_wc wc[4];

    add_qp();
    ibcq = softhca_create_cq(&ctx.ibvctx.context, 4, NULL, 0);
    CHECK(ibcq);
    if (!ibcq) {
        return;
    }
    cq = to_scq(ibcq);
    for (uint32_t i = 0; i < 3; i++) {
        put_cqe(cq, i, 1 + i, SHCA_CQE_OP_SEND, 0, 0, i);
    }
    CHECK_EQ(softhca_poll_cq(ibcq, 1, wc), 1);
    cq->record->ci = 0;         /* as if not published yet */
    kernel.calls = 0;
    CHECK_EQ(softhca_resize_cq(ibcq, 10), 0);
    CHECK_EQ(kernel.calls, 1);
    CHECK_EQ(ibcq->cqe, 16);
    CHECK_EQ(cq->log_size, 4);
    CHECK_EQ(record_ci(cq), 0);
    CHECK_EQ(softhca_poll_cq(ibcq, 4, wc), 2);
    CHECK_EQ(wc[0].wr_id, 2);
    CHECK_EQ(wc[1].wr_id, 3);
    CHECK_EQ(qp.sq.ci, 3);
    put_cqe(cq, 2, 4, SHCA_CQE_OP_SEND, 0, 0, 3);
    CHECK_EQ(softhca_poll_cq(ibcq, 4, wc), 1);
    CHECK_EQ(wc[0].wr_id, 4);
    CHECK_EQ(record_ci(cq), 3);

    put_cqe(cq, 3, 5, SHCA_CQE_OP_SEND, 0, 0, 4);
    kernel.resize_err = EINVAL;
    CHECK_EQ(softhca_resize_cq(ibcq, 2), EINVAL);
    kernel.resize_err = 0;
    CHECK_EQ(ibcq->cqe, 16);
    CHECK_EQ(softhca_poll_cq(ibcq, 4, wc), 1);
    CHECK_EQ(wc[0].wr_id, 5);
    CHECK_EQ(softhca_resize_cq(ibcq, -1), EINVAL);
    CHECK_EQ(softhca_resize_cq(ibcq, 65), EINVAL);   /* over max_cqe */
    CHECK_EQ(softhca_destroy_cq(ibcq), 0);
    qp_table[TEST_QPN & 3] = NULL;
}

/* create_cq makes the same CQ through the legacy command. */
static void provider_cq_legacy(void)
{
    struct ibv_cq *ibcq;
    struct ibv_wc wc;

    kernel.calls = 0;
    ibcq = softhca_create_cq(&ctx.ibvctx.context, 4, &channel, 2);
    CHECK(ibcq);
    if (!ibcq) {
        return;
    }
    CHECK_EQ(kernel.calls, 1);
    CHECK(!kernel.ex);
    CHECK_EQ(kernel.cqe, 8);
    CHECK(kernel.channel == &channel);
    CHECK_EQ(kernel.comp_vector, 2);
    CHECK_EQ(kernel.req.log_size, 3);
    CHECK_EQ(kernel.req.buf_addr, (uintptr_t)to_scq(ibcq)->cqes);
    CHECK_EQ(to_scq(ibcq)->cqn, TEST_CQN);
    put_cqe(to_scq(ibcq), 0, 77, SHCA_CQE_OP_RECV, SHCA_CQE_WITH_IMM,
            htobe32(5), 0);
    CHECK_EQ(softhca_poll_cq(ibcq, 1, &wc), 1);
    CHECK_EQ(wc.wr_id, 77);
    CHECK_EQ(be32toh(wc.imm_data), 5);
    CHECK_EQ(softhca_poll_cq(ibcq, 1, &wc), 0);
    CHECK_EQ(record_ci(to_scq(ibcq)), 1);
    CHECK_EQ(softhca_destroy_cq(ibcq), 0);

    CHECK(!softhca_create_cq(&ctx.ibvctx.context, -1, NULL, 0));
    CHECK_EQ(errno, EINVAL);
}

/*
 * ucx-ud-wrong-dgid: UCX's UD transport takes a RoCE datagram's network
 * header type from wc.sl, as mlx5 reports it (2 IPv4, 1 IPv6), to find the
 * destination GID in the GRH.  With sl 0 it read an IPv4 datagram's GRH as
 * IPv6 and dropped every packet for a wrong destination GID.
 */
static void provider_cq_ud_sl_network_type(void)
{
    static const struct {
        uint8_t flags;
        uint8_t sl;
    } cases[] = {
        { SHCA_CQE_GRH | SHCA_CQE_IPV4, 2 },
        { SHCA_CQE_GRH, 1 },
        { 0, 0 },               /* a connected QP's receive: no GRH */
    };
    struct ibv_poll_cq_attr attr = {};
    struct ibv_cq_ex *ex;
    struct softhca_cq *cq;
    struct ibv_wc wc;

    ex = create_ex(IBV_WC_STANDARD_FLAGS, 0, 0);
    CHECK(ex);
    if (!ex) {
        return;
    }
    cq = to_scq(ibv_cq_ex_to_cq(ex));
    for (uint32_t i = 0; i < 3; i++) {
        put_cqe(cq, 2 * i, 1, SHCA_CQE_OP_RECV, cases[i].flags, 0, 0);
        CHECK_EQ(softhca_poll_cq(ibv_cq_ex_to_cq(ex), 1, &wc), 1);
        CHECK_EQ(wc.sl, cases[i].sl);
        put_cqe(cq, 2 * i + 1, 1, SHCA_CQE_OP_RECV, cases[i].flags, 0, 0);
        CHECK_EQ(ibv_start_poll(ex, &attr), 0);
        CHECK_EQ(ibv_wc_read_sl(ex), cases[i].sl);
        ibv_end_poll(ex);
    }
    CHECK(unlocked(cq));
    CHECK_EQ(softhca_destroy_cq(ibv_cq_ex_to_cq(ex)), 0);
}

int main(void)
{
    RUN(provider_cq_ex_refused);
    RUN(provider_cq_ex_create);
    RUN(provider_cq_ex_poll);
    RUN(provider_cq_ex_single_threaded);
    RUN(provider_cq_srq_receives);
    RUN(provider_cq_legacy);
    RUN(provider_cq_resize);
    RUN(provider_cq_ud_sl_network_type);
    return unit_summary();
}
