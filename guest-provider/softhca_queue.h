/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softhca rdma-core provider: the queues the process shares with the
 * device, their geometry and their entries (spec §13–§15).
 *
 * Memory ordering.  Every ring lives in the process's memory, allocated by
 * the provider and pinned by the driver; the device reaches it by DMA.
 *
 * Work queues (SQ, RQ).  The provider owns a slot from the moment its
 * consumer count has passed it until the doorbell that covers it; the
 * device owns it from that doorbell until the CQE that completes it (or a
 * later one of the same queue) has been seen by poll_cq.
 *   post:  write the whole WQE (header, SGEs or inline data) to its slot;
 *          udma_to_device_barrier(), so that the device cannot see the
 *          doorbell before the WQEs; one mmio_write32() of the doorbell,
 *          (pi << 16) | qpn, for the whole batch.  pi is free-running and
 *          the device takes it as ownership: a WQE carries no valid bit.
 *   poll:  a completion's wqe_index frees its slot and every earlier one
 *          (unsignaled WQEs complete silently); the consumer count is
 *          published with a release store and read by post with an
 *          acquire load, so that a slot is rewritten only after the CQE
 *          that freed it has been read.
 *
 * Completion queues.  The device owns a CQE until its phase byte (the
 * entry's last byte, written last) equals the phase of the consumer's pass
 * (1 on the first pass, inverted on each wrap); then the provider owns it.
 *   poll:  read the phase byte; udma_from_device_barrier(), so that no
 *          other byte of the entry is read before the phase; read the
 *          rest.  After a batch, store the consumed count in the record
 *          behind the ring: a single store, with release order (a plain
 *          store on x86) so that the device cannot refill a slot whose CQE
 *          is still being read.  No doorbell: the device reads the record
 *          only when the ring looks full, and a lagging count only makes
 *          the ring look fuller.
 *   arm:   mmio_write32() of cqn | ARM [| SOLICITED] to the CQ doorbell;
 *          no barrier, as the doorbell publishes nothing in memory.
 *
 * Locks: each work queue has a spinlock held by post; each CQ one held by
 * poll, which also advances the consumer counts of the work queues that
 * complete to it.  Resetting or destroying a QP takes its CQs' locks (in
 * cqn order) to drop its unpolled CQEs and its slot in the QP table, which
 * poll reads.  Neither post nor poll makes a system call.  The extended
 * API holds a CQ's lock from start_poll to end_poll and publishes the
 * consumed count at end_poll; a CQ created SINGLE_THREADED polls that way
 * without the lock, as its application promises that no other thread uses
 * the CQ, or resets or destroys a QP of it, meanwhile.
 */
#ifndef SOFTHCA_QUEUE_H
#define SOFTHCA_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ccan/container_of.h>
#include <infiniband/verbs.h>
#include <util/udma_barrier.h>

#include "softhca_hw.h"

/* The smallest strides the device accepts (spec §13.2). */
#define SOFTHCA_SQ_SHIFT_MIN 6
#define SOFTHCA_RQ_SHIFT_MIN 4
#define SOFTHCA_WQE_SHIFT_MAX 11

/* A QPN as the BTH carries it (IBA 9.2). */
#define SOFTHCA_QPN_MASK 0xffffffu

/* What the device can do, from query_device and alloc_ucontext. */
struct softhca_limits {
	uint32_t max_qp_wr;
	uint32_t max_sge;
	uint32_t max_cqe;
	uint32_t max_inline;
	/* IBV_QP_EX_WITH_ATOMIC_WRITE, _FLUSH: RC operations of CAPS bits */
	uint64_t rc_send_ops;
};

/* A work queue's shape: 2^log_size WQEs of 2^wqe_shift bytes. */
struct softhca_wq_shape {
	uint8_t log_size;
	uint8_t wqe_shift;
};

int softhca_cq_log_size(const struct softhca_limits *lim, int cqe,
			uint8_t *log_size);
int softhca_sq_shape(const struct softhca_limits *lim, struct ibv_qp_cap *cap,
		     bool dgram, struct softhca_wq_shape *shape);
int softhca_rq_shape(const struct softhca_limits *lim, struct ibv_qp_cap *cap,
		     struct softhca_wq_shape *shape);

/* The limits a work queue of this shape enforces on each WQE. */
struct softhca_wqe_limits {
	uint32_t max_sge;
	uint32_t max_inline;
	bool sig_all; /* sq_sig_all: every send WQE is signaled */
	bool dgram; /* UD: an AV follows each send WQE's header (spec §15) */
	bool xrc; /* XRC_SEND: each send WQE names its XRC SRQ (spec §13.7) */
};

/*
 * An address handle exists only in the provider (spec §11): its AV is
 * copied into every UD send WQE that names it.  Here, not in softhca.h,
 * because the WQE builder reads it.
 */
struct softhca_ah {
	struct ibv_ah ibvah;
	struct shca_av av;
};

static inline struct softhca_ah *to_sah(struct ibv_ah *ibah)
{
	return container_of(ibah, struct softhca_ah, ibvah);
}

int softhca_av_init(struct shca_av *av, const struct ibv_ah_attr *attr,
		    const uint8_t dmac[6]);

int softhca_build_send_wqe(void *slot, const struct ibv_send_wr *wr,
			   const struct softhca_wqe_limits *lim);

/*
 * The steps that build a send WQE, for post_send (softhca_build_send_wqe)
 * and the ibv_wr_* API alike, in this order: the header; the opcode's
 * fields; on a UD QP the destination, on an XRC send QP the XRC SRQ; then
 * the data, SGEs or inline buffers.  A step that fails (EINVAL) leaves the
 * WQE undefined.
 */
struct shca_send_wqe *softhca_wqe_init(void *slot, uint64_t wr_id,
				       uint8_t opcode, unsigned int send_flags,
				       const struct softhca_wqe_limits *lim);
void softhca_wqe_set_imm(struct shca_send_wqe *wqe, __be32 imm_data);
void softhca_wqe_set_inv(struct shca_send_wqe *wqe, uint32_t rkey);
void softhca_wqe_set_rdma(struct shca_send_wqe *wqe, uint32_t rkey,
			  uint64_t remote_addr);
void softhca_wqe_set_atomic_write(struct shca_send_wqe *wqe, uint32_t rkey,
				  uint64_t remote_addr, const void *data);
int softhca_wqe_set_flush(struct shca_send_wqe *wqe, uint32_t rkey,
			  uint64_t remote_addr, size_t len, uint8_t type,
			  uint8_t level);
void softhca_wqe_set_atomic(struct shca_send_wqe *wqe, uint32_t rkey,
			    uint64_t remote_addr, uint64_t compare_add,
			    uint64_t swap);
int softhca_wqe_set_ud(struct shca_send_wqe *wqe, struct ibv_ah *ah,
		       uint32_t remote_qpn, uint32_t remote_qkey,
		       const struct softhca_wqe_limits *lim);
int softhca_wqe_set_xrc(struct shca_send_wqe *wqe, uint32_t remote_srqn);
/*
 * The rights a bind may name: the remote ones a window grants, and local
 * write, which means nothing for a window (pyverbs and rxe pass it); not
 * zero-based windows.
 */
#define SOFTHCA_MW_IBV_ACCESS                                                  \
	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |                    \
	 IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_LOCAL_WRITE)
int softhca_wqe_set_bind(struct shca_send_wqe *wqe, uint32_t mw_rkey,
			 uint32_t new_rkey, const struct ibv_mw_bind_info *info,
			 const struct softhca_wqe_limits *lim);
int softhca_wqe_set_local_inv(struct shca_send_wqe *wqe, uint32_t rkey,
			      const struct softhca_wqe_limits *lim);
int softhca_wqe_set_sges(struct shca_send_wqe *wqe, const struct ibv_sge *sg,
			 size_t num_sge, const struct softhca_wqe_limits *lim);
int softhca_wqe_set_inline(struct shca_send_wqe *wqe);
int softhca_wqe_add_inline(struct shca_send_wqe *wqe, const void *addr,
			   size_t length, const struct softhca_wqe_limits *lim);
int softhca_build_recv_wqe(void *slot, const struct ibv_recv_wr *wr,
			   const struct softhca_wqe_limits *lim);
void softhca_cqe_to_wc(const struct shca_cqe *cqe, struct ibv_wc *wc);

static inline bool softhca_cqe_is_recv(const struct shca_cqe *cqe)
{
	return cqe->opcode & SHCA_CQE_OP_RECV;
}

static inline void *softhca_slot(void *ring, uint32_t count, uint8_t log_size,
				 uint8_t shift)
{
	return (uint8_t *)ring +
	       ((size_t)(count & ((1u << log_size) - 1)) << shift);
}

/*
 * The CQE at consumer count ci, or NULL while the device still owns it.
 * On return the entry's other bytes may be read.
 */
static inline const struct shca_cqe *
softhca_owned_cqe(const struct shca_cqe *ring, uint32_t ci, uint8_t log_size)
{
	const struct shca_cqe *cqe = &ring[ci & ((1u << log_size) - 1)];
	uint8_t phase = !((ci >> log_size) & 1);

	if ((*(volatile const uint8_t *)&cqe->phase & SHCA_PHASE_BIT) != phase)
		return NULL;
	udma_from_device_barrier();
	return cqe;
}

/* The count a work queue's consumer reaches once WQE slot index is done. */
static inline uint32_t softhca_wq_consumed(uint32_t ci, uint16_t index,
					   uint8_t log_size)
{
	return ci + ((index - ci) & ((1u << log_size) - 1)) + 1;
}

static inline uint32_t softhca_wq_doorbell(uint32_t pi, uint32_t qpn)
{
	return (pi << 16) | (qpn & SHCA_DB_QN_MASK);
}

#endif /* SOFTHCA_QUEUE_H */
