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

#endif /* SOFTHCA_ABI_USER_H */
