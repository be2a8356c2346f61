// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Queue pairs (spec §13.2, §17): RC, UC, UD and XRC send QPs of user
 * contexts, whose send and receive rings live in the process's memory, and
 * RC, UC, UD and GSI QPs of the kernel, whose rings softhca_kqp.c keeps.
 * XRC target QPs (spec §13.7) are the kernel's too, and have no rings: what
 * they receive goes to the XRC SRQs their requests name.  Attributes
 * travel to and from the device as a 64-byte struct shca_qp_attr in
 * coherent memory; the device enforces the state machine,
 * ib_modify_qp_is_ok() checks first.
 */

#include <linux/dma-mapping.h>

#include <rdma/ib_umem.h>
#include <rdma/uverbs_ioctl.h>

#include "softhca.h"
#include "softhca-abi.h"

/* The device numbers states and MTUs as IBA, hence as ib_verbs. */
static_assert((int)SHCA_QPS_RESET == (int)IB_QPS_RESET);
static_assert((int)SHCA_QPS_INIT == (int)IB_QPS_INIT);
static_assert((int)SHCA_QPS_RTR == (int)IB_QPS_RTR);
static_assert((int)SHCA_QPS_RTS == (int)IB_QPS_RTS);
static_assert((int)SHCA_QPS_SQD == (int)IB_QPS_SQD);
static_assert((int)SHCA_QPS_SQE == (int)IB_QPS_SQE);
static_assert((int)SHCA_QPS_ERR == (int)IB_QPS_ERR);

/* PSNs are 24 bits (spec §16). */
#define SOFTHCA_PSN_MASK		GENMASK(23, 0)

/* Attributes this driver passes to the device. */
#define SOFTHCA_QP_ATTR_MASK						\
	(IB_QP_STATE | IB_QP_CUR_STATE | IB_QP_ACCESS_FLAGS |		\
	 IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_QKEY | IB_QP_AV |	\
	 IB_QP_PATH_MTU | IB_QP_TIMEOUT | IB_QP_RETRY_CNT |		\
	 IB_QP_RNR_RETRY | IB_QP_RQ_PSN | IB_QP_MAX_QP_RD_ATOMIC |	\
	 IB_QP_MIN_RNR_TIMER | IB_QP_SQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC |	\
	 IB_QP_DEST_QPN | IB_QP_EN_SQD_ASYNC_NOTIFY)

/* A QP grants remote rights only (spec §13.2). */
#define SOFTHCA_QP_ACCESS						\
	(SHCA_ACCESS_REMOTE_WRITE | SHCA_ACCESS_REMOTE_READ |		\
	 SHCA_ACCESS_REMOTE_ATOMIC)
/* what FLUSH requests may ask of a QP, with CAPS.FLUSH */
#define SOFTHCA_QP_ACCESS_FLUSH						\
	(SHCA_ACCESS_FLUSH_GLOBAL | SHCA_ACCESS_FLUSH_PERSISTENT)

/* One struct shca_qp_attr for one command. */
struct softhca_qp_attr_buf {
	struct shca_qp_attr *attr;
	dma_addr_t dma;
};

static int softhca_qp_attr_alloc(struct softhca_dev *sdev,
				 struct softhca_qp_attr_buf *buf)
{
	/* Coherent memory is page aligned, hence 64-byte aligned. */
	buf->attr = dma_alloc_coherent(&sdev->pdev->dev, sizeof(*buf->attr),
				       &buf->dma, GFP_KERNEL);
	return buf->attr ? 0 : -ENOMEM;
}

static void softhca_qp_attr_free(struct softhca_dev *sdev,
				 struct softhca_qp_attr_buf *buf)
{
	dma_free_coherent(&sdev->pdev->dev, sizeof(*buf->attr), buf->attr,
			  buf->dma);
}

/* The largest number of SGEs a WQE stride leaves room for. */
static u32 softhca_wqe_sges(u8 shift, size_t header, u32 max)
{
	return min_t(u32, (BIT(shift) - header) / sizeof(struct shca_sge), max);
}

/* The send WQE header, and the AV of a datagram QP's (spec §15). */
size_t softhca_sq_header(enum ib_qp_type type)
{
	if (type == IB_QPT_UD || type == IB_QPT_GSI)
		return sizeof(struct shca_send_wqe) + sizeof(struct shca_av);
	return sizeof(struct shca_send_wqe);
}

/* A QP that receives through an SRQ, as XRC ones do if at all, has no RQ. */
static bool softhca_qp_has_rq(const struct ib_qp_init_attr *init_attr)
{
	return !init_attr->srq && init_attr->qp_type != IB_QPT_XRC_INI &&
	       init_attr->qp_type != IB_QPT_XRC_TGT;
}

static int softhca_qp_check(struct softhca_dev *sdev,
			    struct ib_qp_init_attr *init_attr,
			    const struct softhca_ibv_create_qp *req)
{
	size_t sq_header = softhca_sq_header(init_attr->qp_type);
	struct softhca_caps *caps = &sdev->caps;
	struct ib_qp_cap *cap = &init_attr->cap;
	struct ib_device *ibdev = &sdev->ibdev;
	bool has_rq = req->rq_buf_size;
	u64 sq_size = (u64)BIT(req->sq_log_size) << req->sq_wqe_shift;

	if (req->comp_mask & ~SOFTHCA_CREATE_QP_SQ_RECORD) {
		ibdev_dbg(ibdev, "create_qp: unknown comp_mask %#x\n",
			  req->comp_mask);
		return -EOPNOTSUPP;
	}

	if (cap->max_send_wr > caps->max_qp_wr ||
	    cap->max_recv_wr > caps->max_qp_wr ||
	    cap->max_send_sge > caps->max_sge ||
	    cap->max_recv_sge > caps->max_sge ||
	    cap->max_inline_data > caps->max_inline) {
		ibdev_dbg(ibdev, "create_qp: caps over the device's limits\n");
		return -EINVAL;
	}

	if (req->sq_wqe_shift < SOFTHCA_SQ_WQE_SHIFT_MIN ||
	    req->sq_wqe_shift > SOFTHCA_WQE_SHIFT_MAX ||
	    req->sq_log_size > 31 ||
	    BIT(req->sq_log_size) < cap->max_send_wr ||
	    BIT(req->sq_log_size) > caps->max_qp_wr ||
	    softhca_wqe_sges(req->sq_wqe_shift, sq_header, U32_MAX) <
	    cap->max_send_sge ||
	    BIT(req->sq_wqe_shift) - sq_header < cap->max_inline_data ||
	    req->sq_buf_size < sq_size +
	    (req->comp_mask & SOFTHCA_CREATE_QP_SQ_RECORD ?
	     sizeof(struct shca_sq_record) : 0)) {
		ibdev_dbg(ibdev, "create_qp: bad SQ 2^%u x 2^%u, %llu bytes\n",
			  req->sq_log_size, req->sq_wqe_shift, req->sq_buf_size);
		return -EINVAL;
	}

	if (has_rq && !softhca_qp_has_rq(init_attr)) {
		ibdev_dbg(ibdev, "create_qp: an RQ for a QP without one\n");
		return -EINVAL;
	}
	if (!has_rq) {
		if (cap->max_recv_wr || req->rq_log_size || req->rq_wqe_shift) {
			ibdev_dbg(ibdev, "create_qp: receives without an RQ\n");
			return -EINVAL;
		}
		return 0;
	}

	if (req->rq_wqe_shift < SOFTHCA_RQ_WQE_SHIFT_MIN ||
	    req->rq_wqe_shift > SOFTHCA_WQE_SHIFT_MAX ||
	    req->rq_log_size > 31 ||
	    BIT(req->rq_log_size) < cap->max_recv_wr ||
	    BIT(req->rq_log_size) > caps->max_qp_wr ||
	    softhca_wqe_sges(req->rq_wqe_shift, sizeof(struct shca_recv_wqe),
			     U32_MAX) < cap->max_recv_sge ||
	    req->rq_buf_size < (u64)BIT(req->rq_log_size) << req->rq_wqe_shift) {
		ibdev_dbg(ibdev, "create_qp: bad RQ 2^%u x 2^%u, %llu bytes\n",
			  req->rq_log_size, req->rq_wqe_shift, req->rq_buf_size);
		return -EINVAL;
	}

	return 0;
}

/*
 * What rings of the given geometry hold (rq_wqe_shift 0: no RQ), reported
 * back through init_attr->cap; user and kernel QPs alike.
 */
void softhca_qp_set_cap(struct softhca_dev *sdev, struct softhca_qp *qp,
			struct ib_qp_init_attr *init_attr, u8 sq_log_size,
			u8 sq_wqe_shift, u8 rq_log_size, u8 rq_wqe_shift)
{
	size_t sq_header = softhca_sq_header(init_attr->qp_type);
	u32 sq_room = BIT(sq_wqe_shift) - sq_header;
	struct ib_qp_cap *cap = &init_attr->cap;

	cap->max_send_wr = BIT(sq_log_size);
	cap->max_send_sge = softhca_wqe_sges(sq_wqe_shift, sq_header,
					     sdev->caps.max_sge);
	cap->max_inline_data = min(sq_room, sdev->caps.max_inline);
	if (rq_wqe_shift) {
		cap->max_recv_wr = BIT(rq_log_size);
		cap->max_recv_sge =
			softhca_wqe_sges(rq_wqe_shift,
					 sizeof(struct shca_recv_wqe),
					 sdev->caps.max_sge);
	} else {
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	}
	qp->cap = *cap;
	qp->sq_sig_type = init_attr->sq_sig_type;
}

/*
 * Pin the rings of a user QP and describe them in @params; the caller
 * frees the page lists after CREATE_QP.
 */
static int softhca_uqp_init(struct softhca_dev *sdev, struct softhca_qp *qp,
			    struct ib_qp_init_attr *init_attr,
			    struct ib_udata *udata,
			    struct softhca_create_qp_params *params,
			    struct softhca_pbl *sq_pbl,
			    struct softhca_pbl *rq_pbl)
{
	struct softhca_ibv_create_qp req;
	int err;

	err = softhca_copy_req(&sdev->ibdev, udata, &req, sizeof(req));
	if (err)
		return err;
	err = softhca_qp_check(sdev, init_attr, &req);
	if (err)
		return err;

	qp->sq_umem = softhca_ring_pin(sdev, req.sq_buf_addr, req.sq_buf_size,
				       sq_pbl);
	if (IS_ERR(qp->sq_umem)) {
		err = PTR_ERR(qp->sq_umem);
		qp->sq_umem = NULL;
		return err;
	}

	if (req.rq_buf_size) {
		qp->rq_umem = softhca_ring_pin(sdev, req.rq_buf_addr,
					       req.rq_buf_size, rq_pbl);
		if (IS_ERR(qp->rq_umem)) {
			err = PTR_ERR(qp->rq_umem);
			qp->rq_umem = NULL;
			softhca_pbl_free(sdev, sq_pbl);
			ib_umem_release(qp->sq_umem);
			qp->sq_umem = NULL;
			return err;
		}
		params->rq = &rq_pbl->desc;
		params->rq_log_size = req.rq_log_size;
		params->rq_wqe_shift = req.rq_wqe_shift;
	}

	/* The record is the provider's to use when the device keeps it. */
	if ((req.comp_mask & SOFTHCA_CREATE_QP_SQ_RECORD) &&
	    (sdev->caps.caps & SHCA_CAP_SQ_RECORD))
		params->flags |= SHCA_QP_F_SQ_RECORD;
	params->sq = &sq_pbl->desc;
	params->sq_log_size = req.sq_log_size;
	params->sq_wqe_shift = req.sq_wqe_shift;
	softhca_qp_set_cap(sdev, qp, init_attr, req.sq_log_size,
			   req.sq_wqe_shift, params->rq_log_size,
			   params->rq_wqe_shift);
	return 0;
}

static void softhca_qp_release(struct softhca_dev *sdev, struct softhca_qp *qp)
{
	ib_umem_release(qp->rq_umem);
	ib_umem_release(qp->sq_umem);
	softhca_kqp_free(sdev, qp);
}

/* The device's type for a verbs type it supports, 0 for the others. */
static u8 softhca_qp_hw_type(struct softhca_dev *sdev, enum ib_qp_type type,
			     const struct softhca_ucontext *uctx)
{
	switch (type) {
	case IB_QPT_RC:
		return SHCA_QPT_RC;
	case IB_QPT_UC:
		return SHCA_QPT_UC;
	case IB_QPT_UD:
		return softhca_has_dgram(sdev) ? SHCA_QPT_UD : 0;
	case IB_QPT_GSI:
		return softhca_has_dgram(sdev) && !uctx ? SHCA_QPT_GSI : 0;
	case IB_QPT_XRC_INI:
		/* kernel work requests cannot name the XRC SRQ of a send */
		return softhca_has_xrc(sdev) && uctx ? SHCA_QPT_XRC_INI : 0;
	case IB_QPT_XRC_TGT:
		/* ib_core creates every one for the kernel, without udata */
		return softhca_has_xrc(sdev) && !uctx ? SHCA_QPT_XRC_TGT : 0;
	default:
		return 0;
	}
}

/*
 * The PD, or the XRC domain, and the CQs the device is told of.  An XRC
 * send QP has no receive side: its recv_cqn is its send_cqn.  An XRC
 * target QP has neither PD nor CQs (spec §13.7).
 */
static int softhca_qp_set_objs(struct ib_qp *ibqp,
			       const struct ib_qp_init_attr *init_attr,
			       struct softhca_create_qp_params *params)
{
	struct ib_cq *recv_cq = init_attr->recv_cq;

	switch (init_attr->qp_type) {
	case IB_QPT_XRC_TGT:
		if (!init_attr->xrcd)
			return -EINVAL;
		params->pdn = to_sxrcd(init_attr->xrcd)->xrcdn;
		return 0;
	case IB_QPT_XRC_INI:
		recv_cq = init_attr->send_cq;
		break;
	default:
		break;
	}
	if (!init_attr->send_cq || !recv_cq)
		return -EINVAL;
	params->pdn = to_spd(ibqp->pd)->pdn;
	params->send_cqn = to_scq(init_attr->send_cq)->cqn;
	params->recv_cqn = to_scq(recv_cq)->cqn;
	return 0;
}

int softhca_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init_attr,
		      struct ib_udata *udata)
{
	struct softhca_dev *sdev = to_sdev(ibqp->device);
	struct softhca_ibv_create_qp_resp resp = {};
	struct softhca_create_qp_params params = {};
	struct softhca_pbl sq_pbl = {}, rq_pbl = {};
	struct softhca_qp *qp = to_sqp(ibqp);
	struct shca_buf_desc sq_desc, rq_desc;
	struct softhca_ucontext *uctx;
	struct ib_srq *srq;
	u32 qpn;
	int err;

	if (!softhca_has_qp(sdev))
		return -EOPNOTSUPP;
	uctx = rdma_udata_to_drv_context(udata, struct softhca_ucontext,
					 ibucontext);
	params.type = softhca_qp_hw_type(sdev, init_attr->qp_type, uctx);
	if (!params.type) {
		ibdev_dbg(&sdev->ibdev, "create_qp: type %d not supported\n",
			  init_attr->qp_type);
		return -EOPNOTSUPP;
	}
	/* A target QP takes WQEs from the SRQ each request names (§13.7). */
	srq = init_attr->qp_type == IB_QPT_XRC_TGT ? NULL : init_attr->srq;
	if (init_attr->create_flags ||
	    (srq && (!softhca_has_srq(sdev) ||
		     init_attr->qp_type == IB_QPT_GSI))) {
		ibdev_dbg(&sdev->ibdev, "create_qp: flags or SRQ not supported\n");
		return -EOPNOTSUPP;
	}
	if (srq) {
		params.flags |= SHCA_QP_F_SRQ;
		params.srqn = to_ssrq(srq)->srqn;
	}
	if (!softhca_qp_has_rq(init_attr)) {
		/* IBA: receive caps are ignored; the QP has no RQ of its own */
		init_attr->cap.max_recv_wr = 0;
		init_attr->cap.max_recv_sge = 0;
	}
	err = softhca_qp_set_objs(ibqp, init_attr, &params);
	if (err)
		return err;

	/* A target QP has no rings, and caps of 0. */
	if (init_attr->qp_type == IB_QPT_XRC_TGT)
		memset(&init_attr->cap, 0, sizeof(init_attr->cap));
	else if (uctx)
		err = softhca_uqp_init(sdev, qp, init_attr, udata, &params,
				       &sq_pbl, &rq_pbl);
	else
		err = softhca_kqp_init(sdev, qp, init_attr, &params, &sq_desc,
				       &rq_desc);
	if (err)
		return err;

	params.uctx = uctx ? uctx->uctx : 0;
	err = softhca_cmd_create_qp(sdev, &params, &qpn);
	softhca_pbl_free(sdev, &sq_pbl);
	softhca_pbl_free(sdev, &rq_pbl);
	if (err) {
		ibdev_dbg(&sdev->ibdev, "CREATE_QP failed: %d\n", err);
		goto err_release;
	}
	ibqp->qp_num = qpn;
	if (init_attr->qp_type == IB_QPT_GSI && qpn != 1) {
		ibdev_err_ratelimited(&sdev->ibdev,
				      "device gave the GSI QP qpn %u\n", qpn);
		err = -EIO;
		goto err_destroy;
	}

	/* Events of an earlier QP with this number go before it appears. */
	softhca_eq_sync(sdev);
	err = xa_insert(&sdev->qps, qpn, qp, GFP_KERNEL);
	if (err) {
		ibdev_err_ratelimited(&sdev->ibdev,
				      "device returned qpn %u in use: %d\n",
				      qpn, err);
		goto err_destroy;
	}

	if (uctx) {
		resp.qpn = qpn;
		if (params.flags & SHCA_QP_F_SQ_RECORD)
			resp.comp_mask |= SOFTHCA_CREATE_QP_RESP_SQ_RECORD;
		err = softhca_copy_resp(udata, &resp, sizeof(resp));
		if (err)
			goto err_erase;
	}

	return 0;

err_erase:
	xa_erase(&sdev->qps, qpn);
err_destroy:
	if (softhca_cmd_destroy_qp(sdev, qpn))
		return err;	/* the device may still use the rings */
	softhca_eq_sync(sdev);
err_release:
	softhca_qp_release(sdev, qp);
	return err;
}

int softhca_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct softhca_dev *sdev = to_sdev(ibqp->device);
	struct softhca_qp *qp = to_sqp(ibqp);
	int err;

	xa_erase(&sdev->qps, ibqp->qp_num);
	err = softhca_cmd_destroy_qp(sdev, ibqp->qp_num);
	/* No poller of a kernel CQ uses the QP once this returns. */
	softhca_kqp_discard(qp);
	if (err) {
		/* ib_core frees the QP anyway; its rings stay allocated. */
		ibdev_err_ratelimited(&sdev->ibdev,
				      "DESTROY_QP %u failed: %d, leaking its rings\n",
				      ibqp->qp_num, err);
		return 0;
	}

	/* No event handler uses the QP once this returns. */
	softhca_eq_sync(sdev);
	softhca_qp_release(sdev, qp);
	return 0;
}

/* The address vector of a RoCE v2 path (spec §13.2). */
static int softhca_qp_set_av(struct softhca_dev *sdev, struct ib_qp *ibqp,
			     const struct rdma_ah_attr *ah_attr, u32 dest_qpn,
			     struct shca_av *av)
{
	int err;

	err = softhca_av_from_ah_attr(sdev, ah_attr, av);
	if (err)
		return err;

	/* As rdma_rxe does, so that the two choose alike. */
	av->udp_sport = cpu_to_le16(rdma_get_udp_sport(le32_to_cpu(av->flow_label),
						       ibqp->qp_num, dest_qpn));
	return 0;
}

/* ib_qp_attr and its mask to struct shca_qp_attr and SHCA_QP_ATTR_*. */
static int softhca_qp_attr_to_hw(struct softhca_dev *sdev, struct ib_qp *ibqp,
				 const struct ib_qp_attr *attr, int mask,
				 u32 dest_qpn, struct shca_qp_attr *hw,
				 u32 *hw_mask)
{
	u32 max_atom = sdev->caps.max_qp_rd_atom;
	u32 access;
	int err;

	memset(hw, 0, sizeof(*hw));
	*hw_mask = 0;

	if (mask & IB_QP_STATE) {
		hw->state = attr->qp_state;
		*hw_mask |= SHCA_QP_ATTR_STATE;
	}
	if (mask & IB_QP_ACCESS_FLAGS) {
		access = softhca_access_to_hw(attr->qp_access_flags);
		access &= SOFTHCA_QP_ACCESS |
			  (softhca_has_flush(sdev) ? SOFTHCA_QP_ACCESS_FLUSH : 0);
		hw->access = cpu_to_le32(access);
		*hw_mask |= SHCA_QP_ATTR_ACCESS;
	}
	if (mask & IB_QP_PATH_MTU) {
		if (attr->path_mtu < IB_MTU_256 ||
		    attr->path_mtu > IB_MTU_4096)
			return -EINVAL;
		hw->path_mtu = attr->path_mtu;
		*hw_mask |= SHCA_QP_ATTR_PATH_MTU;
	}
	if (mask & IB_QP_AV) {
		err = softhca_qp_set_av(sdev, ibqp, &attr->ah_attr, dest_qpn,
					&hw->av);
		if (err)
			return err;
		*hw_mask |= SHCA_QP_ATTR_AV;
	}
	if (mask & IB_QP_TIMEOUT) {
		hw->timeout = attr->timeout;
		*hw_mask |= SHCA_QP_ATTR_TIMEOUT;
	}
	if (mask & IB_QP_RETRY_CNT) {
		hw->retry_cnt = attr->retry_cnt;
		*hw_mask |= SHCA_QP_ATTR_RETRY_CNT;
	}
	if (mask & IB_QP_RNR_RETRY) {
		hw->rnr_retry = attr->rnr_retry;
		*hw_mask |= SHCA_QP_ATTR_RNR_RETRY;
	}
	if (mask & IB_QP_MIN_RNR_TIMER) {
		hw->min_rnr_timer = attr->min_rnr_timer;
		*hw_mask |= SHCA_QP_ATTR_MIN_RNR_TIMER;
	}
	if (mask & IB_QP_RQ_PSN) {
		hw->rq_psn = cpu_to_le32(attr->rq_psn & SOFTHCA_PSN_MASK);
		*hw_mask |= SHCA_QP_ATTR_RQ_PSN;
	}
	if (mask & IB_QP_SQ_PSN) {
		hw->sq_psn = cpu_to_le32(attr->sq_psn & SOFTHCA_PSN_MASK);
		*hw_mask |= SHCA_QP_ATTR_SQ_PSN;
	}
	if (mask & IB_QP_MAX_QP_RD_ATOMIC) {
		if (attr->max_rd_atomic > max_atom)
			return -EINVAL;
		hw->max_rd_atomic = attr->max_rd_atomic;
		*hw_mask |= SHCA_QP_ATTR_MAX_RD_ATOMIC;
	}
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC) {
		if (attr->max_dest_rd_atomic > max_atom)
			return -EINVAL;
		hw->max_dest_rd_atomic = attr->max_dest_rd_atomic;
		*hw_mask |= SHCA_QP_ATTR_MAX_DEST_RD_ATOMIC;
	}
	if (mask & IB_QP_DEST_QPN) {
		hw->dest_qpn = cpu_to_le32(attr->dest_qp_num);
		*hw_mask |= SHCA_QP_ATTR_DEST_QPN;
	}
	/* RTS -> SQD: SQ_DRAINED once the started WQEs are done */
	if ((mask & IB_QP_EN_SQD_ASYNC_NOTIFY) && attr->en_sqd_async_notify)
		*hw_mask |= SHCA_QP_ATTR_SQD_NOTIFY;
	if (mask & IB_QP_QKEY) {
		hw->qkey = cpu_to_le32(attr->qkey);
		*hw_mask |= SHCA_QP_ATTR_QKEY;
	}
	return 0;
}

/*
 * The device takes XRC QPs for RC QPs (spec §13.7), but ib_core neither
 * requires nor passes (uverbs' modify_qp_mask()) the attributes of the side
 * an XRC QP lacks: the responder's of a send QP at INIT -> RTR, the
 * requester's of a target QP at RTR -> RTS.  They go to the device as 0.
 */
static u32 softhca_xrc_unused_attrs(enum ib_qp_type type,
				    enum ib_qp_state cur, enum ib_qp_state new)
{
	if (type == IB_QPT_XRC_INI && cur == IB_QPS_INIT && new == IB_QPS_RTR)
		return SHCA_QP_ATTR_MAX_DEST_RD_ATOMIC |
		       SHCA_QP_ATTR_MIN_RNR_TIMER;
	if (type == IB_QPT_XRC_TGT && cur == IB_QPS_RTR && new == IB_QPS_RTS)
		return SHCA_QP_ATTR_RETRY_CNT | SHCA_QP_ATTR_RNR_RETRY |
		       SHCA_QP_ATTR_MAX_RD_ATOMIC;
	return 0;
}

int softhca_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		      int attr_mask, struct ib_udata *udata)
{
	struct softhca_dev *sdev = to_sdev(ibqp->device);
	struct softhca_qp_attr_buf buf;
	enum ib_qp_state cur, new;
	u32 dest_qpn, hw_mask;
	int err;

	if (udata && !softhca_udata_req_ok(&sdev->ibdev, udata))
		return -EINVAL;
	if (attr_mask & ~SOFTHCA_QP_ATTR_MASK) {
		ibdev_dbg(&sdev->ibdev, "modify_qp: attributes %#x unsupported\n",
			  attr_mask & ~SOFTHCA_QP_ATTR_MASK);
		return -EOPNOTSUPP;
	}
	if (((attr_mask & IB_QP_PKEY_INDEX) && attr->pkey_index) ||
	    ((attr_mask & IB_QP_PORT) && attr->port_num != SOFTHCA_PORT))
		return -EINVAL;

	err = softhca_qp_attr_alloc(sdev, &buf);
	if (err)
		return err;

	/* The device knows the state: it moves QPs to ERR by itself. */
	err = softhca_cmd_query_qp(sdev, ibqp->qp_num, buf.dma);
	if (err)
		goto out;
	cur = attr_mask & IB_QP_CUR_STATE ? attr->cur_qp_state :
					    buf.attr->state;
	new = attr_mask & IB_QP_STATE ? attr->qp_state : cur;
	dest_qpn = attr_mask & IB_QP_DEST_QPN ? attr->dest_qp_num :
						le32_to_cpu(buf.attr->dest_qpn);
	if (!ib_modify_qp_is_ok(cur, new, ibqp->qp_type, attr_mask)) {
		ibdev_dbg(&sdev->ibdev,
			  "modify_qp %u: %d -> %d with mask %#x not allowed\n",
			  ibqp->qp_num, cur, new, attr_mask);
		err = -EINVAL;
		goto out;
	}

	err = softhca_qp_attr_to_hw(sdev, ibqp, attr, attr_mask, dest_qpn,
				    buf.attr, &hw_mask);
	if (err)
		goto out;
	hw_mask |= softhca_xrc_unused_attrs(ibqp->qp_type, cur, new);

	err = softhca_cmd_modify_qp(sdev, ibqp->qp_num, hw_mask, buf.dma);
	if (err)
		ibdev_dbg(&sdev->ibdev, "MODIFY_QP %u mask %#x failed: %d\n",
			  ibqp->qp_num, hw_mask, err);
	else if (new == IB_QPS_RESET)
		softhca_kqp_reset(to_sqp(ibqp));
out:
	softhca_qp_attr_free(sdev, &buf);
	return err;
}

static void softhca_qp_attr_from_hw(struct softhca_qp *qp,
				    const struct shca_qp_attr *hw,
				    struct ib_qp_attr *attr)
{
	struct rdma_ah_attr *ah_attr = &attr->ah_attr;
	union ib_gid dgid;

	memset(attr, 0, sizeof(*attr));
	attr->qp_state = hw->state;
	attr->cur_qp_state = hw->state;
	attr->path_mtu = hw->path_mtu;
	attr->path_mig_state = IB_MIG_MIGRATED;
	attr->qkey = le32_to_cpu(hw->qkey);
	attr->rq_psn = le32_to_cpu(hw->rq_psn);
	attr->sq_psn = le32_to_cpu(hw->sq_psn);
	attr->dest_qp_num = le32_to_cpu(hw->dest_qpn);
	attr->qp_access_flags = softhca_access_from_hw(le32_to_cpu(hw->access));
	attr->cap = qp->cap;
	attr->port_num = SOFTHCA_PORT;
	attr->timeout = hw->timeout;
	attr->retry_cnt = hw->retry_cnt;
	attr->rnr_retry = hw->rnr_retry;
	attr->min_rnr_timer = hw->min_rnr_timer;
	attr->max_rd_atomic = hw->max_rd_atomic;
	attr->max_dest_rd_atomic = hw->max_dest_rd_atomic;
	attr->sq_draining = hw->state == SHCA_QPS_SQD;

	ah_attr->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(ah_attr, SOFTHCA_PORT);
	memcpy(dgid.raw, hw->av.dgid, sizeof(dgid.raw));
	rdma_ah_set_grh(ah_attr, &dgid, le32_to_cpu(hw->av.flow_label),
			le16_to_cpu(hw->av.sgid_index), hw->av.hop_limit,
			hw->av.traffic_class);
	memcpy(ah_attr->roce.dmac, hw->av.dmac, sizeof(ah_attr->roce.dmac));
}

int softhca_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		     int attr_mask, struct ib_qp_init_attr *init_attr)
{
	struct softhca_dev *sdev = to_sdev(ibqp->device);
	struct softhca_qp *qp = to_sqp(ibqp);
	struct softhca_qp_attr_buf buf;
	int err;

	err = softhca_qp_attr_alloc(sdev, &buf);
	if (err)
		return err;

	err = softhca_cmd_query_qp(sdev, ibqp->qp_num, buf.dma);
	if (err) {
		ibdev_dbg(&sdev->ibdev, "QUERY_QP %u failed: %d\n",
			  ibqp->qp_num, err);
		goto out;
	}
	softhca_qp_attr_from_hw(qp, buf.attr, attr);

	memset(init_attr, 0, sizeof(*init_attr));
	init_attr->event_handler = softhca_qp_event_handler(ibqp);
	init_attr->qp_context = ibqp->qp_context;
	init_attr->send_cq = ibqp->send_cq;
	init_attr->recv_cq = ibqp->recv_cq;
	init_attr->cap = qp->cap;
	init_attr->sq_sig_type = qp->sq_sig_type;
	init_attr->qp_type = ibqp->qp_type;
	init_attr->port_num = SOFTHCA_PORT;
out:
	softhca_qp_attr_free(sdev, &buf);
	return err;
}

static enum ib_event_type softhca_qp_event_type(u8 type)
{
	switch (type) {
	case SHCA_EQE_QP_FATAL:
		return IB_EVENT_QP_FATAL;
	case SHCA_EQE_QP_REQ_ERR:
		return IB_EVENT_QP_REQ_ERR;
	case SHCA_EQE_QP_ACCESS_ERR:
		return IB_EVENT_QP_ACCESS_ERR;
	case SHCA_EQE_COMM_EST:
		return IB_EVENT_COMM_EST;
	case SHCA_EQE_QP_LAST_WQE:
		return IB_EVENT_QP_LAST_WQE_REACHED;
	default:
		return IB_EVENT_SQ_DRAINED;
	}
}

/* Asynchronous QP events; called with the EQ lock held. */
void softhca_qp_event(struct softhca_dev *sdev, u32 qpn, u8 type)
{
	struct softhca_qp *qp = xa_load(&sdev->qps, qpn);
	struct ib_qp *ibqp;
	struct ib_event event;

	if (!qp) {
		/* The QP may have just been destroyed. */
		ibdev_dbg(&sdev->ibdev, "event %u for unknown qpn %u\n", type,
			  qpn);
		return;
	}
	ibqp = &qp->ibqp;

	if (type == SHCA_EQE_QP_FATAL)
		ibdev_err_ratelimited(&sdev->ibdev, "QP %u fatal error\n",
				      qpn);
	if (!ibqp->event_handler)
		return;
	event.device = ibqp->device;
	event.element.qp = ibqp;
	event.event = softhca_qp_event_type(type);
	ibqp->event_handler(&event, ibqp->qp_context);
}
