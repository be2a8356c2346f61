/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * softhca driver <-> provider ABI (the udata of uverbs commands).
 * Described in spec/softhca.md, section "Driver-provider ABI".  Structs are
 * 8-byte aligned with explicit padding; fields are never reordered once
 * released: new fields go at the end, announced by comp_mask bits.
 */
#ifndef SOFTHCA_ABI_USER_H
#define SOFTHCA_ABI_USER_H

#include <linux/types.h>

#define SOFTHCA_UVERBS_ABI_VERSION 1

struct softhca_ibv_alloc_ucontext_resp {
	__u32 comp_mask;
	__u32 uctx;		/* device context number = doorbell page index */
	__aligned_u64 db_mmap_key;	/* mmap offset of the doorbell page */
	__u32 db_page_size;
	__u32 max_inline;
};

struct softhca_ibv_alloc_pd_resp {
	__u32 comp_mask;
	__u32 pdn;
};

/*
 * CQ and QP rings live in the process's memory: the provider allocates
 * them (page aligned, sizes in entries a power of 2) and the driver pins
 * them and describes their pages to the device.
 */
struct softhca_ibv_create_cq {
	__u32 comp_mask;
	__u32 log_size;		/* 2^log_size CQEs */
	__aligned_u64 buf_addr;	/* CQE ring, then struct shca_cq_record */
	__aligned_u64 buf_size;
};

struct softhca_ibv_create_cq_resp {
	__u32 comp_mask;
	__u32 cqn;
};

/*
 * resize_cq takes a struct softhca_ibv_create_cq for the new ring.  The
 * CQEs not yet polled move to its first slots (spec §13.1, RESIZE_CQ).
 */
struct softhca_ibv_resize_cq_resp {
	__u32 comp_mask;
	__u32 copied;		/* CQEs moved to the new ring */
};

/* create_qp: the SQ buffer ends with a struct shca_sq_record (spec §14) */
#define SOFTHCA_CREATE_QP_SQ_RECORD	(1u << 0)

struct softhca_ibv_create_qp {
	__u32 comp_mask;	/* SOFTHCA_CREATE_QP_* */
	__u8 sq_log_size;
	__u8 sq_wqe_shift;
	__u8 rq_log_size;
	__u8 rq_wqe_shift;
	__aligned_u64 sq_buf_addr;
	__aligned_u64 sq_buf_size;
	__aligned_u64 rq_buf_addr;
	__aligned_u64 rq_buf_size;
};

/* create_qp_resp: the device keeps the SQ record; doorbells may be skipped */
#define SOFTHCA_CREATE_QP_RESP_SQ_RECORD	(1u << 0)

struct softhca_ibv_create_qp_resp {
	__u32 comp_mask;	/* SOFTHCA_CREATE_QP_RESP_* */
	__u32 qpn;
};

/*
 * create_srq (CAPS.SRQ): the ring of 2^log_size receive WQEs of
 * 2^wqe_shift bytes, then the struct shca_srq_record the device writes.
 */
struct softhca_ibv_create_srq {
	__u32 comp_mask;
	__u8 log_size;
	__u8 wqe_shift;
	__u8 reserved[2];
	__aligned_u64 buf_addr;
	__aligned_u64 buf_size;
};

struct softhca_ibv_create_srq_resp {
	__u32 comp_mask;
	__u32 srqn;
};

/* modify_srq with IB_SRQ_MAX_WR: the new ring, same stride (else all 0) */
struct softhca_ibv_modify_srq {
	__u32 comp_mask;
	__u8 log_size;
	__u8 reserved[3];
	__aligned_u64 buf_addr;
	__aligned_u64 buf_size;
};

/* create_ah (CAPS.DGRAM): the destination MAC the kernel resolved */
struct softhca_ibv_create_ah_resp {
	__u32 comp_mask;
	__u8 dmac[6];
	__u8 reserved[2];
};

#endif /* SOFTHCA_ABI_USER_H */
