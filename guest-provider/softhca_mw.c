// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca rdma-core provider: memory windows (spec §13.6).  The kernel
 * allocates them; a type 1 window is bound by ibv_bind_mw, which posts a
 * BIND_MW work request as IBV_WR_BIND_MW does for type 2, and takes the
 * new key at once (as rxe and mlx5 do), so that software may pass it on.
 */
#include <errno.h>
#include <stdlib.h>

#include "softhca.h"

struct ibv_mw *softhca_alloc_mw(struct ibv_pd *ibpd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp;
	struct ibv_alloc_mw cmd;
	struct ibv_mw *mw;
	int err;

	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return NULL;
	err = ibv_cmd_alloc_mw(ibpd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (err) {
		free(mw);
		errno = err;
		return NULL;
	}
	return mw;
}

int softhca_dealloc_mw(struct ibv_mw *mw)
{
	int err = ibv_cmd_dealloc_mw(mw);

	if (!err)
		free(mw);
	return err;
}

int softhca_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		    struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr *bad_wr;
	struct ibv_send_wr wr = {
		.wr_id = mw_bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = mw_bind->send_flags,
		.bind_mw = {
			.mw = mw,
			.rkey = ibv_inc_rkey(mw->rkey),
			.bind_info = mw_bind->bind_info,
		},
	};
	int err;

	if (mw->type != IBV_MW_TYPE_1)
		return EINVAL;
	err = softhca_post_send(ibqp, &wr, &bad_wr);
	if (!err)
		mw->rkey = wr.bind_mw.rkey;
	return err;
}
