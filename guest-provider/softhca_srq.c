// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca rdma-core provider: shared receive queues (spec §13.5).  The
 * ring lives in the process's memory with the device's record behind it;
 * post_srq_recv writes WQEs and rings the SRQ doorbell, no system call.
 * The record's count of WQEs the device has taken frees their slots:
 * completions come in any order, through the CQs of the QPs that took
 * them, so they free nothing here.  An XRC SRQ (spec §13.7) is the same
 * ring in an XRC domain; the kernel's XRC receive QPs take from it, and
 * its completions go to its own CQ.
 */
#include <errno.h>
#include <stdlib.h>

#include "softhca.h"

static size_t softhca_srq_ring_size(const struct softhca_wq_shape *shape)
{
	return (size_t)1 << (shape->log_size + shape->wqe_shift);
}

/* The ring for max_wr WQEs of max_sge SGEs, and the record behind it. */
static int softhca_srq_ring_alloc(struct softhca_context *ctx,
				  struct ibv_srq_attr *attr,
				  struct softhca_wq_shape *shape,
				  struct softhca_buf *buf)
{
	struct ibv_qp_cap cap = {
		.max_recv_wr = attr->max_wr,
		.max_recv_sge = attr->max_sge,
	};
	int err;

	if (!attr->max_wr)
		return EINVAL;
	err = softhca_rq_shape(&ctx->lim, &cap, shape);
	if (err)
		return err;
	attr->max_wr = cap.max_recv_wr;
	attr->max_sge = cap.max_recv_sge;
	return softhca_buf_alloc(buf, softhca_srq_ring_size(shape) +
					      sizeof(struct shca_srq_record));
}

static void softhca_srq_set_record(struct softhca_srq *srq)
{
	srq->record = (struct shca_srq_record *)((uint8_t *)srq->buf.addr +
			softhca_srq_ring_size(&srq->shape));
}

/*
 * The kernel's part: create_srq_ex's command, for an XRC SRQ or a basic
 * one, or the legacy command, with the same driver data.  The legacy
 * attributes are the extended ones' first fields, as ibv_create_srq_ex()
 * relies on too.
 */
static int softhca_cmd_create_srq(struct ibv_context *ibctx,
				  struct ibv_srq_init_attr_ex *attr, bool ex,
				  const struct softhca_ibv_create_srq *req,
				  struct softhca_srq *srq)
{
	int err;

	if (ex) {
		struct softhca_create_xsrq_resp resp = {};
		struct softhca_create_xsrq cmd = { .drv_payload = *req };

		err = ibv_cmd_create_srq_ex(ibctx, &srq->vsrq, attr,
					    &cmd.ibv_cmd, sizeof(cmd),
					    &resp.ibv_resp, sizeof(resp));
		srq->srqn = resp.srqn;
	} else {
		struct softhca_create_srq_resp resp = {};
		struct softhca_create_srq cmd = { .drv_payload = *req };

		err = ibv_cmd_create_srq(attr->pd, &srq->vsrq.srq,
					 (struct ibv_srq_init_attr *)attr,
					 &cmd.ibv_cmd, sizeof(cmd),
					 &resp.ibv_resp, sizeof(resp));
		srq->srqn = resp.srqn;
	}
	return err;
}

/* An SRQ for create_srq or, with ex, create_srq_ex, which checked attr. */
static struct softhca_srq *softhca_srq_create(struct ibv_context *ibctx,
					      struct ibv_srq_init_attr_ex *attr,
					      bool ex)
{
	struct softhca_context *ctx = to_sctx(ibctx);
	struct softhca_ibv_create_srq req = {};
	struct softhca_srq *srq;
	int err;

	if (attr->attr.srq_limit >= attr->attr.max_wr) {
		errno = EINVAL;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	err = softhca_srq_ring_alloc(ctx, &attr->attr, &srq->shape, &srq->buf);
	if (err)
		goto err_free;
	softhca_srq_set_record(srq);
	srq->lim.max_sge = attr->attr.max_sge;
	pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);

	req.log_size = srq->shape.log_size;
	req.wqe_shift = srq->shape.wqe_shift;
	req.buf_addr = (uintptr_t)srq->buf.addr;
	req.buf_size = srq->buf.size;
	err = softhca_cmd_create_srq(ibctx, attr, ex, &req, srq);
	if (err) {
		verbs_err(&ctx->ibvctx, "create_srq failed: %d\n", err);
		goto err_buf;
	}
	return srq;

err_buf:
	pthread_spin_destroy(&srq->lock);
	softhca_buf_free(&srq->buf);
err_free:
	free(srq);
	errno = err;
	return NULL;
}

struct ibv_srq *softhca_create_srq(struct ibv_pd *ibpd,
				   struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex attr_ex = {
		.srq_context = attr->srq_context,
		.attr = attr->attr,
		.comp_mask = IBV_SRQ_INIT_ATTR_PD,
		.pd = ibpd,
	};
	struct softhca_srq *srq;

	srq = softhca_srq_create(ibpd->context, &attr_ex, false);
	if (!srq)
		return NULL;
	attr->attr = attr_ex.attr;
	return &srq->vsrq.srq;
}

/* What create_srq_ex takes: basic and XRC SRQs, no tag matching. */
#define SOFTHCA_SRQ_INIT_ATTR_MASK                                             \
	(IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |                       \
	 IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ)

/* libibverbs checks that an XRC SRQ comes with its domain and CQ. */
struct ibv_srq *softhca_create_srq_ex(struct ibv_context *ibctx,
				      struct ibv_srq_init_attr_ex *attr)
{
	enum ibv_srq_type type = attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE ?
					 attr->srq_type :
					 IBV_SRQT_BASIC;
	struct softhca_srq *srq;

	if ((attr->comp_mask & ~SOFTHCA_SRQ_INIT_ATTR_MASK) ||
	    (type != IBV_SRQT_BASIC && type != IBV_SRQT_XRC)) {
		verbs_debug(&to_sctx(ibctx)->ibvctx,
			    "SRQ attributes %#x, type %d not supported\n",
			    attr->comp_mask, type);
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD)) {
		errno = EINVAL;
		return NULL;
	}
	srq = softhca_srq_create(ibctx, attr, true);
	return srq ? &srq->vsrq.srq : NULL;
}

/* The number senders name in the XRCETH, as the kernel returned it. */
int softhca_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	struct softhca_srq *srq = to_ssrq(ibsrq);

	if (srq->vsrq.srq_type != IBV_SRQT_XRC)
		return EINVAL;
	*srq_num = srq->vsrq.srq_num;
	return 0;
}

/*
 * IBV_SRQ_MAX_WR: the device copies the WQEs it has not taken to the
 * slots of the same counts in a new ring (spec §13.5), so pi stays; posts
 * wait for the move under the SRQ's lock.
 */
int softhca_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		       int attr_mask)
{
	struct softhca_context *ctx = to_sctx(ibsrq->context);
	struct softhca_srq *srq = to_ssrq(ibsrq);
	struct softhca_modify_srq cmd = {};
	struct softhca_wq_shape shape;
	struct softhca_buf buf = {};
	struct ibv_srq_attr want;
	int err;

	if (!(attr_mask & IBV_SRQ_MAX_WR))
		return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd.ibv_cmd,
					  sizeof(cmd));

	want = (struct ibv_srq_attr){
		.max_wr = attr->max_wr,
		.max_sge = srq->lim.max_sge,
	};
	err = softhca_srq_ring_alloc(ctx, &want, &shape, &buf);
	if (err)
		return err;
	if (shape.wqe_shift != srq->shape.wqe_shift) {
		softhca_buf_free(&buf);
		return EINVAL;
	}
	cmd.log_size = shape.log_size;
	cmd.buf_addr = (uintptr_t)buf.addr;
	cmd.buf_size = buf.size;

	pthread_spin_lock(&srq->lock);
	err = ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd.ibv_cmd,
				 sizeof(cmd));
	if (!err) {
		struct softhca_buf old = srq->buf;

		srq->buf = buf;
		srq->shape = shape;
		softhca_srq_set_record(srq);
		buf = old;
	}
	pthread_spin_unlock(&srq->lock);
	softhca_buf_free(&buf);
	return err;
}

int softhca_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd;

	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

int softhca_destroy_srq(struct ibv_srq *ibsrq)
{
	struct softhca_srq *srq = to_ssrq(ibsrq);
	int err;

	err = ibv_cmd_destroy_srq(ibsrq);
	if (err)
		return err;
	pthread_spin_destroy(&srq->lock);
	softhca_buf_free(&srq->buf);
	free(srq);
	return 0;
}

int softhca_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			  struct ibv_recv_wr **bad_wr)
{
	struct softhca_srq *srq = to_ssrq(ibsrq);
	uint32_t size, ci, pi;
	int err = 0;

	pthread_spin_lock(&srq->lock);
	size = 1u << srq->shape.log_size;
	/* The device writes ci after it has read the WQEs before it. */
	ci = le32toh(atomic_load_explicit((_Atomic(uint32_t) *)&srq->record->ci,
					  memory_order_acquire));
	for (pi = srq->pi; wr; wr = wr->next, pi++) {
		if ((uint16_t)(pi - ci) >= size) {
			err = ENOMEM;
			break;
		}
		err = softhca_build_recv_wqe(softhca_slot(srq->buf.addr, pi,
							  srq->shape.log_size,
							  srq->shape.wqe_shift),
					     wr, &srq->lim);
		if (err)
			break;
	}
	if (pi != srq->pi) {
		udma_to_device_barrier();
		srq->pi = pi;
		softhca_ring_doorbell(to_sctx(ibsrq->context), SHCA_DB_SRQ,
				      softhca_wq_doorbell(pi, srq->srqn));
	}
	pthread_spin_unlock(&srq->lock);

	if (err)
		*bad_wr = wr;
	return err;
}
