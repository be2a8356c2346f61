/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softhca rdma-core provider: private types, the driver-provider ABI
 * bindings and the verbs shared between files.
 */
#ifndef SOFTHCA_H
#define SOFTHCA_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/driver.h>
#include <infiniband/kern-abi.h>
#include <kernel-abi/softhca-abi.h>
#include <rdma/softhca-abi.h>
#include <util/mmio.h>
#include <util/util.h>

#include "softhca_queue.h"

/* Requests without driver data say empty; the rest are spec/softhca-abi.h's. */
DECLARE_DRV_CMD(softhca_alloc_ucontext, IB_USER_VERBS_CMD_GET_CONTEXT, empty,
		softhca_ibv_alloc_ucontext_resp);
DECLARE_DRV_CMD(softhca_alloc_pd, IB_USER_VERBS_CMD_ALLOC_PD, empty,
		softhca_ibv_alloc_pd_resp);
DECLARE_DRV_CMD(softhca_create_cq, IB_USER_VERBS_CMD_CREATE_CQ,
		softhca_ibv_create_cq, softhca_ibv_create_cq_resp);
DECLARE_DRV_CMD(softhca_create_cq_ex, IB_USER_VERBS_EX_CMD_CREATE_CQ,
		softhca_ibv_create_cq, softhca_ibv_create_cq_resp);
DECLARE_DRV_CMD(softhca_resize_cq, IB_USER_VERBS_CMD_RESIZE_CQ,
		softhca_ibv_create_cq, softhca_ibv_resize_cq_resp);
DECLARE_DRV_CMD(softhca_create_qp_ex, IB_USER_VERBS_EX_CMD_CREATE_QP,
		softhca_ibv_create_qp, softhca_ibv_create_qp_resp);
DECLARE_DRV_CMD(softhca_create_ah, IB_USER_VERBS_CMD_CREATE_AH, empty,
		softhca_ibv_create_ah_resp);
DECLARE_DRV_CMD(softhca_create_srq, IB_USER_VERBS_CMD_CREATE_SRQ,
		softhca_ibv_create_srq, softhca_ibv_create_srq_resp);
DECLARE_DRV_CMD(softhca_create_xsrq, IB_USER_VERBS_CMD_CREATE_XSRQ,
		softhca_ibv_create_srq, softhca_ibv_create_srq_resp);
DECLARE_DRV_CMD(softhca_modify_srq, IB_USER_VERBS_CMD_MODIFY_SRQ,
		softhca_ibv_modify_srq, empty);

struct softhca_context {
	struct verbs_context ibvctx;
	void *db; /* this context's doorbell page in BAR2 */
	size_t db_size;
	struct softhca_limits lim;
	/*
	 * QPs by qpn, for poll_cq to free SQ and RQ slots.  Live qpns lie in
	 * 2..MAX_QP+1 (0 and 1 are the kernel's), so qpn & mask is unique.
	 * Changed under the lock and the QP's CQ locks; read under a CQ lock.
	 */
	pthread_mutex_t qp_table_lock;
	struct softhca_qp **qp_table;
	uint32_t qp_table_mask;
};

struct softhca_pd {
	struct ibv_pd ibvpd;
	uint32_t pdn;
};

/* Ring memory shared with the device: page aligned, zeroed, not forked. */
struct softhca_buf {
	void *addr;
	size_t size;
};

struct softhca_cq {
	struct verbs_cq vcq;
	pthread_spinlock_t lock;
	struct softhca_buf buf;
	struct shca_cqe *cqes;
	struct shca_cq_record *record; /* behind the ring */
	uint32_t cqn;
	uint32_t ci; /* CQEs consumed, free-running */
	uint8_t log_size;
	bool single_threaded; /* create_cq_ex: its polls take no lock */
	struct ibv_wc wc; /* create_cq_ex: the completion polled last */
};

struct softhca_wq {
	pthread_spinlock_t lock; /* held by post */
	struct softhca_buf buf;
	struct softhca_wq_shape shape;
	struct softhca_wqe_limits lim;
	uint32_t pi; /* WQEs posted, free-running; under lock */
	_Atomic(uint32_t) ci; /* WQEs completed; advanced by poll_cq */
	struct shca_sq_record *record; /* SQ, if the device keeps it (§14) */
};

/* The ibv_wr_* calls from wr_start to wr_complete or wr_abort, under sq.lock */
struct softhca_wr_batch {
	uint32_t pi; /* the SQ count after the WQEs built so far */
	struct shca_send_wqe *wqe; /* the WQE being built, NULL after an error */
	int err; /* the first error: wr_complete drops the batch */
};

/*
 * An XRC receive QP, created or opened, lives in the kernel (spec §13.7):
 * it has no rings, is not in the QP table, and names no CQ.
 */
struct softhca_qp {
	struct verbs_qp vqp;
	struct ibv_qp_cap cap; /* what the rings hold */
	struct softhca_wq sq;
	struct softhca_wq rq; /* without a buffer if cap.max_recv_wr is 0 */
	struct softhca_wr_batch wr; /* create_qp_ex with SEND_OPS_FLAGS */
};

/*
 * A shared receive queue (spec §13.5), or an XRC one (§13.7); its slots
 * come back by the record.
 */
struct softhca_srq {
	struct verbs_srq vsrq;
	pthread_spinlock_t lock; /* held by post and by a resize */
	struct softhca_buf buf;
	struct softhca_wq_shape shape;
	struct softhca_wqe_limits lim;
	struct shca_srq_record *record; /* behind the ring, device-written */
	uint32_t srqn;
	uint32_t pi; /* WQEs posted, free-running; under lock */
};

/* Write one doorbell of the context's page (spec §14). */
static inline void softhca_ring_doorbell(struct softhca_context *ctx,
					 uint32_t offset, uint32_t value)
{
	mmio_write32((uint8_t *)ctx->db + offset, value);
}

static inline struct softhca_context *to_sctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct softhca_context, ibvctx.context);
}

static inline struct softhca_pd *to_spd(struct ibv_pd *ibpd)
{
	return container_of(ibpd, struct softhca_pd, ibvpd);
}

static inline struct softhca_cq *to_scq(struct ibv_cq *ibcq)
{
	return container_of(ibcq, struct softhca_cq, vcq.cq);
}

static inline struct softhca_srq *to_ssrq(struct ibv_srq *ibsrq)
{
	return container_of(ibsrq, struct softhca_srq, vsrq.srq);
}

static inline struct softhca_qp *to_sqp(struct ibv_qp *ibqp)
{
	return container_of(ibqp, struct softhca_qp, vqp.qp);
}

/* A QP asking for no receive WRs has no RQ, and no buffer for it. */
static inline bool softhca_has_rq(const struct softhca_qp *qp)
{
	return qp->cap.max_recv_wr;
}

/* softhca_verbs.c */
int softhca_buf_alloc(struct softhca_buf *buf, size_t size);
void softhca_buf_free(struct softhca_buf *buf);
int softhca_query_device_ex(struct ibv_context *ibctx,
			    const struct ibv_query_device_ex_input *input,
			    struct ibv_device_attr_ex *attr, size_t attr_size);
int softhca_query_port(struct ibv_context *ibctx, uint8_t port,
		       struct ibv_port_attr *attr);
struct ibv_pd *softhca_alloc_pd(struct ibv_context *ibctx);
int softhca_dealloc_pd(struct ibv_pd *ibpd);
struct ibv_xrcd *softhca_open_xrcd(struct ibv_context *ibctx,
				   struct ibv_xrcd_init_attr *attr);
int softhca_close_xrcd(struct ibv_xrcd *ibxrcd);
struct ibv_mr *softhca_reg_mr(struct ibv_pd *ibpd, void *addr, size_t length,
			      uint64_t hca_va, int access);
int softhca_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
		     void *addr, size_t length, int access);
int softhca_dereg_mr(struct verbs_mr *vmr);
struct ibv_ah *softhca_create_ah(struct ibv_pd *ibpd, struct ibv_ah_attr *attr);
int softhca_destroy_ah(struct ibv_ah *ibah);

/* softhca_cq.c */
struct ibv_cq *softhca_create_cq(struct ibv_context *ibctx, int cqe,
				 struct ibv_comp_channel *channel,
				 int comp_vector);
int softhca_destroy_cq(struct ibv_cq *ibcq);
int softhca_resize_cq(struct ibv_cq *ibcq, int cqe);
int softhca_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc);
int softhca_req_notify_cq(struct ibv_cq *ibcq, int solicited_only);
void softhca_cq_clean(struct softhca_cq *cq, uint32_t qpn);
struct softhca_cq *softhca_cq_create(struct ibv_context *ibctx,
				     const struct ibv_cq_init_attr_ex *attr,
				     bool ex);
const struct shca_cqe *softhca_cq_take(struct softhca_cq *cq);
void softhca_cq_update_record(struct softhca_cq *cq);

/* softhca_cq_ex.c */
struct ibv_cq_ex *softhca_create_cq_ex(struct ibv_context *ibctx,
				       struct ibv_cq_init_attr_ex *attr);

/* softhca_qp.c */
struct ibv_qp *softhca_create_qp(struct ibv_pd *ibpd,
				 struct ibv_qp_init_attr *attr);
struct ibv_qp *softhca_create_qp_ex(struct ibv_context *ibctx,
				    struct ibv_qp_init_attr_ex *attr);
int softhca_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		      int attr_mask);
int softhca_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		     int attr_mask, struct ibv_qp_init_attr *init_attr);
int softhca_destroy_qp(struct ibv_qp *ibqp);
struct ibv_qp *softhca_open_qp(struct ibv_context *ibctx,
			       struct ibv_qp_open_attr *attr);

/* softhca_post.c */
int softhca_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr);
int softhca_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr);
bool softhca_sq_open(const struct ibv_qp *ibqp);
void *softhca_wq_slot(struct softhca_wq *wq, uint32_t pi);
void softhca_wq_ring(struct softhca_qp *qp, struct softhca_wq *wq, uint32_t pi,
		     uint32_t offset);

/* softhca_qp_ex.c */
int softhca_qp_ex_init(struct softhca_qp *qp,
		       const struct ibv_qp_init_attr_ex *attr,
		       const struct softhca_limits *lim);

/* softhca_mw.c */
struct ibv_mw *softhca_alloc_mw(struct ibv_pd *ibpd, enum ibv_mw_type type);
int softhca_dealloc_mw(struct ibv_mw *mw);
int softhca_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		    struct ibv_mw_bind *mw_bind);

/* softhca_srq.c */
struct ibv_srq *softhca_create_srq(struct ibv_pd *ibpd,
				   struct ibv_srq_init_attr *attr);
struct ibv_srq *softhca_create_srq_ex(struct ibv_context *ibctx,
				      struct ibv_srq_init_attr_ex *attr);
int softhca_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num);
int softhca_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		       int attr_mask);
int softhca_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr);
int softhca_destroy_srq(struct ibv_srq *ibsrq);
int softhca_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			  struct ibv_recv_wr **bad_wr);

#endif /* SOFTHCA_H */
