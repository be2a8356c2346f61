// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca rdma-core provider: the extended CQ of ibv_create_cq_ex() and its
 * polling API.  A batch runs from start_poll to end_poll under the CQ's
 * lock, or none for a SINGLE_THREADED CQ.  start_poll and next_poll consume
 * one CQE each, as poll_cq does, and convert it whole into cq->wc, which the
 * read_* accessors return field by field; end_poll publishes the consumed
 * count once for the batch.
 */
#include <errno.h>
#include <inttypes.h>

#include "softhca.h"

/*
 * What softhca_cqe_to_wc() fills in: a CQE has no timestamp, VLAN, flow
 * tag or tag-matching state, and RoCE's slid, sl and dlid_path_bits read 0.
 */
#define SOFTHCA_CQ_EX_WC_FLAGS IBV_WC_STANDARD_FLAGS
#define SOFTHCA_CQ_EX_COMP_MASK IBV_CQ_INIT_ATTR_MASK_FLAGS
/* IGNORE_OVERRUN is not: an overrun is an error the device reports (§13.1). */
#define SOFTHCA_CQ_EX_FLAGS IBV_CREATE_CQ_ATTR_SINGLE_THREADED

static struct softhca_cq *to_scq_ex(struct ibv_cq_ex *ibcq)
{
	return container_of(ibcq, struct softhca_cq, vcq.cq_ex);
}

static void softhca_cq_ex_lock(struct softhca_cq *cq)
{
	if (!cq->single_threaded)
		pthread_spin_lock(&cq->lock);
}

static void softhca_cq_ex_unlock(struct softhca_cq *cq)
{
	if (!cq->single_threaded)
		pthread_spin_unlock(&cq->lock);
}

/* Make the next CQE the current completion; ENOENT if there is none yet. */
static int softhca_cq_ex_advance(struct softhca_cq *cq)
{
	const struct shca_cqe *cqe = softhca_cq_take(cq);

	if (!cqe)
		return ENOENT;
	softhca_cqe_to_wc(cqe, &cq->wc);
	cq->vcq.cq_ex.wr_id = cq->wc.wr_id;
	cq->vcq.cq_ex.status = cq->wc.status;
	return 0;
}

/* On an error the batch has not begun: the caller must not end_poll. */
static int softhca_start_poll(struct ibv_cq_ex *ibcq,
			      struct ibv_poll_cq_attr *attr)
{
	struct softhca_cq *cq = to_scq_ex(ibcq);
	int err;

	if (attr->comp_mask)
		return EINVAL;
	softhca_cq_ex_lock(cq);
	err = softhca_cq_ex_advance(cq);
	if (err)
		softhca_cq_ex_unlock(cq);
	return err;
}

/* ENOENT leaves the batch open: the caller may retry, and must end_poll. */
static int softhca_next_poll(struct ibv_cq_ex *ibcq)
{
	return softhca_cq_ex_advance(to_scq_ex(ibcq));
}

static void softhca_end_poll(struct ibv_cq_ex *ibcq)
{
	struct softhca_cq *cq = to_scq_ex(ibcq);

	softhca_cq_update_record(cq);
	softhca_cq_ex_unlock(cq);
}

/* softhca_read_<field>() returns the current completion's wc.<field>. */
#define SOFTHCA_WC_READER(type, field)                                         \
	static type softhca_read_##field(struct ibv_cq_ex *ibcq)               \
	{                                                                      \
		return to_scq_ex(ibcq)->wc.field;                              \
	}

SOFTHCA_WC_READER(enum ibv_wc_opcode, opcode)
SOFTHCA_WC_READER(uint32_t, vendor_err)
SOFTHCA_WC_READER(unsigned int, wc_flags)
SOFTHCA_WC_READER(uint32_t, byte_len)
/* Also ibv_wc_read_invalidated_rkey()'s, as wc.invalidated_rkey shares it. */
SOFTHCA_WC_READER(__be32, imm_data)
SOFTHCA_WC_READER(uint32_t, qp_num)
SOFTHCA_WC_READER(uint32_t, src_qp)
SOFTHCA_WC_READER(uint32_t, slid)
SOFTHCA_WC_READER(uint8_t, sl)
SOFTHCA_WC_READER(uint8_t, dlid_path_bits)

/* As in rxe and mlx5, only the fields wc_flags asks for get an accessor. */
static void softhca_cq_ex_set_ops(struct ibv_cq_ex *ibcq, uint64_t wc_flags)
{
	ibcq->start_poll = softhca_start_poll;
	ibcq->next_poll = softhca_next_poll;
	ibcq->end_poll = softhca_end_poll;
	ibcq->read_opcode = softhca_read_opcode;
	ibcq->read_vendor_err = softhca_read_vendor_err;
	ibcq->read_wc_flags = softhca_read_wc_flags;
	if (wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		ibcq->read_byte_len = softhca_read_byte_len;
	if (wc_flags & IBV_WC_EX_WITH_IMM)
		ibcq->read_imm_data = softhca_read_imm_data;
	if (wc_flags & IBV_WC_EX_WITH_QP_NUM)
		ibcq->read_qp_num = softhca_read_qp_num;
	if (wc_flags & IBV_WC_EX_WITH_SRC_QP)
		ibcq->read_src_qp = softhca_read_src_qp;
	if (wc_flags & IBV_WC_EX_WITH_SLID)
		ibcq->read_slid = softhca_read_slid;
	if (wc_flags & IBV_WC_EX_WITH_SL)
		ibcq->read_sl = softhca_read_sl;
	if (wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		ibcq->read_dlid_path_bits = softhca_read_dlid_path_bits;
}

struct ibv_cq_ex *softhca_create_cq_ex(struct ibv_context *ibctx,
				       struct ibv_cq_init_attr_ex *attr)
{
	struct softhca_context *ctx = to_sctx(ibctx);
	uint32_t flags =
		attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS ? attr->flags : 0;
	struct softhca_cq *cq;

	if (attr->wc_flags & ~(uint64_t)SOFTHCA_CQ_EX_WC_FLAGS ||
	    attr->comp_mask & ~SOFTHCA_CQ_EX_COMP_MASK ||
	    flags & ~SOFTHCA_CQ_EX_FLAGS) {
		verbs_debug(&ctx->ibvctx,
			    "create_cq_ex: wc_flags %#" PRIx64
			    ", comp_mask %#x, flags %#x not supported\n",
			    attr->wc_flags, attr->comp_mask, flags);
		errno = EOPNOTSUPP;
		return NULL;
	}

	cq = softhca_cq_create(ibctx, attr, true);
	if (!cq)
		return NULL;
	cq->single_threaded = flags & IBV_CREATE_CQ_ATTR_SINGLE_THREADED;
	softhca_cq_ex_set_ops(&cq->vcq.cq_ex, attr->wc_flags);
	return &cq->vcq.cq_ex;
}
