// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Runs in a softhca guest: an RC QP taken to RTR with a flow label of all
 * 32 bits set, as UCX sets one (~0 for its first path: rdma-core turns
 * only the label's 20 bits into a UDP source port).  The driver keeps the
 * label's 20 bits, as other RoCE drivers do, so the transition succeeds
 * and the QP reports 0xfffff.  Prints one line per failed check.
 *
 *   qp-flow-label DEVICE GID-INDEX     the QP points at the device's own
 *                                      GID at GID-INDEX
 */
#include <stdio.h>
#include <stdlib.h>

#include <infiniband/verbs.h>

#include "guest-util.h"

int main(int argc, char **argv)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_qp_init_attr got_init;
	struct ibv_context *ctx;
	struct ibv_qp_attr got;
	union ibv_gid gid;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int gid_index;

	if (argc != 3) {
		fprintf(stderr, "usage: qp-flow-label DEVICE GID-INDEX\n");
		return 2;
	}
	gid_index = atoi(argv[2]);
	ctx = guest_open_device(argv[1]);
	if (!ctx || ibv_query_gid(ctx, 1, gid_index, &gid)) {
		printf("FAIL no %s or no GID %d\n", argv[1], gid_index);
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 2, NULL, NULL, 0) : NULL;
	init.send_cq = init.recv_cq = cq;
	qp = cq ? ibv_create_qp(pd, &init) : NULL;
	if (!qp) {
		printf("FAIL no PD, CQ or QP\n");
		return 1;
	}

	GUEST_CHECK(!ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				   IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), "to INIT");
	attr = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = qp->qp_num,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = {
			.is_global = 1,
			.port_num = 1,
			.grh = { .dgid = gid, .sgid_index = gid_index,
				 .hop_limit = 64, .flow_label = ~0u },
		},
	};
	GUEST_CHECK(!ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_AV |
				   IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				   IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				   IBV_QP_MIN_RNR_TIMER),
		    "to RTR with flow label 0x%x", attr.ah_attr.grh.flow_label);
	GUEST_CHECK(!ibv_query_qp(qp, &got, IBV_QP_STATE | IBV_QP_AV, &got_init),
		    "query_qp");
	GUEST_CHECK(got.qp_state == IBV_QPS_RTR, "state %d", got.qp_state);
	GUEST_CHECK(got.ah_attr.grh.flow_label == 0xfffff, "flow label 0x%x",
		    got.ah_attr.grh.flow_label);

	GUEST_CHECK(!ibv_destroy_qp(qp), "destroy_qp");
	GUEST_CHECK(!ibv_destroy_cq(cq), "destroy_cq");
	GUEST_CHECK(!ibv_dealloc_pd(pd), "dealloc_pd");
	GUEST_CHECK(!ibv_close_device(ctx), "close");
	if (!guest_failures)
		printf("qp-flow-label: %s OK\n", argv[1]);
	return guest_failures ? 1 : 0;
}
