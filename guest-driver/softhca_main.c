// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * softhca: PCI probe and remove, BARs, MSI-X, the ib_device ops table and
 * its registration.
 */

#include <linux/dma-mapping.h>
#include <linux/iopoll.h>
#include <linux/module.h>
#include <linux/pci.h>

#include <net/addrconf.h>
#include <rdma/ib_verbs.h>

#include "softhca.h"
#include "softhca-abi.h"

MODULE_AUTHOR("softhca developers");
MODULE_DESCRIPTION("softhca RoCEv2 host channel adapter driver");
MODULE_LICENSE("Dual BSD/GPL");

#define SOFTHCA_RESET_TIMEOUT_US	1000000

static const struct pci_device_id softhca_pci_tbl[] = {
	{ PCI_DEVICE(SHCA_PCI_VENDOR_ID, SHCA_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, softhca_pci_tbl);

static const struct ib_device_ops softhca_dev_ops = {
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = SOFTHCA_UVERBS_ABI_VERSION,

	.add_gid = softhca_add_gid,
	.alloc_pd = softhca_alloc_pd,
	.alloc_ucontext = softhca_alloc_ucontext,
	.create_cq = softhca_create_cq,
	.create_qp = softhca_create_qp,
	.dealloc_pd = softhca_dealloc_pd,
	.dealloc_ucontext = softhca_dealloc_ucontext,
	.del_gid = softhca_del_gid,
	.dereg_mr = softhca_dereg_mr,
	.destroy_cq = softhca_destroy_cq,
	.destroy_qp = softhca_destroy_qp,
	.disassociate_ucontext = softhca_disassociate_ucontext,
	.get_dma_mr = softhca_get_dma_mr,
	.get_link_layer = softhca_get_link_layer,
	.get_port_immutable = softhca_get_port_immutable,
	.mmap = softhca_mmap,
	.mmap_free = softhca_mmap_free,
	.modify_qp = softhca_modify_qp,
	.owner = THIS_MODULE,
	.poll_cq = softhca_poll_cq,
	.post_recv = softhca_post_recv,
	.post_send = softhca_post_send,
	.query_device = softhca_query_device,
	.query_pkey = softhca_query_pkey,
	.query_port = softhca_query_port,
	.query_qp = softhca_query_qp,
	.reg_user_mr = softhca_reg_user_mr,
	.req_notify_cq = softhca_req_notify_cq,

	INIT_RDMA_OBJ_SIZE(ib_cq, softhca_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_pd, softhca_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, softhca_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, softhca_ucontext, ibucontext),
};

/* Address handles, multicast and fast registration: CAPS.DGRAM. */
static const struct ib_device_ops softhca_dgram_ops = {
	.alloc_mr = softhca_alloc_mr,
	.attach_mcast = softhca_attach_mcast,
	.create_ah = softhca_create_ah,
	.create_user_ah = softhca_create_ah,
	.destroy_ah = softhca_destroy_ah,
	.detach_mcast = softhca_detach_mcast,
	.map_mr_sg = softhca_map_mr_sg,

	INIT_RDMA_OBJ_SIZE(ib_ah, softhca_ah, ibah),
};

/* Memory windows: CAPS.MW. */
static const struct ib_device_ops softhca_mw_ops = {
	.alloc_mw = softhca_alloc_mw,
	.dealloc_mw = softhca_dealloc_mw,

	INIT_RDMA_OBJ_SIZE(ib_mw, softhca_mw, ibmw),
};

/* Shared receive queues: CAPS.SRQ. */
static const struct ib_device_ops softhca_srq_ops = {
	.create_srq = softhca_create_srq,
	.destroy_srq = softhca_destroy_srq,
	.modify_srq = softhca_modify_srq,
	.post_srq_recv = softhca_post_srq_recv,
	.query_srq = softhca_query_srq,

	INIT_RDMA_OBJ_SIZE(ib_srq, softhca_srq, ibsrq),
};

/* XRC domains: CAPS.XRC, whose SRQs and QPs the SRQ and QP verbs make. */
static const struct ib_device_ops softhca_xrc_ops = {
	.alloc_xrcd = softhca_alloc_xrcd,
	.dealloc_xrcd = softhca_dealloc_xrcd,

	INIT_RDMA_OBJ_SIZE(ib_xrcd, softhca_xrcd, ibxrcd),
};

/* The counters of QUERY_STATS come with CAPS.QP. */
/* Reregistering user MRs in place: CAPS.REREG_MR. */
static const struct ib_device_ops softhca_rereg_mr_ops = {
	.rereg_user_mr = softhca_rereg_user_mr,
};

/* Resizing user CQs: CAPS.RESIZE_CQ. */
static const struct ib_device_ops softhca_resize_cq_ops = {
	.resize_user_cq = softhca_resize_cq,
};

static const struct ib_device_ops softhca_stats_ops = {
	.alloc_hw_port_stats = softhca_alloc_hw_port_stats,
	.get_hw_stats = softhca_get_hw_stats,
};

static void softhca_read_caps(struct softhca_dev *sdev)
{
	struct softhca_caps *caps = &sdev->caps;

	caps->caps = softhca_rd32(sdev, SHCA_REG_CAPS);
	caps->num_vectors = softhca_rd32(sdev, SHCA_REG_NUM_VECTORS);
	caps->max_qp = softhca_rd32(sdev, SHCA_REG_MAX_QP);
	caps->max_qp_wr = softhca_rd32(sdev, SHCA_REG_MAX_QP_WR);
	caps->max_sge = softhca_rd32(sdev, SHCA_REG_MAX_SGE);
	caps->max_cq = softhca_rd32(sdev, SHCA_REG_MAX_CQ);
	caps->max_cqe = softhca_rd32(sdev, SHCA_REG_MAX_CQE);
	caps->max_mr = softhca_rd32(sdev, SHCA_REG_MAX_MR);
	caps->max_pd = softhca_rd32(sdev, SHCA_REG_MAX_PD);
	caps->max_eq = softhca_rd32(sdev, SHCA_REG_MAX_EQ);
	caps->max_eqe = softhca_rd32(sdev, SHCA_REG_MAX_EQE);
	caps->max_uctx = softhca_rd32(sdev, SHCA_REG_MAX_UCTX);
	caps->max_gid = softhca_rd32(sdev, SHCA_REG_MAX_GID);
	caps->max_inline = softhca_rd32(sdev, SHCA_REG_MAX_INLINE);
	caps->max_msg_size = softhca_rd32(sdev, SHCA_REG_MAX_MSG_SIZE);
	caps->max_qp_rd_atom = softhca_rd32(sdev, SHCA_REG_MAX_QP_RD_ATOM);
	caps->max_mr_size =
		(u64)softhca_rd32(sdev, SHCA_REG_MAX_MR_SIZE_HI) << 32 |
		softhca_rd32(sdev, SHCA_REG_MAX_MR_SIZE_LO);
	caps->page_size_cap = softhca_rd32(sdev, SHCA_REG_PAGE_SIZE_CAP);
	caps->max_mtu = softhca_rd32(sdev, SHCA_REG_MAX_MTU);
	caps->max_aq_log = softhca_rd32(sdev, SHCA_REG_MAX_AQ_LOG);
	if (softhca_has_dgram(sdev)) {
		caps->max_mcast_grp = softhca_rd32(sdev, SHCA_REG_MAX_MCAST_GRP);
		caps->max_mcast_qp_attach =
			softhca_rd32(sdev, SHCA_REG_MAX_MCAST_QP_ATTACH);
		caps->max_fast_reg_pages =
			min(softhca_rd32(sdev, SHCA_REG_MAX_FAST_REG_PAGES),
			    SHCA_BUF_LIST_MAX);
	}
	if (softhca_has_srq(sdev)) {
		caps->max_srq = softhca_rd32(sdev, SHCA_REG_MAX_SRQ);
		caps->max_srq_wr = softhca_rd32(sdev, SHCA_REG_MAX_SRQ_WR);
	}
	if (softhca_has_xrc(sdev))
		caps->max_xrcd = softhca_rd32(sdev, SHCA_REG_MAX_XRCD);

	/* Honest limits: objects this device cannot create yet count 0. */
	if (!(caps->caps & SHCA_CAP_QP)) {
		caps->max_qp = 0;
		caps->max_qp_wr = 0;
		caps->max_sge = 0;
		caps->max_cq = 0;
		caps->max_cqe = 0;
		caps->max_mr = 0;
		caps->max_qp_rd_atom = 0;
		caps->max_mr_size = 0;
	}
}

/* Spec §4 steps 1 and 2: identify the device and reset it. */
static int softhca_hw_init(struct softhca_dev *sdev)
{
	struct device *dev = &sdev->pdev->dev;
	u32 magic, status;
	int err;

	magic = softhca_rd32(sdev, SHCA_REG_MAGIC);
	if (magic != SHCA_MAGIC) {
		dev_err(dev, "bad magic %#x\n", magic);
		return -ENODEV;
	}

	sdev->caps.version = softhca_rd32(sdev, SHCA_REG_VERSION);
	if (sdev->caps.version >> 16 != SHCA_VERSION_MAJOR) {
		dev_err(dev, "unsupported device version %u.%u\n",
			sdev->caps.version >> 16, sdev->caps.version & 0xffff);
		return -ENODEV;
	}

	softhca_wr32(sdev, SHCA_REG_RESET, SHCA_RESET_MAGIC);
	err = readl_poll_timeout(sdev->regs + SHCA_REG_STATUS, status,
				 !status, 100, SOFTHCA_RESET_TIMEOUT_US);
	if (err) {
		dev_err(dev, "reset timed out, STATUS %#x\n", status);
		return err;
	}

	softhca_read_caps(sdev);
	if (sdev->caps.num_vectors < SOFTHCA_EQ_VECTOR + 1 ||
	    !sdev->caps.max_gid) {
		dev_err(dev, "bad limits: %u vectors, %u GIDs\n",
			sdev->caps.num_vectors, sdev->caps.max_gid);
		return -EIO;
	}

	return 0;
}

static int softhca_map_bars(struct softhca_dev *sdev)
{
	struct pci_dev *pdev = sdev->pdev;

	if (pci_resource_len(pdev, SHCA_BAR_REGS) < SHCA_REGS_SIZE ||
	    pci_resource_len(pdev, SHCA_BAR_DB) < 2 * SHCA_DB_PAGE_SIZE ||
	    !(pci_resource_flags(pdev, SHCA_BAR_DB) & IORESOURCE_MEM)) {
		dev_err(&pdev->dev, "unexpected BAR layout\n");
		return -ENODEV;
	}

	sdev->regs = pci_iomap(pdev, SHCA_BAR_REGS, SHCA_REGS_SIZE);
	if (!sdev->regs)
		return -ENOMEM;

	/* Only page 0 is the kernel's; the others are mapped to users. */
	sdev->db = pci_iomap_range(pdev, SHCA_BAR_DB, 0, SHCA_DB_PAGE_SIZE);
	if (!sdev->db) {
		pci_iounmap(pdev, sdev->regs);
		return -ENOMEM;
	}
	sdev->db_bar_start = pci_resource_start(pdev, SHCA_BAR_DB);
	sdev->db_bar_len = pci_resource_len(pdev, SHCA_BAR_DB);

	return 0;
}

static void softhca_unmap_bars(struct softhca_dev *sdev)
{
	pci_iounmap(sdev->pdev, sdev->db);
	pci_iounmap(sdev->pdev, sdev->regs);
}

static int softhca_ib_register(struct softhca_dev *sdev)
{
	struct ib_device *ibdev = &sdev->ibdev;
	struct net_device *ndev = sdev->nic->netdev;
	int err;

	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = 1;
	ibdev->dev.parent = &sdev->pdev->dev;
	addrconf_addr_eui48((u8 *)&ibdev->node_guid, ndev->dev_addr);
	ib_set_device_ops(ibdev, &softhca_dev_ops);
	if (softhca_has_qp(sdev))
		ib_set_device_ops(ibdev, &softhca_stats_ops);
	if (softhca_has_dgram(sdev))
		ib_set_device_ops(ibdev, &softhca_dgram_ops);
	if (softhca_has_srq(sdev))
		ib_set_device_ops(ibdev, &softhca_srq_ops);
	if (softhca_has_mw(sdev))
		ib_set_device_ops(ibdev, &softhca_mw_ops);
	if (softhca_has_xrc(sdev))
		ib_set_device_ops(ibdev, &softhca_xrc_ops);
	if (softhca_has_rereg_mr(sdev))
		ib_set_device_ops(ibdev, &softhca_rereg_mr_ops);
	if (softhca_has_resize_cq(sdev))
		ib_set_device_ops(ibdev, &softhca_resize_cq_ops);

	err = ib_device_set_netdev(ibdev, ndev, SOFTHCA_PORT);
	if (err)
		return err;

	err = ib_register_device(ibdev, "softhca%d", &sdev->pdev->dev);
	if (err) {
		dev_err(&sdev->pdev->dev, "ib_register_device failed: %d\n",
			err);
		/* Drop the netdev reference before the netdev goes away. */
		ib_device_set_netdev(ibdev, NULL, SOFTHCA_PORT);
		return err;
	}

	return 0;
}

static int softhca_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct softhca_dev *sdev;
	int nvec;
	int err;

	sdev = ib_alloc_device(softhca_dev, ibdev);
	if (!sdev)
		return -ENOMEM;
	sdev->pdev = pdev;
	xa_init(&sdev->cqs);
	xa_init(&sdev->qps);
	xa_init(&sdev->srqs);
	pci_set_drvdata(pdev, sdev);

	err = pci_enable_device_mem(pdev);
	if (err) {
		dev_err(&pdev->dev, "pci_enable_device_mem failed: %d\n", err);
		goto err_dealloc;
	}

	err = pci_request_mem_regions(pdev, SOFTHCA_DRV_NAME);
	if (err) {
		dev_err(&pdev->dev, "pci_request_mem_regions failed: %d\n",
			err);
		goto err_disable;
	}

	pci_set_master(pdev);

	err = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (err) {
		dev_err(&pdev->dev, "no 64-bit DMA: %d\n", err);
		goto err_clear_master;
	}

	err = softhca_map_bars(sdev);
	if (err)
		goto err_clear_master;

	err = softhca_hw_init(sdev);
	if (err)
		goto err_unmap;

	nvec = pci_alloc_irq_vectors(pdev, SOFTHCA_EQ_VECTOR + 1,
				     sdev->caps.num_vectors, PCI_IRQ_MSIX);
	if (nvec < 0) {
		err = nvec;
		dev_err(&pdev->dev, "MSI-X allocation failed: %d\n", err);
		goto err_unmap;
	}

	err = softhca_aq_init(sdev);
	if (err)
		goto err_free_vectors;

	err = softhca_netdev_init(sdev);
	if (err)
		goto err_aq_destroy;

	/* CQs name the EQ: it exists as long as the ib_device does. */
	err = softhca_eq_init(sdev);
	if (err)
		goto err_netdev_destroy;

	err = softhca_ib_register(sdev);
	if (err)
		goto err_eq_destroy;

	dev_info(&pdev->dev, "%s: version %u.%u, %d MSI-X vectors, netdev %s\n",
		 dev_name(&sdev->ibdev.dev), sdev->caps.version >> 16,
		 sdev->caps.version & 0xffff, nvec, sdev->nic->netdev->name);
	return 0;

err_eq_destroy:
	softhca_eq_destroy(sdev);
err_netdev_destroy:
	softhca_netdev_destroy(sdev);
err_aq_destroy:
	softhca_aq_destroy(sdev);
err_free_vectors:
	pci_free_irq_vectors(pdev);
err_unmap:
	softhca_unmap_bars(sdev);
err_clear_master:
	pci_clear_master(pdev);
	pci_release_mem_regions(pdev);
err_disable:
	pci_disable_device(pdev);
err_dealloc:
	ib_dealloc_device(&sdev->ibdev);
	return err;
}

static void softhca_remove(struct pci_dev *pdev)
{
	struct softhca_dev *sdev = pci_get_drvdata(pdev);

	ib_unregister_device(&sdev->ibdev);
	softhca_eq_destroy(sdev);
	softhca_netdev_destroy(sdev);
	softhca_aq_destroy(sdev);
	pci_free_irq_vectors(pdev);
	softhca_unmap_bars(sdev);
	pci_clear_master(pdev);
	pci_release_mem_regions(pdev);
	pci_disable_device(pdev);
	ib_dealloc_device(&sdev->ibdev);
}

static struct pci_driver softhca_pci_driver = {
	.name = SOFTHCA_DRV_NAME,
	.id_table = softhca_pci_tbl,
	.probe = softhca_probe,
	.remove = softhca_remove,
};

module_pci_driver(softhca_pci_driver);
