// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Kernel completion queues (spec §13.1, §15): the CQE ring and its record
 * in coherent memory, polling into ib_wc, and arming through doorbell
 * page 0.
 *
 * Memory ordering: an entry belongs to the driver once its phase byte
 * (written last by the device) says so; the rest of it is read after a
 * dma_rmb().  The consumed count goes to the record only after the
 * entries are read (dma_mb()), since the device may reuse a slot as soon
 * as it sees the count.
 *
 * The CQ lock serializes pollers with the discarding of a QP's entries:
 * a QP leaves the qpn xarray, its entries are discarded under the lock of
 * each of its CQs, and from then on no poller can use it.
 */

#include <rdma/ib_verbs.h>

#include "softhca.h"

/* A qpn no QP has: the mark of a discarded entry. */
#define SOFTHCA_QPN_DISCARDED		U32_MAX

/* The device numbers completion statuses as IBA, hence as ib_verbs. */
static_assert((int)SHCA_CQE_LOC_LEN_ERR == (int)IB_WC_LOC_LEN_ERR);
static_assert((int)SHCA_CQE_LOC_PROT_ERR == (int)IB_WC_LOC_PROT_ERR);
static_assert((int)SHCA_CQE_WR_FLUSH_ERR == (int)IB_WC_WR_FLUSH_ERR);
static_assert((int)SHCA_CQE_RETRY_EXC_ERR == (int)IB_WC_RETRY_EXC_ERR);
static_assert((int)SHCA_CQE_RNR_RETRY_EXC_ERR == (int)IB_WC_RNR_RETRY_EXC_ERR);
static_assert((int)SHCA_CQE_GENERAL_ERR == (int)IB_WC_GENERAL_ERR);

int softhca_kcq_init(struct softhca_dev *sdev, struct softhca_cq *cq,
		     u32 log_size, struct shca_buf_desc *desc)
{
	size_t ring_bytes = (size_t)SHCA_CQE_SIZE << log_size;
	int err;

	err = softhca_kring_alloc(sdev, &cq->ring,
				  ring_bytes + sizeof(struct shca_cq_record),
				  desc);
	if (err)
		return err;

	cq->record = cq->ring.buf + ring_bytes;
	cq->log_size = log_size;
	cq->ci = 0;
	spin_lock_init(&cq->lock);
	return 0;
}

/* The entry at @ci if the device has handed it over. */
static struct shca_cqe *softhca_kcq_entry(struct softhca_cq *cq, u32 ci)
{
	struct shca_cqe *cqe = cq->ring.buf;
	u8 phase = ((ci >> cq->log_size) & 1) ? 0 : SHCA_PHASE_BIT;

	cqe += ci & (BIT(cq->log_size) - 1);
	if ((READ_ONCE(cqe->phase) & SHCA_PHASE_BIT) != phase)
		return NULL;
	/* Read the rest of the entry only after its phase. */
	dma_rmb();
	return cqe;
}

/*
 * Mark the entries of @qpn the driver has not consumed yet, for a QP that
 * was destroyed or reset: the device writes none after its command.
 */
void softhca_kcq_discard(struct softhca_cq *cq, u32 qpn)
{
	struct shca_cqe *cqe;
	unsigned long flags;
	u32 ci;

	if (!cq->ring.buf)
		return;

	spin_lock_irqsave(&cq->lock, flags);
	for (ci = cq->ci; ci - cq->ci < BIT(cq->log_size); ci++) {
		cqe = softhca_kcq_entry(cq, ci);
		if (!cqe)
			break;
		if (le32_to_cpu(cqe->qpn) == qpn)
			cqe->qpn = cpu_to_le32(SOFTHCA_QPN_DISCARDED);
	}
	spin_unlock_irqrestore(&cq->lock, flags);
}

static enum ib_wc_opcode softhca_wc_opcode(u8 opcode)
{
	switch (opcode) {
	case SHCA_CQE_OP_RDMA_WRITE:
		return IB_WC_RDMA_WRITE;
	case SHCA_CQE_OP_RDMA_READ:
		return IB_WC_RDMA_READ;
	case SHCA_CQE_OP_COMP_SWAP:
		return IB_WC_COMP_SWAP;
	case SHCA_CQE_OP_FETCH_ADD:
		return IB_WC_FETCH_ADD;
	case SHCA_CQE_OP_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case SHCA_CQE_OP_REG_MR:
		return IB_WC_REG_MR;
	case SHCA_CQE_OP_BIND_MW:
		return IB_WC_BIND_MW;
	case SHCA_CQE_OP_RECV:
		return IB_WC_RECV;
	case SHCA_CQE_OP_RECV_RDMA_IMM:
		return IB_WC_RECV_RDMA_WITH_IMM;
	default:
		return IB_WC_SEND;
	}
}

/* The completed WQE and every unsignaled one before it are free. */
static void softhca_wq_complete(struct softhca_wq *wq, u16 wqe_index)
{
	u32 mask = BIT(wq->log_size) - 1;

	if (wq->ring.buf)
		WRITE_ONCE(wq->ci, wq->ci + ((wqe_index - wq->ci) & mask) + 1);
}

/* Returns false for an entry to skip: of a destroyed or reset QP. */
static bool softhca_kcq_to_wc(struct softhca_dev *sdev,
			      const struct shca_cqe *cqe, struct ib_wc *wc)
{
	struct softhca_qp *qp = xa_load(&sdev->qps, le32_to_cpu(cqe->qpn));
	bool recv = cqe->opcode & SHCA_CQE_OP_RECV;

	if (!qp)
		return false;
	softhca_wq_complete(recv ? &qp->rq : &qp->sq,
			    le16_to_cpu(cqe->wqe_index));

	memset(wc, 0, sizeof(*wc));
	wc->wr_id = le64_to_cpu(cqe->wr_id);
	wc->status = cqe->status <= SHCA_CQE_GENERAL_ERR ? cqe->status :
							   IB_WC_GENERAL_ERR;
	wc->opcode = softhca_wc_opcode(cqe->opcode);
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = le32_to_cpu(cqe->byte_len);
	wc->qp = &qp->ibqp;
	wc->src_qp = le32_to_cpu(cqe->src_qp);
	wc->port_num = SOFTHCA_PORT;
	if (cqe->flags & SHCA_CQE_WITH_IMM) {
		/* Stored as on the wire: big-endian already. */
		wc->ex.imm_data = (__force __be32)cqe->imm;
		wc->wc_flags |= IB_WC_WITH_IMM;
	} else if (cqe->flags & SHCA_CQE_WITH_INV) {
		wc->ex.invalidate_rkey = le32_to_cpu(cqe->imm);
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
	}
	if (cqe->flags & SHCA_CQE_GRH) {
		wc->wc_flags |= IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE;
		wc->network_hdr_type = cqe->flags & SHCA_CQE_IPV4 ?
				       RDMA_NETWORK_IPV4 : RDMA_NETWORK_IPV6;
	}
	return true;
}

int softhca_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct softhca_dev *sdev = to_sdev(ibcq->device);
	struct softhca_cq *cq = to_scq(ibcq);
	struct shca_cqe *cqe;
	unsigned long flags;
	u32 start;
	int n = 0;

	/* User CQs are polled by the provider. */
	if (!cq->ring.buf)
		return -EOPNOTSUPP;

	spin_lock_irqsave(&cq->lock, flags);
	start = cq->ci;
	while (n < num_entries) {
		cqe = softhca_kcq_entry(cq, cq->ci);
		if (!cqe)
			break;
		if (softhca_kcq_to_wc(sdev, cqe, &wc[n]))
			n++;
		cq->ci++;
	}
	if (cq->ci != start) {
		/* The entries are read before the device may reuse them. */
		dma_mb();
		WRITE_ONCE(cq->record->ci, cpu_to_le32(cq->ci));
	}
	spin_unlock_irqrestore(&cq->lock, flags);

	return n;
}

int softhca_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct softhca_dev *sdev = to_sdev(ibcq->device);
	struct softhca_cq *cq = to_scq(ibcq);
	u32 db = cq->cqn | SHCA_DB_CQ_ARM;
	unsigned long irqflags;
	int missed;

	if (!cq->ring.buf)
		return -EOPNOTSUPP;

	if ((flags & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED)
		db |= SHCA_DB_CQ_SOLICITED;
	writel(db, sdev->db + SHCA_DB_CQ);

	if (!(flags & IB_CQ_REPORT_MISSED_EVENTS))
		return 0;

	/* Arming ignores entries written before it (spec §13.1). */
	spin_lock_irqsave(&cq->lock, irqflags);
	missed = softhca_kcq_entry(cq, cq->ci) ? 1 : 0;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return missed;
}
