// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Describing memory to the device (spec §5.2, §13.3): the page size,
 * and for pinned user memory a buffer descriptor that is DIRECT for one
 * page, a one-level list of up to SHCA_BUF_LIST_MAX pages, or (MRs only) a
 * two-level LIST2; kernel queues are one contiguous DIRECT block.
 */

#include <linux/dma-mapping.h>
#include <linux/slab.h>

#include <rdma/ib_umem.h>
#include <rdma/iter.h>

#include "softhca.h"

#define SOFTHCA_PBL_PAGE_SIZE	(SHCA_BUF_LIST_MAX * sizeof(__le64))

/* Page sizes both the device (PAGE_SIZE_CAP) and the descriptor allow. */
unsigned long softhca_pgsz_bitmap(struct softhca_dev *sdev)
{
	return sdev->caps.page_size_cap &
	       GENMASK(SHCA_BUF_PAGE_SHIFT_MAX, SHCA_BUF_PAGE_SHIFT_MIN);
}

static int softhca_pbl_alloc(struct softhca_dev *sdev, struct softhca_pbl *pbl,
			     u32 nr_lists)
{
	struct device *dma = &sdev->pdev->dev;
	u32 i;

	pbl->list = kcalloc(nr_lists, sizeof(*pbl->list), GFP_KERNEL);
	pbl->list_dma = kcalloc(nr_lists, sizeof(*pbl->list_dma), GFP_KERNEL);
	if (!pbl->list || !pbl->list_dma)
		goto err_free;

	for (i = 0; i < nr_lists; i++) {
		pbl->list[i] = dma_alloc_coherent(dma, SOFTHCA_PBL_PAGE_SIZE,
						  &pbl->list_dma[i],
						  GFP_KERNEL);
		if (!pbl->list[i])
			goto err_free;
		pbl->nr_lists = i + 1;
	}
	return 0;

err_free:
	softhca_pbl_free(sdev, pbl);
	return -ENOMEM;
}

void softhca_pbl_free(struct softhca_dev *sdev, struct softhca_pbl *pbl)
{
	u32 i;

	for (i = 0; i < pbl->nr_lists; i++)
		dma_free_coherent(&sdev->pdev->dev, SOFTHCA_PBL_PAGE_SIZE,
				  pbl->list[i], pbl->list_dma[i]);
	kfree(pbl->list_dma);
	kfree(pbl->list);
	pbl->list = NULL;
	pbl->list_dma = NULL;
	pbl->nr_lists = 0;
}

/*
 * Describe the pages of @umem, split in blocks of @pgsz (found by
 * ib_umem_find_best_pgsz(), which also set umem->iova).  @list2 allows a
 * two-level list for more than SHCA_BUF_LIST_MAX pages.  The caller frees
 * the list with softhca_pbl_free() once the command has completed.
 */
int softhca_pbl_build(struct softhca_dev *sdev, struct softhca_pbl *pbl,
		      struct ib_umem *umem, unsigned long pgsz, bool list2)
{
	size_t npages = ib_umem_num_dma_blocks(umem, pgsz);
	struct ib_block_iter biter;
	u32 nr_lists, first, i = 0;
	int err;

	memset(pbl, 0, sizeof(*pbl));
	if (!npages || npages > SHCA_BUF_LIST_MAX * SHCA_BUF_LIST_MAX ||
	    (!list2 && npages > SHCA_BUF_LIST_MAX)) {
		ibdev_dbg(&sdev->ibdev, "%zu pages of %#lx bytes: too many\n",
			  npages, pgsz);
		return -EINVAL;
	}

	pbl->desc.npages = cpu_to_le32(npages);
	pbl->desc.page_shift = __ffs(pgsz);

	if (npages == 1) {
		rdma_umem_for_each_dma_block(umem, &biter, pgsz)
			pbl->desc.addr =
				cpu_to_le64(rdma_block_iter_dma_address(&biter));
		pbl->desc.flags = SHCA_BUF_DIRECT;
		return 0;
	}

	/* One list page, or a top page listing the leaf pages. */
	if (npages <= SHCA_BUF_LIST_MAX) {
		nr_lists = 1;
		first = 0;
	} else {
		nr_lists = 1 + DIV_ROUND_UP(npages, SHCA_BUF_LIST_MAX);
		first = 1;
	}

	err = softhca_pbl_alloc(sdev, pbl, nr_lists);
	if (err)
		return err;

	rdma_umem_for_each_dma_block(umem, &biter, pgsz) {
		pbl->list[first + i / SHCA_BUF_LIST_MAX][i % SHCA_BUF_LIST_MAX] =
			cpu_to_le64(rdma_block_iter_dma_address(&biter));
		i++;
	}

	if (first) {
		for (i = 1; i < nr_lists; i++)
			pbl->list[0][i - 1] = cpu_to_le64(pbl->list_dma[i]);
		pbl->desc.flags = SHCA_BUF_LIST2;
	}
	pbl->desc.addr = cpu_to_le64(pbl->list_dma[0]);
	return 0;
}

/*
 * Pin a queue the provider allocated (spec §11) and describe it: the ring
 * starts at offset 0 of its first page, so the page size may not exceed
 * the buffer's alignment.
 */
struct ib_umem *softhca_ring_pin(struct softhca_dev *sdev, u64 addr, u64 size,
				 struct softhca_pbl *pbl)
{
	struct ib_umem *umem;
	unsigned long pgsz;
	int err;

	if (!size || !PAGE_ALIGNED(addr)) {
		ibdev_dbg(&sdev->ibdev, "ring %#llx+%#llx: not page aligned\n",
			  addr, size);
		return ERR_PTR(-EINVAL);
	}

	/*
	 * Writable whatever the ring: a read-only pin of memory the process
	 * has not written yet could pin the shared zero page instead.
	 */
	umem = ib_umem_get_va(&sdev->ibdev, addr, size, IB_ACCESS_LOCAL_WRITE);
	if (IS_ERR(umem)) {
		ibdev_dbg(&sdev->ibdev, "ring %#llx+%#llx: pinning failed: %ld\n",
			  addr, size, PTR_ERR(umem));
		return umem;
	}

	pgsz = ib_umem_find_best_pgoff(umem, softhca_pgsz_bitmap(sdev), 0);
	if (!pgsz) {
		err = -EINVAL;
		goto err_release;
	}

	err = softhca_pbl_build(sdev, pbl, umem, pgsz, false);
	if (err)
		goto err_release;
	return umem;

err_release:
	ib_umem_release(umem);
	return ERR_PTR(err);
}

/*
 * A kernel queue: one DMA-coherent block, hence physically contiguous and
 * page aligned, described DIRECT in pages of PAGE_SIZE.
 */
int softhca_kring_alloc(struct softhca_dev *sdev, struct softhca_kring *ring,
			size_t bytes, struct shca_buf_desc *desc)
{
	ring->bytes = PAGE_ALIGN(bytes);
	if (ring->bytes >> PAGE_SHIFT > SHCA_BUF_LIST_MAX)
		return -EINVAL;

	ring->buf = dma_alloc_coherent(&sdev->pdev->dev, ring->bytes,
				       &ring->dma, GFP_KERNEL);
	if (!ring->buf)
		return -ENOMEM;

	memset(desc, 0, sizeof(*desc));
	desc->addr = cpu_to_le64(ring->dma);
	desc->npages = cpu_to_le32(ring->bytes >> PAGE_SHIFT);
	desc->page_shift = PAGE_SHIFT;
	desc->flags = SHCA_BUF_DIRECT;
	return 0;
}

void softhca_kring_free(struct softhca_dev *sdev, struct softhca_kring *ring)
{
	if (!ring->buf)
		return;
	dma_free_coherent(&sdev->pdev->dev, ring->bytes, ring->buf, ring->dma);
	ring->buf = NULL;
}
