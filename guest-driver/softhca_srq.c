// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Shared receive queues (spec §13.5).  A user SRQ's ring lives in the
 * process's memory, pinned and described to the device, and the provider
 * posts to it; a kernel SRQ's ring is coherent memory posted here.  Either
 * way the device writes the count of WQEs it has taken into the record
 * behind the ring, which frees their slots: completions of SRQ WQEs come
 * in any order, through the CQs of the QPs that took them.  An XRC SRQ
 * (spec §13.7) is the same ring in an XRC domain, taken from by the
 * domain's target QPs, whose completions go to the SRQ's own CQ.
 */

#include <linux/dma-mapping.h>

#include <rdma/ib_umem.h>
#include <rdma/uverbs_ioctl.h>

#include "softhca.h"
#include "softhca-abi.h"

/* The ring, then the device's record. */
static u64 softhca_srq_bytes(u8 log_size, u8 wqe_shift)
{
	return ((u64)BIT(log_size) << wqe_shift) +
	       sizeof(struct shca_srq_record);
}

/*
 * The SGEs a receive WQE of an SRQ of MAX_SRQ_WR WQEs holds: its ring and
 * the record behind it fit the SHCA_BUF_LIST_MAX pages of a one-level list
 * of 4 KiB pages (spec §5.2), which a ring of MAX_SRQ_WR WQEs of the
 * largest stride, 2 MiB, would fill without the record.
 */
u32 softhca_srq_max_sge(const struct softhca_caps *caps)
{
	const u64 bytes = (u64)SHCA_BUF_LIST_MAX << SHCA_BUF_PAGE_SHIFT_MIN;
	u8 log_size = order_base_2(caps->max_srq_wr);
	u8 shift = SOFTHCA_WQE_SHIFT_MAX;

	while (shift > SOFTHCA_RQ_WQE_SHIFT_MIN &&
	       softhca_srq_bytes(log_size, shift) > bytes)
		shift--;
	return min_t(u32, (BIT(shift) - sizeof(struct shca_recv_wqe)) /
			  sizeof(struct shca_sge), caps->max_sge);
}

static int softhca_srq_check_size(struct softhca_dev *sdev, u32 max_wr,
				  u8 log_size)
{
	if (!max_wr || max_wr > sdev->caps.max_srq_wr || log_size > 31 ||
	    BIT(log_size) < max_wr || BIT(log_size) > sdev->caps.max_srq_wr) {
		ibdev_dbg(&sdev->ibdev, "srq: %u WQEs in 2^%u, max %u\n",
			  max_wr, log_size, sdev->caps.max_srq_wr);
		return -EINVAL;
	}
	return 0;
}

/* Pin a user ring of @size bytes for 2^@log_size WQEs. */
static int softhca_usrq_pin(struct softhca_dev *sdev, struct softhca_srq *srq,
			    u64 addr, u64 size, u8 log_size,
			    struct softhca_pbl *pbl, struct ib_umem **umem)
{
	if (size < softhca_srq_bytes(log_size, srq->wqe_shift)) {
		ibdev_dbg(&sdev->ibdev, "srq: buffer of %llu bytes too small\n",
			  size);
		return -EINVAL;
	}
	*umem = softhca_ring_pin(sdev, addr, size, pbl);
	if (IS_ERR(*umem)) {
		int err = PTR_ERR(*umem);

		*umem = NULL;
		return err;
	}
	return 0;
}

static int softhca_usrq_init(struct softhca_dev *sdev, struct softhca_srq *srq,
			     struct ib_srq_attr *attr, struct ib_udata *udata,
			     struct softhca_pbl *pbl)
{
	struct softhca_ibv_create_srq req;
	int err;

	err = softhca_copy_req(&sdev->ibdev, udata, &req, sizeof(req));
	if (err)
		return err;
	if (req.comp_mask || req.reserved[0] || req.reserved[1])
		return -EOPNOTSUPP;
	err = softhca_srq_check_size(sdev, attr->max_wr, req.log_size);
	if (err)
		return err;
	if (req.wqe_shift < SOFTHCA_RQ_WQE_SHIFT_MIN ||
	    req.wqe_shift > SOFTHCA_WQE_SHIFT_MAX)
		return -EINVAL;
	srq->log_size = req.log_size;
	srq->wqe_shift = req.wqe_shift;
	return softhca_usrq_pin(sdev, srq, req.buf_addr, req.buf_size,
				req.log_size, pbl, &srq->umem);
}

/* A kernel ring for @max_wr WQEs, its record behind it. */
static int softhca_ksrq_ring(struct softhca_dev *sdev, struct softhca_srq *srq,
			     u32 max_wr, struct softhca_kring *ring,
			     struct shca_buf_desc *desc, u8 *log_size)
{
	*log_size = max_t(u32, order_base_2(max_wr), SHCA_RING_LOG_MIN);
	return softhca_kring_alloc(sdev, ring,
				   softhca_srq_bytes(*log_size, srq->wqe_shift),
				   desc);
}

static struct shca_srq_record *softhca_ksrq_record(struct softhca_srq *srq)
{
	return srq->wq.ring.buf + ((size_t)BIT(srq->log_size) << srq->wqe_shift);
}

static int softhca_ksrq_init(struct softhca_dev *sdev, struct softhca_srq *srq,
			     struct ib_srq_attr *attr,
			     struct shca_buf_desc *desc)
{
	int err;

	err = softhca_srq_check_size(sdev, attr->max_wr,
				     order_base_2(attr->max_wr));
	if (err)
		return err;
	srq->wqe_shift = max_t(u8, order_base_2(sizeof(struct shca_recv_wqe) +
				attr->max_sge * sizeof(struct shca_sge)),
			       SOFTHCA_RQ_WQE_SHIFT_MIN);
	err = softhca_ksrq_ring(sdev, srq, attr->max_wr, &srq->wq.ring, desc,
				&srq->log_size);
	if (err)
		return err;
	spin_lock_init(&srq->wq.lock);
	srq->wq.log_size = srq->log_size;
	srq->wq.wqe_shift = srq->wqe_shift;
	srq->record = softhca_ksrq_record(srq);
	return 0;
}

int softhca_create_srq(struct ib_srq *ibsrq,
		       struct ib_srq_init_attr *init_attr,
		       struct ib_udata *udata)
{
	struct softhca_dev *sdev = to_sdev(ibsrq->device);
	struct softhca_create_srq_params params = {};
	struct softhca_ibv_create_srq_resp resp = {};
	struct ib_srq_attr *attr = &init_attr->attr;
	struct softhca_srq *srq = to_ssrq(ibsrq);
	struct softhca_ucontext *uctx;
	struct softhca_pbl pbl = {};
	struct shca_buf_desc kdesc;
	int err;

	if (!softhca_has_srq(sdev) ||
	    (init_attr->srq_type != IB_SRQT_BASIC &&
	     (init_attr->srq_type != IB_SRQT_XRC || !softhca_has_xrc(sdev))))
		return -EOPNOTSUPP;
	if (attr->max_sge > softhca_srq_max_sge(&sdev->caps) ||
	    attr->srq_limit >= attr->max_wr ||
	    (init_attr->srq_type == IB_SRQT_XRC && !init_attr->ext.xrc.xrcd))
		return -EINVAL;

	uctx = rdma_udata_to_drv_context(udata, struct softhca_ucontext,
					 ibucontext);
	mutex_init(&srq->modify_lock);
	if (uctx)
		err = softhca_usrq_init(sdev, srq, attr, udata, &pbl);
	else
		err = softhca_ksrq_init(sdev, srq, attr, &kdesc);
	if (err)
		return err;
	srq->max_sge = min_t(u32, (BIT(srq->wqe_shift) -
				   sizeof(struct shca_recv_wqe)) /
				  sizeof(struct shca_sge), sdev->caps.max_sge);
	if (attr->max_sge > srq->max_sge) {
		err = -EINVAL;
		goto err_release;
	}

	params.uctx = uctx ? uctx->uctx : 0;
	params.pdn = to_spd(ibsrq->pd)->pdn;
	params.limit = attr->srq_limit;
	params.log_size = srq->log_size;
	params.wqe_shift = srq->wqe_shift;
	params.buf = uctx ? &pbl.desc : &kdesc;
	if (init_attr->srq_type == IB_SRQT_XRC) {
		params.flags = SHCA_SRQ_F_XRC;
		params.xrcdn = to_sxrcd(init_attr->ext.xrc.xrcd)->xrcdn;
		params.cqn = to_scq(init_attr->ext.cq)->cqn;
	}
	err = softhca_cmd_create_srq(sdev, &params, &srq->srqn);
	softhca_pbl_free(sdev, &pbl);
	if (err) {
		ibdev_dbg(&sdev->ibdev, "CREATE_SRQ failed: %d\n", err);
		goto err_release;
	}

	/* Events of an earlier SRQ with this number go before it appears. */
	softhca_eq_sync(sdev);
	err = xa_insert(&sdev->srqs, srq->srqn, srq, GFP_KERNEL);
	if (err) {
		ibdev_err_ratelimited(&sdev->ibdev,
				      "device returned srqn %u in use: %d\n",
				      srq->srqn, err);
		goto err_destroy;
	}

	attr->max_wr = BIT(srq->log_size);
	attr->max_sge = srq->max_sge;
	/* What the senders name in their XRCETH; uverbs returns it. */
	if (init_attr->srq_type == IB_SRQT_XRC)
		ibsrq->ext.xrc.srq_num = srq->srqn;
	if (uctx) {
		resp.srqn = srq->srqn;
		err = softhca_copy_resp(udata, &resp, sizeof(resp));
		if (err)
			goto err_erase;
	}
	return 0;

err_erase:
	xa_erase(&sdev->srqs, srq->srqn);
err_destroy:
	if (softhca_cmd_destroy_srq(sdev, srq->srqn))
		return err;	/* the device may still use the ring */
	softhca_eq_sync(sdev);
err_release:
	softhca_pbl_free(sdev, &pbl);
	ib_umem_release(srq->umem);
	softhca_kring_free(sdev, &srq->wq.ring);
	return err;
}

/*
 * IB_SRQ_MAX_WR: the device moves the WQEs not taken to a new ring (spec
 * §13.5).  A user SRQ's new ring comes from the provider; a kernel one's
 * is allocated here, and posters wait for the move.
 */
static int softhca_srq_resize(struct softhca_dev *sdev, struct softhca_srq *srq,
			      struct ib_srq_attr *attr, struct ib_udata *udata)
{
	struct softhca_ibv_modify_srq req;
	struct softhca_kring ring = {};
	struct softhca_pbl pbl = {};
	struct ib_umem *umem = NULL;
	struct shca_buf_desc kdesc;
	unsigned long flags;
	u8 log_size;
	int err;

	if (udata) {
		err = softhca_copy_req(&sdev->ibdev, udata, &req, sizeof(req));
		if (err)
			return err;
		if (req.comp_mask || memchr_inv(req.reserved, 0,
						sizeof(req.reserved)))
			return -EOPNOTSUPP;
		log_size = req.log_size;
		err = softhca_srq_check_size(sdev, attr->max_wr, log_size) ?:
		      softhca_usrq_pin(sdev, srq, req.buf_addr, req.buf_size,
				       log_size, &pbl, &umem);
	} else {
		err = softhca_srq_check_size(sdev, attr->max_wr,
					     order_base_2(attr->max_wr)) ?:
		      softhca_ksrq_ring(sdev, srq, attr->max_wr, &ring, &kdesc,
					&log_size);
	}
	if (err)
		return err;

	spin_lock_irqsave(&srq->wq.lock, flags);
	srq->resizing = true;
	spin_unlock_irqrestore(&srq->wq.lock, flags);
	err = softhca_cmd_resize_srq(sdev, srq->srqn, log_size,
				     udata ? &pbl.desc : &kdesc);
	softhca_pbl_free(sdev, &pbl);
	spin_lock_irqsave(&srq->wq.lock, flags);
	if (!err) {
		swap(srq->umem, umem);
		swap(srq->wq.ring, ring);
		srq->log_size = log_size;
		srq->wq.log_size = log_size;
		if (srq->wq.ring.buf)
			srq->record = softhca_ksrq_record(srq);
	}
	srq->resizing = false;
	spin_unlock_irqrestore(&srq->wq.lock, flags);
	/* Whichever ring the device no longer uses. */
	ib_umem_release(umem);
	softhca_kring_free(sdev, &ring);
	return err;
}

int softhca_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		       enum ib_srq_attr_mask attr_mask, struct ib_udata *udata)
{
	struct softhca_dev *sdev = to_sdev(ibsrq->device);
	struct softhca_srq *srq = to_ssrq(ibsrq);
	int err;

	if (attr_mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	if (udata && !(attr_mask & IB_SRQ_MAX_WR) &&
	    !softhca_udata_req_ok(&sdev->ibdev, udata))
		return -EINVAL;
	if ((attr_mask & IB_SRQ_LIMIT) &&
	    attr->srq_limit >= (attr_mask & IB_SRQ_MAX_WR ? attr->max_wr :
				BIT(srq->log_size)))
		return -EINVAL;

	mutex_lock(&srq->modify_lock);
	if (attr_mask & IB_SRQ_MAX_WR) {
		err = softhca_srq_resize(sdev, srq, attr, udata);
		if (err)
			goto out;
	}
	if (attr_mask & IB_SRQ_LIMIT)
		err = softhca_cmd_modify_srq_limit(sdev, srq->srqn,
						   attr->srq_limit);
	else
		err = 0;
out:
	mutex_unlock(&srq->modify_lock);
	return err;
}

int softhca_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct softhca_dev *sdev = to_sdev(ibsrq->device);
	struct softhca_srq *srq = to_ssrq(ibsrq);
	u32 limit;
	int err;

	err = softhca_cmd_query_srq(sdev, srq->srqn, &limit);
	if (err)
		return err;
	attr->max_wr = BIT(srq->log_size);
	attr->max_sge = srq->max_sge;
	attr->srq_limit = limit;
	return 0;
}

int softhca_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct softhca_dev *sdev = to_sdev(ibsrq->device);
	struct softhca_srq *srq = to_ssrq(ibsrq);
	int err;

	xa_erase(&sdev->srqs, srq->srqn);
	err = softhca_cmd_destroy_srq(sdev, srq->srqn);
	if (err) {
		/* ib_core frees the SRQ anyway; its ring stays allocated. */
		ibdev_err_ratelimited(&sdev->ibdev,
				      "DESTROY_SRQ %u failed: %d, leaking its ring\n",
				      srq->srqn, err);
		return 0;
	}
	/* No event handler uses the SRQ once this returns. */
	softhca_eq_sync(sdev);
	ib_umem_release(srq->umem);
	softhca_kring_free(sdev, &srq->wq.ring);
	return 0;
}

/* Kernel consumers post here; the provider posts to user SRQs itself. */
int softhca_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			  const struct ib_recv_wr **bad_wr)
{
	struct softhca_dev *sdev = to_sdev(ibsrq->device);
	struct softhca_srq *srq = to_ssrq(ibsrq);
	struct softhca_wq *wq = &srq->wq;
	unsigned long flags;
	int err;

	if (!wq->ring.buf) {
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}
	spin_lock_irqsave(&wq->lock, flags);
	if (srq->resizing) {
		err = -EBUSY;
		*bad_wr = wr;
	} else {
		/* The device's record says which slots it has taken. */
		wq->ci = le32_to_cpu(READ_ONCE(srq->record->ci));
		err = softhca_wq_post_recv(sdev, wq, srq->max_sge, SHCA_DB_SRQ,
					   srq->srqn, wr, bad_wr);
	}
	spin_unlock_irqrestore(&wq->lock, flags);
	return err;
}

/* SRQ_LIMIT; called with the EQ lock held. */
void softhca_srq_event(struct softhca_dev *sdev, u32 srqn)
{
	struct softhca_srq *srq = xa_load(&sdev->srqs, srqn);
	struct ib_srq *ibsrq;
	struct ib_event event;

	if (!srq) {
		ibdev_dbg(&sdev->ibdev, "event for unknown srqn %u\n", srqn);
		return;
	}
	ibsrq = &srq->ibsrq;
	if (!ibsrq->event_handler)
		return;
	event.device = ibsrq->device;
	event.element.srq = ibsrq;
	event.event = IB_EVENT_SRQ_LIMIT_REACHED;
	ibsrq->event_handler(&event, ibsrq->srq_context);
}
