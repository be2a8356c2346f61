// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Address vectors (spec §13.2, §17.1): the struct shca_av of a connected
 * QP's path, and address handles, which exist only in software: a kernel
 * AH's AV is copied into each UD send WQE, a user AH lives in the
 * provider, which learns the resolved destination MAC from the response.
 * create_ah may be called in atomic context: nothing here sleeps without
 * udata.
 */

#include <rdma/ib_addr.h>

#include "softhca.h"
#include "softhca-abi.h"

/* The RoCE v2 address of @ah_attr; the caller chooses udp_sport. */
int softhca_av_from_ah_attr(struct softhca_dev *sdev,
			    const struct rdma_ah_attr *ah_attr,
			    struct shca_av *av)
{
	const struct ib_global_route *grh;
	const struct ib_gid_attr *sgid_attr;

	if (ah_attr->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(ah_attr) & IB_AH_GRH)) {
		ibdev_dbg(&sdev->ibdev, "address without a GRH\n");
		return -EINVAL;
	}

	grh = rdma_ah_read_grh(ah_attr);
	sgid_attr = grh->sgid_attr;
	if (!sgid_attr || sgid_attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP) {
		ibdev_dbg(&sdev->ibdev, "source GID %u not RoCE v2\n",
			  grh->sgid_index);
		return -EINVAL;
	}

	memset(av, 0, sizeof(*av));
	memcpy(av->dgid, grh->dgid.raw, sizeof(av->dgid));
	memcpy(av->dmac, ah_attr->roce.dmac, sizeof(av->dmac));
	av->hop_limit = grh->hop_limit;
	av->traffic_class = grh->traffic_class;
	/*
	 * The label is 20 bits; ib_core passes the 32 bits a caller set, and
	 * callers rely on the rest being ignored (UCX sets ~0 for path 0).
	 */
	av->flow_label = cpu_to_le32(grh->flow_label & IB_GRH_FLOWLABEL_MASK);
	av->sgid_index = cpu_to_le16(sgid_attr->index);
	return 0;
}

int softhca_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		      struct ib_udata *udata)
{
	struct softhca_dev *sdev = to_sdev(ibah->device);
	struct rdma_ah_attr *ah_attr = init_attr->ah_attr;
	struct softhca_ibv_create_ah_resp resp = {};
	struct softhca_ah *ah = to_sah(ibah);
	u32 flow_label;
	int err;

	if (udata && !softhca_udata_req_ok(&sdev->ibdev, udata))
		return -EINVAL;

	err = softhca_av_from_ah_attr(sdev, ah_attr, &ah->av);
	if (err)
		return err;

	/* Without a flow label the device chooses the source port. */
	flow_label = rdma_ah_read_grh(ah_attr)->flow_label;
	if (flow_label)
		ah->av.udp_sport =
			cpu_to_le16(rdma_flow_label_to_udp_sport(flow_label));

	if (!atomic_add_unless(&sdev->nr_ah, 1, SOFTHCA_MAX_AH)) {
		ibdev_dbg(&sdev->ibdev, "create_ah: %u AHs exist already\n",
			  SOFTHCA_MAX_AH);
		return -ENOMEM;
	}
	if (!udata)
		return 0;

	memcpy(resp.dmac, ah_attr->roce.dmac, sizeof(resp.dmac));
	err = softhca_copy_resp(udata, &resp, sizeof(resp));
	if (err)
		atomic_dec(&sdev->nr_ah);
	return err;
}

int softhca_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	atomic_dec(&to_sdev(ibah->device)->nr_ah);
	return 0;
}
