// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Completion queues (spec §13.1).  A user CQ's ring lives in the process's
 * memory: the driver pins it, describes it to the device and delivers the
 * COMPLETION and CQ_ERROR events of its EQ.  Kernel CQs come with kernel
 * verbs, later.
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

int softhca_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		      struct uverbs_attr_bundle *attrs)
{
	struct softhca_dev *sdev = to_sdev(ibcq->device);
	struct softhca_ibv_create_cq_resp resp = {};
	struct softhca_ibv_create_cq req;
	struct softhca_cq *cq = to_scq(ibcq);
	struct softhca_ucontext *uctx;
	struct softhca_pbl pbl;
	struct ib_udata *udata;
	int err;

	/* Kernel CQs (ib_mad's among them) need kernel verbs: not yet. */
	if (!attrs || !softhca_has_qp(sdev))
		return -EOPNOTSUPP;
	if (attr->flags)
		return -EOPNOTSUPP;

	udata = &attrs->driver_udata;
	uctx = rdma_udata_to_drv_context(udata, struct softhca_ucontext,
					 ibucontext);
	err = softhca_copy_req(&sdev->ibdev, udata, &req, sizeof(req));
	if (err)
		return err;
	err = softhca_cq_check(sdev, attr, &req);
	if (err)
		return err;

	cq->umem = softhca_ring_pin(sdev, req.buf_addr, req.buf_size, &pbl);
	if (IS_ERR(cq->umem))
		return PTR_ERR(cq->umem);

	err = softhca_cmd_create_cq(sdev, uctx->uctx, sdev->eq.eqn,
				    req.log_size, &pbl.desc, &cq->cqn);
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

	ibcq->cqe = BIT(req.log_size);
	resp.cqn = cq->cqn;
	err = softhca_copy_resp(udata, &resp, sizeof(resp));
	if (err)
		goto err_erase;

	return 0;

err_erase:
	xa_erase(&sdev->cqs, cq->cqn);
err_destroy:
	if (softhca_cmd_destroy_cq(sdev, cq->cqn))
		return err;	/* the device may still write: keep the pages */
	softhca_eq_sync(sdev);
err_release:
	ib_umem_release(cq->umem);
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
		/* ib_core frees the CQ anyway; its ring stays pinned. */
		ibdev_err_ratelimited(&sdev->ibdev,
				      "DESTROY_CQ %u failed: %d, leaking its ring\n",
				      cq->cqn, err);
		return 0;
	}

	/* No event handler uses the CQ once this returns. */
	softhca_eq_sync(sdev);
	ib_umem_release(cq->umem);
	return 0;
}

/* User CQs are polled and armed by the provider, through its doorbell. */
int softhca_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	return -EOPNOTSUPP;
}

int softhca_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	return -EOPNOTSUPP;
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
