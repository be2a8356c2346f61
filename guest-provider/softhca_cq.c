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

struct ibv_cq *softhca_create_cq(struct ibv_context *ibctx, int cqe,
				 struct ibv_comp_channel *channel,
				 int comp_vector)
{
	struct softhca_context *ctx = to_sctx(ibctx);
	struct softhca_create_cq_resp resp = {};
	struct softhca_create_cq cmd = {};
	struct softhca_cq *cq;
	size_t ring_size;
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

	ring_size = sizeof(struct shca_cqe) << log_size;
	err = softhca_buf_alloc(&cq->buf,
				ring_size + sizeof(struct shca_cq_record));
	if (err)
		goto err_free;
	cq->cqes = cq->buf.addr;
	cq->record =
		(struct shca_cq_record *)((uint8_t *)cq->buf.addr + ring_size);
	cq->log_size = log_size;

	cmd.log_size = log_size;
	cmd.buf_addr = (uintptr_t)cq->buf.addr;
	cmd.buf_size = cq->buf.size;
	err = ibv_cmd_create_cq(ibctx, 1 << log_size, channel, comp_vector,
				&cq->vcq.cq, &cmd.ibv_cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (err) {
		verbs_err(&ctx->ibvctx, "create_cq failed: %d\n", err);
		goto err_buf;
	}
	cq->cqn = resp.cqn;
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	return &cq->vcq.cq;

err_buf:
	softhca_buf_free(&cq->buf);
err_free:
	free(cq);
	errno = err;
	return NULL;
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

/* Publish the consumed count; see softhca_queue.h for why it may lag. */
static void softhca_cq_update_record(struct softhca_cq *cq)
{
	atomic_store_explicit((_Atomic(uint32_t) *)&cq->record->ci,
			      htole32(cq->ci), memory_order_release);
}

/*
 * A completion frees its WQE's slot and every earlier one of the same
 * queue.  CQEs of a QP already destroyed have no slots to free.
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
	wq = softhca_cqe_is_recv(cqe) ? &qp->rq : &qp->sq;
	/* This CQ's lock makes poll the only writer of wq->ci. */
	ci = atomic_load_explicit(&wq->ci, memory_order_relaxed);
	ci = softhca_wq_consumed(ci, le16toh(cqe->wqe_index),
				 wq->shape.log_size);
	atomic_store_explicit(&wq->ci, ci, memory_order_release);
}

int softhca_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct softhca_context *ctx = to_sctx(ibcq->context);
	struct softhca_cq *cq = to_scq(ibcq);
	const struct shca_cqe *cqe;
	int n;

	pthread_spin_lock(&cq->lock);
	for (n = 0; n < num_entries; n++) {
		cqe = softhca_owned_cqe(cq->cqes, cq->ci, cq->log_size);
		if (!cqe)
			break;
		softhca_cqe_to_wc(cqe, &wc[n]);
		softhca_complete_wqe(ctx, cqe);
		cq->ci++;
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
