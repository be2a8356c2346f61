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
#define SHCA_BAR_REGS			0	/* registers, 32-bit access only */
#define SHCA_BAR_DB			2	/* doorbell pages, 64-bit BAR */
#define SHCA_BAR_MSIX			4	/* MSI-X table and PBA */
#define SHCA_REGS_SIZE			0x2000
#define SHCA_DB_PAGE_SHIFT		12
#define SHCA_DB_PAGE_SIZE		(1u << SHCA_DB_PAGE_SHIFT)

#define SHCA_MAGIC			0x41434853	/* "SHCA" */
#define SHCA_VERSION_MAJOR		0
#define SHCA_VERSION_MINOR		1
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
#define SHCA_CAP_QP			(1u << 3)	/* QP, CQ, MR commands */

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
	SHCA_FATAL_AQ_DMA		= 3,	/* AQ read or ACQ write failed */
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
	shca_le32 handle;	/* eqn, pdn or uctx, by opcode */
};

#define SHCA_GID_VALID			(1u << 0)

struct shca_aq_set_gid {
	shca_le32 index;
	shca_le32 flags;
	uint8_t gid[16];	/* IPv4 as ::ffff:a.b.c.d */
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

/* RoCEv2 */
#define SHCA_ROCE_UDP_PORT		4791

_Static_assert(sizeof(struct shca_buf_desc) == 16, "shca_buf_desc");
_Static_assert(sizeof(struct shca_aq_create_eq) == 24, "shca_aq_create_eq");
_Static_assert(sizeof(struct shca_aq_set_gid) == 24, "shca_aq_set_gid");
_Static_assert(sizeof(struct shca_aq_entry) == SHCA_AQ_ENTRY_SIZE,
	       "shca_aq_entry");
_Static_assert(sizeof(struct shca_acq_entry) == 16, "shca_acq_entry");
_Static_assert(sizeof(struct shca_eqe) == SHCA_EQE_SIZE, "shca_eqe");
_Static_assert(sizeof(struct shca_nic_txd) == SHCA_NIC_DESC_SIZE,
	       "shca_nic_txd");
_Static_assert(sizeof(struct shca_nic_rxd) == SHCA_NIC_DESC_SIZE,
	       "shca_nic_rxd");

#endif /* SOFTHCA_HW_H */
