// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca rdma-core provider: queue geometry, and the translation between
 * verbs and the device's queue entries (spec §13.1, §13.2, §15).  Nothing
 * here touches a lock, a doorbell or the kernel, so that the host tests can
 * exercise it against the spec's layouts.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include <util/compiler.h>

#include "softhca_queue.h"

/* The smallest n with 2^n >= v. */
static unsigned int log2_ceil(uint64_t v)
{
	return v > 1 ? 64 - __builtin_clzll(v - 1) : 0;
}

/* The largest n with 2^n <= v, for v > 0. */
static unsigned int log2_floor(uint64_t v)
{
	return 63 - __builtin_clzll(v);
}

static unsigned int min_u(unsigned int a, unsigned int b)
{
	return a < b ? a : b;
}

/*
 * A ring of at least n + 1 entries, a power of 2, but no more than the
 * device takes: the device holds as many entries as the ring has (counts
 * are free-running), so n = max entries is still allowed.
 */
static int ring_log_size(uint32_t n, uint32_t max, uint8_t *log_size)
{
	unsigned int max_log;

	if (!max)
		return EOPNOTSUPP; /* CAPS.QP clear: the limits read 0 */
	max_log = log2_floor(max);
	if (n > 1u << max_log)
		return EINVAL;
	*log_size = min_u(log2_ceil((uint64_t)n + 1), max_log);
	return 0;
}

/* IBA: a CQ holds at least one entry; mlx5 and rxe refuse 0 (EINVAL). */
int softhca_cq_log_size(const struct softhca_limits *lim, int cqe,
			uint8_t *log_size)
{
	if (cqe < 1)
		return EINVAL;
	return ring_log_size(cqe, lim->max_cqe, log_size);
}

static int wq_shape(const struct softhca_limits *lim, uint32_t max_wr,
		    uint32_t wqe_bytes, unsigned int min_shift,
		    struct softhca_wq_shape *shape)
{
	unsigned int shift = log2_ceil(wqe_bytes);
	int err;

	err = ring_log_size(max_wr, lim->max_qp_wr, &shape->log_size);
	if (err)
		return err;
	if (shift < min_shift)
		shift = min_shift;
	if (shift > SOFTHCA_WQE_SHIFT_MAX)
		return EINVAL;
	shape->wqe_shift = shift;
	return 0;
}

/*
 * The SQ stride holds the 64-byte header, on a UD QP the 32-byte AV, and
 * either max_send_sge SGEs or max_inline_data bytes; cap is updated to what
 * the shape really holds.
 */
int softhca_sq_shape(const struct softhca_limits *lim, struct ibv_qp_cap *cap,
		     bool dgram, struct softhca_wq_shape *shape)
{
	const uint32_t hdr = sizeof(struct shca_send_wqe) +
			     (dgram ? sizeof(struct shca_av) : 0);
	uint32_t sge_bytes, room;
	int err;

	if (cap->max_send_sge > lim->max_sge ||
	    cap->max_inline_data > lim->max_inline)
		return EINVAL;
	sge_bytes = cap->max_send_sge * sizeof(struct shca_sge);
	err = wq_shape(lim, cap->max_send_wr,
		       hdr + (sge_bytes > cap->max_inline_data ?
				      sge_bytes :
				      cap->max_inline_data),
		       SOFTHCA_SQ_SHIFT_MIN, shape);
	if (err)
		return err;

	room = (1u << shape->wqe_shift) - hdr;
	cap->max_send_wr = 1u << shape->log_size;
	cap->max_send_sge = min_u(room / sizeof(struct shca_sge), lim->max_sge);
	cap->max_inline_data = min_u(room, lim->max_inline);
	return 0;
}

/* A QP asking for no receive WRs has no RQ: its shape is all zero. */
int softhca_rq_shape(const struct softhca_limits *lim, struct ibv_qp_cap *cap,
		     struct softhca_wq_shape *shape)
{
	const uint32_t hdr = sizeof(struct shca_recv_wqe);
	uint32_t room;
	int err;

	if (!cap->max_recv_wr) {
		*shape = (struct softhca_wq_shape){};
		cap->max_recv_sge = 0;
		return 0;
	}
	if (cap->max_recv_sge > lim->max_sge)
		return EINVAL;
	err = wq_shape(lim, cap->max_recv_wr,
		       hdr + cap->max_recv_sge * sizeof(struct shca_sge),
		       SOFTHCA_RQ_SHIFT_MIN, shape);
	if (err)
		return err;

	room = (1u << shape->wqe_shift) - hdr;
	cap->max_recv_wr = 1u << shape->log_size;
	cap->max_recv_sge = min_u(room / sizeof(struct shca_sge), lim->max_sge);
	return 0;
}

static void put_sges(struct shca_sge *dst, const struct ibv_sge *src, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		dst[i].addr = htole64(src[i].addr);
		dst[i].length = htole32(src[i].length);
		dst[i].lkey = htole32(src[i].lkey);
	}
}

/* The WQE opcode of a verbs opcode, or -1 if the device has none. */
static int to_wqe_opcode(enum ibv_wr_opcode opcode)
{
	switch (opcode) {
	case IBV_WR_SEND:
		return SHCA_WR_SEND;
	case IBV_WR_SEND_WITH_IMM:
		return SHCA_WR_SEND_IMM;
	case IBV_WR_SEND_WITH_INV:
		return SHCA_WR_SEND_INV;
	case IBV_WR_RDMA_WRITE:
		return SHCA_WR_RDMA_WRITE;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return SHCA_WR_RDMA_WRITE_IMM;
	case IBV_WR_RDMA_READ:
		return SHCA_WR_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return SHCA_WR_ATOMIC_CMP_SWP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return SHCA_WR_ATOMIC_FETCH_ADD;
	case IBV_WR_LOCAL_INV:
		return SHCA_WR_LOCAL_INV;
	case IBV_WR_BIND_MW:
		return SHCA_WR_BIND_MW;
	default:
		return -1;
	}
}

/*
 * The AV of an address handle (spec §13.2, §17.1).  RoCE addresses by GID
 * only: attr must carry a GRH.  The device derives the UDP source port.
 */
int softhca_av_init(struct shca_av *av, const struct ibv_ah_attr *attr,
		    const uint8_t dmac[6])
{
	if (!attr->is_global)
		return EINVAL;
	memset(av, 0, sizeof(*av));
	memcpy(av->dgid, attr->grh.dgid.raw, sizeof(av->dgid));
	memcpy(av->dmac, dmac, sizeof(av->dmac));
	av->hop_limit = attr->grh.hop_limit;
	av->traffic_class = attr->grh.traffic_class;
	av->flow_label = htole32(attr->grh.flow_label & 0xfffff);
	av->sgid_index = htole16(attr->grh.sgid_index);
	return 0;
}

static bool is_atomic(uint8_t opcode)
{
	return opcode == SHCA_WR_ATOMIC_CMP_SWP ||
	       opcode == SHCA_WR_ATOMIC_FETCH_ADD;
}

/* SGEs or inline data follow the header and, on a UD QP, the AV. */
static uint8_t *wqe_data(struct shca_send_wqe *wqe,
			 const struct softhca_wqe_limits *lim)
{
	return (uint8_t *)(wqe + 1) + (lim->dgram ? sizeof(struct shca_av) : 0);
}

struct shca_send_wqe *softhca_wqe_init(void *slot, uint64_t wr_id,
				       uint8_t opcode, unsigned int send_flags,
				       const struct softhca_wqe_limits *lim)
{
	struct shca_send_wqe *wqe = slot;

	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = htole64(wr_id);
	wqe->opcode = opcode;
	if (lim->sig_all || (send_flags & IBV_SEND_SIGNALED))
		wqe->flags |= SHCA_WQE_SIGNALED;
	if (send_flags & IBV_SEND_SOLICITED)
		wqe->flags |= SHCA_WQE_SOLICITED;
	if (send_flags & IBV_SEND_FENCE)
		wqe->flags |= SHCA_WQE_FENCE;
	return wqe;
}

void softhca_wqe_set_imm(struct shca_send_wqe *wqe, __be32 imm_data)
{
	wqe->imm = imm_data; /* as on the wire */
}

void softhca_wqe_set_inv(struct shca_send_wqe *wqe, uint32_t rkey)
{
	wqe->imm = htole32(rkey);
}

void softhca_wqe_set_rdma(struct shca_send_wqe *wqe, uint32_t rkey,
			  uint64_t remote_addr)
{
	wqe->remote_addr = htole64(remote_addr);
	wqe->rkey = htole32(rkey);
}

/*
 * A misaligned address, like SGEs that are not one of 8 bytes, is posted
 * as mlx5 posts it, for the device to complete with LOC_QP_OP_ERR (spec
 * §15).
 */
void softhca_wqe_set_atomic(struct shca_send_wqe *wqe, uint32_t rkey,
			    uint64_t remote_addr, uint64_t compare_add,
			    uint64_t swap)
{
	softhca_wqe_set_rdma(wqe, rkey, remote_addr);
	wqe->compare_add = htole64(compare_add);
	wqe->swap = htole64(swap);
}

/*
 * The 8 bytes to store, as they lie in memory (spec §15); a misaligned
 * address is the device's to complete with LOC_QP_OP_ERR, as an atomic's.
 */
void softhca_wqe_set_atomic_write(struct shca_send_wqe *wqe, uint32_t rkey,
				  uint64_t remote_addr, const void *data)
{
	softhca_wqe_set_rdma(wqe, rkey, remote_addr);
	memcpy(&wqe->compare_add, data, sizeof(wqe->compare_add));
}

/* verbs' IBV_FLUSH_* types and levels are the FETH's encodings. */
int softhca_wqe_set_flush(struct shca_send_wqe *wqe, uint32_t rkey,
			  uint64_t remote_addr, size_t len, uint8_t type,
			  uint8_t level)
{
	if (!type || (type & ~(IBV_FLUSH_GLOBAL | IBV_FLUSH_PERSISTENT)) ||
	    level > IBV_FLUSH_MR || len > 1ull << 31)
		return EINVAL;
	softhca_wqe_set_rdma(wqe, rkey, remote_addr);
	wqe->feth = type | level << SHCA_FLUSH_LEVEL_SHIFT;
	wqe->compare_add = htole64(len);
	return 0;
}

/*
 * The UD part of a send WQE: destination QP and Q_Key in the header, the
 * AH's AV behind it.  Datagrams are sends, with or without immediate.
 * The BTH carries 24 bits of the QPN and the rest is ignored, and a QPN no
 * QP has is the receiver's to drop (spec §17.2): mlx5 and rxe post both.
 */
int softhca_wqe_set_ud(struct shca_send_wqe *wqe, struct ibv_ah *ah,
		       uint32_t remote_qpn, uint32_t remote_qkey,
		       const struct softhca_wqe_limits *lim)
{
	if (!lim->dgram ||
	    (wqe->opcode != SHCA_WR_SEND && wqe->opcode != SHCA_WR_SEND_IMM) ||
	    !ah)
		return EINVAL;
	wqe->remote_qpn = htole32(remote_qpn & SOFTHCA_QPN_MASK);
	wqe->remote_qkey = htole32(remote_qkey);
	memcpy(wqe + 1, &to_sah(ah)->av, sizeof(struct shca_av));
	return 0;
}

/*
 * The XRC SRQ that receives the WQE's message (spec §13.7), 24 bits as the
 * XRCETH carries it.  Binds and invalidations are local: they name none,
 * and a bind's layout has no remote_qpn.
 */
int softhca_wqe_set_xrc(struct shca_send_wqe *wqe, uint32_t remote_srqn)
{
	if (wqe->opcode == SHCA_WR_BIND_MW || wqe->opcode == SHCA_WR_LOCAL_INV)
		return 0;
	if (remote_srqn >> 24)
		return EINVAL;
	wqe->remote_qpn = htole32(remote_srqn);
	return 0;
}

int softhca_wqe_set_sges(struct shca_send_wqe *wqe, const struct ibv_sge *sg,
			 size_t num_sge, const struct softhca_wqe_limits *lim)
{
	if (num_sge > lim->max_sge)
		return EINVAL;
	wqe->num_sge = num_sge;
	put_sges((struct shca_sge *)wqe_data(wqe, lim), sg, num_sge);
	return 0;
}

/* Inline data is sent, never written locally. */
int softhca_wqe_set_inline(struct shca_send_wqe *wqe)
{
	if (wqe->opcode == SHCA_WR_RDMA_READ || is_atomic(wqe->opcode))
		return EINVAL;
	wqe->flags |= SHCA_WQE_INLINE;
	return 0;
}

/* Append length bytes at addr to the inline data of a WQE. */
int softhca_wqe_add_inline(struct shca_send_wqe *wqe, const void *addr,
			   size_t length, const struct softhca_wqe_limits *lim)
{
	uint32_t len = le32toh(wqe->inline_len);

	if (length > lim->max_inline - len)
		return EINVAL;
	memcpy(wqe_data(wqe, lim) + len, addr, length);
	wqe->inline_len = htole32(len + length);
	return 0;
}

/*
 * Write the send WQE for wr to slot; on error (EINVAL for a request the
 * verbs forbid or the queue cannot hold, EOPNOTSUPP for an opcode the
 * device lacks) the slot's content is undefined.
 */
/*
 * BIND_MW (spec §13.6): the window's key now, the key it gets, and the
 * range of the MR it is bound to (none, length 0: unbind a type 1).
 */
int softhca_wqe_set_bind(struct shca_send_wqe *wqe, uint32_t mw_rkey,
			 uint32_t new_rkey, const struct ibv_mw_bind_info *info,
			 const struct softhca_wqe_limits *lim)
{
	struct shca_bind_mw_wqe *bind = (struct shca_bind_mw_wqe *)wqe;
	unsigned int access = info->mw_access_flags;
	uint32_t hw = 0;

	if (lim->dgram || (access & ~SOFTHCA_MW_IBV_ACCESS) ||
	    (!info->mr && (info->addr || info->length)))
		return EINVAL;
	if (access & IBV_ACCESS_REMOTE_WRITE)
		hw |= SHCA_ACCESS_REMOTE_WRITE;
	if (access & IBV_ACCESS_REMOTE_READ)
		hw |= SHCA_ACCESS_REMOTE_READ;
	if (access & IBV_ACCESS_REMOTE_ATOMIC)
		hw |= SHCA_ACCESS_REMOTE_ATOMIC;
	bind->mw_key = htole32(mw_rkey);
	bind->new_key = htole32(new_rkey);
	bind->mr_key = htole32(info->mr ? info->mr->lkey : 0);
	bind->access = htole32(hw);
	bind->addr = htole64(info->addr);
	bind->length = htole64(info->length);
	return 0;
}

/* LOCAL_INV of a window (spec §13.6): imm holds the key, little-endian. */
int softhca_wqe_set_local_inv(struct shca_send_wqe *wqe, uint32_t rkey,
			      const struct softhca_wqe_limits *lim)
{
	if (lim->dgram)
		return EINVAL;
	wqe->imm = htole32(rkey);
	return 0;
}

int softhca_build_send_wqe(void *slot, const struct ibv_send_wr *wr,
			   const struct softhca_wqe_limits *lim)
{
	int opcode = to_wqe_opcode(wr->opcode);
	struct shca_send_wqe *wqe;
	int err = 0;
	int i;

	if (opcode < 0)
		return EOPNOTSUPP;
	if (wr->num_sge < 0)
		return EINVAL;

	wqe = softhca_wqe_init(slot, wr->wr_id, opcode, wr->send_flags, lim);
	switch (opcode) {
	case SHCA_WR_BIND_MW:
		/* no data: a window's bind is all in the WQE */
		return softhca_wqe_set_bind(wqe, wr->bind_mw.mw->rkey,
					    wr->bind_mw.rkey,
					    &wr->bind_mw.bind_info, lim);
	case SHCA_WR_LOCAL_INV:
		return softhca_wqe_set_local_inv(wqe, wr->invalidate_rkey, lim);
	case SHCA_WR_SEND_IMM:
		softhca_wqe_set_imm(wqe, wr->imm_data);
		break;
	case SHCA_WR_SEND_INV:
		softhca_wqe_set_inv(wqe, wr->invalidate_rkey);
		break;
	case SHCA_WR_RDMA_WRITE_IMM:
		softhca_wqe_set_imm(wqe, wr->imm_data);
		SWITCH_FALLTHROUGH;
	case SHCA_WR_RDMA_WRITE:
	case SHCA_WR_RDMA_READ:
		softhca_wqe_set_rdma(wqe, wr->wr.rdma.rkey,
				     wr->wr.rdma.remote_addr);
		break;
	case SHCA_WR_ATOMIC_CMP_SWP:
	case SHCA_WR_ATOMIC_FETCH_ADD:
		softhca_wqe_set_atomic(wqe, wr->wr.atomic.rkey,
				       wr->wr.atomic.remote_addr,
				       wr->wr.atomic.compare_add,
				       wr->wr.atomic.swap);
		break;
	}
	if (lim->dgram)
		err = softhca_wqe_set_ud(wqe, wr->wr.ud.ah,
					 wr->wr.ud.remote_qpn,
					 wr->wr.ud.remote_qkey, lim);
	if (!err && lim->xrc)
		err = softhca_wqe_set_xrc(wqe, wr->qp_type.xrc.remote_srqn);
	if (err)
		return err;

	if (!(wr->send_flags & IBV_SEND_INLINE))
		return softhca_wqe_set_sges(wqe, wr->sg_list, wr->num_sge, lim);
	err = softhca_wqe_set_inline(wqe);
	for (i = 0; !err && i < wr->num_sge; i++)
		err = softhca_wqe_add_inline(
			wqe, (void *)(uintptr_t)wr->sg_list[i].addr,
			wr->sg_list[i].length, lim);
	return err;
}

int softhca_build_recv_wqe(void *slot, const struct ibv_recv_wr *wr,
			   const struct softhca_wqe_limits *lim)
{
	struct shca_recv_wqe *wqe = slot;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > lim->max_sge)
		return EINVAL;

	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = htole64(wr->wr_id);
	wqe->num_sge = wr->num_sge;
	put_sges((struct shca_sge *)(wqe + 1), wr->sg_list, wr->num_sge);
	return 0;
}

static enum ibv_wc_status to_ibv_status(uint8_t status)
{
	switch (status) {
	case SHCA_CQE_SUCCESS:
		return IBV_WC_SUCCESS;
	case SHCA_CQE_LOC_LEN_ERR:
		return IBV_WC_LOC_LEN_ERR;
	case SHCA_CQE_LOC_QP_OP_ERR:
		return IBV_WC_LOC_QP_OP_ERR;
	case SHCA_CQE_LOC_PROT_ERR:
		return IBV_WC_LOC_PROT_ERR;
	case SHCA_CQE_WR_FLUSH_ERR:
		return IBV_WC_WR_FLUSH_ERR;
	case SHCA_CQE_MW_BIND_ERR:
		return IBV_WC_MW_BIND_ERR;
	case SHCA_CQE_BAD_RESP_ERR:
		return IBV_WC_BAD_RESP_ERR;
	case SHCA_CQE_LOC_ACCESS_ERR:
		return IBV_WC_LOC_ACCESS_ERR;
	case SHCA_CQE_REM_INV_REQ_ERR:
		return IBV_WC_REM_INV_REQ_ERR;
	case SHCA_CQE_REM_ACCESS_ERR:
		return IBV_WC_REM_ACCESS_ERR;
	case SHCA_CQE_REM_OP_ERR:
		return IBV_WC_REM_OP_ERR;
	case SHCA_CQE_RETRY_EXC_ERR:
		return IBV_WC_RETRY_EXC_ERR;
	case SHCA_CQE_RNR_RETRY_EXC_ERR:
		return IBV_WC_RNR_RETRY_EXC_ERR;
	default:
		return IBV_WC_GENERAL_ERR;
	}
}

static enum ibv_wc_opcode to_ibv_opcode(uint8_t opcode)
{
	switch (opcode) {
	case SHCA_CQE_OP_RDMA_WRITE:
		return IBV_WC_RDMA_WRITE;
	case SHCA_CQE_OP_RDMA_READ:
		return IBV_WC_RDMA_READ;
	case SHCA_CQE_OP_COMP_SWAP:
		return IBV_WC_COMP_SWAP;
	case SHCA_CQE_OP_FETCH_ADD:
		return IBV_WC_FETCH_ADD;
	case SHCA_CQE_OP_BIND_MW:
		return IBV_WC_BIND_MW;
	case SHCA_CQE_OP_LOCAL_INV:
		return IBV_WC_LOCAL_INV;
	case SHCA_CQE_OP_FLUSH:
		return IBV_WC_FLUSH;
	case SHCA_CQE_OP_ATOMIC_WRITE:
		return IBV_WC_ATOMIC_WRITE;
	case SHCA_CQE_OP_RECV_RDMA_IMM:
		return IBV_WC_RECV_RDMA_WITH_IMM;
	default:
		/* Error completions need not carry a meaningful opcode. */
		return opcode & SHCA_CQE_OP_RECV ? IBV_WC_RECV : IBV_WC_SEND;
	}
}

/*
 * ibv_wc has no network header type: for RoCE, mlx5 reports it in sl,
 * which RoCE does not use, and UCX's UD transport reads it there to find
 * the destination address in the GRH (spec §17.2).
 */
#define SOFTHCA_WC_SL_IPV6 1
#define SOFTHCA_WC_SL_IPV4 2

/*
 * A UD receive also gets src_qp and GRH (its buffer starts with 40 bytes
 * of GRH, spec §17.2), and its network header type in sl.  RoCE has no
 * LID and the only P_Key is at index 0: slid, dlid_path_bits and
 * pkey_index stay 0.
 */
void softhca_cqe_to_wc(const struct shca_cqe *cqe, struct ibv_wc *wc)
{
	*wc = (struct ibv_wc){
		.wr_id = le64toh(cqe->wr_id),
		.status = to_ibv_status(cqe->status),
		.opcode = to_ibv_opcode(cqe->opcode),
		.vendor_err = cqe->vendor_err,
		.byte_len = le32toh(cqe->byte_len),
		.qp_num = le32toh(cqe->qpn),
		.src_qp = le32toh(cqe->src_qp),
	};
	if (cqe->flags & SHCA_CQE_WITH_IMM) {
		wc->wc_flags |= IBV_WC_WITH_IMM;
		wc->imm_data = cqe->imm; /* network order, as stored */
	} else if (cqe->flags & SHCA_CQE_WITH_INV) {
		wc->wc_flags |= IBV_WC_WITH_INV;
		wc->invalidated_rkey = le32toh(cqe->imm);
	}
	if (cqe->flags & SHCA_CQE_GRH) {
		wc->wc_flags |= IBV_WC_GRH;
		wc->sl = cqe->flags & SHCA_CQE_IPV4 ? SOFTHCA_WC_SL_IPV4 :
						      SOFTHCA_WC_SL_IPV6;
	}
}
