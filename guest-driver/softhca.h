/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * softhca: driver for the QEMU RoCEv2 host channel adapter (spec/softhca.md).
 * Private structures and the interfaces between the driver's files.
 */
#ifndef _SOFTHCA_H_
#define _SOFTHCA_H_

#include <linux/bitops.h>
#include <linux/completion.h>
#include <linux/io.h>
#include <linux/netdevice.h>
#include <linux/pci.h>
#include <linux/semaphore.h>
#include <linux/spinlock.h>
#include <linux/u64_stats_sync.h>
#include <linux/xarray.h>

#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

#include "softhca_compat.h"

#include "softhca_hw.h"

#define SOFTHCA_DRV_NAME		"softhca"

/* Admin queue geometry: 2^5 commands and completions are plenty. */
#define SOFTHCA_AQ_LOG_SIZE		5
#define SOFTHCA_AQ_TIMEOUT_MS		5000

/* The single event queue the driver uses, on the first EQ vector. */
#define SOFTHCA_EQN			0
#define SOFTHCA_EQ_VECTOR		SHCA_VEC_FIRST_EQ
/* 2^8 entries of 16 bytes fill exactly one 4 KiB page. */
#define SOFTHCA_EQ_LOG_SIZE		8

/* NIC rings: 2^8 descriptors each. */
#define SOFTHCA_NIC_RING_LOG_SIZE	8
#define SOFTHCA_NIC_RING_SIZE		BIT(SOFTHCA_NIC_RING_LOG_SIZE)
/* An RX buffer holds the MTU plus Ethernet header and a VLAN tag. */
#define SOFTHCA_NIC_RX_OVERHEAD		(ETH_HLEN + VLAN_HLEN)
#define SOFTHCA_NIC_SPEED		SPEED_10000

#define SOFTHCA_PORT			1

/*
 * AHs live in software only (spec §11), in guest memory, a few hundred
 * bytes each with the provider's: their number is bounded as a table of
 * the device's would bound it, as rxe does, so that max_ah AHs fit in a
 * small guest.
 */
#define SOFTHCA_MAX_AH			16384

/* What ib_mad holds for the port's GSI QP: a PD, its DMA MR, a CQ. */
#define SOFTHCA_GSI_PDS			1u
#define SOFTHCA_GSI_MRS			1u
#define SOFTHCA_GSI_CQS			1u

/* WQE strides, log2 bytes (spec §13.2). */
#define SOFTHCA_SQ_WQE_SHIFT_MIN	6
#define SOFTHCA_RQ_WQE_SHIFT_MIN	4
#define SOFTHCA_WQE_SHIFT_MAX		9

/* Values read once from the identity and limit registers at probe. */
struct softhca_caps {
	u32 version;
	u32 caps;
	u32 num_vectors;
	u32 max_qp;
	u32 max_qp_wr;
	u32 max_sge;
	u32 max_cq;
	u32 max_cqe;
	u32 max_mr;
	u32 max_pd;
	u32 max_eq;
	u32 max_eqe;
	u32 max_uctx;
	u32 max_gid;
	u32 max_inline;
	u32 max_msg_size;
	u32 max_qp_rd_atom;
	u64 max_mr_size;
	u32 page_size_cap;
	u32 max_mtu;
	u32 max_aq_log;
	u32 max_mcast_grp;		/* CAPS.DGRAM, else 0 */
	u32 max_mcast_qp_attach;
	u32 max_fast_reg_pages;
	u32 max_srq;			/* CAPS.SRQ, else 0 */
	u32 max_srq_wr;
	u32 max_xrcd;			/* CAPS.XRC, else 0 */
};

/* One outstanding admin command, found again by its cmd_id. */
struct softhca_aq_ctx {
	struct completion done;
	u16 cmd_id;
	u8 status;
	u32 result;
	u64 result64;
};

struct softhca_aq {
	struct shca_aq_entry *sq;
	dma_addr_t sq_dma;
	struct shca_acq_entry *cq;
	dma_addr_t cq_dma;
	u32 log_size;		/* of both the AQ and the ACQ */
	u32 sq_tail;
	u32 cq_head;
	u8 cq_phase;
	/* serializes the AQ tail, the ACQ head and the context table */
	spinlock_t lock;
	/* counts free slots: at most min(AQ, ACQ) - 1 outstanding */
	struct semaphore avail;
	struct softhca_aq_ctx *ctx;
	unsigned long *ctx_busy;
	u32 ctx_count;		/* a power of two above the slot count */
	u16 cmd_seq;
	/* a command timed out or the device went fatal: no more commands */
	bool dead;
};

struct softhca_eq {
	/* serializes consumers: the interrupt and object teardown */
	spinlock_t lock;
	struct shca_eqe *ring;
	dma_addr_t dma;
	u32 size;
	u32 ci;
	u8 phase;
	u32 eqn;
};

struct softhca_nic_ring {
	void *desc;		/* struct shca_nic_txd or shca_nic_rxd array */
	dma_addr_t desc_dma;
	struct sk_buff *skb[SOFTHCA_NIC_RING_SIZE];
	dma_addr_t buf_dma[SOFTHCA_NIC_RING_SIZE];
	u32 buf_len;		/* RX only */
	u32 head;		/* next descriptor the driver reclaims */
	u32 tail;		/* next descriptor the driver posts */
	struct u64_stats_sync syncp;
	u64 packets;
	u64 bytes;
};

struct softhca_nic {
	struct net_device *netdev;
	struct napi_struct napi;
	struct softhca_nic_ring tx;
	struct softhca_nic_ring rx;
};

struct softhca_dev {
	struct ib_device ibdev;
	struct pci_dev *pdev;
	void __iomem *regs;
	void __iomem *db;	/* doorbell page 0, the kernel's */
	resource_size_t db_bar_start;
	resource_size_t db_bar_len;
	struct softhca_caps caps;
	struct softhca_aq aq;
	struct softhca_eq eq;
	struct softhca_nic *nic;
	/* cqn and qpn to object, for events; read under the EQ lock */
	struct xarray cqs;
	struct xarray qps;
	struct xarray srqs;
	atomic_t nr_ah;		/* AHs, kernel and user: SOFTHCA_MAX_AH */
	char irq_name[3][32];
};

/* Private data of the net_device. */
struct softhca_netdev_priv {
	struct softhca_dev *sdev;
	struct softhca_nic nic;
};

struct softhca_ucontext {
	struct ib_ucontext ibucontext;
	u32 uctx;
	struct rdma_user_mmap_entry *db_entry;
};

struct softhca_pd {
	struct ib_pd ibpd;
	u32 pdn;
};

/* An XRC domain (spec §13.7): of no context, shared by processes. */
struct softhca_xrcd {
	struct ib_xrcd ibxrcd;
	u32 xrcdn;
};

/* A kernel queue in one DMA-coherent block, described DIRECT (§5.2). */
struct softhca_kring {
	void *buf;
	dma_addr_t dma;
	size_t bytes;		/* whole pages */
};

struct softhca_cq {
	struct ib_cq ibcq;
	u32 cqn;
	struct ib_umem *umem;	/* CQE ring and record, user memory */
	/* kernel CQs only: the ring, its record and the consumer */
	struct softhca_kring ring;
	struct shca_cq_record *record;
	u32 log_size;
	u32 ci;			/* CQEs consumed, free-running */
	/* serializes pollers and the cleaning of a destroyed QP's CQEs */
	spinlock_t lock;
	struct mutex resize_mutex;	/* user CQs: serializes resize_cq */
};

/* A kernel send or receive queue. */
struct softhca_wq {
	struct softhca_kring ring;
	u32 log_size;
	u8 wqe_shift;
	u32 pi;			/* WQEs posted, free-running */
	u32 ci;			/* WQEs completed; written by the poller */
	/* serializes posters */
	spinlock_t lock;
};

struct softhca_qp {
	struct ib_qp ibqp;
	struct ib_qp_cap cap;	/* as granted at creation */
	enum ib_sig_type sq_sig_type;
	struct ib_umem *sq_umem;
	struct ib_umem *rq_umem;	/* NULL for a QP without an RQ */
	/* kernel QPs only */
	struct softhca_wq sq;
	struct softhca_wq rq;	/* ring.buf NULL: no RQ */
};

/*
 * A shared receive queue (spec §13.5).  The device frees its slots through
 * the record behind the ring; a kernel SRQ's wq.ci is the record's count
 * as last read.
 */
struct softhca_srq {
	struct ib_srq ibsrq;
	u32 srqn;
	u8 log_size;
	u8 wqe_shift;
	u32 max_sge;
	struct ib_umem *umem;		/* user SRQs: the ring */
	/* kernel SRQs only */
	struct softhca_wq wq;
	struct shca_srq_record *record;
	bool resizing;			/* under wq.lock: posters wait */
	struct mutex modify_lock;	/* one MODIFY_SRQ at a time */
};

struct softhca_mr {
	struct ib_mr ibmr;
	struct ib_umem *umem;	/* NULL for a DMA MR */
	/* fast-registration MRs only (spec §18) */
	__le64 *page_list;	/* one page of page addresses */
	dma_addr_t page_list_dma;
	u32 max_pages;
	u32 npages;		/* filled by map_mr_sg */
	u32 hw_key;		/* the key the device knows, for DEREG_MR */
	int access;		/* user MRs: IB_ACCESS_*, for rereg */
};

/* A memory window: the key the device returned is all it is. */
struct softhca_mw {
	struct ib_mw ibmw;
};

/* An address handle exists only in software: its AV goes in each WQE. */
struct softhca_ah {
	struct ib_ah ibah;
	struct shca_av av;
};

/*
 * A buffer described to the device (spec §5.2, §13.3): the descriptor and
 * the DMA-coherent pages of its page list.  The device copies the list
 * when it creates the object, so the list lives only as long as the
 * command.
 */
struct softhca_pbl {
	struct shca_buf_desc desc;
	u32 nr_lists;		/* list pages; with LIST2 [0] is the top */
	__le64 **list;
	dma_addr_t *list_dma;
};

enum softhca_mmap_flag {
	SOFTHCA_MMAP_IO_NC,	/* device memory, mapped non-cached */
};

struct softhca_user_mmap_entry {
	struct rdma_user_mmap_entry rdma_entry;
	u64 address;
	u8 mmap_flag;
};

static inline struct softhca_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct softhca_dev, ibdev);
}

static inline struct softhca_ucontext *to_suctx(struct ib_ucontext *ibuctx)
{
	return container_of(ibuctx, struct softhca_ucontext, ibucontext);
}

static inline struct softhca_pd *to_spd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct softhca_pd, ibpd);
}

static inline struct softhca_xrcd *to_sxrcd(struct ib_xrcd *ibxrcd)
{
	return container_of(ibxrcd, struct softhca_xrcd, ibxrcd);
}

static inline struct softhca_cq *to_scq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct softhca_cq, ibcq);
}

static inline struct softhca_qp *to_sqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct softhca_qp, ibqp);
}

static inline struct softhca_srq *to_ssrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct softhca_srq, ibsrq);
}

static inline struct softhca_mr *to_smr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct softhca_mr, ibmr);
}

static inline struct softhca_ah *to_sah(struct ib_ah *ibah)
{
	return container_of(ibah, struct softhca_ah, ibah);
}

static inline bool softhca_has_qp(struct softhca_dev *sdev)
{
	return sdev->caps.caps & SHCA_CAP_QP;
}

/* UD and GSI QPs, multicast, fast registration (spec §17, §18). */
static inline bool softhca_has_dgram(struct softhca_dev *sdev)
{
	return softhca_has_qp(sdev) && (sdev->caps.caps & SHCA_CAP_DGRAM);
}

/* Shared receive queues (spec §13.5). */
static inline bool softhca_has_srq(struct softhca_dev *sdev)
{
	return softhca_has_qp(sdev) && (sdev->caps.caps & SHCA_CAP_SRQ);
}

/* Memory windows (spec §13.6). */
static inline bool softhca_has_mw(struct softhca_dev *sdev)
{
	return softhca_has_dgram(sdev) && (sdev->caps.caps & SHCA_CAP_MW);
}

/* XRC domains, XRC SRQs, XRC send and target QPs (spec §13.7). */
static inline bool softhca_has_xrc(struct softhca_dev *sdev)
{
	return softhca_has_srq(sdev) && (sdev->caps.caps & SHCA_CAP_XRC);
}

/* MRs of 0 bytes (spec §13.3), which verbs allow and rxe and mlx5 take. */
static inline bool softhca_has_zero_length_mr(struct softhca_dev *sdev)
{
	return softhca_has_qp(sdev) &&
	       (sdev->caps.caps & SHCA_CAP_ZERO_LENGTH_MR);
}

/* RDMA ATOMIC WRITE and FLUSH (spec §15, §16). */
static inline bool softhca_has_atomic_write(struct softhca_dev *sdev)
{
	return softhca_has_qp(sdev) &&
	       (sdev->caps.caps & SHCA_CAP_ATOMIC_WRITE);
}

static inline bool softhca_has_flush(struct softhca_dev *sdev)
{
	return softhca_has_qp(sdev) && (sdev->caps.caps & SHCA_CAP_FLUSH);
}

/* REREG_MR (spec §13.3). */
static inline bool softhca_has_rereg_mr(struct softhca_dev *sdev)
{
	return softhca_has_qp(sdev) && (sdev->caps.caps & SHCA_CAP_REREG_MR);
}

/* RESIZE_CQ (spec §13.1). */
static inline bool softhca_has_resize_cq(struct softhca_dev *sdev)
{
	return softhca_has_qp(sdev) && (sdev->caps.caps & SHCA_CAP_RESIZE_CQ);
}

static inline bool softhca_qp_is_dgram(const struct ib_qp *ibqp)
{
	return ibqp->qp_type == IB_QPT_UD || ibqp->qp_type == IB_QPT_GSI;
}

static inline struct softhca_user_mmap_entry *
to_smmap(struct rdma_user_mmap_entry *rdma_entry)
{
	return container_of(rdma_entry, struct softhca_user_mmap_entry,
			    rdma_entry);
}

static inline u32 softhca_rd32(struct softhca_dev *sdev, u32 reg)
{
	return readl(sdev->regs + reg);
}

static inline void softhca_wr32(struct softhca_dev *sdev, u32 reg, u32 val)
{
	writel(val, sdev->regs + reg);
}

static inline void softhca_wr64(struct softhca_dev *sdev, u32 reg_lo, u64 val)
{
	softhca_wr32(sdev, reg_lo, lower_32_bits(val));
	softhca_wr32(sdev, reg_lo + 4, upper_32_bits(val));
}

/* CREATE_QP parameters, host byte order but for the descriptors. */
struct softhca_create_qp_params {
	u32 uctx;
	u32 pdn;
	u32 send_cqn;
	u32 recv_cqn;
	u8 type;		/* enum shca_qp_type */
	u8 sq_log_size;
	u8 sq_wqe_shift;
	u8 rq_log_size;
	u8 rq_wqe_shift;
	u8 flags;		/* SHCA_QP_F_* */
	u32 srqn;		/* with SHCA_QP_F_SRQ */
	const struct shca_buf_desc *sq;	/* NULL: no SQ (XRC_TGT) */
	const struct shca_buf_desc *rq;	/* NULL: no RQ */
};

/* CREATE_SRQ parameters, host byte order but for the descriptor. */
struct softhca_create_srq_params {
	u32 uctx;
	u32 pdn;
	u32 limit;
	u8 log_size;
	u8 wqe_shift;
	u8 flags;		/* SHCA_SRQ_F_* */
	u32 xrcdn;		/* with SHCA_SRQ_F_XRC */
	u32 cqn;		/* with SHCA_SRQ_F_XRC */
	const struct shca_buf_desc *buf;
};

/* REG_MR parameters; pages is NULL for SHCA_ACCESS_PHYS. */
struct softhca_reg_mr_params {
	u32 pdn;
	u32 access;		/* SHCA_ACCESS_* */
	u64 iova;
	u64 length;
	u32 first_offset;
	const struct shca_buf_desc *pages;
};

/* softhca_admin.c */
int softhca_aq_init(struct softhca_dev *sdev);
void softhca_aq_destroy(struct softhca_dev *sdev);
int softhca_aq_exec(struct softhca_dev *sdev, struct shca_aq_entry *cmd,
		    u32 *result);

/* softhca_cmd.c */
int softhca_cmd_create_eq(struct softhca_dev *sdev, u32 eqn, u16 vector,
			  u8 log_size, dma_addr_t addr, u8 page_shift);
int softhca_cmd_destroy_eq(struct softhca_dev *sdev, u32 eqn);
int softhca_cmd_set_gid(struct softhca_dev *sdev, u32 index, const u8 *gid);
int softhca_cmd_alloc_pd(struct softhca_dev *sdev, u32 uctx, u32 *pdn);
int softhca_cmd_dealloc_pd(struct softhca_dev *sdev, u32 pdn);
int softhca_cmd_alloc_uctx(struct softhca_dev *sdev, u32 *uctx);
int softhca_cmd_dealloc_uctx(struct softhca_dev *sdev, u32 uctx);
int softhca_cmd_create_cq(struct softhca_dev *sdev, u32 uctx, u32 eqn,
			  u8 log_size, const struct shca_buf_desc *buf,
			  u32 *cqn);
int softhca_cmd_destroy_cq(struct softhca_dev *sdev, u32 cqn);
int softhca_cmd_resize_cq(struct softhca_dev *sdev, u32 cqn, u8 log_size,
			  const struct shca_buf_desc *buf, u32 *copied);
int softhca_cmd_create_qp(struct softhca_dev *sdev,
			  const struct softhca_create_qp_params *params,
			  u32 *qpn);
int softhca_cmd_modify_qp(struct softhca_dev *sdev, u32 qpn, u32 attr_mask,
			  dma_addr_t attr);
int softhca_cmd_query_qp(struct softhca_dev *sdev, u32 qpn, dma_addr_t attr);
int softhca_cmd_destroy_qp(struct softhca_dev *sdev, u32 qpn);
int softhca_cmd_reg_mr(struct softhca_dev *sdev,
		       const struct softhca_reg_mr_params *params, u32 *key);
int softhca_cmd_rereg_mr(struct softhca_dev *sdev, u32 key,
			 const struct softhca_reg_mr_params *params);
int softhca_cmd_dereg_mr(struct softhca_dev *sdev, u32 key);
int softhca_cmd_query_stats(struct softhca_dev *sdev, dma_addr_t addr);
int softhca_cmd_mcast(struct softhca_dev *sdev, u8 opcode, u32 qpn,
		      const u8 *gid);
int softhca_cmd_alloc_mw(struct softhca_dev *sdev, u32 pdn, u8 type, u32 *key);
int softhca_cmd_dealloc_mw(struct softhca_dev *sdev, u32 key);
int softhca_cmd_create_srq(struct softhca_dev *sdev,
			   const struct softhca_create_srq_params *params,
			   u32 *srqn);
int softhca_cmd_resize_srq(struct softhca_dev *sdev, u32 srqn, u8 log_size,
			   const struct shca_buf_desc *buf);
int softhca_cmd_modify_srq_limit(struct softhca_dev *sdev, u32 srqn,
				 u32 limit);
int softhca_cmd_query_srq(struct softhca_dev *sdev, u32 srqn, u32 *limit);
int softhca_cmd_destroy_srq(struct softhca_dev *sdev, u32 srqn);
int softhca_cmd_alloc_xrcd(struct softhca_dev *sdev, u32 *xrcdn);
int softhca_cmd_dealloc_xrcd(struct softhca_dev *sdev, u32 xrcdn);

/* softhca_eq.c */
int softhca_eq_init(struct softhca_dev *sdev);
void softhca_eq_destroy(struct softhca_dev *sdev);
void softhca_eq_sync(struct softhca_dev *sdev);

/* softhca_pbl.c */
unsigned long softhca_pgsz_bitmap(struct softhca_dev *sdev);
int softhca_pbl_build(struct softhca_dev *sdev, struct softhca_pbl *pbl,
		      struct ib_umem *umem, unsigned long pgsz, bool list2);
void softhca_pbl_free(struct softhca_dev *sdev, struct softhca_pbl *pbl);
struct ib_umem *softhca_ring_pin(struct softhca_dev *sdev, u64 addr, u64 size,
				 struct softhca_pbl *pbl);
int softhca_kring_alloc(struct softhca_dev *sdev, struct softhca_kring *ring,
			size_t bytes, struct shca_buf_desc *desc);
void softhca_kring_free(struct softhca_dev *sdev, struct softhca_kring *ring);

/* softhca_netdev.c */
int softhca_netdev_init(struct softhca_dev *sdev);
void softhca_netdev_destroy(struct softhca_dev *sdev);
void softhca_netdev_link_change(struct softhca_dev *sdev, bool up);
void softhca_netdev_link_sync(struct softhca_dev *sdev);

/* softhca_verbs.c */
int softhca_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
			 struct ib_udata *udata);
int softhca_query_port(struct ib_device *ibdev, u32 port,
		       struct ib_port_attr *attr);
int softhca_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
		       u16 *pkey);
int softhca_get_port_immutable(struct ib_device *ibdev, u32 port,
			       struct ib_port_immutable *immutable);
enum rdma_link_layer softhca_get_link_layer(struct ib_device *ibdev,
					    u32 port);
int softhca_add_gid(const struct ib_gid_attr *attr, void **context);
int softhca_del_gid(const struct ib_gid_attr *attr, void **context);
int softhca_alloc_ucontext(struct ib_ucontext *ibuctx, struct ib_udata *udata);
void softhca_dealloc_ucontext(struct ib_ucontext *ibuctx);
void softhca_disassociate_ucontext(struct ib_ucontext *ibuctx);
int softhca_mmap(struct ib_ucontext *ibuctx, struct vm_area_struct *vma);
void softhca_mmap_free(struct rdma_user_mmap_entry *rdma_entry);
int softhca_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int softhca_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int softhca_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
int softhca_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
int softhca_copy_resp(struct ib_udata *udata, void *resp, size_t len);
int softhca_copy_req(struct ib_device *ibdev, struct ib_udata *udata,
		     void *req, size_t len);
bool softhca_udata_req_ok(struct ib_device *ibdev, struct ib_udata *udata);

/* softhca_cq.c */
int softhca_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		      struct softhca_create_cq_arg *attrs);
int softhca_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int softhca_resize_cq(struct ib_cq *ibcq, softhca_resize_cqe_t cqe,
		      struct ib_udata *udata);
void softhca_cq_event(struct softhca_dev *sdev, u32 cqn, u8 type);

/* softhca_kcq.c */
int softhca_kcq_init(struct softhca_dev *sdev, struct softhca_cq *cq,
		     u32 log_size, struct shca_buf_desc *desc);
void softhca_kcq_discard(struct softhca_cq *cq, u32 qpn);
int softhca_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int softhca_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);

/* softhca_kqp.c */
int softhca_kqp_init(struct softhca_dev *sdev, struct softhca_qp *qp,
		     struct ib_qp_init_attr *init_attr,
		     struct softhca_create_qp_params *params,
		     struct shca_buf_desc *sq, struct shca_buf_desc *rq);
void softhca_kqp_free(struct softhca_dev *sdev, struct softhca_qp *qp);
void softhca_kqp_discard(struct softhca_qp *qp);
void softhca_kqp_reset(struct softhca_qp *qp);
int softhca_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		      const struct ib_send_wr **bad_wr);
int softhca_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr);
int softhca_wq_post_recv(struct softhca_dev *sdev, struct softhca_wq *wq,
			 u32 max_sge, u32 db_offset, u32 qn,
			 const struct ib_recv_wr *wr,
			 const struct ib_recv_wr **bad_wr);

/* softhca_qp.c */
int softhca_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init_attr,
		      struct ib_udata *udata);
int softhca_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		      int attr_mask, struct ib_udata *udata);
int softhca_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		     int attr_mask, struct ib_qp_init_attr *init_attr);
int softhca_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
size_t softhca_sq_header(enum ib_qp_type type);
void softhca_qp_set_cap(struct softhca_dev *sdev, struct softhca_qp *qp,
			struct ib_qp_init_attr *init_attr, u8 sq_log_size,
			u8 sq_wqe_shift, u8 rq_log_size, u8 rq_wqe_shift);
void softhca_qp_event(struct softhca_dev *sdev, u32 qpn, u8 type);

/* softhca_mw.c */
int softhca_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int softhca_dealloc_mw(struct ib_mw *ibmw);

/* softhca_srq.c */
u32 softhca_srq_max_sge(const struct softhca_caps *caps);
int softhca_create_srq(struct ib_srq *ibsrq,
		       struct ib_srq_init_attr *init_attr,
		       struct ib_udata *udata);
int softhca_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		       enum ib_srq_attr_mask attr_mask, struct ib_udata *udata);
int softhca_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int softhca_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int softhca_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			  const struct ib_recv_wr **bad_wr);
void softhca_srq_event(struct softhca_dev *sdev, u32 srqn);

/* softhca_ah.c */
int softhca_av_from_ah_attr(struct softhca_dev *sdev,
			    const struct rdma_ah_attr *ah_attr,
			    struct shca_av *av);
int softhca_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		      struct ib_udata *udata);
int softhca_destroy_ah(struct ib_ah *ibah, u32 flags);

/* softhca_mcast.c */
int softhca_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int softhca_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);

/* softhca_mr.c */
u32 softhca_access_to_hw(int ib_access);
int softhca_access_from_hw(u32 access);
struct ib_mr *softhca_get_dma_mr(struct ib_pd *ibpd, int access_flags);
struct ib_mr *softhca_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				  u64 virt_addr, int access_flags,
				  SOFTHCA_DMAH_PARAM struct ib_udata *udata);
struct ib_mr *softhca_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				    u64 length, u64 virt_addr, int access,
				    struct ib_pd *ibpd, struct ib_udata *udata);
int softhca_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct ib_mr *softhca_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type mr_type,
			       u32 max_num_sg);
int softhca_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		      unsigned int *sg_offset);

/* softhca_stats.c */
struct rdma_hw_stats *softhca_alloc_hw_port_stats(struct ib_device *ibdev,
						  u32 port);
int softhca_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
			 u32 port, int index);

#endif /* _SOFTHCA_H_ */
