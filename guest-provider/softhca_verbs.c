// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca rdma-core provider: verbs answered by the kernel driver.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "softhca.h"

int softhca_buf_alloc(struct softhca_buf *buf, size_t size)
{
	size_t page = sysconf(_SC_PAGESIZE);
	int err;

	buf->size = align(size, page);
	err = posix_memalign(&buf->addr, page, buf->size);
	if (err) {
		buf->addr = NULL;
		return err;
	}
	memset(buf->addr, 0, buf->size);
	/* A child's copy-on-write must not move pages the device writes. */
	err = ibv_dontfork_range(buf->addr, buf->size);
	if (err) {
		free(buf->addr);
		buf->addr = NULL;
		return err;
	}
	return 0;
}

void softhca_buf_free(struct softhca_buf *buf)
{
	ibv_dofork_range(buf->addr, buf->size);
	free(buf->addr);
}

int softhca_query_device_ex(struct ibv_context *ibctx,
			    const struct ibv_query_device_ex_input *input,
			    struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw_ver;
	int err;

	err = ibv_cmd_query_device_any(ibctx, input, attr, attr_size, &resp,
				       &resp_size);
	if (err)
		return err;

	/* The kernel's fw_ver is 16-bit major.minor.sub_minor from bit 32. */
	fw_ver = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)(fw_ver >> 32) & 0xffff,
		 (unsigned int)(fw_ver >> 16) & 0xffff,
		 (unsigned int)fw_ver & 0xffff);
	return 0;
}

int softhca_query_port(struct ibv_context *ibctx, uint8_t port,
		       struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd;

	return ibv_cmd_query_port(ibctx, port, attr, &cmd, sizeof(cmd));
}

struct ibv_pd *softhca_alloc_pd(struct ibv_context *ibctx)
{
	struct softhca_alloc_pd_resp resp = {};
	struct softhca_alloc_pd cmd = {};
	struct softhca_pd *pd;
	int err;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;

	err = ibv_cmd_alloc_pd(ibctx, &pd->ibvpd, &cmd.ibv_cmd, sizeof(cmd),
			       &resp.ibv_resp, sizeof(resp));
	if (err) {
		free(pd);
		errno = err;
		return NULL;
	}
	pd->pdn = resp.pdn;
	return &pd->ibvpd;
}

int softhca_dealloc_pd(struct ibv_pd *ibpd)
{
	struct softhca_pd *pd = to_spd(ibpd);
	int err;

	err = ibv_cmd_dealloc_pd(ibpd);
	if (err)
		return err;
	free(pd);
	return 0;
}

/* The kernel shares a domain among the processes that open its file. */
struct ibv_xrcd *softhca_open_xrcd(struct ibv_context *ibctx,
				   struct ibv_xrcd_init_attr *attr)
{
	struct ib_uverbs_open_xrcd_resp resp = {};
	struct ibv_open_xrcd cmd = {};
	struct verbs_xrcd *xrcd;
	int err;

	xrcd = calloc(1, sizeof(*xrcd));
	if (!xrcd)
		return NULL;

	err = ibv_cmd_open_xrcd(ibctx, xrcd, sizeof(*xrcd), attr, &cmd,
				sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		free(xrcd);
		errno = err;
		return NULL;
	}
	return &xrcd->xrcd;
}

int softhca_close_xrcd(struct ibv_xrcd *ibxrcd)
{
	struct verbs_xrcd *xrcd = container_of(ibxrcd, struct verbs_xrcd, xrcd);
	int err;

	err = ibv_cmd_close_xrcd(xrcd);
	if (err)
		return err;
	free(xrcd);
	return 0;
}

struct ibv_mr *softhca_reg_mr(struct ibv_pd *ibpd, void *addr, size_t length,
			      uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	struct verbs_mr *vmr;
	int err;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;

	err = ibv_cmd_reg_mr(ibpd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		free(vmr);
		errno = err;
		return NULL;
	}
	return &vmr->ibv_mr;
}

/* In place: the MR keeps its keys (spec §13.3, REREG_MR). */
int softhca_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
		     void *addr, size_t length, int access)
{
	struct ib_uverbs_rereg_mr_resp resp;
	struct ibv_rereg_mr cmd;

	return ibv_cmd_rereg_mr(vmr, flags, addr, length, (uintptr_t)addr,
				access, pd, &cmd, sizeof(cmd), &resp,
				sizeof(resp));
}

int softhca_dereg_mr(struct verbs_mr *vmr)
{
	int err;

	err = ibv_cmd_dereg_mr(vmr);
	if (err)
		return err;
	free(vmr);
	return 0;
}

/*
 * The kernel resolves the destination MAC of the AH's GID (and checks the
 * rest); the AV the UD send WQEs carry is built here (spec §11, §17.1).
 */
struct ibv_ah *softhca_create_ah(struct ibv_pd *ibpd, struct ibv_ah_attr *attr)
{
	struct softhca_context *ctx = to_sctx(ibpd->context);
	struct softhca_create_ah_resp resp = {};
	struct softhca_ah *ah;
	int err;

	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;

	err = ibv_cmd_create_ah(ibpd, &ah->ibvah, attr, &resp.ibv_resp,
				sizeof(resp));
	if (err) {
		verbs_debug(&ctx->ibvctx, "create_ah failed: %d\n", err);
		goto err_free;
	}
	err = softhca_av_init(&ah->av, attr, resp.dmac);
	if (err) {
		verbs_debug(&ctx->ibvctx, "AH without a GRH\n");
		ibv_cmd_destroy_ah(&ah->ibvah);
		goto err_free;
	}
	return &ah->ibvah;

err_free:
	free(ah);
	errno = err;
	return NULL;
}

int softhca_destroy_ah(struct ibv_ah *ibah)
{
	struct softhca_ah *ah = to_sah(ibah);
	int err;

	err = ibv_cmd_destroy_ah(ibah);
	if (err)
		return err;
	free(ah);
	return 0;
}
