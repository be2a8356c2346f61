/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softhca rdma-core provider: private types, the driver-provider ABI
 * bindings and the verbs shared between files.
 */
#ifndef SOFTHCA_H
#define SOFTHCA_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/driver.h>
#include <infiniband/kern-abi.h>
#include <kernel-abi/softhca-abi.h>
#include <rdma/softhca-abi.h>

/* Requests carry no driver data; responses carry spec/softhca-abi.h's. */
DECLARE_DRV_CMD(softhca_alloc_ucontext, IB_USER_VERBS_CMD_GET_CONTEXT, empty,
		softhca_ibv_alloc_ucontext_resp);
DECLARE_DRV_CMD(softhca_alloc_pd, IB_USER_VERBS_CMD_ALLOC_PD, empty,
		softhca_ibv_alloc_pd_resp);

struct softhca_context {
	struct verbs_context ibvctx;
	void *db; /* this context's doorbell page in BAR2 */
	size_t db_size;
};

struct softhca_pd {
	struct ibv_pd ibvpd;
	uint32_t pdn;
};

static inline struct softhca_context *to_sctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct softhca_context, ibvctx.context);
}

static inline struct softhca_pd *to_spd(struct ibv_pd *ibpd)
{
	return container_of(ibpd, struct softhca_pd, ibvpd);
}

int softhca_query_device_ex(struct ibv_context *ibctx,
			    const struct ibv_query_device_ex_input *input,
			    struct ibv_device_attr_ex *attr, size_t attr_size);
int softhca_query_port(struct ibv_context *ibctx, uint8_t port,
		       struct ibv_port_attr *attr);
struct ibv_pd *softhca_alloc_pd(struct ibv_context *ibctx);
int softhca_dealloc_pd(struct ibv_pd *ibpd);

#endif /* SOFTHCA_H */
