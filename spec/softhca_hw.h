/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * softhca hardware interface: register offsets, queue entry layouts and
 * opcodes, as described in spec/softhca.md.  This one header is included by
 * the QEMU device, the Linux driver and the rdma-core provider, so that the
 * three cannot drift apart.  Every multi-byte field is little-endian; every
 * layout is checked by a static assertion at the end of the file.
 *
 * Changing anything here changes the hardware: bump SHCA_VERSION_MINOR (or
 * add a capability bit) and update spec/softhca.md in the same commit.
 */
#ifndef SOFTHCA_HW_H
#define SOFTHCA_HW_H

#ifdef __KERNEL__
#include <linux/types.h>
typedef __le16 shca_le16;
typedef __le32 shca_le32;
typedef __le64 shca_le64;
#else
#include <stdint.h>
typedef uint16_t shca_le16;
typedef uint32_t shca_le32;
typedef uint64_t shca_le64;
#endif

/* PCI identity: QEMU's range for experimental devices. */
#define SHCA_PCI_VENDOR_ID		0x1af4
#define SHCA_PCI_DEVICE_ID		0x10f0
#define SHCA_PCI_REVISION		0x00

/* BARs */
#define SHCA_BAR_REGS			0	/* registers, 32-bit only */
#define SHCA_BAR_DB			2	/* doorbell pages, 64-bit BAR */
#define SHCA_BAR_MSIX			4	/* MSI-X table and PBA */
#define SHCA_REGS_SIZE			0x2000
#define SHCA_DB_PAGE_SHIFT		12
#define SHCA_DB_PAGE_SIZE		(1u << SHCA_DB_PAGE_SHIFT)

#define SHCA_MAGIC			0x41434853	/* "SHCA" */
#define SHCA_VERSION_MAJOR		0
#define SHCA_VERSION_MINOR		3
#define SHCA_VERSION ((SHCA_VERSION_MAJOR << 16) | SHCA_VERSION_MINOR)

/* BAR0 register offsets */
enum shca_reg {
	/* identity (RO) */
	SHCA_REG_MAGIC			= 0x000,
	SHCA_REG_VERSION		= 0x004,
	SHCA_REG_CAPS			= 0x008,
	SHCA_REG_NUM_VECTORS		= 0x00c,
	/* limits (RO) */
	SHCA_REG_MAX_QP			= 0x010,
	SHCA_REG_MAX_QP_WR		= 0x014,
	SHCA_REG_MAX_SGE		= 0x018,
	SHCA_REG_MAX_CQ			= 0x01c,
	SHCA_REG_MAX_CQE		= 0x020,
	SHCA_REG_MAX_MR			= 0x024,
	SHCA_REG_MAX_PD			= 0x028,
	SHCA_REG_MAX_EQ			= 0x02c,
	SHCA_REG_MAX_EQE		= 0x030,
	SHCA_REG_MAX_UCTX		= 0x034,
	SHCA_REG_MAX_GID		= 0x038,
	SHCA_REG_MAX_INLINE		= 0x03c,
	SHCA_REG_MAX_MSG_SIZE		= 0x040,
	SHCA_REG_MAX_QP_RD_ATOM		= 0x044,
	SHCA_REG_MAX_MR_SIZE_LO		= 0x048,
	SHCA_REG_MAX_MR_SIZE_HI		= 0x04c,
	SHCA_REG_PAGE_SIZE_CAP		= 0x050,
	SHCA_REG_MAX_MTU		= 0x054,
	SHCA_REG_MAX_AQ_LOG		= 0x058,
	SHCA_REG_MAX_MCAST_GRP		= 0x05c,
	SHCA_REG_MAX_MCAST_QP_ATTACH	= 0x060,
	SHCA_REG_MAX_FAST_REG_PAGES	= 0x064,
	SHCA_REG_MAX_SRQ		= 0x068,	/* CAPS.SRQ */
	SHCA_REG_MAX_SRQ_WR		= 0x06c,
	SHCA_REG_MAX_XRCD		= 0x070,	/* CAPS.XRC */
	/* control and status */
	SHCA_REG_CTRL			= 0x100,	/* RW */
	SHCA_REG_STATUS			= 0x104,	/* RO */
	SHCA_REG_RESET			= 0x108,	/* WO */
	SHCA_REG_FATAL_CODE		= 0x10c,	/* RO */
	/* admin queue (RW while CTRL.EN is 0) */
	SHCA_REG_AQ_BASE_LO		= 0x110,
	SHCA_REG_AQ_BASE_HI		= 0x114,
	SHCA_REG_ACQ_BASE_LO		= 0x118,
	SHCA_REG_ACQ_BASE_HI		= 0x11c,
	SHCA_REG_AQ_LOG_SIZE		= 0x120,
	SHCA_REG_ACQ_LOG_SIZE		= 0x124,
	SHCA_REG_AQ_TAIL		= 0x128,	/* WO doorbell */
	SHCA_REG_ACQ_HEAD		= 0x12c,	/* WO doorbell */
	/* Ethernet port */
	SHCA_REG_MAC_LO			= 0x140,	/* RW */
	SHCA_REG_MAC_HI			= 0x144,	/* RW */
	SHCA_REG_PORT_STATUS		= 0x148,	/* RO */
	SHCA_REG_MTU			= 0x14c,	/* RW */
	/* NIC function */
	SHCA_REG_NIC_CTRL		= 0x200,	/* RW */
	SHCA_REG_NIC_IRQ		= 0x204,	/* RW */
	SHCA_REG_NIC_TX_BASE_LO		= 0x210,
	SHCA_REG_NIC_TX_BASE_HI		= 0x214,
	SHCA_REG_NIC_TX_LOG_SIZE	= 0x218,
	SHCA_REG_NIC_TX_TAIL		= 0x21c,	/* WO doorbell */
	SHCA_REG_NIC_TX_HEAD		= 0x220,	/* RO */
	SHCA_REG_NIC_RX_BASE_LO		= 0x230,
	SHCA_REG_NIC_RX_BASE_HI		= 0x234,
	SHCA_REG_NIC_RX_LOG_SIZE	= 0x238,
	SHCA_REG_NIC_RX_TAIL		= 0x23c,	/* WO doorbell */
	SHCA_REG_NIC_RX_HEAD		= 0x240,	/* RO */
	/* event queue doorbells (WO), one per EQ */
	SHCA_REG_EQ_DB_BASE		= 0x1000,
};

#define SHCA_REG_EQ_DB(eqn)		(SHCA_REG_EQ_DB_BASE + 4 * (eqn))

/* CAPS: what this device implements. */
#define SHCA_CAP_ROCE_V2		(1u << 0)
#define SHCA_CAP_NIC			(1u << 1)
#define SHCA_CAP_IPV6			(1u << 2)
#define SHCA_CAP_QP			(1u << 3)	/* QPs, CQs, MRs */
#define SHCA_CAP_DGRAM			(1u << 4)	/* UD, GSI, mcast, FR */
#define SHCA_CAP_SQ_RECORD		(1u << 5)	/* spec §14 */
#define SHCA_CAP_LOOPBACK		(1u << 6)	/* spec §7.1 */
#define SHCA_CAP_SRQ			(1u << 7)	/* spec §13.5 */
#define SHCA_CAP_MW			(1u << 8)	/* spec §13.6 */
#define SHCA_CAP_XRC			(1u << 9)	/* spec §13.7 */
#define SHCA_CAP_RESIZE_CQ		(1u << 10)	/* spec §13.1 */
#define SHCA_CAP_REREG_MR		(1u << 11)	/* spec §13.3 */
#define SHCA_CAP_ATOMIC_WRITE		(1u << 12)	/* spec §15, §16 */
#define SHCA_CAP_FLUSH			(1u << 13)	/* spec §15, §16 */
#define SHCA_CAP_ZERO_LENGTH_MR		(1u << 14)	/* spec §13.3 */

/* CTRL */
#define SHCA_CTRL_EN			(1u << 0)

/* STATUS */
#define SHCA_STATUS_RDY			(1u << 0)
#define SHCA_STATUS_FATAL		(1u << 1)

/* RESET: writing this value resets the whole function. */
#define SHCA_RESET_MAGIC		0x54534552	/* "REST" */

/* FATAL_CODE: why STATUS.FATAL is set. */
enum shca_fatal_code {
	SHCA_FATAL_NONE			= 0,
	SHCA_FATAL_AQ_CONFIG		= 1,	/* bad AQ/ACQ base or size */
	SHCA_FATAL_AQ_DOORBELL		= 2,	/* AQ_TAIL/ACQ_HEAD >= size */
	SHCA_FATAL_AQ_DMA		= 3,	/* AQ read, ACQ write failed */
};

/* PORT_STATUS */
#define SHCA_PORT_LINK_UP		(1u << 0)

/* NIC_CTRL */
#define SHCA_NIC_TX_EN			(1u << 0)
#define SHCA_NIC_RX_EN			(1u << 1)

/* NIC_IRQ: bit 0 enables the NIC vector; bit 1 is pending (W1C). */
#define SHCA_NIC_IRQ_EN			(1u << 0)
#define SHCA_NIC_IRQ_PENDING		(1u << 1)

/* EQ doorbell: consumer index and re-arm. */
#define SHCA_EQ_DB_CI_MASK		0x00ffffffu
#define SHCA_EQ_DB_ARM			(1u << 31)

/* MSI-X vectors with a fixed use; EQs name theirs at creation. */
#define SHCA_VEC_ADMIN			0
#define SHCA_VEC_NIC			1
#define SHCA_VEC_FIRST_EQ		2

/* Log2 bounds of ring sizes (entries). */
#define SHCA_RING_LOG_MIN		1
#define SHCA_NIC_RING_LOG_MAX		12

/*
 * Ownership of entries the device writes (ACQ, EQ): the last byte of each
 * entry holds a phase bit.  The device writes every other byte first and the
 * phase byte last; the first pass over a ring writes phase 1, each wrap
 * inverts it.  The driver owns an entry once its phase equals the phase
 * the driver expects for that pass.
 */
#define SHCA_PHASE_BIT			(1u << 0)

/*
 * A buffer in guest memory described to the device: either npages
 * physically contiguous pages at addr (SHCA_BUF_DIRECT), or addr points to
 * a contiguous list of npages little-endian page addresses, at most one
 * 4 KiB page long.  Every page is (1 << page_shift) bytes and aligned to it.
 */
#define SHCA_BUF_DIRECT			(1u << 0)
#define SHCA_BUF_PAGE_SHIFT_MIN		12
#define SHCA_BUF_PAGE_SHIFT_MAX		30
#define SHCA_BUF_LIST_MAX		512

struct shca_buf_desc {
	shca_le64 addr;
	shca_le32 npages;
	uint8_t page_shift;
	uint8_t flags;
	shca_le16 rsvd;
};

/* Admin queue */
enum shca_aq_opcode {
	SHCA_AQ_CREATE_EQ		= 0x01,
	SHCA_AQ_DESTROY_EQ		= 0x02,
	SHCA_AQ_SET_GID			= 0x03,
	SHCA_AQ_ALLOC_PD		= 0x04,
	SHCA_AQ_DEALLOC_PD		= 0x05,
	SHCA_AQ_ALLOC_UCTX		= 0x06,
	SHCA_AQ_DEALLOC_UCTX		= 0x07,
	/* CAPS.QP (spec §13) */
	SHCA_AQ_CREATE_CQ		= 0x08,
	SHCA_AQ_DESTROY_CQ		= 0x09,
	SHCA_AQ_CREATE_QP		= 0x0a,
	SHCA_AQ_MODIFY_QP		= 0x0b,
	SHCA_AQ_QUERY_QP		= 0x0c,
	SHCA_AQ_DESTROY_QP		= 0x0d,
	SHCA_AQ_REG_MR			= 0x0e,
	SHCA_AQ_DEREG_MR		= 0x0f,
	SHCA_AQ_QUERY_STATS		= 0x10,
	/* CAPS.DGRAM (spec §17) */
	SHCA_AQ_ATTACH_MCAST		= 0x11,
	SHCA_AQ_DETACH_MCAST		= 0x12,
	/* CAPS.SRQ (spec §13.5) */
	SHCA_AQ_CREATE_SRQ		= 0x13,
	SHCA_AQ_MODIFY_SRQ		= 0x14,
	SHCA_AQ_QUERY_SRQ		= 0x15,	/* struct shca_aq_handle */
	SHCA_AQ_DESTROY_SRQ		= 0x16,	/* struct shca_aq_handle */
	/* CAPS.MW (spec §13.6) */
	SHCA_AQ_ALLOC_MW		= 0x17,
	SHCA_AQ_DEALLOC_MW		= 0x18,	/* struct shca_aq_handle */
	/* CAPS.XRC (spec §13.7) */
	SHCA_AQ_ALLOC_XRCD		= 0x19,	/* shca_aq_handle: uctx */
	SHCA_AQ_DEALLOC_XRCD		= 0x1a,	/* struct shca_aq_handle */
	/* CAPS.RESIZE_CQ (spec §13.1) */
	SHCA_AQ_RESIZE_CQ		= 0x1b,
	/* CAPS.REREG_MR (spec §13.3) */
	SHCA_AQ_REREG_MR		= 0x1c,
};

enum shca_aq_status {
	SHCA_AQ_OK			= 0x00,
	SHCA_AQ_BAD_OPCODE		= 0x01,
	SHCA_AQ_BAD_PARAM		= 0x02,
	SHCA_AQ_BAD_ADDR		= 0x03,
	SHCA_AQ_NO_RESOURCES		= 0x04,
	SHCA_AQ_BAD_HANDLE		= 0x05,
	SHCA_AQ_BUSY			= 0x06,
};

struct shca_aq_create_eq {
	shca_le32 eqn;
	shca_le16 vector;
	uint8_t log_size;
	uint8_t rsvd;
	struct shca_buf_desc buf;
};

struct shca_aq_handle {
	shca_le32 handle;	/* by opcode: eqn, pdn or (ALLOC_PD) uctx */
};

#define SHCA_GID_VALID			(1u << 0)

struct shca_aq_set_gid {
	shca_le32 index;
	shca_le32 flags;
	uint8_t gid[16];	/* IPv4 as ::ffff:a.b.c.d */
};

/* A buffer described by a two-level list: addr lists list pages. */
#define SHCA_BUF_LIST2			(1u << 1)

struct shca_aq_create_cq {
	shca_le32 uctx;		/* owning user context, 0 for the kernel */
	shca_le32 eqn;		/* EQ for completion events */
	uint8_t log_size;	/* 2^log_size CQEs */
	uint8_t rsvd[7];
	struct shca_buf_desc buf;	/* CQEs, then struct shca_cq_record */
};

struct shca_aq_resize_cq {
	shca_le32 cqn;
	uint8_t log_size;	/* 2^log_size CQEs in the new ring */
	uint8_t rsvd[3];
	struct shca_buf_desc buf;	/* new ring, then its shca_cq_record */
};

enum shca_qp_type {
	SHCA_QPT_RC			= 0x02,
	SHCA_QPT_UC			= 0x03,
	SHCA_QPT_UD			= 0x04,
	SHCA_QPT_GSI			= 0x05,
	SHCA_QPT_XRC_INI		= 0x06,	/* CAPS.XRC: send side */
	SHCA_QPT_XRC_TGT		= 0x07,	/* CAPS.XRC: receive side */
};

struct shca_aq_create_qp {
	shca_le32 uctx;
	shca_le32 pdn;
	shca_le32 send_cqn;
	shca_le32 recv_cqn;
	uint8_t type;		/* enum shca_qp_type */
	uint8_t sq_log_size;
	uint8_t sq_wqe_shift;	/* SQ WQE stride, 2^shift bytes */
	uint8_t rq_log_size;
	uint8_t rq_wqe_shift;
	uint8_t flags;		/* SHCA_QP_F_* */
	shca_le16 srqn;		/* with SHCA_QP_F_SRQ */
	struct shca_buf_desc sq;
	struct shca_buf_desc rq;
};

/* The SQ buffer holds a struct shca_sq_record after the ring (§14). */
#define SHCA_QP_F_SQ_RECORD		(1u << 0)
/* The QP receives through the SRQ srqn and has no RQ (§13.5). */
#define SHCA_QP_F_SRQ			(1u << 1)

struct shca_aq_create_srq {
	shca_le32 uctx;
	shca_le32 pdn;
	shca_le32 srq_limit;
	uint8_t log_size;	/* 2^log_size WQEs */
	uint8_t wqe_shift;	/* WQE stride, 2^shift bytes */
	uint8_t flags;		/* SHCA_SRQ_F_* */
	uint8_t rsvd;
	struct shca_buf_desc buf;	/* the ring, then shca_srq_record */
	shca_le32 xrcdn;	/* SHCA_SRQ_F_XRC */
	shca_le32 cqn;		/* SHCA_SRQ_F_XRC: its receives' CQ */
};

/* An XRC SRQ (spec §13.7): of the domain xrcdn, completing to cqn. */
#define SHCA_SRQ_F_XRC			(1u << 0)

#define SHCA_SRQ_ATTR_LIMIT		(1u << 0)
#define SHCA_SRQ_ATTR_MAX_WR		(1u << 1)

struct shca_aq_modify_srq {
	shca_le32 srqn;
	shca_le32 attr_mask;	/* SHCA_SRQ_ATTR_* */
	shca_le32 srq_limit;	/* LIMIT */
	uint8_t log_size;	/* MAX_WR: the new ring, same stride */
	uint8_t rsvd[3];
	struct shca_buf_desc buf;	/* MAX_WR */
};

/* Written by the device after an SRQ's ring (§13.5). */
struct shca_srq_record {
	shca_le32 ci;		/* WQEs taken, free-running */
	shca_le32 rsvd;
};

/* MODIFY_QP and QUERY_QP move a struct shca_qp_attr through guest memory. */
struct shca_aq_qp_attr {
	shca_le32 qpn;
	shca_le32 attr_mask;	/* SHCA_QP_ATTR_*, MODIFY_QP only */
	shca_le64 attr_addr;	/* 64-byte aligned struct shca_qp_attr */
};

#define SHCA_QP_ATTR_STATE		(1u << 0)
#define SHCA_QP_ATTR_ACCESS		(1u << 1)
#define SHCA_QP_ATTR_PATH_MTU		(1u << 2)
#define SHCA_QP_ATTR_AV			(1u << 3)
#define SHCA_QP_ATTR_TIMEOUT		(1u << 4)
#define SHCA_QP_ATTR_RETRY_CNT		(1u << 5)
#define SHCA_QP_ATTR_RNR_RETRY		(1u << 6)
#define SHCA_QP_ATTR_MIN_RNR_TIMER	(1u << 7)
#define SHCA_QP_ATTR_RQ_PSN		(1u << 8)
#define SHCA_QP_ATTR_SQ_PSN		(1u << 9)
#define SHCA_QP_ATTR_MAX_RD_ATOMIC	(1u << 10)
#define SHCA_QP_ATTR_MAX_DEST_RD_ATOMIC	(1u << 11)
#define SHCA_QP_ATTR_DEST_QPN		(1u << 12)
#define SHCA_QP_ATTR_QKEY		(1u << 13)
#define SHCA_QP_ATTR_SQD_NOTIFY		(1u << 14)	/* RTS -> SQD */

enum shca_qp_state {
	SHCA_QPS_RESET			= 0,
	SHCA_QPS_INIT			= 1,
	SHCA_QPS_RTR			= 2,
	SHCA_QPS_RTS			= 3,
	SHCA_QPS_SQD			= 4,
	SHCA_QPS_SQE			= 5,
	SHCA_QPS_ERR			= 6,
};

/* An address vector: of a connected QP, or of a UD send WQE (spec §17) */
struct shca_av {
	uint8_t dgid[16];	/* IPv4 as ::ffff:a.b.c.d */
	uint8_t dmac[6];
	uint8_t hop_limit;
	uint8_t traffic_class;
	shca_le32 flow_label;
	shca_le16 sgid_index;
	shca_le16 udp_sport;	/* 0: the device chooses */
};

struct shca_qp_attr {
	uint8_t state;		/* enum shca_qp_state */
	uint8_t path_mtu;	/* IBA encoding: 1 = 256 .. 5 = 4096 */
	uint8_t timeout;	/* 4.096 us * 2^timeout; 0 = infinite */
	uint8_t retry_cnt;
	uint8_t rnr_retry;	/* 7 = infinite */
	uint8_t min_rnr_timer;	/* IBA encoding */
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	shca_le32 dest_qpn;
	shca_le32 rq_psn;
	shca_le32 sq_psn;
	shca_le32 qkey;
	shca_le32 access;	/* SHCA_ACCESS_REMOTE_* */
	shca_le32 rsvd0;
	struct shca_av av;	/* SHCA_QP_ATTR_AV */
};

/*
 * The longest an RC responder holds an ACK back for a request of its own
 * QP to precede (spec §16), on the VM clock; never more than half the
 * QP's local ACK timeout.
 */
#define SHCA_ACK_DELAY_NS		100000

#define SHCA_ACCESS_LOCAL_WRITE		(1u << 0)
#define SHCA_ACCESS_REMOTE_WRITE	(1u << 1)
#define SHCA_ACCESS_REMOTE_READ		(1u << 2)
#define SHCA_ACCESS_REMOTE_ATOMIC	(1u << 3)
#define SHCA_ACCESS_MW_BIND		(1u << 4)	/* CAPS.MW: MW binds */
#define SHCA_ACCESS_FLUSH_GLOBAL	(1u << 5)	/* CAPS.FLUSH */
#define SHCA_ACCESS_FLUSH_PERSISTENT	(1u << 6)	/* CAPS.FLUSH, QPs */
#define SHCA_ACCESS_PHYS		(1u << 8)	/* DMA MR: no pages */
#define SHCA_ACCESS_FAST_REG		(1u << 9)	/* registered by WQE */

struct shca_aq_alloc_mw {
	shca_le32 pdn;
	uint8_t type;		/* 1 or 2 */
	uint8_t rsvd[3];
};

struct shca_aq_reg_mr {
	shca_le32 pdn;
	shca_le32 access;	/* SHCA_ACCESS_* */
	shca_le64 iova;
	shca_le64 length;
	shca_le32 first_offset;	/* of iova in the first page */
	shca_le32 rsvd;
	struct shca_buf_desc pages;
};

struct shca_aq_rereg_mr {
	shca_le32 key;		/* the MR; it keeps this key */
	shca_le32 rsvd;
	struct shca_aq_reg_mr mr;	/* its whole new description */
};

/* ATTACH_MCAST, DETACH_MCAST */
struct shca_aq_mcast {
	shca_le32 qpn;
	shca_le32 rsvd;
	uint8_t gid[16];
};

struct shca_aq_query_stats {
	shca_le64 addr;		/* SHCA_STAT_COUNT le64 counters */
};

/* Device counters, in QUERY_STATS order. */
enum shca_stat {
	SHCA_STAT_TX_PACKETS,
	SHCA_STAT_RX_PACKETS,
	SHCA_STAT_RX_DROPPED,		/* bad frame or QP, UD too long */
	SHCA_STAT_RETRANSMITS,
	SHCA_STAT_TIMEOUTS,
	SHCA_STAT_NAKS_SENT,
	SHCA_STAT_NAKS_RECEIVED,
	SHCA_STAT_RNR_NAKS_SENT,
	SHCA_STAT_RNR_NAKS_RECEIVED,
	SHCA_STAT_DUPLICATES,
	SHCA_STAT_SEQ_ERRORS,
	SHCA_STAT_FAULT_DROPPED,	/* fault injection */
	SHCA_STAT_FAULT_DUPLICATED,
	SHCA_STAT_FAULT_REORDERED,
	SHCA_STAT_RX_BAD_QKEY,		/* datagrams: Q_Key or P_Key */
	SHCA_STAT_RX_NO_RECV_WQE,	/* datagrams: no receive WQE */
	SHCA_STAT_RX_BAD_MAD,		/* QP1: not a MAD */
	SHCA_STAT_LOOPBACK_DROPPED,	/* CAPS.LOOPBACK: loopback queue full */
	SHCA_STAT_COUNT
};

#define SHCA_AQ_ENTRY_SIZE		64
#define SHCA_AQ_PAYLOAD_SIZE		56

struct shca_aq_entry {
	uint8_t opcode;
	uint8_t flags;		/* must be 0 */
	shca_le16 cmd_id;
	shca_le32 rsvd;
	union {
		struct shca_aq_create_eq create_eq;
		struct shca_aq_handle handle;
		struct shca_aq_set_gid set_gid;
		struct shca_aq_create_cq create_cq;
		struct shca_aq_resize_cq resize_cq;
		struct shca_aq_create_qp create_qp;
		struct shca_aq_qp_attr qp_attr;
		struct shca_aq_reg_mr reg_mr;
		struct shca_aq_rereg_mr rereg_mr;
		struct shca_aq_query_stats query_stats;
		struct shca_aq_mcast mcast;
		struct shca_aq_create_srq create_srq;
		struct shca_aq_modify_srq modify_srq;
		struct shca_aq_alloc_mw alloc_mw;
		uint8_t raw[SHCA_AQ_PAYLOAD_SIZE];
	};
};

struct shca_acq_entry {
	shca_le64 result64;
	shca_le32 result;	/* handle allocated by the command */
	shca_le16 cmd_id;
	uint8_t status;		/* enum shca_aq_status */
	uint8_t phase;
};

/* Event queues */
enum shca_eqe_type {
	SHCA_EQE_PORT_CHANGE		= 0x01,	/* obj = port number (1) */
	SHCA_EQE_COMPLETION		= 0x02,	/* obj = cqn */
	SHCA_EQE_CQ_ERROR		= 0x03,	/* obj = cqn: overrun */
	SHCA_EQE_QP_FATAL		= 0x04,	/* obj = qpn, data = why */
	SHCA_EQE_QP_REQ_ERR		= 0x05,	/* obj = qpn */
	SHCA_EQE_QP_ACCESS_ERR		= 0x06,	/* obj = qpn */
	SHCA_EQE_COMM_EST		= 0x07,	/* obj = qpn */
	SHCA_EQE_SQ_DRAINED		= 0x08,	/* obj = qpn */
	SHCA_EQE_SRQ_LIMIT		= 0x09,	/* obj = srqn (CAPS.SRQ) */
	SHCA_EQE_QP_LAST_WQE		= 0x0a,	/* obj = qpn (CAPS.SRQ) */
};

struct shca_eqe {
	shca_le64 data;
	shca_le32 obj;
	uint8_t type;		/* enum shca_eqe_type */
	uint8_t rsvd[2];
	uint8_t phase;
};

#define SHCA_EQE_SIZE			16

/* NIC rings: the device writes back flags (last byte) when done. */
#define SHCA_NIC_DESC_DONE		(1u << 0)
#define SHCA_NIC_DESC_ERR		(1u << 1)

struct shca_nic_txd {
	shca_le64 addr;
	shca_le16 len;
	uint8_t rsvd[5];
	uint8_t flags;
};

struct shca_nic_rxd {
	shca_le64 addr;
	shca_le16 buf_len;
	shca_le16 len;		/* written by the device */
	uint8_t rsvd[3];
	uint8_t flags;
};

#define SHCA_NIC_DESC_SIZE		16
#define SHCA_NIC_FRAME_MAX		9018	/* 9000 MTU + 14 + VLAN tag */

/*
 * Doorbell pages (BAR2, spec §14): one 4 KiB page per user context, page 0
 * for the kernel.  Queue numbers in doorbells are 16 bits (MAX_QP and
 * MAX_CQ are below 65536); producer indexes are free-running 16-bit counts.
 */
#define SHCA_DB_SQ			0x000	/* (pi << 16) | qpn */
#define SHCA_DB_RQ			0x004	/* (pi << 16) | qpn */
#define SHCA_DB_CQ			0x008	/* cqn | SHCA_DB_CQ_ARM* */
#define SHCA_DB_SRQ			0x00c	/* (pi << 16) | srqn */
#define SHCA_DB_CQ_ARM			(1u << 31)
#define SHCA_DB_CQ_SOLICITED		(1u << 30)	/* with ARM */
#define SHCA_DB_QN_MASK			0xffffu

/* Work queue entries (spec §15) */
enum shca_wr_opcode {
	SHCA_WR_SEND			= 0x00,
	SHCA_WR_SEND_IMM		= 0x01,
	SHCA_WR_SEND_INV		= 0x02,
	SHCA_WR_RDMA_WRITE		= 0x03,
	SHCA_WR_RDMA_WRITE_IMM		= 0x04,
	SHCA_WR_RDMA_READ		= 0x05,
	SHCA_WR_ATOMIC_CMP_SWP		= 0x06,
	SHCA_WR_ATOMIC_FETCH_ADD	= 0x07,
	/* CAPS.DGRAM (spec §18) */
	SHCA_WR_REG_MR			= 0x08,	/* struct shca_fast_reg_wqe */
	SHCA_WR_LOCAL_INV		= 0x09,	/* imm = key */
	SHCA_WR_BIND_MW			= 0x0a,	/* struct shca_bind_mw_wqe */
	SHCA_WR_FLUSH			= 0x0b,	/* CAPS.FLUSH */
	SHCA_WR_ATOMIC_WRITE		= 0x0c,	/* CAPS.ATOMIC_WRITE */
};

#define SHCA_WQE_SIGNALED		(1u << 0)
#define SHCA_WQE_SOLICITED		(1u << 1)
#define SHCA_WQE_FENCE			(1u << 2)
#define SHCA_WQE_INLINE			(1u << 3)

struct shca_sge {
	shca_le64 addr;
	shca_le32 length;
	shca_le32 lkey;
};

struct shca_send_wqe {
	shca_le64 wr_id;
	uint8_t opcode;		/* enum shca_wr_opcode */
	uint8_t flags;		/* SHCA_WQE_* */
	uint8_t num_sge;
	uint8_t feth;		/* FLUSH: SHCA_FLUSH_* type | level */
	shca_le32 imm;		/* immediate data as on the wire, or rkey */
	shca_le64 remote_addr;
	shca_le32 rkey;
	shca_le32 inline_len;	/* with SHCA_WQE_INLINE */
	shca_le64 compare_add;	/* ATOMIC_WRITE: the data; FLUSH: length */
	shca_le64 swap;
	shca_le32 remote_qpn;	/* UD; XRC_INI: the target XRC SRQ */
	shca_le32 remote_qkey;	/* UD: bit 31 set = the QP's own */
	shca_le64 rsvd1;
	/*
	 * then, UD and GSI only, a struct shca_av; then num_sge struct
	 * shca_sge, or inline_len bytes of data
	 */
};

/* A FLUSH WQE's feth, as the FETH on the wire (spec §15, §16) */
#define SHCA_FLUSH_GLOBAL		(1u << 0)	/* placement types */
#define SHCA_FLUSH_PERSISTENT		(1u << 1)
#define SHCA_FLUSH_TYPE_MASK		0x0fu
#define SHCA_FLUSH_LEVEL_SHIFT		4
#define SHCA_FLUSH_LEVEL_RANGE		(0u << SHCA_FLUSH_LEVEL_SHIFT)
#define SHCA_FLUSH_LEVEL_MR		(1u << SHCA_FLUSH_LEVEL_SHIFT)
#define SHCA_FLUSH_LEVEL_MASK		(3u << SHCA_FLUSH_LEVEL_SHIFT)

/* REG_MR (spec §18): makes a fast-registration MR valid. */
struct shca_fast_reg_wqe {
	shca_le64 wr_id;
	uint8_t opcode;		/* SHCA_WR_REG_MR */
	uint8_t flags;		/* SHCA_WQE_SIGNALED, SHCA_WQE_FENCE */
	uint8_t page_shift;	/* 12..21 */
	uint8_t rsvd0;
	shca_le32 access;	/* SHCA_ACCESS_LOCAL_WRITE, _REMOTE_* */
	shca_le64 iova;
	shca_le64 length;
	shca_le32 key;		/* the MR's index, new tag in bits 7:0 */
	shca_le32 npages;	/* page addresses in the MR's list page */
	uint8_t rsvd1[24];
};

/* BIND_MW (spec §13.6): the window mw_key to a range of the MR mr_key. */
struct shca_bind_mw_wqe {
	shca_le64 wr_id;
	uint8_t opcode;		/* SHCA_WR_BIND_MW */
	uint8_t flags;		/* SHCA_WQE_SIGNALED, SHCA_WQE_FENCE */
	uint8_t rsvd0[2];
	shca_le32 mw_key;	/* the window's key now */
	shca_le32 new_key;	/* its index, new tag in bits 7:0 */
	shca_le32 mr_key;
	shca_le32 access;	/* SHCA_ACCESS_REMOTE_* */
	shca_le32 rsvd1;
	shca_le64 addr;
	shca_le64 length;
	uint8_t rsvd2[16];
};

/* UD: the destination QPN of multicast, the Q_Key of QP1 */
#define SHCA_MCAST_QPN			0xffffffu
#define SHCA_GSI_QKEY			0x80010000u

struct shca_recv_wqe {
	shca_le64 wr_id;
	uint8_t num_sge;
	uint8_t rsvd[7];
	/* then num_sge struct shca_sge */
};

/* Completion queue entries: status and opcode follow IBA's numbering. */
enum shca_cqe_status {
	SHCA_CQE_SUCCESS		= 0,
	SHCA_CQE_LOC_LEN_ERR		= 1,
	SHCA_CQE_LOC_QP_OP_ERR		= 2,
	SHCA_CQE_LOC_PROT_ERR		= 4,
	SHCA_CQE_WR_FLUSH_ERR		= 5,
	SHCA_CQE_BAD_RESP_ERR		= 7,
	SHCA_CQE_LOC_ACCESS_ERR		= 8,
	SHCA_CQE_MW_BIND_ERR		= 6,
	SHCA_CQE_REM_INV_REQ_ERR	= 9,
	SHCA_CQE_REM_ACCESS_ERR		= 10,
	SHCA_CQE_REM_OP_ERR		= 11,
	SHCA_CQE_RETRY_EXC_ERR		= 12,
	SHCA_CQE_RNR_RETRY_EXC_ERR	= 13,
	SHCA_CQE_GENERAL_ERR		= 21,
};

enum shca_cqe_opcode {
	SHCA_CQE_OP_SEND		= 0x00,
	SHCA_CQE_OP_RDMA_WRITE		= 0x01,
	SHCA_CQE_OP_RDMA_READ		= 0x02,
	SHCA_CQE_OP_COMP_SWAP		= 0x03,
	SHCA_CQE_OP_FETCH_ADD		= 0x04,
	SHCA_CQE_OP_BIND_MW		= 0x05,
	SHCA_CQE_OP_LOCAL_INV		= 0x06,
	SHCA_CQE_OP_REG_MR		= 0x08,
	SHCA_CQE_OP_FLUSH		= 0x09,
	SHCA_CQE_OP_ATOMIC_WRITE	= 0x0a,
	SHCA_CQE_OP_RECV		= 0x80,
	SHCA_CQE_OP_RECV_RDMA_IMM	= 0x81,
};

#define SHCA_CQE_WITH_IMM		(1u << 0)
#define SHCA_CQE_WITH_INV		(1u << 1)
#define SHCA_CQE_GRH			(1u << 2)	/* UD: GRH first (40) */
#define SHCA_CQE_IPV4			(1u << 3)	/* ... holding IPv4 */

struct shca_cqe {
	shca_le64 wr_id;
	shca_le32 byte_len;
	shca_le32 imm;		/* immediate data as on the wire, or rkey */
	shca_le32 qpn;
	shca_le32 src_qp;	/* UD */
	shca_le16 wqe_index;	/* of the WQE this completes, in its ring */
	uint8_t status;		/* enum shca_cqe_status */
	uint8_t opcode;		/* enum shca_cqe_opcode */
	uint8_t flags;		/* SHCA_CQE_* */
	uint8_t vendor_err;
	uint8_t rsvd;
	uint8_t phase;
};

#define SHCA_CQE_SIZE			32

/* After the CQE ring: the consumer's count, read by the device (§13.1). */
struct shca_cq_record {
	shca_le32 ci;		/* CQEs consumed, free-running */
	shca_le32 rsvd;
};

/* After the SQ ring of a QP created with SHCA_QP_F_SQ_RECORD (§14). */
struct shca_sq_record {
	shca_le32 pi;		/* software: WQEs posted, free-running */
	shca_le32 device;	/* the device: SHCA_SQ_RECORD_POLLING */
};

/* The device reads pi before it goes idle: no SQ doorbell needed. */
#define SHCA_SQ_RECORD_POLLING		(1u << 0)

/* RoCEv2 */
#define SHCA_ROCE_UDP_PORT		4791

_Static_assert(sizeof(struct shca_buf_desc) == 16, "shca_buf_desc");
_Static_assert(sizeof(struct shca_aq_create_eq) == 24, "shca_aq_create_eq");
_Static_assert(sizeof(struct shca_aq_set_gid) == 24, "shca_aq_set_gid");
_Static_assert(sizeof(struct shca_aq_create_cq) == 32, "shca_aq_create_cq");
_Static_assert(sizeof(struct shca_aq_resize_cq) == 24, "shca_aq_resize_cq");
_Static_assert(sizeof(struct shca_aq_create_qp) == 56, "shca_aq_create_qp");
_Static_assert(sizeof(struct shca_aq_qp_attr) == 16, "shca_aq_qp_attr");
_Static_assert(sizeof(struct shca_qp_attr) == 64, "shca_qp_attr");
_Static_assert(sizeof(struct shca_aq_reg_mr) == 48, "shca_aq_reg_mr");
_Static_assert(sizeof(struct shca_aq_rereg_mr) == 56, "shca_aq_rereg_mr");
_Static_assert(sizeof(struct shca_sge) == 16, "shca_sge");
_Static_assert(sizeof(struct shca_send_wqe) == 64, "shca_send_wqe");
_Static_assert(sizeof(struct shca_fast_reg_wqe) == 64, "shca_fast_reg_wqe");
_Static_assert(sizeof(struct shca_bind_mw_wqe) == 64, "shca_bind_mw_wqe");
_Static_assert(sizeof(struct shca_aq_alloc_mw) == 8, "shca_aq_alloc_mw");
_Static_assert(sizeof(struct shca_av) == 32, "shca_av");
_Static_assert(sizeof(struct shca_aq_mcast) == 24, "shca_aq_mcast");
_Static_assert(sizeof(struct shca_recv_wqe) == 16, "shca_recv_wqe");
_Static_assert(sizeof(struct shca_cqe) == SHCA_CQE_SIZE, "shca_cqe");
_Static_assert(sizeof(struct shca_cq_record) == 8, "shca_cq_record");
_Static_assert(sizeof(struct shca_sq_record) == 8, "shca_sq_record");
_Static_assert(sizeof(struct shca_srq_record) == 8, "shca_srq_record");
_Static_assert(sizeof(struct shca_aq_create_srq) == 40, "shca_aq_create_srq");
_Static_assert(sizeof(struct shca_aq_modify_srq) == 32, "shca_aq_modify_srq");
_Static_assert(sizeof(struct shca_aq_entry) == SHCA_AQ_ENTRY_SIZE,
	       "shca_aq_entry");
_Static_assert(sizeof(struct shca_acq_entry) == 16, "shca_acq_entry");
_Static_assert(sizeof(struct shca_eqe) == SHCA_EQE_SIZE, "shca_eqe");
_Static_assert(sizeof(struct shca_nic_txd) == SHCA_NIC_DESC_SIZE,
	       "shca_nic_txd");
_Static_assert(sizeof(struct shca_nic_rxd) == SHCA_NIC_DESC_SIZE,
	       "shca_nic_rxd");

#endif /* SOFTHCA_HW_H */
