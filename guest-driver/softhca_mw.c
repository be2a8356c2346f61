// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Memory windows (spec §13.6): allocation and deallocation.  Binding and
 * invalidation are work requests the provider posts (BIND_MW, LOCAL_INV,
 * SEND_WITH_INV); kernel verbs have no window work requests.
 */

#include <rdma/uverbs_ioctl.h>

#include "softhca.h"

int softhca_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct softhca_dev *sdev = to_sdev(ibmw->device);
	u8 type;
	int err;

	if (!softhca_udata_req_ok(&sdev->ibdev, udata))
		return -EINVAL;
	switch (ibmw->type) {
	case IB_MW_TYPE_1:
		type = 1;
		break;
	case IB_MW_TYPE_2:
		type = 2;
		break;
	default:
		return -EOPNOTSUPP;
	}

	err = softhca_cmd_alloc_mw(sdev, to_spd(ibmw->pd)->pdn, type,
				   &ibmw->rkey);
	if (err)
		ibdev_dbg(&sdev->ibdev, "ALLOC_MW failed: %d\n", err);
	return err;
}

int softhca_dealloc_mw(struct ib_mw *ibmw)
{
	struct softhca_dev *sdev = to_sdev(ibmw->device);
	int err;

	err = softhca_cmd_dealloc_mw(sdev, ibmw->rkey);
	if (err)
		ibdev_err_ratelimited(&sdev->ibdev, "DEALLOC_MW %#x failed: %d\n",
				      ibmw->rkey, err);
	return err;
}
