// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca rdma-core provider: completion queues (spec §13.1, §14, §15).
 * Completion events reach the process through the kernel (the CQ's EQ and
 * the completion channel given to create_cq), so ibv_get_cq_event() needs
 * nothing from here.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "softhca.h"

/*
 * The kernel's part: create_cq_ex's command for an extended CQ, the legacy
 * one otherwise, with the same driver data.
 */
static int softhca_cmd_create_cq(struct ibv_context *ibctx,
				 const struct ibv_cq_init_attr_ex *attr,
				 bool ex,
				 const struct softhca_ibv_create_cq *req,
				 struct softhca_cq *cq)
{
	int err;

	if (ex) {
		struct softhca_create_cq_ex_resp resp = {};
		struct softhca_create_cq_ex cmd = { .drv_payload = *req };

		err = ibv_cmd_create_cq_ex(ibctx, attr, &cq->vcq, &cmd.ibv_cmd,
					   sizeof(cmd), &resp.ibv_resp,
					   sizeof(resp), 0);
		cq->cqn = resp.cqn;
	} else {
		struct softhca_create_cq_resp resp = {};
		struct softhca_create_cq cmd = { .drv_payload = *req };

		err = ibv_cmd_create_cq(ibctx, attr->cqe, attr->channel,
					attr->comp_vector, &cq->vcq.cq,
					&cmd.ibv_cmd, sizeof(cmd),
					&resp.ibv_resp, sizeof(resp));
		cq->cqn = resp.cqn;
	}
	return err;
}

/* A zeroed ring of 2^log_size CQEs and its record, described in @req. */
static int softhca_cq_ring_alloc(struct softhca_buf *buf, uint8_t log_size,
				 struct softhca_ibv_create_cq *req)
{
	int err;

	err = softhca_buf_alloc(buf, (sizeof(struct shca_cqe) << log_size) +
				     sizeof(struct shca_cq_record));
	if (err)
		return err;
	req->log_size = log_size;
	req->buf_addr = (uintptr_t)buf->addr;
	req->buf_size = buf->size;
	return 0;
}

/* Poll @buf from its first slot on; the caller frees the old ring. */
static void softhca_cq_ring_use(struct softhca_cq *cq,
				const struct softhca_buf *buf, uint8_t log_size)
{
	cq->buf = *buf;
	cq->cqes = buf->addr;
	cq->record = (struct shca_cq_record *)((uint8_t *)buf->addr +
					       (sizeof(struct shca_cqe) << log_size));
	cq->log_size = log_size;
	cq->ci = 0;
}

/*
 * A CQ for create_cq or, with ex, create_cq_ex, which checked the rest of
 * attr: only cqe, channel and comp_vector matter here.
 */
struct softhca_cq *softhca_cq_create(struct ibv_context *ibctx,
				     const struct ibv_cq_init_attr_ex *attr,
				     bool ex)
{
	struct softhca_context *ctx = to_sctx(ibctx);
	struct ibv_cq_init_attr_ex kattr = *attr;
	struct softhca_ibv_create_cq req = {};
	/* create_cq's negative sizes, and ours above INT_MAX, are EINVAL. */
	int cqe = attr->cqe;
	struct softhca_cq *cq;
	uint8_t log_size;
	int err;

	err = softhca_cq_log_size(&ctx->lim, cqe, &log_size);
	if (err) {
		verbs_debug(&ctx->ibvctx, "CQ of %d entries: %d\n", cqe, err);
		errno = err;
		return NULL;
	}

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;

	err = softhca_cq_ring_alloc(&cq->buf, log_size, &req);
	if (err)
		goto err_free;
	softhca_cq_ring_use(cq, &cq->buf, log_size);
	kattr.cqe = 1u << log_size;
	err = softhca_cmd_create_cq(ibctx, &kattr, ex, &req, cq);
	if (err) {
		verbs_err(&ctx->ibvctx, "create_cq failed: %d\n", err);
		goto err_buf;
	}
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	return cq;

err_buf:
	softhca_buf_free(&cq->buf);
err_free:
	free(cq);
	errno = err;
	return NULL;
}

struct ibv_cq *softhca_create_cq(struct ibv_context *ibctx, int cqe,
				 struct ibv_comp_channel *channel,
				 int comp_vector)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = cqe,
		.channel = channel,
		.comp_vector = comp_vector,
	};
	struct softhca_cq *cq = softhca_cq_create(ibctx, &attr, false);

	return cq ? &cq->vcq.cq : NULL;
}

int softhca_destroy_cq(struct ibv_cq *ibcq)
{
	struct softhca_cq *cq = to_scq(ibcq);
	int err;

	err = ibv_cmd_destroy_cq(ibcq);
	if (err)
		return err;
	pthread_spin_destroy(&cq->lock);
	softhca_buf_free(&cq->buf);
	free(cq);
	return 0;
}

/*
 * The device moves the CQEs not yet polled to the new ring's first slots
 * (spec §13.1), reading the consumed count from the record: publish it,
 * and poll nothing until the ring is switched.
 */
int softhca_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct softhca_context *ctx = to_sctx(ibcq->context);
	struct softhca_cq *cq = to_scq(ibcq);
	struct softhca_resize_cq_resp resp = {};
	struct softhca_resize_cq cmd = {};
	struct softhca_buf buf;
	uint8_t log_size;
	int err;

	err = softhca_cq_log_size(&ctx->lim, cqe, &log_size);
	if (err)
		return err;
	err = softhca_cq_ring_alloc(&buf, log_size, &cmd.drv_payload);
	if (err)
		return err;

	pthread_spin_lock(&cq->lock);
	softhca_cq_update_record(cq);
	err = ibv_cmd_resize_cq(ibcq, 1u << log_size, &cmd.ibv_cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (err) {
		pthread_spin_unlock(&cq->lock);
		verbs_debug(&ctx->ibvctx, "resize_cq to 2^%u: %d\n", log_size,
			    err);
		softhca_buf_free(&buf);
		return err;
	}
	softhca_buf_free(&cq->buf);
	softhca_cq_ring_use(cq, &buf, log_size);
	pthread_spin_unlock(&cq->lock);
	return 0;
}

/* Publish the consumed count; see softhca_queue.h for why it may lag. */
void softhca_cq_update_record(struct softhca_cq *cq)
{
	atomic_store_explicit((_Atomic(uint32_t) *)&cq->record->ci,
			      htole32(cq->ci), memory_order_release);
}

/*
 * A completion frees its WQE's slot and every earlier one of the same
 * queue.  CQEs of a QP already destroyed have no slots to free, nor have
 * receives through an SRQ: an XRC SRQ's name a QP of the kernel, which is
 * in no table here (spec §13.7), the SRQ records free their slots.
 */
static void softhca_complete_wqe(struct softhca_context *ctx,
				 const struct shca_cqe *cqe)
{
	uint32_t qpn = le32toh(cqe->qpn);
	struct softhca_qp *qp = ctx->qp_table[qpn & ctx->qp_table_mask];
	struct softhca_wq *wq;
	uint32_t ci;

	if (!qp || qp->vqp.qp.qp_num != qpn)
		return;
	if (softhca_cqe_is_recv(cqe) && !softhca_has_rq(qp))
		return;
	wq = softhca_cqe_is_recv(cqe) ? &qp->rq : &qp->sq;
	/* This CQ's lock makes poll the only writer of wq->ci. */
	ci = atomic_load_explicit(&wq->ci, memory_order_relaxed);
	ci = softhca_wq_consumed(ci, le16toh(cqe->wqe_index),
				 wq->shape.log_size);
	atomic_store_explicit(&wq->ci, ci, memory_order_release);
}

/*
 * Consume the next CQE, or return NULL if the device still owns it: its
 * WQE slots are freed and ci passes it.  The entry stays readable until
 * softhca_cq_update_record(), as the device refills no slot before the
 * record says it may.  Called with the CQ's lock held (or, for a
 * SINGLE_THREADED CQ, by its only thread).
 */
const struct shca_cqe *softhca_cq_take(struct softhca_cq *cq)
{
	const struct shca_cqe *cqe;

	cqe = softhca_owned_cqe(cq->cqes, cq->ci, cq->log_size);
	if (!cqe)
		return NULL;
	softhca_complete_wqe(to_sctx(cq->vcq.cq.context), cqe);
	cq->ci++;
	return cqe;
}

int softhca_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct softhca_cq *cq = to_scq(ibcq);
	const struct shca_cqe *cqe;
	int n;

	pthread_spin_lock(&cq->lock);
	for (n = 0; n < num_entries; n++) {
		cqe = softhca_cq_take(cq);
		if (!cqe)
			break;
		softhca_cqe_to_wc(cqe, &wc[n]);
	}
	if (n)
		softhca_cq_update_record(cq);
	pthread_spin_unlock(&cq->lock);
	return n;
}

/*
 * Drop the unpolled CQEs of a QP that was reset or destroyed, so that they
 * neither reach the application nor free slots of the QP's new life.  The
 * device writes no more CQEs for it once the command has completed.  The
 * CQEs that remain move towards the producer, each keeping the phase its
 * new slot already holds.  Called with the CQ's lock held.
 */
void softhca_cq_clean(struct softhca_cq *cq, uint32_t qpn)
{
	const size_t body = offsetof(struct shca_cqe, phase);
	const uint32_t mask = (1u << cq->log_size) - 1;
	uint32_t pi = cq->ci, i, dropped = 0;

	while (softhca_owned_cqe(cq->cqes, pi, cq->log_size))
		pi++;
	for (i = pi; i-- != cq->ci;) {
		struct shca_cqe *cqe = &cq->cqes[i & mask];

		if (le32toh(cqe->qpn) == qpn)
			dropped++;
		else if (dropped)
			memcpy(&cq->cqes[(i + dropped) & mask], cqe, body);
	}
	if (dropped) {
		cq->ci += dropped;
		softhca_cq_update_record(cq);
	}
}

int softhca_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct softhca_cq *cq = to_scq(ibcq);
	uint32_t db = cq->cqn | SHCA_DB_CQ_ARM;

	if (solicited_only)
		db |= SHCA_DB_CQ_SOLICITED;
	softhca_ring_doorbell(to_sctx(ibcq->context), SHCA_DB_CQ, db);
	return 0;
}
