// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca rdma-core provider: device matching and the user context.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "softhca.h"
#include "softhca_hw.h"

/*
 * The kernel module is out of tree, so the kernel reports the device as
 * RDMA_DRIVER_UNKNOWN and a driver-id entry could never match: libibverbs
 * matches the ib_device name first, then the PCI modalias of its parent.
 */
static const struct verbs_match_ent softhca_match_table[] = {
	VERBS_NAME_MATCH("softhca", NULL),
	VERBS_PCI_MATCH(SHCA_PCI_VENDOR_ID, SHCA_PCI_DEVICE_ID, NULL),
	{}
};

static void softhca_free_context(struct ibv_context *ibctx);

static const struct verbs_context_ops softhca_ctx_ops = {
	.alloc_mw = softhca_alloc_mw,
	.alloc_pd = softhca_alloc_pd,
	.attach_mcast = ibv_cmd_attach_mcast,
	.bind_mw = softhca_bind_mw,
	.close_xrcd = softhca_close_xrcd,
	.create_ah = softhca_create_ah,
	.create_cq = softhca_create_cq,
	.create_cq_ex = softhca_create_cq_ex,
	.create_qp = softhca_create_qp,
	.create_qp_ex = softhca_create_qp_ex,
	.create_srq = softhca_create_srq,
	.create_srq_ex = softhca_create_srq_ex,
	.dealloc_mw = softhca_dealloc_mw,
	.dealloc_pd = softhca_dealloc_pd,
	.dereg_mr = softhca_dereg_mr,
	.destroy_ah = softhca_destroy_ah,
	.destroy_cq = softhca_destroy_cq,
	.destroy_qp = softhca_destroy_qp,
	.destroy_srq = softhca_destroy_srq,
	.detach_mcast = ibv_cmd_detach_mcast,
	.free_context = softhca_free_context,
	.get_srq_num = softhca_get_srq_num,
	.modify_qp = softhca_modify_qp,
	.modify_srq = softhca_modify_srq,
	.open_qp = softhca_open_qp,
	.open_xrcd = softhca_open_xrcd,
	.poll_cq = softhca_poll_cq,
	.post_recv = softhca_post_recv,
	.post_send = softhca_post_send,
	.post_srq_recv = softhca_post_srq_recv,
	.query_device_ex = softhca_query_device_ex,
	.query_port = softhca_query_port,
	.query_qp = softhca_query_qp,
	.query_srq = softhca_query_srq,
	.reg_mr = softhca_reg_mr,
	.req_notify_cq = softhca_req_notify_cq,
	.rereg_mr = softhca_rereg_mr,
	.resize_cq = softhca_resize_cq,
};

/*
 * The limits the fast path checks, and the QP table sized by them.  With
 * CAPS.QP clear the driver reports zero limits: the table stays empty and
 * creating a CQ or QP fails with EOPNOTSUPP.
 */
static int softhca_init_limits(struct softhca_context *ctx, uint32_t max_inline)
{
	struct ibv_device_attr_ex attr;
	uint32_t table_size;
	int err;

	err = ibv_cmd_query_device_any(&ctx->ibvctx.context, NULL, &attr,
				       sizeof(attr), NULL, NULL);
	if (err)
		return err;

	ctx->lim = (struct softhca_limits){
		.max_qp_wr = attr.orig_attr.max_qp_wr,
		.max_sge = attr.orig_attr.max_sge,
		.max_cqe = attr.orig_attr.max_cqe,
		.max_inline = max_inline,
	};
	/* rdma-core names neither device capability */
	if (attr.device_cap_flags_ex & IB_UVERBS_DEVICE_ATOMIC_WRITE)
		ctx->lim.rc_send_ops |= IBV_QP_EX_WITH_ATOMIC_WRITE;
	if (attr.device_cap_flags_ex & IB_UVERBS_DEVICE_FLUSH_GLOBAL)
		ctx->lim.rc_send_ops |= IBV_QP_EX_WITH_FLUSH;
	table_size = roundup_pow_of_two(attr.orig_attr.max_qp ?: 1);
	ctx->qp_table = calloc(table_size, sizeof(*ctx->qp_table));
	if (!ctx->qp_table)
		return ENOMEM;
	ctx->qp_table_mask = table_size - 1;
	return 0;
}

static struct verbs_context *
softhca_alloc_context(struct ibv_device *ibdev, int cmd_fd, void *private_data)
{
	struct softhca_alloc_ucontext_resp resp = {};
	struct softhca_alloc_ucontext cmd = {};
	struct softhca_context *ctx;
	int err;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, ibvctx,
					   RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;

	err = ibv_cmd_get_context(&ctx->ibvctx, &cmd.ibv_cmd, sizeof(cmd),
				  &resp.ibv_resp, sizeof(resp));
	if (err) {
		verbs_err(&ctx->ibvctx, "ibv_cmd_get_context failed: %d\n",
			  err);
		goto err_free;
	}

	err = softhca_init_limits(ctx, resp.max_inline);
	if (err) {
		verbs_err(&ctx->ibvctx, "query_device failed: %d\n", err);
		goto err_free;
	}
	pthread_mutex_init(&ctx->qp_table_lock, NULL);

	ctx->db_size = resp.db_page_size;
	ctx->db = mmap(NULL, ctx->db_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       cmd_fd, resp.db_mmap_key);
	if (ctx->db == MAP_FAILED) {
		err = errno;
		verbs_err(&ctx->ibvctx, "doorbell page mmap failed: %d\n", err);
		goto err_table;
	}
	verbs_debug(&ctx->ibvctx, "uctx %u, doorbell page of %zu bytes\n",
		    resp.uctx, ctx->db_size);

	verbs_set_ops(&ctx->ibvctx, &softhca_ctx_ops);
	return &ctx->ibvctx;

err_table:
	pthread_mutex_destroy(&ctx->qp_table_lock);
	free(ctx->qp_table);
err_free:
	verbs_uninit_context(&ctx->ibvctx);
	free(ctx);
	errno = err;
	return NULL;
}

static void softhca_free_context(struct ibv_context *ibctx)
{
	struct softhca_context *ctx = to_sctx(ibctx);

	munmap(ctx->db, ctx->db_size);
	pthread_mutex_destroy(&ctx->qp_table_lock);
	free(ctx->qp_table);
	verbs_uninit_context(&ctx->ibvctx);
	free(ctx);
}

static struct verbs_device *
softhca_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	return calloc(1, sizeof(struct verbs_device));
}

static void softhca_uninit_device(struct verbs_device *vdev)
{
	free(vdev);
}

static const struct verbs_device_ops softhca_dev_ops = {
	.name = "softhca",
	.match_min_abi_version = SOFTHCA_UVERBS_ABI_VERSION,
	.match_max_abi_version = SOFTHCA_UVERBS_ABI_VERSION,
	.match_table = softhca_match_table,
	.alloc_device = softhca_alloc_device,
	.uninit_device = softhca_uninit_device,
	.alloc_context = softhca_alloc_context,
};

PROVIDER_DRIVER(softhca, softhca_dev_ops);
