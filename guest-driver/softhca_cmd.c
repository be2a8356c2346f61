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

/* Commands whose payload is one handle and which return nothing. */
static int softhca_cmd_handle(struct softhca_dev *sdev, u8 opcode, u32 handle)
{
	struct shca_aq_entry cmd;

	softhca_cmd_init(&cmd, opcode);
	cmd.handle.handle = cpu_to_le32(handle);
	return softhca_aq_exec(sdev, &cmd, NULL);
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

int softhca_cmd_alloc_pd(struct softhca_dev *sdev, u32 *pdn)
{
	return softhca_cmd_alloc(sdev, SHCA_AQ_ALLOC_PD, pdn);
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
