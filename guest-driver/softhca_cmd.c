// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * One function per admin command (spec §5.3): typed parameters in, wire
 * structure out, handle back.
 */

#include "softhca.h"

static void softhca_cmd_init(struct shca_aq_entry *cmd, u8 opcode)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->opcode = opcode;
}

/* Commands whose payload is one handle; @result may be NULL. */
static int softhca_cmd_handle_result(struct softhca_dev *sdev, u8 opcode,
				     u32 handle, u32 *result)
{
	struct shca_aq_entry cmd;

	softhca_cmd_init(&cmd, opcode);
	cmd.handle.handle = cpu_to_le32(handle);
	return softhca_aq_exec(sdev, &cmd, result);
}

static int softhca_cmd_handle(struct softhca_dev *sdev, u8 opcode, u32 handle)
{
	return softhca_cmd_handle_result(sdev, opcode, handle, NULL);
}

/* Commands without payload which return a handle. */
static int softhca_cmd_alloc(struct softhca_dev *sdev, u8 opcode, u32 *handle)
{
	struct shca_aq_entry cmd;

	softhca_cmd_init(&cmd, opcode);
	return softhca_aq_exec(sdev, &cmd, handle);
}

/* The EQ buffer is one physically contiguous, naturally aligned block. */
int softhca_cmd_create_eq(struct softhca_dev *sdev, u32 eqn, u16 vector,
			  u8 log_size, dma_addr_t addr, u8 page_shift)
{
	size_t bytes = (size_t)SHCA_EQE_SIZE << log_size;
	struct shca_aq_entry cmd;

	softhca_cmd_init(&cmd, SHCA_AQ_CREATE_EQ);
	cmd.create_eq.eqn = cpu_to_le32(eqn);
	cmd.create_eq.vector = cpu_to_le16(vector);
	cmd.create_eq.log_size = log_size;
	cmd.create_eq.buf.addr = cpu_to_le64(addr);
	cmd.create_eq.buf.npages =
		cpu_to_le32(DIV_ROUND_UP(bytes, BIT_ULL(page_shift)));
	cmd.create_eq.buf.page_shift = page_shift;
	cmd.create_eq.buf.flags = SHCA_BUF_DIRECT;
	return softhca_aq_exec(sdev, &cmd, NULL);
}

int softhca_cmd_destroy_eq(struct softhca_dev *sdev, u32 eqn)
{
	return softhca_cmd_handle(sdev, SHCA_AQ_DESTROY_EQ, eqn);
}

/* Install @gid at @index, or remove the entry if @gid is NULL. */
int softhca_cmd_set_gid(struct softhca_dev *sdev, u32 index, const u8 *gid)
{
	struct shca_aq_entry cmd;

	softhca_cmd_init(&cmd, SHCA_AQ_SET_GID);
	cmd.set_gid.index = cpu_to_le32(index);
	if (gid) {
		cmd.set_gid.flags = cpu_to_le32(SHCA_GID_VALID);
		memcpy(cmd.set_gid.gid, gid, sizeof(cmd.set_gid.gid));
	}
	return softhca_aq_exec(sdev, &cmd, NULL);
}

/* A PD of the user context @uctx (0: the kernel's). */
int softhca_cmd_alloc_pd(struct softhca_dev *sdev, u32 uctx, u32 *pdn)
{
	return softhca_cmd_handle_result(sdev, SHCA_AQ_ALLOC_PD, uctx, pdn);
}

int softhca_cmd_dealloc_pd(struct softhca_dev *sdev, u32 pdn)
{
	return softhca_cmd_handle(sdev, SHCA_AQ_DEALLOC_PD, pdn);
}

int softhca_cmd_alloc_uctx(struct softhca_dev *sdev, u32 *uctx)
{
	return softhca_cmd_alloc(sdev, SHCA_AQ_ALLOC_UCTX, uctx);
}

int softhca_cmd_dealloc_uctx(struct softhca_dev *sdev, u32 uctx)
{
	return softhca_cmd_handle(sdev, SHCA_AQ_DEALLOC_UCTX, uctx);
}

/* Spec §13: objects of CAPS.QP. */

int softhca_cmd_create_cq(struct softhca_dev *sdev, u32 uctx, u32 eqn,
			  u8 log_size, const struct shca_buf_desc *buf,
			  u32 *cqn)
{
	struct shca_aq_entry cmd;

	softhca_cmd_init(&cmd, SHCA_AQ_CREATE_CQ);
	cmd.create_cq.uctx = cpu_to_le32(uctx);
	cmd.create_cq.eqn = cpu_to_le32(eqn);
	cmd.create_cq.log_size = log_size;
	cmd.create_cq.buf = *buf;
	return softhca_aq_exec(sdev, &cmd, cqn);
}

int softhca_cmd_destroy_cq(struct softhca_dev *sdev, u32 cqn)
{
	return softhca_cmd_handle(sdev, SHCA_AQ_DESTROY_CQ, cqn);
}

int softhca_cmd_resize_cq(struct softhca_dev *sdev, u32 cqn, u8 log_size,
			  const struct shca_buf_desc *buf, u32 *copied)
{
	struct shca_aq_entry cmd;

	softhca_cmd_init(&cmd, SHCA_AQ_RESIZE_CQ);
	cmd.resize_cq.cqn = cpu_to_le32(cqn);
	cmd.resize_cq.log_size = log_size;
	cmd.resize_cq.buf = *buf;
	return softhca_aq_exec(sdev, &cmd, copied);
}

int softhca_cmd_create_qp(struct softhca_dev *sdev,
			  const struct softhca_create_qp_params *params,
			  u32 *qpn)
{
	struct shca_aq_create_qp *c;
	struct shca_aq_entry cmd;

	softhca_cmd_init(&cmd, SHCA_AQ_CREATE_QP);
	c = &cmd.create_qp;
	c->uctx = cpu_to_le32(params->uctx);
	c->pdn = cpu_to_le32(params->pdn);
	c->send_cqn = cpu_to_le32(params->send_cqn);
	c->recv_cqn = cpu_to_le32(params->recv_cqn);
	c->type = params->type;
	c->sq_log_size = params->sq_log_size;
	c->sq_wqe_shift = params->sq_wqe_shift;
	c->flags = params->flags;
	c->srqn = cpu_to_le16(params->srqn);
	if (params->sq)
		c->sq = *params->sq;
	if (params->rq) {
		c->rq_log_size = params->rq_log_size;
		c->rq_wqe_shift = params->rq_wqe_shift;
		c->rq = *params->rq;
	}
	return softhca_aq_exec(sdev, &cmd, qpn);
}

/* @attr is the bus address of a 64-byte aligned struct shca_qp_attr. */
int softhca_cmd_modify_qp(struct softhca_dev *sdev, u32 qpn, u32 attr_mask,
			  dma_addr_t attr)
{
	struct shca_aq_entry cmd;

	softhca_cmd_init(&cmd, SHCA_AQ_MODIFY_QP);
	cmd.qp_attr.qpn = cpu_to_le32(qpn);
	cmd.qp_attr.attr_mask = cpu_to_le32(attr_mask);
	cmd.qp_attr.attr_addr = cpu_to_le64(attr);
	return softhca_aq_exec(sdev, &cmd, NULL);
}

int softhca_cmd_query_qp(struct softhca_dev *sdev, u32 qpn, dma_addr_t attr)
{
	struct shca_aq_entry cmd;

	softhca_cmd_init(&cmd, SHCA_AQ_QUERY_QP);
	cmd.qp_attr.qpn = cpu_to_le32(qpn);
	cmd.qp_attr.attr_addr = cpu_to_le64(attr);
	return softhca_aq_exec(sdev, &cmd, NULL);
}

int softhca_cmd_destroy_qp(struct softhca_dev *sdev, u32 qpn)
{
	return softhca_cmd_handle(sdev, SHCA_AQ_DESTROY_QP, qpn);
}

static void softhca_cmd_mr_desc(struct shca_aq_reg_mr *c,
				const struct softhca_reg_mr_params *params)
{
	c->pdn = cpu_to_le32(params->pdn);
	c->access = cpu_to_le32(params->access);
	c->iova = cpu_to_le64(params->iova);
	c->length = cpu_to_le64(params->length);
	c->first_offset = cpu_to_le32(params->first_offset);
	if (params->pages)
		c->pages = *params->pages;
}

int softhca_cmd_reg_mr(struct softhca_dev *sdev,
		       const struct softhca_reg_mr_params *params, u32 *key)
{
	struct shca_aq_entry cmd;

	softhca_cmd_init(&cmd, SHCA_AQ_REG_MR);
	softhca_cmd_mr_desc(&cmd.reg_mr, params);
	return softhca_aq_exec(sdev, &cmd, key);
}

int softhca_cmd_rereg_mr(struct softhca_dev *sdev, u32 key,
			 const struct softhca_reg_mr_params *params)
{
	struct shca_aq_entry cmd;

	softhca_cmd_init(&cmd, SHCA_AQ_REREG_MR);
	cmd.rereg_mr.key = cpu_to_le32(key);
	softhca_cmd_mr_desc(&cmd.rereg_mr.mr, params);
	return softhca_aq_exec(sdev, &cmd, NULL);
}

int softhca_cmd_dereg_mr(struct softhca_dev *sdev, u32 key)
{
	return softhca_cmd_handle(sdev, SHCA_AQ_DEREG_MR, key);
}

/* @addr receives SHCA_STAT_COUNT little-endian 64-bit counters. */
int softhca_cmd_query_stats(struct softhca_dev *sdev, dma_addr_t addr)
{
	struct shca_aq_entry cmd;

	softhca_cmd_init(&cmd, SHCA_AQ_QUERY_STATS);
	cmd.query_stats.addr = cpu_to_le64(addr);
	return softhca_aq_exec(sdev, &cmd, NULL);
}

/* Spec §17.3: ATTACH_MCAST or DETACH_MCAST of @qpn and the group @gid. */
int softhca_cmd_mcast(struct softhca_dev *sdev, u8 opcode, u32 qpn,
		      const u8 *gid)
{
	struct shca_aq_entry cmd;

	softhca_cmd_init(&cmd, opcode);
	cmd.mcast.qpn = cpu_to_le32(qpn);
	memcpy(cmd.mcast.gid, gid, sizeof(cmd.mcast.gid));
	return softhca_aq_exec(sdev, &cmd, NULL);
}

int softhca_cmd_alloc_mw(struct softhca_dev *sdev, u32 pdn, u8 type, u32 *key)
{
	struct shca_aq_entry cmd;

	softhca_cmd_init(&cmd, SHCA_AQ_ALLOC_MW);
	cmd.alloc_mw.pdn = cpu_to_le32(pdn);
	cmd.alloc_mw.type = type;
	return softhca_aq_exec(sdev, &cmd, key);
}

int softhca_cmd_dealloc_mw(struct softhca_dev *sdev, u32 key)
{
	return softhca_cmd_handle(sdev, SHCA_AQ_DEALLOC_MW, key);
}

int softhca_cmd_create_srq(struct softhca_dev *sdev,
			   const struct softhca_create_srq_params *params,
			   u32 *srqn)
{
	struct shca_aq_create_srq *c;
	struct shca_aq_entry cmd;

	softhca_cmd_init(&cmd, SHCA_AQ_CREATE_SRQ);
	c = &cmd.create_srq;
	c->uctx = cpu_to_le32(params->uctx);
	c->pdn = cpu_to_le32(params->pdn);
	c->srq_limit = cpu_to_le32(params->limit);
	c->log_size = params->log_size;
	c->wqe_shift = params->wqe_shift;
	c->flags = params->flags;
	c->buf = *params->buf;
	if (params->flags & SHCA_SRQ_F_XRC) {
		c->xrcdn = cpu_to_le32(params->xrcdn);
		c->cqn = cpu_to_le32(params->cqn);
	}
	return softhca_aq_exec(sdev, &cmd, srqn);
}

/* The device moves the SRQ's WQEs to the ring in @buf (spec §13.5). */
int softhca_cmd_resize_srq(struct softhca_dev *sdev, u32 srqn, u8 log_size,
			   const struct shca_buf_desc *buf)
{
	struct shca_aq_entry cmd;

	softhca_cmd_init(&cmd, SHCA_AQ_MODIFY_SRQ);
	cmd.modify_srq.srqn = cpu_to_le32(srqn);
	cmd.modify_srq.attr_mask = cpu_to_le32(SHCA_SRQ_ATTR_MAX_WR);
	cmd.modify_srq.log_size = log_size;
	cmd.modify_srq.buf = *buf;
	return softhca_aq_exec(sdev, &cmd, NULL);
}

int softhca_cmd_modify_srq_limit(struct softhca_dev *sdev, u32 srqn,
				 u32 limit)
{
	struct shca_aq_entry cmd;

	softhca_cmd_init(&cmd, SHCA_AQ_MODIFY_SRQ);
	cmd.modify_srq.srqn = cpu_to_le32(srqn);
	cmd.modify_srq.attr_mask = cpu_to_le32(SHCA_SRQ_ATTR_LIMIT);
	cmd.modify_srq.srq_limit = cpu_to_le32(limit);
	return softhca_aq_exec(sdev, &cmd, NULL);
}

int softhca_cmd_query_srq(struct softhca_dev *sdev, u32 srqn, u32 *limit)
{
	return softhca_cmd_handle_result(sdev, SHCA_AQ_QUERY_SRQ, srqn, limit);
}

int softhca_cmd_destroy_srq(struct softhca_dev *sdev, u32 srqn)
{
	return softhca_cmd_handle(sdev, SHCA_AQ_DESTROY_SRQ, srqn);
}

/* Spec §13.7: a domain belongs to no context, its payload's uctx is 0. */
int softhca_cmd_alloc_xrcd(struct softhca_dev *sdev, u32 *xrcdn)
{
	return softhca_cmd_alloc(sdev, SHCA_AQ_ALLOC_XRCD, xrcdn);
}

int softhca_cmd_dealloc_xrcd(struct softhca_dev *sdev, u32 xrcdn)
{
	return softhca_cmd_handle(sdev, SHCA_AQ_DEALLOC_XRCD, xrcdn);
}
