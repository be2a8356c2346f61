// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca rdma-core provider: queue pairs (spec §13.2, UD §17, XRC §13.7).
 * The rings live in the process's memory; the driver pins them and the
 * device reads them.  An XRC send QP is an RC QP without receive side; an
 * XRC receive QP is the kernel's, in an XRC domain, without rings.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "softhca.h"

static size_t softhca_wq_ring_size(const struct softhca_wq *wq)
{
	return (size_t)1 << (wq->shape.log_size + wq->shape.wqe_shift);
}

/*
 * An SQ record (spec §14) needs room after the ring within the pages one
 * buffer descriptor takes; the largest rings go without.
 */
static bool softhca_sq_record_fits(const struct softhca_wq *sq)
{
	return softhca_wq_ring_size(sq) + sizeof(struct shca_sq_record) <=
	       SHCA_BUF_LIST_MAX * (size_t)sysconf(_SC_PAGESIZE);
}

/* The ring, then extra bytes (the SQ record) */
static int softhca_wq_init(struct softhca_wq *wq, size_t extra)
{
	int err;

	err = softhca_buf_alloc(&wq->buf, softhca_wq_ring_size(wq) + extra);
	if (err)
		return err;
	pthread_spin_init(&wq->lock, PTHREAD_PROCESS_PRIVATE);
	return 0;
}

static void softhca_wq_destroy(struct softhca_wq *wq)
{
	pthread_spin_destroy(&wq->lock);
	softhca_buf_free(&wq->buf);
}

/* An XRC receive QP, created or opened, has no rings (spec §13.7). */
static bool softhca_has_rings(const struct softhca_qp *qp)
{
	return qp->vqp.qp.qp_type != IBV_QPT_XRC_RECV;
}

/* The CQ of the QP's receives; an XRC send QP has its send CQ only. */
static struct softhca_cq *softhca_recv_cq(struct softhca_qp *qp)
{
	return to_scq(qp->vqp.qp.recv_cq ?: qp->vqp.qp.send_cq);
}

/*
 * The CQ locks keep poll_cq from using a QP that is reset or leaves the
 * table.  Taken in cqn order, so that two QPs whose send and receive CQs
 * cross cannot deadlock.
 */
static void softhca_lock_cqs(struct softhca_qp *qp)
{
	struct softhca_cq *scq = to_scq(qp->vqp.qp.send_cq);
	struct softhca_cq *rcq = softhca_recv_cq(qp);

	if (scq == rcq) {
		pthread_spin_lock(&scq->lock);
	} else if (scq->cqn < rcq->cqn) {
		pthread_spin_lock(&scq->lock);
		pthread_spin_lock(&rcq->lock);
	} else {
		pthread_spin_lock(&rcq->lock);
		pthread_spin_lock(&scq->lock);
	}
}

static void softhca_unlock_cqs(struct softhca_qp *qp)
{
	struct softhca_cq *scq = to_scq(qp->vqp.qp.send_cq);
	struct softhca_cq *rcq = softhca_recv_cq(qp);

	if (scq != rcq)
		pthread_spin_unlock(&rcq->lock);
	pthread_spin_unlock(&scq->lock);
}

/* Forget the QP's unpolled completions; called with the CQ locks held. */
static void softhca_clean_cqs(struct softhca_qp *qp)
{
	struct softhca_cq *scq = to_scq(qp->vqp.qp.send_cq);
	struct softhca_cq *rcq = softhca_recv_cq(qp);

	softhca_cq_clean(scq, qp->vqp.qp.qp_num);
	if (rcq != scq)
		softhca_cq_clean(rcq, qp->vqp.qp.qp_num);
}

/*
 * What a QP takes besides its PD or XRC domain: no creation flags, the
 * ibv_wr_* API.
 */
#define SOFTHCA_QP_INIT_ATTR_MASK                                              \
	(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD |                         \
	 IBV_QP_INIT_ATTR_CREATE_FLAGS | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)

/*
 * An XRC receive QP: the kernel creates it in the domain, without rings
 * and, as a kernel object, without the driver data (spec §13.7).  Its
 * completions name it, but free slots of XRC SRQs only, so poll_cq need not
 * find it: it stays out of the QP table.
 */
static struct ibv_qp *
softhca_create_xrc_recv_qp(struct ibv_context *ibctx,
			   struct ibv_qp_init_attr_ex *attr)
{
	struct softhca_context *ctx = to_sctx(ibctx);
	struct softhca_create_qp_ex_resp resp = {};
	struct softhca_create_qp_ex cmd = {};
	struct ibv_qp_init_attr_ex kattr = *attr;
	struct softhca_qp *qp;
	int err;

	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		verbs_debug(&ctx->ibvctx, "XRC receive QPs do not send\n");
		errno = EINVAL;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	kattr.cap = (struct ibv_qp_cap){};
	kattr.send_cq = NULL;
	kattr.recv_cq = NULL;
	kattr.srq = NULL;
	err = ibv_cmd_create_qp_ex2(ibctx, &qp->vqp, &kattr, &cmd.ibv_cmd,
				    sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (err) {
		verbs_err(&ctx->ibvctx, "create_qp failed: %d\n", err);
		free(qp);
		errno = err;
		return NULL;
	}
	attr->cap = qp->cap;
	return &qp->vqp.qp;
}

/* create_qp and create_qp_ex */
struct ibv_qp *softhca_create_qp_ex(struct ibv_context *ibctx,
				    struct ibv_qp_init_attr_ex *attr)
{
	struct softhca_context *ctx = to_sctx(ibctx);
	struct softhca_create_qp_ex_resp resp = {};
	struct softhca_create_qp_ex cmd = {};
	struct ibv_qp_init_attr_ex kattr = *attr;
	bool dgram = attr->qp_type == IBV_QPT_UD;
	bool xrc = attr->qp_type == IBV_QPT_XRC_SEND;
	struct softhca_qp *qp;
	bool record;
	int err;

	if ((attr->comp_mask & ~SOFTHCA_QP_INIT_ATTR_MASK) ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	     attr->create_flags)) {
		verbs_debug(&ctx->ibvctx, "QP attributes %#x not supported\n",
			    attr->comp_mask);
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->qp_type == IBV_QPT_XRC_RECV)
		return softhca_create_xrc_recv_qp(ibctx, attr);
	if (attr->qp_type != IBV_QPT_RC && attr->qp_type != IBV_QPT_UC &&
	    !dgram && !xrc) {
		verbs_debug(&ctx->ibvctx, "QP type %d not supported\n",
			    attr->qp_type);
		errno = EOPNOTSUPP;
		return NULL;
	}
	/*
	 * A QP with an SRQ has no RQ: its receive caps are ignored (IBA); an
	 * XRC send QP has no receive side at all.
	 */
	if (xrc) {
		kattr.recv_cq = NULL;
		kattr.srq = NULL;
	}
	if (kattr.srq || xrc) {
		kattr.cap.max_recv_wr = 0;
		kattr.cap.max_recv_sge = 0;
	}

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		err = softhca_qp_ex_init(qp, attr, &ctx->lim);
		if (err) {
			verbs_debug(&ctx->ibvctx,
				    "send ops %#llx not supported\n",
				    (unsigned long long)attr->send_ops_flags);
			goto err_free;
		}
	}

	err = softhca_sq_shape(&ctx->lim, &kattr.cap, dgram, &qp->sq.shape);
	if (!err)
		err = softhca_rq_shape(&ctx->lim, &kattr.cap, &qp->rq.shape);
	if (err) {
		verbs_debug(&ctx->ibvctx, "QP caps not supported: %d\n", err);
		goto err_free;
	}
	qp->cap = kattr.cap;
	qp->sq.lim = (struct softhca_wqe_limits){
		.max_sge = kattr.cap.max_send_sge,
		.max_inline = kattr.cap.max_inline_data,
		.sig_all = attr->sq_sig_all,
		.dgram = dgram,
		.xrc = xrc,
	};
	qp->rq.lim.max_sge = kattr.cap.max_recv_sge;

	record = softhca_sq_record_fits(&qp->sq);
	err = softhca_wq_init(&qp->sq,
			      record ? sizeof(struct shca_sq_record) : 0);
	if (err)
		goto err_free;
	if (softhca_has_rq(qp)) {
		err = softhca_wq_init(&qp->rq, 0);
		if (err)
			goto err_sq;
	}

	cmd.comp_mask = record ? SOFTHCA_CREATE_QP_SQ_RECORD : 0;
	cmd.sq_log_size = qp->sq.shape.log_size;
	cmd.sq_wqe_shift = qp->sq.shape.wqe_shift;
	cmd.sq_buf_addr = (uintptr_t)qp->sq.buf.addr;
	cmd.sq_buf_size = qp->sq.buf.size;
	cmd.rq_log_size = qp->rq.shape.log_size;
	cmd.rq_wqe_shift = qp->rq.shape.wqe_shift;
	cmd.rq_buf_addr = (uintptr_t)qp->rq.buf.addr;
	cmd.rq_buf_size = qp->rq.buf.size;
	/* The kernel is told the caps the rings really have. */
	err = ibv_cmd_create_qp_ex2(ibctx, &qp->vqp, &kattr, &cmd.ibv_cmd,
				    sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (err) {
		verbs_err(&ctx->ibvctx, "create_qp failed: %d\n", err);
		goto err_rq;
	}
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		qp->vqp.comp_mask |= VERBS_QP_EX;
	attr->cap = qp->cap;
	if (resp.comp_mask & SOFTHCA_CREATE_QP_RESP_SQ_RECORD)
		qp->sq.record = (struct shca_sq_record *)
			((uint8_t *)qp->sq.buf.addr +
			 softhca_wq_ring_size(&qp->sq));

	pthread_mutex_lock(&ctx->qp_table_lock);
	ctx->qp_table[qp->vqp.qp.qp_num & ctx->qp_table_mask] = qp;
	pthread_mutex_unlock(&ctx->qp_table_lock);
	return &qp->vqp.qp;

err_rq:
	if (softhca_has_rq(qp))
		softhca_wq_destroy(&qp->rq);
err_sq:
	softhca_wq_destroy(&qp->sq);
err_free:
	free(qp);
	errno = err;
	return NULL;
}

struct ibv_qp *softhca_create_qp(struct ibv_pd *ibpd,
				 struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex attr_ex = {
		.qp_context = attr->qp_context,
		.send_cq = attr->send_cq,
		.recv_cq = attr->recv_cq,
		.srq = attr->srq,
		.cap = attr->cap,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = ibpd,
	};
	struct ibv_qp *ibqp;

	ibqp = softhca_create_qp_ex(ibpd->context, &attr_ex);
	if (ibqp)
		attr->cap = attr_ex.cap;
	return ibqp;
}

/*
 * The device drops the WQEs of a QP moved to RESET and starts its queues
 * at 0 again (spec §13.2); so does the provider.
 */
static void softhca_reset_wqs(struct softhca_qp *qp)
{
	softhca_lock_cqs(qp);
	softhca_clean_cqs(qp);
	pthread_spin_lock(&qp->sq.lock);
	qp->sq.pi = 0;
	atomic_store(&qp->sq.ci, 0);
	if (qp->sq.record)
		atomic_store((_Atomic(uint32_t) *)&qp->sq.record->pi, 0);
	pthread_spin_unlock(&qp->sq.lock);
	if (softhca_has_rq(qp)) {
		pthread_spin_lock(&qp->rq.lock);
		qp->rq.pi = 0;
		atomic_store(&qp->rq.ci, 0);
		pthread_spin_unlock(&qp->rq.lock);
	}
	softhca_unlock_cqs(qp);
}

int softhca_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		      int attr_mask)
{
	struct ibv_modify_qp cmd = {};
	int err;

	err = ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
	if (err)
		return err;
	if ((attr_mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RESET &&
	    softhca_has_rings(to_sqp(ibqp)))
		softhca_reset_wqs(to_sqp(ibqp));
	return 0;
}

int softhca_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		     int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct softhca_qp *qp = to_sqp(ibqp);
	struct ibv_query_qp cmd = {};
	int err;

	err = ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
			       sizeof(cmd));
	if (err)
		return err;
	/* The rings, not the kernel, know what a QP holds. */
	attr->cap = qp->cap;
	init_attr->cap = qp->cap;
	return 0;
}

int softhca_destroy_qp(struct ibv_qp *ibqp)
{
	struct softhca_context *ctx = to_sctx(ibqp->context);
	struct softhca_qp *qp = to_sqp(ibqp);
	int err;

	err = ibv_cmd_destroy_qp(ibqp);
	if (err)
		return err;
	if (!softhca_has_rings(qp)) {
		free(qp);
		return 0;
	}

	pthread_mutex_lock(&ctx->qp_table_lock);
	softhca_lock_cqs(qp);
	softhca_clean_cqs(qp);
	ctx->qp_table[ibqp->qp_num & ctx->qp_table_mask] = NULL;
	softhca_unlock_cqs(qp);
	pthread_mutex_unlock(&ctx->qp_table_lock);

	if (softhca_has_rq(qp))
		softhca_wq_destroy(&qp->rq);
	softhca_wq_destroy(&qp->sq);
	free(qp);
	return 0;
}

/* Another process's XRC receive QP, in a domain this one has opened too. */
struct ibv_qp *softhca_open_qp(struct ibv_context *ibctx,
			       struct ibv_qp_open_attr *attr)
{
	struct ib_uverbs_create_qp_resp resp;
	struct ibv_open_qp cmd;
	struct softhca_qp *qp;
	int err;

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	err = ibv_cmd_open_qp(ibctx, &qp->vqp, sizeof(qp->vqp), attr, &cmd,
			      sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		free(qp);
		errno = err;
		return NULL;
	}
	return &qp->vqp.qp;
}
