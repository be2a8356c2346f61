// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Memory regions (spec §13.3, §18): user MRs over pinned pages described
 * by a page list the device copies at REG_MR, DMA MRs of kernel PDs over
 * guest-physical addresses, and fast-registration MRs whose page list
 * map_mr_sg writes into a coherent page the device reads at each REG_MR
 * work request.  lkey and rkey are the one key the device returns.
 */

#include <linux/dma-mapping.h>
#include <linux/slab.h>

#include <rdma/ib_umem.h>

#include "softhca.h"

/* A fast-registration MR's page list: one DIRECT 4 KiB page (spec §13.3). */
#define SOFTHCA_FRMR_LIST_SHIFT	12
#define SOFTHCA_FRMR_LIST_BYTES	BIT(SOFTHCA_FRMR_LIST_SHIFT)
static_assert(SHCA_BUF_LIST_MAX * sizeof(__le64) == SOFTHCA_FRMR_LIST_BYTES);

/* Page sizes of a REG_MR work request (spec §18). */
#define SOFTHCA_FRMR_PAGE_SHIFT_MIN	12
#define SOFTHCA_FRMR_PAGE_SHIFT_MAX	21

/*
 * The access rights the device knows on MRs; ib_core refuses FLUSH_GLOBAL
 * unless CAPS.FLUSH set IB_DEVICE_FLUSH_GLOBAL, and FLUSH_PERSISTENT.
 */
#define SOFTHCA_IB_ACCESS						\
	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |		\
	 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC |		\
	 IB_ACCESS_MW_BIND | IB_ACCESS_FLUSH_GLOBAL)

u32 softhca_access_to_hw(int ib_access)
{
	u32 access = 0;

	if (ib_access & IB_ACCESS_LOCAL_WRITE)
		access |= SHCA_ACCESS_LOCAL_WRITE;
	if (ib_access & IB_ACCESS_REMOTE_WRITE)
		access |= SHCA_ACCESS_REMOTE_WRITE;
	if (ib_access & IB_ACCESS_REMOTE_READ)
		access |= SHCA_ACCESS_REMOTE_READ;
	if (ib_access & IB_ACCESS_REMOTE_ATOMIC)
		access |= SHCA_ACCESS_REMOTE_ATOMIC;
	if (ib_access & IB_ACCESS_MW_BIND)
		access |= SHCA_ACCESS_MW_BIND;
	if (ib_access & IB_ACCESS_FLUSH_GLOBAL)
		access |= SHCA_ACCESS_FLUSH_GLOBAL;
	/* QPs only: the rights a FLUSH asks of the QP and then of the MR */
	if (ib_access & IB_ACCESS_FLUSH_PERSISTENT)
		access |= SHCA_ACCESS_FLUSH_PERSISTENT;
	return access;
}

int softhca_access_from_hw(u32 access)
{
	int ib_access = 0;

	if (access & SHCA_ACCESS_LOCAL_WRITE)
		ib_access |= IB_ACCESS_LOCAL_WRITE;
	if (access & SHCA_ACCESS_REMOTE_WRITE)
		ib_access |= IB_ACCESS_REMOTE_WRITE;
	if (access & SHCA_ACCESS_REMOTE_READ)
		ib_access |= IB_ACCESS_REMOTE_READ;
	if (access & SHCA_ACCESS_REMOTE_ATOMIC)
		ib_access |= IB_ACCESS_REMOTE_ATOMIC;
	if (access & SHCA_ACCESS_MW_BIND)
		ib_access |= IB_ACCESS_MW_BIND;
	if (access & SHCA_ACCESS_FLUSH_GLOBAL)
		ib_access |= IB_ACCESS_FLUSH_GLOBAL;
	if (access & SHCA_ACCESS_FLUSH_PERSISTENT)
		ib_access |= IB_ACCESS_FLUSH_PERSISTENT;
	return ib_access;
}

/* Optional flags (relaxed ordering) may be ignored; others may not. */
static bool softhca_access_ok(struct softhca_dev *sdev, int access)
{
	if (!(access & ~(SOFTHCA_IB_ACCESS | IB_ACCESS_OPTIONAL)))
		return true;

	ibdev_dbg(&sdev->ibdev, "access flags %#x not supported\n",
		  access & ~(SOFTHCA_IB_ACCESS | IB_ACCESS_OPTIONAL));
	return false;
}

static struct ib_mr *softhca_reg_mr(struct softhca_dev *sdev,
				    struct softhca_mr *mr,
				    const struct softhca_reg_mr_params *params)
{
	u32 key;
	int err;

	err = softhca_cmd_reg_mr(sdev, params, &key);
	if (err) {
		ibdev_dbg(&sdev->ibdev, "REG_MR of %#llx bytes failed: %d\n",
			  params->length, err);
		return ERR_PTR(err);
	}

	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	mr->hw_key = key;
	return &mr->ibmr;
}

/*
 * The whole guest-physical space of a kernel PD (spec §13.3, PHYS): the
 * MR behind pd->local_dma_lkey, which kernel ULPs use with DMA addresses.
 */
struct ib_mr *softhca_get_dma_mr(struct ib_pd *ibpd, int access_flags)
{
	struct softhca_dev *sdev = to_sdev(ibpd->device);
	struct softhca_reg_mr_params params = {};
	struct softhca_mr *mr;
	struct ib_mr *ibmr;

	if (!softhca_has_qp(sdev) || ibpd->uobject)
		return ERR_PTR(-EOPNOTSUPP);
	if (!softhca_access_ok(sdev, access_flags))
		return ERR_PTR(-EOPNOTSUPP);

	mr = kzalloc_obj(*mr, GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);

	params.pdn = to_spd(ibpd)->pdn;
	params.access = softhca_access_to_hw(access_flags) | SHCA_ACCESS_PHYS;
	/* MAX_MR_SIZE does not bound a PHYS MR: RAM may lie above it. */
	params.length = U64_MAX;
	ibmr = softhca_reg_mr(sdev, mr, &params);
	if (IS_ERR(ibmr))
		kfree(mr);
	return ibmr;
}

/* What REG_MR and REREG_MR take of a user MR; the caller frees @pbl. */
static int softhca_user_mr_params(struct softhca_dev *sdev,
				  struct ib_umem *umem, struct ib_pd *ibpd,
				  u64 iova, u64 length, int access,
				  struct softhca_pbl *pbl,
				  struct softhca_reg_mr_params *params)
{
	unsigned long pgsz;
	int err;

	pgsz = ib_umem_find_best_pgsz(umem, softhca_pgsz_bitmap(sdev), iova);
	if (!pgsz) {
		ibdev_dbg(&sdev->ibdev, "reg_mr: no usable page size\n");
		return -EINVAL;
	}

	err = softhca_pbl_build(sdev, pbl, umem, pgsz, true);
	if (err)
		return err;

	params->pdn = to_spd(ibpd)->pdn;
	params->access = softhca_access_to_hw(access);
	params->iova = iova;
	params->length = length;
	params->first_offset = ib_umem_dma_offset(umem, pgsz);
	params->pages = &pbl->desc;
	return 0;
}

static int softhca_user_mr_check(struct softhca_dev *sdev, u64 length,
				 int access)
{
	if (!softhca_access_ok(sdev, access))
		return -EOPNOTSUPP;
	if ((!length && !softhca_has_zero_length_mr(sdev)) ||
	    length > sdev->caps.max_mr_size) {
		ibdev_dbg(&sdev->ibdev, "reg_mr: length %#llx, max %#llx\n",
			  length, sdev->caps.max_mr_size);
		return -EINVAL;
	}
	return 0;
}

static struct ib_umem *softhca_user_mr_pin(struct softhca_dev *sdev,
					   u64 start, u64 length, int access)
{
	struct ib_umem *umem;

	umem = ib_umem_get_va(&sdev->ibdev, start, length, access);
	if (IS_ERR(umem))
		ibdev_dbg(&sdev->ibdev, "reg_mr: pinning failed: %ld\n",
			  PTR_ERR(umem));
	return umem;
}

struct ib_mr *softhca_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				  u64 virt_addr, int access_flags,
				  SOFTHCA_DMAH_PARAM struct ib_udata *udata)
{
	struct softhca_dev *sdev = to_sdev(ibpd->device);
	struct softhca_reg_mr_params params = {};
	struct softhca_pbl pbl;
	struct softhca_mr *mr;
	struct ib_mr *ibmr;
	int err;

	if (!softhca_has_qp(sdev) || SOFTHCA_DMAH_GIVEN)
		return ERR_PTR(-EOPNOTSUPP);
	err = softhca_user_mr_check(sdev, length, access_flags);
	if (err)
		return ERR_PTR(err);
	if (udata && !softhca_udata_req_ok(&sdev->ibdev, udata))
		return ERR_PTR(-EINVAL);

	mr = kzalloc_obj(*mr, GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);

	mr->umem = softhca_user_mr_pin(sdev, start, length, access_flags);
	if (IS_ERR(mr->umem)) {
		err = PTR_ERR(mr->umem);
		goto err_free;
	}

	err = softhca_user_mr_params(sdev, mr->umem, ibpd, virt_addr, length,
				     access_flags, &pbl, &params);
	if (err)
		goto err_release;
	ibmr = softhca_reg_mr(sdev, mr, &params);
	/* The device has copied the list (or failed): it is not needed. */
	softhca_pbl_free(sdev, &pbl);
	if (IS_ERR(ibmr)) {
		err = PTR_ERR(ibmr);
		goto err_release;
	}
	mr->access = access_flags;
	return ibmr;

err_release:
	ib_umem_release(mr->umem);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

/*
 * In place (spec §13.3, REREG_MR): the MR keeps its keys, so a peer that
 * holds the rkey goes on using it.  The pages are pinned anew for a new
 * translation, or when the new access needs them writable and they are
 * not; the device is given the whole description each time.
 */
struct ib_mr *softhca_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				    u64 length, u64 virt_addr, int access,
				    struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct softhca_dev *sdev = to_sdev(ibmr->device);
	struct softhca_reg_mr_params params = {};
	struct softhca_mr *mr = to_smr(ibmr);
	struct ib_umem *umem = NULL;
	struct softhca_pbl pbl;
	int err;

	if (!mr->umem)
		return ERR_PTR(-EOPNOTSUPP);	/* not a user MR */
	if (udata && !softhca_udata_req_ok(&sdev->ibdev, udata))
		return ERR_PTR(-EINVAL);
	if (!(flags & IB_MR_REREG_ACCESS))
		access = mr->access;
	if (!(flags & IB_MR_REREG_TRANS)) {
		start = mr->umem->address;
		length = ibmr->length;
		virt_addr = ibmr->iova;
	}
	err = softhca_user_mr_check(sdev, length, access);
	if (err)
		return ERR_PTR(err);

	if ((flags & IB_MR_REREG_TRANS) ||
	    (ib_access_writable(access) && !mr->umem->writable)) {
		umem = softhca_user_mr_pin(sdev, start, length, access);
		if (IS_ERR(umem))
			return ERR_CAST(umem);
	}

	err = softhca_user_mr_params(sdev, umem ?: mr->umem, ibpd, virt_addr,
				     length, access, &pbl, &params);
	if (err)
		goto out_release;
	err = softhca_cmd_rereg_mr(sdev, mr->hw_key, &params);
	softhca_pbl_free(sdev, &pbl);
	if (err) {
		ibdev_dbg(&sdev->ibdev, "REREG_MR %#x failed: %d\n",
			  mr->hw_key, err);
		goto out_release;
	}
	mr->access = access;
	if (umem)
		swap(mr->umem, umem);

out_release:
	ib_umem_release(umem);
	return err ? ERR_PTR(err) : NULL;
}

int softhca_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct softhca_dev *sdev = to_sdev(ibmr->device);
	struct softhca_mr *mr = to_smr(ibmr);
	int err;

	err = softhca_cmd_dereg_mr(sdev, READ_ONCE(mr->hw_key));
	if (err == -EBUSY)
		return err;	/* windows are bound to it: it stays */
	if (err) {
		/* ib_core forgets the MR anyway; its pages stay pinned. */
		ibdev_err_ratelimited(&sdev->ibdev,
				      "DEREG_MR %#x failed: %d, leaking its pages\n",
				      mr->hw_key, err);
		kfree(mr);
		return 0;
	}

	ib_umem_release(mr->umem);
	if (mr->page_list)
		dma_free_coherent(&sdev->pdev->dev, SOFTHCA_FRMR_LIST_BYTES,
				  mr->page_list, mr->page_list_dma);
	kfree(mr);
	return 0;
}

/* A fast-registration MR (spec §18): invalid until a REG_MR WQE. */
struct ib_mr *softhca_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type mr_type,
			       u32 max_num_sg)
{
	struct softhca_dev *sdev = to_sdev(ibpd->device);
	struct softhca_reg_mr_params params = {};
	struct shca_buf_desc list = {};
	struct softhca_mr *mr;
	struct ib_mr *ibmr;

	if (mr_type != IB_MR_TYPE_MEM_REG) {
		ibdev_dbg(&sdev->ibdev, "alloc_mr: type %d not supported\n",
			  mr_type);
		return ERR_PTR(-EOPNOTSUPP);
	}
	if (!max_num_sg || max_num_sg > sdev->caps.max_fast_reg_pages) {
		ibdev_dbg(&sdev->ibdev, "alloc_mr: %u pages, max %u\n",
			  max_num_sg, sdev->caps.max_fast_reg_pages);
		return ERR_PTR(-EINVAL);
	}

	mr = kzalloc_obj(*mr, GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->page_list = dma_alloc_coherent(&sdev->pdev->dev,
					   SOFTHCA_FRMR_LIST_BYTES,
					   &mr->page_list_dma, GFP_KERNEL);
	if (!mr->page_list) {
		kfree(mr);
		return ERR_PTR(-ENOMEM);
	}
	mr->max_pages = max_num_sg;

	list.addr = cpu_to_le64(mr->page_list_dma);
	list.npages = cpu_to_le32(max_num_sg);
	list.page_shift = SOFTHCA_FRMR_LIST_SHIFT;
	list.flags = SHCA_BUF_DIRECT;
	params.pdn = to_spd(ibpd)->pdn;
	params.access = SHCA_ACCESS_FAST_REG;
	params.pages = &list;
	ibmr = softhca_reg_mr(sdev, mr, &params);
	if (IS_ERR(ibmr)) {
		dma_free_coherent(&sdev->pdev->dev, SOFTHCA_FRMR_LIST_BYTES,
				  mr->page_list, mr->page_list_dma);
		kfree(mr);
	}
	return ibmr;
}

static int softhca_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct softhca_mr *mr = to_smr(ibmr);

	if (mr->npages == mr->max_pages)
		return -ENOMEM;
	mr->page_list[mr->npages++] = cpu_to_le64(addr);
	return 0;
}

/* The caller does not reuse the list while a REG_MR WQE may read it. */
int softhca_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		      unsigned int *sg_offset)
{
	struct softhca_mr *mr = to_smr(ibmr);
	u32 page_size = ibmr->page_size;

	if (!is_power_of_2(page_size) ||
	    page_size < BIT(SOFTHCA_FRMR_PAGE_SHIFT_MIN) ||
	    page_size > BIT(SOFTHCA_FRMR_PAGE_SHIFT_MAX)) {
		ibdev_dbg(ibmr->device, "map_mr_sg: page size %#x\n",
			  page_size);
		return -EINVAL;
	}

	mr->npages = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, softhca_set_page);
}
