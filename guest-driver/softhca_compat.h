/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The RDMA core API as the newest kernel has it, on the older kernels
 * softhca also builds for (6.1 to 7.3).  The driver is written against
 * the newest API; this header maps it onto older ones.  Each
 * SOFTHCA_HAVE_* is a feature test of the kernel's headers, made by the
 * Makefile, so that a distribution kernel with a backported change is
 * served by what it has rather than by its version number.
 */
#ifndef SOFTHCA_COMPAT_H
#define SOFTHCA_COMPAT_H

#include <linux/slab.h>

#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

/* create_cq gets the whole uverbs attribute bundle, not just its udata. */
#ifdef SOFTHCA_HAVE_CQ_ATTR_BUNDLE
#define softhca_create_cq_arg uverbs_attr_bundle
static inline struct ib_udata *
softhca_create_cq_udata(struct uverbs_attr_bundle *attrs)
{
	return attrs ? &attrs->driver_udata : NULL;
}
#else
#define softhca_create_cq_arg ib_udata
static inline struct ib_udata *softhca_create_cq_udata(struct ib_udata *udata)
{
	return udata;
}
#endif

/* Resizing a CQ is an operation on user CQs only, with an unsigned size. */
#ifndef SOFTHCA_HAVE_RESIZE_USER_CQ
#define resize_user_cq resize_cq
#define softhca_resize_cqe_t int
#else
#define softhca_resize_cqe_t unsigned int
#endif

/* reg_user_mr takes a DMA handle, named dmah; softhca has none to offer. */
#ifdef SOFTHCA_HAVE_IB_DMAH
#define SOFTHCA_DMAH_PARAM	struct ib_dmah *dmah,
#define SOFTHCA_DMAH_GIVEN	(dmah)
#else
#define SOFTHCA_DMAH_PARAM
#define SOFTHCA_DMAH_GIVEN	false
#endif

#ifndef SOFTHCA_HAVE_UMEM_GET_VA
static inline struct ib_umem *ib_umem_get_va(struct ib_device *device,
					     unsigned long addr, size_t size,
					     int access)
{
	return ib_umem_get(device, addr, size, access);
}
#endif

/* The consumer's QP event handler, which query_qp reports. */
#ifdef SOFTHCA_HAVE_QP_REGISTERED_EVENT_HANDLER
#define softhca_qp_event_handler(ibqp) ((ibqp)->registered_event_handler)
#else
#define softhca_qp_event_handler(ibqp) ((ibqp)->event_handler)
#endif

/*
 * Without FLUSH and ATOMIC WRITE in the core (before 6.2), no consumer can
 * ask for them: the rights and capabilities are no bits at all.
 */
#ifndef SOFTHCA_HAVE_IB_FLUSH
#define IB_DEVICE_FLUSH_GLOBAL 0
#define IB_DEVICE_ATOMIC_WRITE 0
#define IB_ACCESS_FLUSH_GLOBAL 0
#define IB_ACCESS_FLUSH_PERSISTENT 0
#endif

/*
 * Typed allocation: in the newest kernels, and backported to 6.12.117;
 * where it is missing, a sizeof.
 */
#ifndef kzalloc_obj
#define kzalloc_obj(P, gfp) ((typeof(P) *)kzalloc(sizeof(P), gfp))
#endif

#endif /* SOFTHCA_COMPAT_H */
