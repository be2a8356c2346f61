// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Multicast groups (spec §17.3): UD QPs, of the kernel or of a process,
 * attached to and detached from a multicast GID by admin command.  The
 * device checks the GID and counts the groups.
 */

#include "softhca.h"

static int softhca_mcast(struct ib_qp *ibqp, union ib_gid *gid, u8 opcode)
{
	struct softhca_dev *sdev = to_sdev(ibqp->device);
	int err;

	if (ibqp->qp_type != IB_QPT_UD) {
		ibdev_dbg(&sdev->ibdev, "multicast: QP %u is not UD\n",
			  ibqp->qp_num);
		return -EINVAL;
	}

	err = softhca_cmd_mcast(sdev, opcode, ibqp->qp_num, gid->raw);
	if (err)
		ibdev_dbg(&sdev->ibdev, "%s of QP %u to %pI6 failed: %d\n",
			  opcode == SHCA_AQ_ATTACH_MCAST ? "ATTACH_MCAST" :
							   "DETACH_MCAST",
			  ibqp->qp_num, gid->raw, err);
	return err;
}

int softhca_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	return softhca_mcast(ibqp, gid, SHCA_AQ_ATTACH_MCAST);
}

int softhca_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	return softhca_mcast(ibqp, gid, SHCA_AQ_DETACH_MCAST);
}
