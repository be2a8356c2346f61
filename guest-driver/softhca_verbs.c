// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Verbs: device and port queries, GIDs, user contexts with their doorbell
 * page, protection and XRC domains, and the udata helpers of every verb.
 * CQs, QPs and MRs have files of their own.
 */

#include <linux/if_ether.h>
#include <linux/overflow.h>

#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/uverbs_ioctl.h>

#include "softhca.h"
#include "softhca-abi.h"

/* @limit objects of which @held are not for software to create */
static u32 softhca_limit_less(u32 limit, u32 held)
{
	return limit - min(limit, held);
}

/*
 * Limits software can reach (spec §3.1), each on its own: the device's,
 * less the objects ib_core's management layer holds for the port's GSI
 * QP from the device's registration on (ib_mad: a PD, its DMA MR and a
 * CQ).
 */
int softhca_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
			 struct ib_udata *udata)
{
	struct softhca_dev *sdev = to_sdev(ibdev);
	struct softhca_caps *caps = &sdev->caps;
	struct pci_dev *pdev = sdev->pdev;

	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen)) {
		ibdev_dbg(ibdev, "query_device: non-zero request\n");
		return -EINVAL;
	}

	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = caps->version;
	attr->sys_image_guid = ibdev->node_guid;
	attr->vendor_id = pdev->vendor;
	attr->vendor_part_id = pdev->device;
	attr->hw_ver = pdev->revision;
	attr->page_size_cap = caps->page_size_cap;
	attr->max_mr_size = caps->max_mr_size;
	attr->max_qp = caps->max_qp;
	attr->max_qp_wr = caps->max_qp_wr;
	attr->max_send_sge = caps->max_sge;
	attr->max_recv_sge = caps->max_sge;
	attr->max_sge_rd = caps->max_sge;
	attr->max_cq = softhca_limit_less(caps->max_cq, SOFTHCA_GSI_CQS);
	attr->max_cqe = caps->max_cqe;
	attr->max_mr = softhca_limit_less(caps->max_mr, SOFTHCA_GSI_MRS);
	attr->max_pd = softhca_limit_less(caps->max_pd, SOFTHCA_GSI_PDS);
	attr->max_qp_rd_atom = caps->max_qp_rd_atom;
	attr->max_qp_init_rd_atom = caps->max_qp_rd_atom;
	attr->max_pkeys = 1;
	attr->local_ca_ack_delay = 0;
	attr->device_cap_flags = IB_DEVICE_PORT_ACTIVE_EVENT |
				 IB_DEVICE_SYS_IMAGE_GUID;
	if (softhca_has_qp(sdev)) {
		attr->max_res_rd_atom = caps->max_qp * caps->max_qp_rd_atom;
		attr->atomic_cap = IB_ATOMIC_HCA;
		attr->device_cap_flags |= IB_DEVICE_RC_RNR_NAK_GEN;
	} else {
		attr->atomic_cap = IB_ATOMIC_NONE;
	}
	if (softhca_has_dgram(sdev)) {
		attr->max_ah = SOFTHCA_MAX_AH;
		attr->max_mcast_grp = caps->max_mcast_grp;
		attr->max_mcast_qp_attach = caps->max_mcast_qp_attach;
		attr->max_total_mcast_qp_attach =
			caps->max_mcast_grp * caps->max_mcast_qp_attach;
		attr->max_fast_reg_page_list_len = caps->max_fast_reg_pages;
		attr->device_cap_flags |= IB_DEVICE_MEM_MGT_EXTENSIONS;
	}
	if (softhca_has_mw(sdev)) {
		/*
		 * windows take their keys from the MR table; a type 2 one is
		 * associated with a QP and its PD, IBA's type 2B (§13.6)
		 */
		attr->max_mw = attr->max_mr;
		attr->device_cap_flags |= IB_DEVICE_MEM_WINDOW |
					  IB_DEVICE_MEM_WINDOW_TYPE_2B;
	}
	if (softhca_has_srq(sdev)) {
		attr->max_srq = caps->max_srq;
		attr->max_srq_wr = caps->max_srq_wr;
		attr->max_srq_sge = softhca_srq_max_sge(caps);
		attr->device_cap_flags |= IB_DEVICE_SRQ_RESIZE;
	}
	/* ib_device_attr has no count of XRC domains: MAX_XRCD stays ours. */
	if (softhca_has_xrc(sdev))
		attr->device_cap_flags |= IB_DEVICE_XRC;
	/* no persistence domain (spec §13.3): FLUSH_PERSISTENT is not ours */
	if (softhca_has_flush(sdev))
		attr->device_cap_flags |= IB_DEVICE_FLUSH_GLOBAL;
	if (softhca_has_atomic_write(sdev))
		attr->device_cap_flags |= IB_DEVICE_ATOMIC_WRITE;

	return 0;
}

int softhca_query_port(struct ib_device *ibdev, u32 port,
		       struct ib_port_attr *attr)
{
	struct softhca_dev *sdev = to_sdev(ibdev);
	struct net_device *ndev = sdev->nic->netdev;
	bool active;

	/* The caller zeroes *attr. */
	active = netif_running(ndev) && netif_carrier_ok(ndev);
	attr->state = active ? IB_PORT_ACTIVE : IB_PORT_DOWN;
	attr->phys_state = active ? IB_PORT_PHYS_STATE_LINK_UP :
				    IB_PORT_PHYS_STATE_DISABLED;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = iboe_get_mtu(READ_ONCE(ndev->mtu));
	attr->gid_tbl_len = sdev->caps.max_gid;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->ip_gids = true;
	attr->pkey_tbl_len = 1;
	attr->max_msg_sz = sdev->caps.max_msg_size;
	attr->max_vl_num = 1;

	return ib_get_eth_speed(ibdev, port, &attr->active_speed,
				&attr->active_width);
}

int softhca_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
		       u16 *pkey)
{
	if (index > 0)
		return -EINVAL;

	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

int softhca_get_port_immutable(struct ib_device *ibdev, u32 port,
			       struct ib_port_immutable *immutable)
{
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->pkey_tbl_len = 1;
	immutable->gid_tbl_len = to_sdev(ibdev)->caps.max_gid;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

enum rdma_link_layer softhca_get_link_layer(struct ib_device *ibdev, u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

/*
 * ib_core hands IPv4 GIDs over already in their IPv4-mapped form, which is
 * the one the device wants; other GIDs need CAPS.IPV6.
 */
int softhca_add_gid(const struct ib_gid_attr *attr, void **context)
{
	struct softhca_dev *sdev = to_sdev(attr->device);
	const struct in6_addr *addr = (const struct in6_addr *)attr->gid.raw;

	if (!ipv6_addr_v4mapped(addr) && !(sdev->caps.caps & SHCA_CAP_IPV6)) {
		ibdev_dbg(&sdev->ibdev, "no IPv6 GIDs: skipping %pI6\n", addr);
		return -EOPNOTSUPP;
	}

	return softhca_cmd_set_gid(sdev, attr->index, attr->gid.raw);
}

int softhca_del_gid(const struct ib_gid_attr *attr, void **context)
{
	return softhca_cmd_set_gid(to_sdev(attr->device), attr->index, NULL);
}

/* Copy at most the response the caller has room for (spec §11). */
int softhca_copy_resp(struct ib_udata *udata, void *resp, size_t len)
{
	return ib_copy_to_udata(udata, resp, min(len, udata->outlen));
}

/*
 * Copy a request of which every field this driver knows is required; bytes
 * beyond them must be zero (spec §11).
 */
int softhca_copy_req(struct ib_device *ibdev, struct ib_udata *udata,
		     void *req, size_t len)
{
	if (udata->inlen < len) {
		ibdev_dbg(ibdev, "request of %zu bytes, %zu expected\n",
			  udata->inlen, len);
		return -EINVAL;
	}
	if (udata->inlen > len &&
	    !ib_is_udata_cleared(udata, len, udata->inlen - len)) {
		ibdev_dbg(ibdev, "non-zero unknown request bytes\n");
		return -EOPNOTSUPP;
	}
	return ib_copy_from_udata(req, udata, len);
}

/* For requests without fields: every byte of them must be zero. */
bool softhca_udata_req_ok(struct ib_device *ibdev, struct ib_udata *udata)
{
	if (!udata->inlen || ib_is_udata_cleared(udata, 0, udata->inlen))
		return true;

	ibdev_dbg(ibdev, "non-zero unknown request bytes\n");
	return false;
}

static struct rdma_user_mmap_entry *
softhca_user_mmap_entry_insert(struct ib_ucontext *ibuctx, u64 address,
			       size_t length, u8 mmap_flag, u64 *offset)
{
	struct softhca_user_mmap_entry *entry;
	int err;

	entry = kzalloc_obj(*entry, GFP_KERNEL);
	if (!entry)
		return NULL;

	entry->address = address;
	entry->mmap_flag = mmap_flag;
	err = rdma_user_mmap_entry_insert(ibuctx, &entry->rdma_entry, length);
	if (err) {
		kfree(entry);
		return NULL;
	}
	*offset = rdma_user_mmap_get_offset(&entry->rdma_entry);
	return &entry->rdma_entry;
}

int softhca_alloc_ucontext(struct ib_ucontext *ibuctx, struct ib_udata *udata)
{
	struct softhca_ucontext *uctx = to_suctx(ibuctx);
	struct softhca_dev *sdev = to_sdev(ibuctx->device);
	struct softhca_ibv_alloc_ucontext_resp resp = {};
	u64 db_offset;
	int err;

	if (!softhca_udata_req_ok(&sdev->ibdev, udata))
		return -EINVAL;

	err = softhca_cmd_alloc_uctx(sdev, &uctx->uctx);
	if (err) {
		ibdev_dbg(&sdev->ibdev, "ALLOC_UCTX failed: %d\n", err);
		return err;
	}

	/* The device's answer decides which page of BAR2 a process maps. */
	db_offset = (u64)uctx->uctx << SHCA_DB_PAGE_SHIFT;
	if (!uctx->uctx || db_offset + SHCA_DB_PAGE_SIZE > sdev->db_bar_len) {
		ibdev_err_ratelimited(&sdev->ibdev,
				      "device returned bad uctx %u\n",
				      uctx->uctx);
		err = -EIO;
		goto err_dealloc;
	}

	uctx->db_entry =
		softhca_user_mmap_entry_insert(ibuctx,
					       sdev->db_bar_start + db_offset,
					       SHCA_DB_PAGE_SIZE,
					       SOFTHCA_MMAP_IO_NC,
					       &resp.db_mmap_key);
	if (!uctx->db_entry) {
		err = -ENOMEM;
		goto err_dealloc;
	}

	resp.uctx = uctx->uctx;
	resp.db_page_size = SHCA_DB_PAGE_SIZE;
	resp.max_inline = sdev->caps.max_inline;
	err = softhca_copy_resp(udata, &resp, sizeof(resp));
	if (err)
		goto err_remove;

	return 0;

err_remove:
	rdma_user_mmap_entry_remove(uctx->db_entry);
err_dealloc:
	softhca_cmd_dealloc_uctx(sdev, uctx->uctx);
	return err;
}

void softhca_dealloc_ucontext(struct ib_ucontext *ibuctx)
{
	struct softhca_ucontext *uctx = to_suctx(ibuctx);
	struct softhca_dev *sdev = to_sdev(ibuctx->device);
	int err;

	rdma_user_mmap_entry_remove(uctx->db_entry);
	err = softhca_cmd_dealloc_uctx(sdev, uctx->uctx);
	if (err)
		ibdev_err_ratelimited(&sdev->ibdev,
				      "DEALLOC_UCTX %u failed: %d\n",
				      uctx->uctx, err);
}

/*
 * On device removal ib_core zaps the doorbell mappings itself and then
 * calls softhca_dealloc_ucontext(), while the admin queue still runs:
 * nothing is left to do here, but providing the op lets removal proceed
 * without waiting for every process to close its context.
 */
void softhca_disassociate_ucontext(struct ib_ucontext *ibuctx)
{
}

int softhca_mmap(struct ib_ucontext *ibuctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma_entry;
	struct softhca_user_mmap_entry *entry;
	int err;

	rdma_entry = rdma_user_mmap_entry_get(ibuctx, vma);
	if (!rdma_entry) {
		ibdev_dbg(ibuctx->device, "mmap: no entry at pgoff %#lx\n",
			  vma->vm_pgoff);
		return -EINVAL;
	}
	entry = to_smmap(rdma_entry);

	switch (entry->mmap_flag) {
	case SOFTHCA_MMAP_IO_NC:
		err = rdma_user_mmap_io(ibuctx, vma,
					PFN_DOWN(entry->address),
					rdma_entry->npages * PAGE_SIZE,
					pgprot_noncached(vma->vm_page_prot),
					rdma_entry);
		break;
	default:
		err = -EINVAL;
		break;
	}

	rdma_user_mmap_entry_put(rdma_entry);
	return err;
}

void softhca_mmap_free(struct rdma_user_mmap_entry *rdma_entry)
{
	kfree(to_smmap(rdma_entry));
}

int softhca_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct softhca_dev *sdev = to_sdev(ibpd->device);
	struct softhca_ibv_alloc_pd_resp resp = {};
	struct softhca_pd *pd = to_spd(ibpd);
	struct softhca_ucontext *uctx;
	int err;

	if (udata && !softhca_udata_req_ok(&sdev->ibdev, udata))
		return -EINVAL;

	/* the device keeps a PD to its context's objects */
	uctx = rdma_udata_to_drv_context(udata, struct softhca_ucontext,
					 ibucontext);
	err = softhca_cmd_alloc_pd(sdev, uctx ? uctx->uctx : 0, &pd->pdn);
	if (err) {
		ibdev_dbg(&sdev->ibdev, "ALLOC_PD failed: %d\n", err);
		return err;
	}

	if (udata) {
		resp.pdn = pd->pdn;
		err = softhca_copy_resp(udata, &resp, sizeof(resp));
		if (err) {
			softhca_cmd_dealloc_pd(sdev, pd->pdn);
			return err;
		}
	}

	return 0;
}

/* ib_core cannot undo a failed dealloc: report and forget the PD. */
int softhca_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct softhca_dev *sdev = to_sdev(ibpd->device);
	struct softhca_pd *pd = to_spd(ibpd);
	int err;

	err = softhca_cmd_dealloc_pd(sdev, pd->pdn);
	if (err)
		ibdev_err_ratelimited(&sdev->ibdev,
				      "DEALLOC_PD %u failed: %d\n", pd->pdn,
				      err);
	return 0;
}

/*
 * ib_core shares one domain among the processes that open it by the same
 * file, and allocates it once: it belongs to no context (spec §13.7).
 */
int softhca_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	struct softhca_dev *sdev = to_sdev(ibxrcd->device);
	int err;

	if (udata && !softhca_udata_req_ok(&sdev->ibdev, udata))
		return -EINVAL;

	err = softhca_cmd_alloc_xrcd(sdev, &to_sxrcd(ibxrcd)->xrcdn);
	if (err)
		ibdev_dbg(&sdev->ibdev, "ALLOC_XRCD failed: %d\n", err);
	return err;
}

/* ib_core counts the domain's SRQs and QPs: BUSY here is a device fault. */
int softhca_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	struct softhca_dev *sdev = to_sdev(ibxrcd->device);
	struct softhca_xrcd *xrcd = to_sxrcd(ibxrcd);
	int err;

	err = softhca_cmd_dealloc_xrcd(sdev, xrcd->xrcdn);
	if (err)
		ibdev_err_ratelimited(&sdev->ibdev,
				      "DEALLOC_XRCD %u failed: %d\n",
				      xrcd->xrcdn, err);
	return 0;
}
