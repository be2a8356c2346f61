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

/* The access rights the device knows. */
#define SOFTHCA_IB_ACCESS						\
	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |		\
	 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC |		\
	 IB_ACCESS_MW_BIND)

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

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
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

struct ib_mr *softhca_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				  u64 virt_addr, int access_flags,
				  struct ib_udata *udata)
{
	struct softhca_dev *sdev = to_sdev(ibpd->device);
	struct softhca_reg_mr_params params = {};
	struct softhca_pbl pbl;
	struct softhca_mr *mr;
	unsigned long pgsz;
	struct ib_mr *ibmr;
	int err;

	if (!softhca_has_qp(sdev))
		return ERR_PTR(-EOPNOTSUPP);
	if (!softhca_access_ok(sdev, access_flags))
		return ERR_PTR(-EOPNOTSUPP);
	if (udata && !softhca_udata_req_ok(&sdev->ibdev, udata))
		return ERR_PTR(-EINVAL);
	if (!length || length > sdev->caps.max_mr_size) {
		ibdev_dbg(&sdev->ibdev, "reg_mr: length %#llx, max %#llx\n",
			  length, sdev->caps.max_mr_size);
		return ERR_PTR(-EINVAL);
	}

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);

	mr->umem = ib_umem_get(ibpd->device, start, length, access_flags);
	if (IS_ERR(mr->umem)) {
		err = PTR_ERR(mr->umem);
		ibdev_dbg(&sdev->ibdev, "reg_mr: pinning failed: %d\n", err);
		goto err_free;
	}

	pgsz = ib_umem_find_best_pgsz(mr->umem, softhca_pgsz_bitmap(sdev),
				      virt_addr);
	if (!pgsz) {
		ibdev_dbg(&sdev->ibdev, "reg_mr: no usable page size\n");
		err = -EINVAL;
		goto err_release;
	}

	err = softhca_pbl_build(sdev, &pbl, mr->umem, pgsz, true);
	if (err)
		goto err_release;

	params.pdn = to_spd(ibpd)->pdn;
	params.access = softhca_access_to_hw(access_flags);
	params.iova = virt_addr;
	params.length = length;
	params.first_offset = ib_umem_dma_offset(mr->umem, pgsz);
	params.pages = &pbl.desc;
	ibmr = softhca_reg_mr(sdev, mr, &params);
	/* The device has copied the list (or failed): it is not needed. */
	softhca_pbl_free(sdev, &pbl);
	if (IS_ERR(ibmr)) {
		err = PTR_ERR(ibmr);
		goto err_release;
	}
	return ibmr;

err_release:
	ib_umem_release(mr->umem);
err_free:
	kfree(mr);
	return ERR_PTR(err);
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

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
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
