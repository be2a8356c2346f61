// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca rdma-core provider: the fast path of the work queues (spec §14,
 * §15).  Each call validates and writes its WQEs, then rings the queue's
 * doorbell once; no system call.  Ordering: see softhca_queue.h.
 */
#include <errno.h>

#include "softhca.h"

/* The slot for WQE count pi, or NULL if the device still owns it. */
void *softhca_wq_slot(struct softhca_wq *wq, uint32_t pi)
{
	uint32_t ci = atomic_load_explicit(&wq->ci, memory_order_acquire);

	if (pi - ci >= 1u << wq->shape.log_size)
		return NULL;
	return softhca_slot(wq->buf.addr, pi, wq->shape.log_size,
			    wq->shape.wqe_shift);
}

/*
 * Hand the WQEs up to count pi to the device: one doorbell per batch, none
 * while the device polls the SQ record (spec §14).
 */
void softhca_wq_ring(struct softhca_qp *qp, struct softhca_wq *wq, uint32_t pi,
		     uint32_t offset)
{
	if (pi == wq->pi)
		return;
	udma_to_device_barrier();
	wq->pi = pi;
	if (wq->record) {
		atomic_store_explicit((_Atomic(uint32_t) *)&wq->record->pi,
				      htole32(pi), memory_order_relaxed);
		/* The device clears POLLING, then reads pi: one sees the other. */
		atomic_thread_fence(memory_order_seq_cst);
		if (le32toh(atomic_load_explicit(
			    (_Atomic(uint32_t) *)&wq->record->device,
			    memory_order_relaxed)) & SHCA_SQ_RECORD_POLLING)
			return;
	}
	softhca_ring_doorbell(to_sctx(qp->vqp.qp.context), offset,
			      softhca_wq_doorbell(pi, qp->vqp.qp.qp_num));
}

/*
 * IBA: no sends before RTS (the device would hold them until then), and
 * none at all on an XRC receive QP, which has no SQ.
 */
bool softhca_sq_open(const struct ibv_qp *ibqp)
{
	return ibqp->state != IBV_QPS_RESET && ibqp->state != IBV_QPS_INIT &&
	       ibqp->state != IBV_QPS_RTR && ibqp->qp_type != IBV_QPT_XRC_RECV;
}

int softhca_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr)
{
	struct softhca_qp *qp = to_sqp(ibqp);
	struct softhca_wq *sq = &qp->sq;
	uint32_t pi;
	void *slot;
	int err = 0;

	if (!softhca_sq_open(ibqp)) {
		*bad_wr = wr;
		return EINVAL;
	}

	pthread_spin_lock(&sq->lock);
	for (pi = sq->pi; wr; wr = wr->next, pi++) {
		slot = softhca_wq_slot(sq, pi);
		if (!slot) {
			err = ENOMEM;
			break;
		}
		err = softhca_build_send_wqe(slot, wr, &sq->lim);
		if (err)
			break;
	}
	softhca_wq_ring(qp, sq, pi, SHCA_DB_SQ);
	pthread_spin_unlock(&sq->lock);

	if (err)
		*bad_wr = wr;
	return err;
}

int softhca_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr)
{
	struct softhca_qp *qp = to_sqp(ibqp);
	struct softhca_wq *rq = &qp->rq;
	uint32_t pi;
	void *slot;
	int err = 0;

	/* no RQ, or a QP in RESET (IBA: receives are posted from INIT on) */
	if (!qp->cap.max_recv_wr || ibqp->state == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}

	pthread_spin_lock(&rq->lock);
	for (pi = rq->pi; wr; wr = wr->next, pi++) {
		slot = softhca_wq_slot(rq, pi);
		if (!slot) {
			err = ENOMEM;
			break;
		}
		err = softhca_build_recv_wqe(slot, wr, &rq->lim);
		if (err)
			break;
	}
	softhca_wq_ring(qp, rq, pi, SHCA_DB_RQ);
	pthread_spin_unlock(&rq->lock);

	if (err)
		*bad_wr = wr;
	return err;
}
