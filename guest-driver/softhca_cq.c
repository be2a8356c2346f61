// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Completion queues (spec §13.1): creation, destruction and the
 * COMPLETION and CQ_ERROR events of the EQ.  A user CQ's ring lives in the
 * process's memory, which the driver pins and describes to the device; a
 * kernel CQ's ring is coherent memory, polled by softhca_kcq.c.
 */

#include <rdma/ib_umem.h>
#include <rdma/uverbs_ioctl.h>

#include "softhca.h"
#include "softhca-abi.h"

/* The CQE ring, then the consumer's record. */
static u64 softhca_cq_bytes(u32 log_size)
{
	return ((u64)SHCA_CQE_SIZE << log_size) +
	       sizeof(struct shca_cq_record);
}

static int softhca_cq_check(struct softhca_dev *sdev,
			    const struct ib_cq_init_attr *attr,
			    const struct softhca_ibv_create_cq *req)
{
	struct ib_device *ibdev = &sdev->ibdev;

	if (req->comp_mask) {
		ibdev_dbg(ibdev, "create_cq: unknown comp_mask %#x\n",
			  req->comp_mask);
		return -EOPNOTSUPP;
	}

	if (attr->cqe < 1 || attr->cqe > sdev->caps.max_cqe ||
	    req->log_size < SHCA_RING_LOG_MIN || req->log_size > 31 ||
	    BIT(req->log_size) < attr->cqe ||
	    BIT(req->log_size) > sdev->caps.max_cqe) {
		ibdev_dbg(ibdev, "create_cq: %d CQEs in 2^%u, max %u\n",
			  attr->cqe, req->log_size, sdev->caps.max_cqe);
		return -EINVAL;
	}

	if (req->buf_size < softhca_cq_bytes(req->log_size)) {
		ibdev_dbg(ibdev, "create_cq: buffer of %llu bytes too small\n",
			  req->buf_size);
		return -EINVAL;
	}

	return 0;
}

/* Pin the ring of a user CQ; the caller frees @pbl after CREATE_CQ. */
static int softhca_ucq_init(struct softhca_dev *sdev, struct softhca_cq *cq,
			    const struct ib_cq_init_attr *attr,
			    struct ib_udata *udata, struct softhca_pbl *pbl,
			    u32 *log_size)
{
	struct softhca_ibv_create_cq req;
	int err;

	err = softhca_copy_req(&sdev->ibdev, udata, &req, sizeof(req));
	if (err)
		return err;
	err = softhca_cq_check(sdev, attr, &req);
	if (err)
		return err;

	cq->umem = softhca_ring_pin(sdev, req.buf_addr, req.buf_size, pbl);
	if (IS_ERR(cq->umem)) {
		err = PTR_ERR(cq->umem);
		cq->umem = NULL;
		return err;
	}
	*log_size = req.log_size;
	return 0;
}

/* The ring of a kernel CQ: room for @cqe entries, at least two. */
static int softhca_kcq_create(struct softhca_dev *sdev, struct softhca_cq *cq,
			      const struct ib_cq_init_attr *attr,
			      struct shca_buf_desc *desc, u32 *log_size)
{
	if (attr->cqe < 1 || attr->cqe > sdev->caps.max_cqe) {
		ibdev_dbg(&sdev->ibdev, "create_cq: %d CQEs, max %u\n",
			  attr->cqe, sdev->caps.max_cqe);
		return -EINVAL;
	}

	*log_size = max_t(u32, order_base_2(attr->cqe), SHCA_RING_LOG_MIN);
	return softhca_kcq_init(sdev, cq, *log_size, desc);
}

static void softhca_cq_release(struct softhca_dev *sdev, struct softhca_cq *cq)
{
	ib_umem_release(cq->umem);
	softhca_kring_free(sdev, &cq->ring);
}

int softhca_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		      struct softhca_create_cq_arg *attrs)
{
	struct ib_udata *udata = softhca_create_cq_udata(attrs);
	struct softhca_dev *sdev = to_sdev(ibcq->device);
	struct softhca_ibv_create_cq_resp resp = {};
	struct softhca_cq *cq = to_scq(ibcq);
	struct softhca_ucontext *uctx;
	struct softhca_pbl pbl = {};
	struct shca_buf_desc kdesc;
	u32 log_size;
	int err;

	if (!softhca_has_qp(sdev) || attr->flags)
		return -EOPNOTSUPP;
	mutex_init(&cq->resize_mutex);

	uctx = rdma_udata_to_drv_context(udata, struct softhca_ucontext,
					 ibucontext);
	if (uctx)
		err = softhca_ucq_init(sdev, cq, attr, udata, &pbl, &log_size);
	else
		err = softhca_kcq_create(sdev, cq, attr, &kdesc, &log_size);
	if (err)
		return err;

	err = softhca_cmd_create_cq(sdev, uctx ? uctx->uctx : 0, sdev->eq.eqn,
				    log_size, uctx ? &pbl.desc : &kdesc,
				    &cq->cqn);
	softhca_pbl_free(sdev, &pbl);
	if (err) {
		ibdev_dbg(&sdev->ibdev, "CREATE_CQ failed: %d\n", err);
		goto err_release;
	}

	/* Events of an earlier CQ with this number go before it appears. */
	softhca_eq_sync(sdev);
	err = xa_insert(&sdev->cqs, cq->cqn, cq, GFP_KERNEL);
	if (err) {
		ibdev_err_ratelimited(&sdev->ibdev,
				      "device returned cqn %u in use: %d\n",
				      cq->cqn, err);
		goto err_destroy;
	}

	ibcq->cqe = BIT(log_size);
	if (uctx) {
		resp.cqn = cq->cqn;
		err = softhca_copy_resp(udata, &resp, sizeof(resp));
		if (err)
			goto err_erase;
	}

	return 0;

err_erase:
	xa_erase(&sdev->cqs, cq->cqn);
err_destroy:
	if (softhca_cmd_destroy_cq(sdev, cq->cqn))
		return err;	/* the device may still write: keep the pages */
	softhca_eq_sync(sdev);
err_release:
	softhca_cq_release(sdev, cq);
	return err;
}

int softhca_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct softhca_dev *sdev = to_sdev(ibcq->device);
	struct softhca_cq *cq = to_scq(ibcq);
	int err;

	xa_erase(&sdev->cqs, cq->cqn);
	err = softhca_cmd_destroy_cq(sdev, cq->cqn);
	if (err) {
		/* ib_core frees the CQ anyway; its ring stays allocated. */
		ibdev_err_ratelimited(&sdev->ibdev,
				      "DESTROY_CQ %u failed: %d, leaking its ring\n",
				      cq->cqn, err);
		return 0;
	}

	/* No event handler uses the CQ once this returns. */
	softhca_eq_sync(sdev);
	softhca_cq_release(sdev, cq);
	return 0;
}

/*
 * A user CQ moves to the ring the provider allocated; the device copies
 * the CQEs not yet polled, while the provider holds its poll lock.  No
 * kernel ULP resizes its CQs, so kernel CQs do not.
 */
int softhca_resize_cq(struct ib_cq *ibcq, softhca_resize_cqe_t cqe,
		      struct ib_udata *udata)
{
	struct softhca_dev *sdev = to_sdev(ibcq->device);
	struct softhca_ibv_resize_cq_resp resp = {};
	struct ib_cq_init_attr attr = { .cqe = cqe };
	struct softhca_cq *cq = to_scq(ibcq);
	struct softhca_ibv_create_cq req;
	struct softhca_pbl pbl = {};
	struct ib_umem *umem;
	int err;

	if (!udata || !cq->umem)
		return -EOPNOTSUPP;
	err = softhca_copy_req(&sdev->ibdev, udata, &req, sizeof(req));
	if (err)
		return err;
	err = softhca_cq_check(sdev, &attr, &req);
	if (err)
		return err;

	umem = softhca_ring_pin(sdev, req.buf_addr, req.buf_size, &pbl);
	if (IS_ERR(umem))
		return PTR_ERR(umem);

	mutex_lock(&cq->resize_mutex);
	err = softhca_cmd_resize_cq(sdev, cq->cqn, req.log_size, &pbl.desc,
				    &resp.copied);
	softhca_pbl_free(sdev, &pbl);
	if (err) {
		mutex_unlock(&cq->resize_mutex);
		ibdev_dbg(&sdev->ibdev, "RESIZE_CQ %u to 2^%u failed: %d\n",
			  cq->cqn, req.log_size, err);
		ib_umem_release(umem);
		return err;
	}
	swap(cq->umem, umem);
	ibcq->cqe = BIT(req.log_size);
	mutex_unlock(&cq->resize_mutex);
	ib_umem_release(umem);

	return softhca_copy_resp(udata, &resp, sizeof(resp));
}

/* COMPLETION and CQ_ERROR events; called with the EQ lock held. */
void softhca_cq_event(struct softhca_dev *sdev, u32 cqn, u8 type)
{
	struct softhca_cq *cq = xa_load(&sdev->cqs, cqn);
	struct ib_cq *ibcq;
	struct ib_event event;

	if (!cq) {
		/* The CQ may have just been destroyed. */
		ibdev_dbg(&sdev->ibdev, "event %u for unknown cqn %u\n", type,
			  cqn);
		return;
	}
	ibcq = &cq->ibcq;

	if (type == SHCA_EQE_COMPLETION) {
		if (ibcq->comp_handler)
			ibcq->comp_handler(ibcq, ibcq->cq_context);
		return;
	}

	ibdev_err_ratelimited(&sdev->ibdev, "CQ %u overrun\n", cqn);
	if (!ibcq->event_handler)
		return;
	event.device = ibcq->device;
	event.element.cq = ibcq;
	event.event = IB_EVENT_CQ_ERR;
	ibcq->event_handler(&event, ibcq->cq_context);
}
