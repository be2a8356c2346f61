// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Kernel queue pairs (spec §14, §15, §17, §18): send and receive rings in
 * coherent memory, work requests turned into WQEs, and doorbells through
 * page 0 of BAR2, the kernel's.  Posting may happen in any context.
 *
 * Memory ordering: WQEs are written to coherent memory, then the doorbell
 * with writel(), which orders those writes before it.  The device reads
 * a WQE once, when it starts it: a slot is reused only after a completion
 * at or past it (softhca_kcq.c advances the consumer count).
 */

#include <linux/log2.h>

#include <rdma/ib_verbs.h>

#include "softhca.h"

/* Each WQE occupies one slot of 2^wqe_shift bytes. */
static void *softhca_wq_slot(struct softhca_wq *wq, u32 index)
{
	return wq->ring.buf +
	       ((size_t)(index & (BIT(wq->log_size) - 1)) << wq->wqe_shift);
}

static bool softhca_wq_full(struct softhca_wq *wq)
{
	return wq->pi - READ_ONCE(wq->ci) >= BIT(wq->log_size);
}

static int softhca_wq_alloc(struct softhca_dev *sdev, struct softhca_wq *wq,
			    u32 entries, u8 wqe_shift,
			    struct shca_buf_desc *desc)
{
	wq->log_size = max_t(u32, order_base_2(entries), SHCA_RING_LOG_MIN);
	wq->wqe_shift = wqe_shift;
	wq->pi = 0;
	wq->ci = 0;
	spin_lock_init(&wq->lock);
	return softhca_kring_alloc(sdev, &wq->ring,
				   (size_t)BIT(wq->log_size) << wqe_shift, desc);
}

/* The smallest stride holding @bytes, or 0 if none does. */
static u8 softhca_wqe_shift(size_t bytes, u8 min_shift)
{
	u8 shift = max_t(u8, order_base_2(bytes), min_shift);

	return shift <= SOFTHCA_WQE_SHIFT_MAX ? shift : 0;
}

int softhca_kqp_init(struct softhca_dev *sdev, struct softhca_qp *qp,
		     struct ib_qp_init_attr *init_attr,
		     struct softhca_create_qp_params *params,
		     struct shca_buf_desc *sq, struct shca_buf_desc *rq)
{
	struct softhca_caps *caps = &sdev->caps;
	struct ib_qp_cap *cap = &init_attr->cap;
	u8 sq_shift, rq_shift = 0;
	size_t sq_bytes;
	int err;

	if (!cap->max_send_wr || cap->max_send_wr > caps->max_qp_wr ||
	    cap->max_recv_wr > caps->max_qp_wr ||
	    cap->max_send_sge > caps->max_sge ||
	    cap->max_recv_sge > caps->max_sge ||
	    cap->max_inline_data > caps->max_inline) {
		ibdev_dbg(&sdev->ibdev, "create_qp: caps over the device's limits\n");
		return -EINVAL;
	}

	sq_bytes = softhca_sq_header(init_attr->qp_type) +
		   max_t(size_t, cap->max_send_sge * sizeof(struct shca_sge),
			 cap->max_inline_data);
	sq_shift = softhca_wqe_shift(sq_bytes, SOFTHCA_SQ_WQE_SHIFT_MIN);
	if (cap->max_recv_wr)
		rq_shift = softhca_wqe_shift(sizeof(struct shca_recv_wqe) +
					     cap->max_recv_sge *
					     sizeof(struct shca_sge),
					     SOFTHCA_RQ_WQE_SHIFT_MIN);
	if (!sq_shift || (cap->max_recv_wr && !rq_shift))
		return -EINVAL;

	err = softhca_wq_alloc(sdev, &qp->sq, cap->max_send_wr, sq_shift, sq);
	if (err)
		return err;
	params->sq = sq;
	params->sq_log_size = qp->sq.log_size;
	params->sq_wqe_shift = sq_shift;

	if (rq_shift) {
		err = softhca_wq_alloc(sdev, &qp->rq, cap->max_recv_wr,
				       rq_shift, rq);
		if (err) {
			softhca_kring_free(sdev, &qp->sq.ring);
			return err;
		}
		params->rq = rq;
		params->rq_log_size = qp->rq.log_size;
		params->rq_wqe_shift = rq_shift;
	}

	softhca_qp_set_cap(sdev, qp, init_attr, params->sq_log_size, sq_shift,
			   params->rq_log_size, rq_shift);
	return 0;
}

void softhca_kqp_free(struct softhca_dev *sdev, struct softhca_qp *qp)
{
	softhca_kring_free(sdev, &qp->rq.ring);
	softhca_kring_free(sdev, &qp->sq.ring);
}

/*
 * Forget the QP's unpolled completions; see softhca_kcq_discard().  An XRC
 * send QP has no receive CQ, a target QP no CQ at all: what it receives
 * completes to the CQs of XRC SRQs, with WQEs of those (spec §13.7).
 */
void softhca_kqp_discard(struct softhca_qp *qp)
{
	if (qp->ibqp.send_cq)
		softhca_kcq_discard(to_scq(qp->ibqp.send_cq), qp->ibqp.qp_num);
	if (qp->ibqp.recv_cq)
		softhca_kcq_discard(to_scq(qp->ibqp.recv_cq), qp->ibqp.qp_num);
}

static void softhca_wq_reset(struct softhca_wq *wq)
{
	unsigned long flags;

	spin_lock_irqsave(&wq->lock, flags);
	wq->pi = 0;
	WRITE_ONCE(wq->ci, 0);
	spin_unlock_irqrestore(&wq->lock, flags);
}

/* After MODIFY_QP to RESET: the device dropped the WQEs, indexes are 0. */
void softhca_kqp_reset(struct softhca_qp *qp)
{
	if (!qp->sq.ring.buf)
		return;

	softhca_kqp_discard(qp);
	softhca_wq_reset(&qp->sq);
	if (qp->rq.ring.buf)
		softhca_wq_reset(&qp->rq);
}

static void softhca_write_sges(struct shca_sge *dst, const struct ib_sge *sg,
			       int num_sge)
{
	int i;

	for (i = 0; i < num_sge; i++) {
		dst[i].addr = cpu_to_le64(sg[i].addr);
		dst[i].length = cpu_to_le32(sg[i].length);
		dst[i].lkey = cpu_to_le32(sg[i].lkey);
	}
}

/* Inline data: the SGEs' bytes, at kernel virtual addresses. */
static int softhca_write_inline(struct softhca_qp *qp, void *dst,
				const struct ib_send_wr *wr,
				struct shca_send_wqe *wqe)
{
	u32 len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		if (wr->sg_list[i].length > qp->cap.max_inline_data - len)
			return -EINVAL;
		memcpy(dst + len, (void *)(uintptr_t)wr->sg_list[i].addr,
		       wr->sg_list[i].length);
		len += wr->sg_list[i].length;
	}
	wqe->flags |= SHCA_WQE_INLINE;
	wqe->inline_len = cpu_to_le32(len);
	return 0;
}

static u8 softhca_send_flags(struct softhca_qp *qp,
			     const struct ib_send_wr *wr)
{
	u8 flags = 0;

	if (wr->send_flags & IB_SEND_SIGNALED ||
	    qp->sq_sig_type == IB_SIGNAL_ALL_WR)
		flags |= SHCA_WQE_SIGNALED;
	if (wr->send_flags & IB_SEND_SOLICITED)
		flags |= SHCA_WQE_SOLICITED;
	if (wr->send_flags & IB_SEND_FENCE)
		flags |= SHCA_WQE_FENCE;
	return flags;
}

/* IB_WR_REG_MR: the page list is in the MR's page, from map_mr_sg. */
static int softhca_build_reg_mr(struct softhca_qp *qp,
				const struct ib_reg_wr *wr,
				struct shca_fast_reg_wqe *wqe)
{
	struct softhca_mr *mr = to_smr(wr->mr);
	u32 page_shift = ilog2(mr->ibmr.page_size);

	if (!mr->page_list || softhca_qp_is_dgram(&qp->ibqp))
		return -EINVAL;

	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = cpu_to_le64(wr->wr.wr_id);
	wqe->opcode = SHCA_WR_REG_MR;
	wqe->flags = softhca_send_flags(qp, &wr->wr) &
		     (SHCA_WQE_SIGNALED | SHCA_WQE_FENCE);
	wqe->page_shift = page_shift;
	wqe->access = cpu_to_le32(softhca_access_to_hw(wr->access));
	wqe->iova = cpu_to_le64(mr->ibmr.iova);
	wqe->length = cpu_to_le64(mr->ibmr.length);
	wqe->key = cpu_to_le32(wr->key);
	wqe->npages = cpu_to_le32(mr->npages);
	/* From this WQE on, the device knows the MR by the new key. */
	WRITE_ONCE(mr->hw_key, wr->key);
	return 0;
}

/* The opcode and the fields it needs; -EINVAL for what it cannot carry. */
static int softhca_build_opcode(struct softhca_qp *qp,
				const struct ib_send_wr *wr,
				struct shca_send_wqe *wqe)
{
	bool dgram = softhca_qp_is_dgram(&qp->ibqp);

	switch (wr->opcode) {
	case IB_WR_SEND:
		wqe->opcode = SHCA_WR_SEND;
		return 0;
	case IB_WR_SEND_WITH_IMM:
		wqe->opcode = SHCA_WR_SEND_IMM;
		/* As on the wire: big-endian already. */
		wqe->imm = (__force __le32)wr->ex.imm_data;
		return 0;
	case IB_WR_SEND_WITH_INV:
		wqe->opcode = SHCA_WR_SEND_INV;
		wqe->imm = cpu_to_le32(wr->ex.invalidate_rkey);
		break;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		if (wr->opcode == IB_WR_RDMA_READ) {
			wqe->opcode = SHCA_WR_RDMA_READ;
		} else if (wr->opcode == IB_WR_RDMA_WRITE) {
			wqe->opcode = SHCA_WR_RDMA_WRITE;
		} else {
			wqe->opcode = SHCA_WR_RDMA_WRITE_IMM;
			wqe->imm = (__force __le32)wr->ex.imm_data;
		}
		wqe->remote_addr = cpu_to_le64(rdma_wr(wr)->remote_addr);
		wqe->rkey = cpu_to_le32(rdma_wr(wr)->rkey);
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		wqe->opcode = wr->opcode == IB_WR_ATOMIC_CMP_AND_SWP ?
			      SHCA_WR_ATOMIC_CMP_SWP :
			      SHCA_WR_ATOMIC_FETCH_ADD;
		wqe->remote_addr = cpu_to_le64(atomic_wr(wr)->remote_addr);
		wqe->rkey = cpu_to_le32(atomic_wr(wr)->rkey);
		wqe->compare_add = cpu_to_le64(atomic_wr(wr)->compare_add);
		wqe->swap = cpu_to_le64(atomic_wr(wr)->swap);
		break;
	case IB_WR_LOCAL_INV:
		wqe->opcode = SHCA_WR_LOCAL_INV;
		wqe->imm = cpu_to_le32(wr->ex.invalidate_rkey);
		break;
	default:
		return -EINVAL;
	}

	/* Datagram QPs send SEND and SEND_IMM only (spec §15). */
	return dgram ? -EINVAL : 0;
}

static int softhca_build_send(struct softhca_qp *qp,
			      const struct ib_send_wr *wr, void *slot)
{
	struct shca_send_wqe *wqe = slot;
	void *data = wqe + 1;
	int err;

	if (wr->opcode == IB_WR_REG_MR)
		return softhca_build_reg_mr(qp, reg_wr(wr), slot);

	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = cpu_to_le64(wr->wr_id);
	wqe->flags = softhca_send_flags(qp, wr);
	err = softhca_build_opcode(qp, wr, wqe);
	if (err)
		return err;

	if (softhca_qp_is_dgram(&qp->ibqp)) {
		const struct ib_ud_wr *ud = ud_wr(wr);

		memcpy(data, &to_sah(ud->ah)->av, sizeof(struct shca_av));
		data += sizeof(struct shca_av);
		wqe->remote_qpn = cpu_to_le32(ud->remote_qpn);
		wqe->remote_qkey = cpu_to_le32(ud->remote_qkey);
	}

	if (wqe->opcode == SHCA_WR_LOCAL_INV)
		return 0;
	if (wr->send_flags & IB_SEND_INLINE &&
	    wqe->opcode != SHCA_WR_RDMA_READ &&
	    wqe->opcode != SHCA_WR_ATOMIC_CMP_SWP &&
	    wqe->opcode != SHCA_WR_ATOMIC_FETCH_ADD)
		return softhca_write_inline(qp, data, wr, wqe);

	if (wr->num_sge > qp->cap.max_send_sge)
		return -EINVAL;
	wqe->num_sge = wr->num_sge;
	softhca_write_sges(data, wr->sg_list, wr->num_sge);
	return 0;
}

/* Tell the device of WQEs posted up to @pi: (pi << 16) | qpn (§14). */
static void softhca_ring_db(struct softhca_dev *sdev, u32 offset, u32 pi,
			    u32 qpn)
{
	writel((pi << 16) | (qpn & SHCA_DB_QN_MASK), sdev->db + offset);
}

int softhca_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		      const struct ib_send_wr **bad_wr)
{
	struct softhca_dev *sdev = to_sdev(ibqp->device);
	struct softhca_qp *qp = to_sqp(ibqp);
	struct softhca_wq *sq = &qp->sq;
	unsigned long flags;
	int err = 0;
	u32 start;

	/* User QPs are posted to by the provider. */
	if (!sq->ring.buf) {
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}

	spin_lock_irqsave(&sq->lock, flags);
	start = sq->pi;
	for (; wr; wr = wr->next) {
		if (softhca_wq_full(sq)) {
			err = -ENOMEM;
			break;
		}
		err = softhca_build_send(qp, wr, softhca_wq_slot(sq, sq->pi));
		if (err)
			break;
		sq->pi++;
	}
	if (sq->pi != start)
		softhca_ring_db(sdev, SHCA_DB_SQ, sq->pi, ibqp->qp_num);
	spin_unlock_irqrestore(&sq->lock, flags);

	if (err) {
		ibdev_dbg(&sdev->ibdev, "post_send to QP %u: opcode %d: %d\n",
			  ibqp->qp_num, wr->opcode, err);
		*bad_wr = wr;
	}
	return err;
}

/*
 * Post receive WQEs to the RQ or SRQ @wq, whose lock the caller holds, and
 * ring its doorbell (@db_offset, queue number @qn) once.
 */
int softhca_wq_post_recv(struct softhca_dev *sdev, struct softhca_wq *wq,
			 u32 max_sge, u32 db_offset, u32 qn,
			 const struct ib_recv_wr *wr,
			 const struct ib_recv_wr **bad_wr)
{
	struct shca_recv_wqe *wqe;
	u32 start = wq->pi;
	int err = 0;

	for (; wr; wr = wr->next) {
		if (softhca_wq_full(wq)) {
			err = -ENOMEM;
			break;
		}
		if (wr->num_sge > max_sge) {
			err = -EINVAL;
			break;
		}
		wqe = softhca_wq_slot(wq, wq->pi);
		memset(wqe, 0, sizeof(*wqe));
		wqe->wr_id = cpu_to_le64(wr->wr_id);
		wqe->num_sge = wr->num_sge;
		softhca_write_sges((struct shca_sge *)(wqe + 1), wr->sg_list,
				   wr->num_sge);
		wq->pi++;
	}
	if (wq->pi != start)
		softhca_ring_db(sdev, db_offset, wq->pi, qn);
	if (err)
		*bad_wr = wr;
	return err;
}

int softhca_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr)
{
	struct softhca_dev *sdev = to_sdev(ibqp->device);
	struct softhca_qp *qp = to_sqp(ibqp);
	struct softhca_wq *rq = &qp->rq;
	unsigned long flags;
	int err;

	if (!rq->ring.buf) {
		*bad_wr = wr;
		return qp->sq.ring.buf ? -EINVAL : -EOPNOTSUPP;
	}

	spin_lock_irqsave(&rq->lock, flags);
	err = softhca_wq_post_recv(sdev, rq, qp->cap.max_recv_sge, SHCA_DB_RQ,
				   ibqp->qp_num, wr, bad_wr);
	spin_unlock_irqrestore(&rq->lock, flags);
	return err;
}
