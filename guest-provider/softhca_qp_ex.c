// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca rdma-core provider: the ibv_wr_* API of QPs made by create_qp_ex
 * with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS (spec §14, §15).  wr_start takes the
 * SQ lock; each opcode call starts a WQE in the next free slot and the
 * setters complete it, through the steps post_send's builder takes
 * (softhca_queue.c), so that both write the same bytes.  wr_complete hands
 * the batch to the device with one doorbell; wr_abort, or an error in any
 * call of the batch, drops it whole: no doorbell or SQ record covers its
 * slots, which stay the provider's.
 */
#include <errno.h>

#include "softhca.h"

/* The send operations the device carries on each QP type (spec §15-§17). */
#define SOFTHCA_UC_SEND_OPS                                                    \
	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |                  \
	 IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
#define SOFTHCA_RC_SEND_OPS                                                    \
	(SOFTHCA_UC_SEND_OPS | IBV_QP_EX_WITH_SEND_WITH_INV |                  \
	 IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |        \
	 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_BIND_MW |        \
	 IBV_QP_EX_WITH_LOCAL_INV)
#define SOFTHCA_UD_SEND_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)

static struct softhca_qp *ex_to_sqp(struct ibv_qp_ex *ibqpx)
{
	return container_of(ibqpx, struct softhca_qp, vqp.qp_ex);
}

static void softhca_wr_start(struct ibv_qp_ex *ibqpx)
{
	struct softhca_qp *qp = ex_to_sqp(ibqpx);

	pthread_spin_lock(&qp->sq.lock);
	qp->wr = (struct softhca_wr_batch){
		.pi = qp->sq.pi,
		.err = softhca_sq_open(&qp->vqp.qp) ? 0 : EINVAL,
	};
}

static int softhca_wr_complete(struct ibv_qp_ex *ibqpx)
{
	struct softhca_qp *qp = ex_to_sqp(ibqpx);
	int err = qp->wr.err;

	if (!err)
		softhca_wq_ring(qp, &qp->sq, qp->wr.pi, SHCA_DB_SQ);
	pthread_spin_unlock(&qp->sq.lock);
	return err;
}

static void softhca_wr_abort(struct ibv_qp_ex *ibqpx)
{
	pthread_spin_unlock(&ex_to_sqp(ibqpx)->sq.lock);
}

/* The batch's first error fails it; the calls after it build nothing. */
static void softhca_wr_fail(struct softhca_qp *qp, int err)
{
	if (err) {
		qp->wr.err = err;
		qp->wr.wqe = NULL;
	}
}

/* The header of the batch's next WQE, from the caller's wr_id and wr_flags */
static struct shca_send_wqe *softhca_wr_begin(struct ibv_qp_ex *ibqpx,
					      uint8_t opcode)
{
	struct softhca_qp *qp = ex_to_sqp(ibqpx);
	void *slot;

	if (qp->wr.err)
		return NULL;
	slot = softhca_wq_slot(&qp->sq, qp->wr.pi);
	if (!slot) {
		softhca_wr_fail(qp, ENOMEM);
		return NULL;
	}
	qp->wr.pi++;
	qp->wr.wqe = softhca_wqe_init(slot, ibqpx->wr_id, opcode,
				      ibqpx->wr_flags, &qp->sq.lim);
	return qp->wr.wqe;
}

static void softhca_wr_send(struct ibv_qp_ex *ibqpx)
{
	softhca_wr_begin(ibqpx, SHCA_WR_SEND);
}

static void softhca_wr_send_imm(struct ibv_qp_ex *ibqpx, __be32 imm_data)
{
	struct shca_send_wqe *wqe = softhca_wr_begin(ibqpx, SHCA_WR_SEND_IMM);

	if (wqe)
		softhca_wqe_set_imm(wqe, imm_data);
}

static void softhca_wr_send_inv(struct ibv_qp_ex *ibqpx,
				uint32_t invalidate_rkey)
{
	struct shca_send_wqe *wqe = softhca_wr_begin(ibqpx, SHCA_WR_SEND_INV);

	if (wqe)
		softhca_wqe_set_inv(wqe, invalidate_rkey);
}

static void softhca_wr_rdma_write(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				  uint64_t remote_addr)
{
	struct shca_send_wqe *wqe = softhca_wr_begin(ibqpx, SHCA_WR_RDMA_WRITE);

	if (wqe)
		softhca_wqe_set_rdma(wqe, rkey, remote_addr);
}

static void softhca_wr_rdma_write_imm(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				      uint64_t remote_addr, __be32 imm_data)
{
	struct shca_send_wqe *wqe =
		softhca_wr_begin(ibqpx, SHCA_WR_RDMA_WRITE_IMM);

	if (wqe) {
		softhca_wqe_set_imm(wqe, imm_data);
		softhca_wqe_set_rdma(wqe, rkey, remote_addr);
	}
}

static void softhca_wr_rdma_read(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				 uint64_t remote_addr)
{
	struct shca_send_wqe *wqe = softhca_wr_begin(ibqpx, SHCA_WR_RDMA_READ);

	if (wqe)
		softhca_wqe_set_rdma(wqe, rkey, remote_addr);
}

static void softhca_wr_atomic(struct ibv_qp_ex *ibqpx, uint8_t opcode,
			      uint32_t rkey, uint64_t remote_addr,
			      uint64_t compare_add, uint64_t swap)
{
	struct shca_send_wqe *wqe = softhca_wr_begin(ibqpx, opcode);

	if (wqe)
		softhca_wqe_set_atomic(wqe, rkey, remote_addr, compare_add,
				       swap);
}

static void softhca_wr_atomic_cmp_swp(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				      uint64_t remote_addr, uint64_t compare,
				      uint64_t swap)
{
	softhca_wr_atomic(ibqpx, SHCA_WR_ATOMIC_CMP_SWP, rkey, remote_addr,
			  compare, swap);
}

static void softhca_wr_atomic_fetch_add(struct ibv_qp_ex *ibqpx, uint32_t rkey,
					uint64_t remote_addr, uint64_t add)
{
	softhca_wr_atomic(ibqpx, SHCA_WR_ATOMIC_FETCH_ADD, rkey, remote_addr,
			  add, 0);
}

static void softhca_wr_atomic_write(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				    uint64_t remote_addr, const void *atomic_wr)
{
	struct shca_send_wqe *wqe =
		softhca_wr_begin(ibqpx, SHCA_WR_ATOMIC_WRITE);

	if (wqe)
		softhca_wqe_set_atomic_write(wqe, rkey, remote_addr, atomic_wr);
}

static void softhca_wr_flush(struct ibv_qp_ex *ibqpx, uint32_t rkey,
			     uint64_t remote_addr, size_t len, uint8_t type,
			     uint8_t level)
{
	struct shca_send_wqe *wqe = softhca_wr_begin(ibqpx, SHCA_WR_FLUSH);

	if (wqe)
		softhca_wr_fail(ex_to_sqp(ibqpx),
				softhca_wqe_set_flush(wqe, rkey, remote_addr,
						      len, type, level));
}

static void softhca_wr_bind_mw(struct ibv_qp_ex *ibqpx, struct ibv_mw *mw,
			       uint32_t rkey,
			       const struct ibv_mw_bind_info *bind_info)
{
	struct shca_send_wqe *wqe = softhca_wr_begin(ibqpx, SHCA_WR_BIND_MW);
	struct softhca_qp *qp = ex_to_sqp(ibqpx);

	if (wqe)
		softhca_wr_fail(qp, softhca_wqe_set_bind(wqe, mw->rkey, rkey,
							 bind_info,
							 &qp->sq.lim));
}

static void softhca_wr_local_inv(struct ibv_qp_ex *ibqpx,
				 uint32_t invalidate_rkey)
{
	struct shca_send_wqe *wqe = softhca_wr_begin(ibqpx, SHCA_WR_LOCAL_INV);
	struct softhca_qp *qp = ex_to_sqp(ibqpx);

	if (wqe)
		softhca_wr_fail(qp, softhca_wqe_set_local_inv(wqe,
							      invalidate_rkey,
							      &qp->sq.lim));
}

static void softhca_wr_set_ud_addr(struct ibv_qp_ex *ibqpx, struct ibv_ah *ah,
				   uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct softhca_qp *qp = ex_to_sqp(ibqpx);

	if (qp->wr.wqe)
		softhca_wr_fail(qp,
				softhca_wqe_set_ud(qp->wr.wqe, ah, remote_qpn,
						   remote_qkey, &qp->sq.lim));
}

static void softhca_wr_set_xrc_srqn(struct ibv_qp_ex *ibqpx,
				    uint32_t remote_srqn)
{
	struct softhca_qp *qp = ex_to_sqp(ibqpx);

	if (qp->wr.wqe)
		softhca_wr_fail(qp,
				softhca_wqe_set_xrc(qp->wr.wqe, remote_srqn));
}

static void softhca_wr_set_sge_list(struct ibv_qp_ex *ibqpx, size_t num_sge,
				    const struct ibv_sge *sg_list)
{
	struct softhca_qp *qp = ex_to_sqp(ibqpx);

	if (qp->wr.wqe)
		softhca_wr_fail(qp, softhca_wqe_set_sges(qp->wr.wqe, sg_list,
							 num_sge, &qp->sq.lim));
}

static void softhca_wr_set_sge(struct ibv_qp_ex *ibqpx, uint32_t lkey,
			       uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	softhca_wr_set_sge_list(ibqpx, 1, &sge);
}

static void softhca_wr_set_inline_data_list(struct ibv_qp_ex *ibqpx,
					    size_t num_buf,
					    const struct ibv_data_buf *buf_list)
{
	struct softhca_qp *qp = ex_to_sqp(ibqpx);
	size_t i;
	int err;

	if (!qp->wr.wqe)
		return;
	err = softhca_wqe_set_inline(qp->wr.wqe);
	for (i = 0; !err && i < num_buf; i++)
		err = softhca_wqe_add_inline(qp->wr.wqe, buf_list[i].addr,
					     buf_list[i].length, &qp->sq.lim);
	softhca_wr_fail(qp, err);
}

static void softhca_wr_set_inline_data(struct ibv_qp_ex *ibqpx, void *addr,
				       size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	softhca_wr_set_inline_data_list(ibqpx, 1, &buf);
}

/*
 * Give the QP the ibv_wr_* calls of attr->send_ops_flags; EOPNOTSUPP for
 * an operation the device does not carry on the QP's type: memory windows
 * and their local invalidation on UC and UD, TSO, and atomic write and
 * flush but on RC QPs of a device that has them.
 */
int softhca_qp_ex_init(struct softhca_qp *qp,
		       const struct ibv_qp_init_attr_ex *attr,
		       const struct softhca_limits *lim)
{
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;
	uint64_t ops = attr->send_ops_flags;
	uint64_t supported;

	switch (attr->qp_type) {
	case IBV_QPT_RC:
		supported = SOFTHCA_RC_SEND_OPS | lim->rc_send_ops;
		break;
	case IBV_QPT_XRC_SEND:
		supported = SOFTHCA_RC_SEND_OPS;
		break;
	case IBV_QPT_UC:
		supported = SOFTHCA_UC_SEND_OPS;
		break;
	case IBV_QPT_UD:
		supported = SOFTHCA_UD_SEND_OPS;
		break;
	default:
		return EOPNOTSUPP;
	}
	if (ops & ~supported)
		return EOPNOTSUPP;

	if (ops & IBV_QP_EX_WITH_SEND)
		qpx->wr_send = softhca_wr_send;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_IMM)
		qpx->wr_send_imm = softhca_wr_send_imm;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_INV)
		qpx->wr_send_inv = softhca_wr_send_inv;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE)
		qpx->wr_rdma_write = softhca_wr_rdma_write;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
		qpx->wr_rdma_write_imm = softhca_wr_rdma_write_imm;
	if (ops & IBV_QP_EX_WITH_RDMA_READ)
		qpx->wr_rdma_read = softhca_wr_rdma_read;
	if (ops & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP)
		qpx->wr_atomic_cmp_swp = softhca_wr_atomic_cmp_swp;
	if (ops & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
		qpx->wr_atomic_fetch_add = softhca_wr_atomic_fetch_add;
	if (ops & IBV_QP_EX_WITH_BIND_MW)
		qpx->wr_bind_mw = softhca_wr_bind_mw;
	if (ops & IBV_QP_EX_WITH_LOCAL_INV)
		qpx->wr_local_inv = softhca_wr_local_inv;
	if (ops & IBV_QP_EX_WITH_ATOMIC_WRITE)
		qpx->wr_atomic_write = softhca_wr_atomic_write;
	if (ops & IBV_QP_EX_WITH_FLUSH)
		qpx->wr_flush = softhca_wr_flush;

	if (attr->qp_type == IBV_QPT_UD)
		qpx->wr_set_ud_addr = softhca_wr_set_ud_addr;
	if (attr->qp_type == IBV_QPT_XRC_SEND)
		qpx->wr_set_xrc_srqn = softhca_wr_set_xrc_srqn;
	qpx->wr_set_sge = softhca_wr_set_sge;
	qpx->wr_set_sge_list = softhca_wr_set_sge_list;
	qpx->wr_set_inline_data = softhca_wr_set_inline_data;
	qpx->wr_set_inline_data_list = softhca_wr_set_inline_data_list;
	qpx->wr_start = softhca_wr_start;
	qpx->wr_complete = softhca_wr_complete;
	qpx->wr_abort = softhca_wr_abort;
	return 0;
}
