/*
 * softhca: the RDMA objects in the migration stream (spec §20) - EQs,
 * CQs, MRs and windows, SRQs, GIDs and multicast groups - and the two
 * shapes the device's section needs that VMState lacks: a sparse table
 * and a queue of frames.
 *
 * What each object's own fields must satisfy is checked here, as its
 * create command checks a guest's: before a page list is allocated, its
 * size; after an object is loaded, that its buffer holds its ring.  What
 * objects say of each other is checked in softhca-migration.c.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qapi/error.h"
#include "migration/qemu-file-types.h"
#include "softhca-rdma.h"
#include "softhca-migration.h"

/* --- a buffer's pages ---------------------------------------------------- */

/* The most pages a buffer takes: a LIST2 MR's (spec §5.2). */
#define SOFTHCA_BUF_PAGES_MAX   (SHCA_BUF_LIST_MAX * SHCA_BUF_LIST_MAX)

/* Checked before the page list is allocated from what the stream says. */
static bool softhca_buf_size_ok(void *opaque, int version_id)
{
    SofthcaBuf *b = opaque;

    if (!b->npages) {
        return true;
    }
    return b->npages <= SOFTHCA_BUF_PAGES_MAX &&
           b->page_shift >= SHCA_BUF_PAGE_SHIFT_MIN &&
           b->page_shift <= SHCA_BUF_PAGE_SHIFT_MAX;
}

static const VMStateDescription vmstate_softhca_buf = {
    .name = "softhca/buf",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT8(page_shift, SofthcaBuf),
        VMSTATE_UINT32(npages, SofthcaBuf),
        VMSTATE_VALIDATE("buffer size", softhca_buf_size_ok),
        VMSTATE_VARRAY_UINT32_ALLOC(pages, SofthcaBuf, npages, 0,
                                    vmstate_info_uint64, uint64_t),
        VMSTATE_END_OF_LIST()
    },
};

/* Whether a loaded buffer of at most max_pages pages holds len bytes. */
static bool softhca_buf_holds(const SofthcaBuf *b, uint32_t max_pages,
                              uint64_t len)
{
    return b->npages && b->npages <= max_pages &&
           ((uint64_t)b->npages << b->page_shift) >= len;
}

/* --- rings, EQs, GIDs, multicast groups ---------------------------------- */

const VMStateDescription vmstate_softhca_ring = {
    .name = "softhca/ring",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT64(base, SofthcaRing),
        VMSTATE_UINT32(log_size, SofthcaRing),
        VMSTATE_UINT32(head, SofthcaRing),
        VMSTATE_UINT32(tail, SofthcaRing),
        VMSTATE_END_OF_LIST()
    },
};

static int softhca_eq_post_load(void *opaque, int version_id)
{
    SofthcaEq *eq = opaque;

    if (!eq->valid) {
        return eq->buf.npages ? -EINVAL : 0;
    }
    if (!softhca_eq_log_size_ok(eq->log_size) ||
        !softhca_buf_holds(&eq->buf, SHCA_BUF_LIST_MAX,
                           (uint64_t)SHCA_EQE_SIZE << eq->log_size) ||
        eq->pi >= (1u << eq->log_size) || eq->ci >= (1u << eq->log_size)) {
        return -EINVAL;
    }
    return 0;
}

const VMStateDescription vmstate_softhca_eq = {
    .name = "softhca/eq",
    .version_id = 1,
    .minimum_version_id = 1,
    .post_load = softhca_eq_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(valid, SofthcaEq),
        VMSTATE_BOOL(armed, SofthcaEq),
        VMSTATE_BOOL(phase, SofthcaEq),
        VMSTATE_UINT16(vector, SofthcaEq),
        VMSTATE_UINT32(log_size, SofthcaEq),
        VMSTATE_UINT32(pi, SofthcaEq),
        VMSTATE_UINT32(ci, SofthcaEq),
        VMSTATE_STRUCT(buf, SofthcaEq, 1, vmstate_softhca_buf, SofthcaBuf),
        VMSTATE_END_OF_LIST()
    },
};

const VMStateDescription vmstate_softhca_gid = {
    .name = "softhca/gid",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(valid, SofthcaGid),
        VMSTATE_BUFFER(raw, SofthcaGid),
        VMSTATE_END_OF_LIST()
    },
};

static int softhca_mcast_group_post_load(void *opaque, int version_id)
{
    SofthcaMcastGroup *g = opaque;

    return g->nqps <= SOFTHCA_MAX_MCAST_QP_ATTACH ? 0 : -EINVAL;
}

const VMStateDescription vmstate_softhca_mcast_group = {
    .name = "softhca/mcast-group",
    .version_id = 1,
    .minimum_version_id = 1,
    .post_load = softhca_mcast_group_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_BUFFER(gid, SofthcaMcastGroup),
        VMSTATE_UINT32(nqps, SofthcaMcastGroup),
        VMSTATE_UINT32_ARRAY(qpns, SofthcaMcastGroup,
                             SOFTHCA_MAX_MCAST_QP_ATTACH),
        VMSTATE_END_OF_LIST()
    },
};

/* --- CQs ----------------------------------------------------------------- */

static int softhca_cq_post_load(void *opaque, int version_id)
{
    SofthcaCq *cq = opaque;

    if (!cq->valid || !softhca_cq_log_size_ok(cq->log_size) ||
        !softhca_buf_holds(&cq->buf, SHCA_BUF_LIST_MAX,
                           ((uint64_t)SHCA_CQE_SIZE << cq->log_size) +
                           sizeof(struct shca_cq_record))) {
        return -EINVAL;
    }
    return 0;
}

const VMStateDescription vmstate_softhca_cq = {
    .name = "softhca/cq",
    .version_id = 1,
    .minimum_version_id = 1,
    .post_load = softhca_cq_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(valid, SofthcaCq),
        VMSTATE_BOOL(armed, SofthcaCq),
        VMSTATE_BOOL(solicited_only, SofthcaCq),
        VMSTATE_BOOL(error, SofthcaCq),
        VMSTATE_UINT32(uctx, SofthcaCq),
        VMSTATE_UINT32(eqn, SofthcaCq),
        VMSTATE_UINT32(log_size, SofthcaCq),
        VMSTATE_UINT32(pi, SofthcaCq),
        VMSTATE_UINT32(ci, SofthcaCq),
        VMSTATE_STRUCT(buf, SofthcaCq, 1, vmstate_softhca_buf, SofthcaBuf),
        VMSTATE_END_OF_LIST()
    },
};

/* --- MRs and memory windows ---------------------------------------------- */

#define SOFTHCA_MR_ACCESS_ALL   (SHCA_ACCESS_LOCAL_WRITE | \
                                 SHCA_ACCESS_REMOTE_WRITE | \
                                 SHCA_ACCESS_REMOTE_READ | \
                                 SHCA_ACCESS_REMOTE_ATOMIC | \
                                 SHCA_ACCESS_MW_BIND | \
                                 SHCA_ACCESS_FLUSH_GLOBAL | \
                                 SHCA_ACCESS_FLUSH_PERSISTENT | \
                                 SHCA_ACCESS_PHYS | SHCA_ACCESS_FAST_REG)

/*
 * A free entry whose tag moved on travels too, so that no key given out
 * before the migration is given out again after it (spec §13.3).
 */
static bool softhca_mr_present(void *opaque)
{
    SofthcaMr *mr = opaque;

    return mr->valid || mr->tag;
}

static int softhca_mr_post_load(void *opaque, int version_id)
{
    SofthcaMr *mr = opaque;

    if (!mr->valid) {
        /* only the tag */
        return mr->pdn || mr->access || mr->iova || mr->length ||
               mr->first_offset || mr->pages.npages || mr->fast_reg ||
               mr->fast_valid || mr->list_addr || mr->max_pages ||
               mr->mw_type || mr->mw_bound || mr->mw_mr || mr->mw_qpn ?
               -EINVAL : 0;
    }
    if ((mr->access & ~SOFTHCA_MR_ACCESS_ALL) || mr->mw_type > 2) {
        return -EINVAL;
    }
    if (mr->mw_type) {
        /* a window has no pages; what it grants is checked across tables */
        return mr->pages.npages || mr->fast_reg ? -EINVAL : 0;
    }
    if (mr->access & SHCA_ACCESS_PHYS) {
        return mr->pages.npages || mr->fast_reg ? -EINVAL : 0;
    }
    if (mr->fast_reg) {
        if (!mr->max_pages || mr->max_pages > SOFTHCA_MAX_FAST_REG_PAGES ||
            mr->pages.npages > mr->max_pages) {
            return -EINVAL;
        }
        if (!mr->fast_valid) {
            return 0;
        }
    }
    if (mr->length > SOFTHCA_MAX_MR_SIZE ||
        !softhca_buf_holds(&mr->pages, SOFTHCA_BUF_PAGES_MAX,
                           (uint64_t)mr->first_offset + mr->length) ||
        mr->first_offset >= (1ull << mr->pages.page_shift)) {
        return -EINVAL;
    }
    return 0;
}

const VMStateDescription vmstate_softhca_mr = {
    .name = "softhca/mr",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = softhca_mr_present,
    .post_load = softhca_mr_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(valid, SofthcaMr),
        VMSTATE_UINT8(tag, SofthcaMr),
        VMSTATE_UINT32(pdn, SofthcaMr),
        VMSTATE_UINT32(access, SofthcaMr),
        VMSTATE_UINT64(iova, SofthcaMr),
        VMSTATE_UINT64(length, SofthcaMr),
        VMSTATE_UINT32(first_offset, SofthcaMr),
        VMSTATE_STRUCT(pages, SofthcaMr, 1, vmstate_softhca_buf, SofthcaBuf),
        VMSTATE_BOOL(fast_reg, SofthcaMr),
        VMSTATE_BOOL(fast_valid, SofthcaMr),
        VMSTATE_UINT64(list_addr, SofthcaMr),
        VMSTATE_UINT32(max_pages, SofthcaMr),
        VMSTATE_UINT8(mw_type, SofthcaMr),
        VMSTATE_BOOL(mw_bound, SofthcaMr),
        VMSTATE_UINT32(mw_mr, SofthcaMr),
        VMSTATE_UINT32(mw_qpn, SofthcaMr),
        VMSTATE_END_OF_LIST()
    },
};

/* --- work queues and SRQs ------------------------------------------------ */

/* Loaded geometry of a work queue: as softhca_wq_init() checks it. */
bool softhca_vmstate_wq_ok(const SofthcaWq *wq, uint8_t shift_min,
                           size_t record)
{
    return softhca_wq_geometry_ok(wq->log_size, wq->wqe_shift, shift_min) &&
           softhca_buf_holds(&wq->buf, SHCA_BUF_LIST_MAX,
                             (1ull << (wq->log_size + wq->wqe_shift)) +
                             record) &&
           (uint16_t)(wq->pi - wq->ci) <= (1u << wq->log_size);
}

const VMStateDescription vmstate_softhca_wq = {
    .name = "softhca/wq",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_STRUCT(buf, SofthcaWq, 1, vmstate_softhca_buf, SofthcaBuf),
        VMSTATE_UINT32(log_size, SofthcaWq),
        VMSTATE_UINT32(wqe_shift, SofthcaWq),
        VMSTATE_UINT16(pi, SofthcaWq),
        VMSTATE_UINT16(ci, SofthcaWq),
        VMSTATE_END_OF_LIST()
    },
};

static int softhca_srq_post_load(void *opaque, int version_id)
{
    SofthcaSrq *srq = opaque;

    if (!srq->valid || srq->srqn == 0 || srq->srqn > SOFTHCA_MAX_SRQ ||
        !softhca_vmstate_wq_ok(&srq->wq, SOFTHCA_RQ_SHIFT_MIN,
                               sizeof(struct shca_srq_record)) ||
        srq->limit >= (1u << srq->wq.log_size)) {
        return -EINVAL;
    }
    return 0;
}

const VMStateDescription vmstate_softhca_srq = {
    .name = "softhca/srq",
    .version_id = 1,
    .minimum_version_id = 1,
    .post_load = softhca_srq_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(valid, SofthcaSrq),
        VMSTATE_UINT32(srqn, SofthcaSrq),
        VMSTATE_UINT32(uctx, SofthcaSrq),
        VMSTATE_UINT32(pdn, SofthcaSrq),
        VMSTATE_UINT32(limit, SofthcaSrq),
        VMSTATE_STRUCT(wq, SofthcaSrq, 1, vmstate_softhca_wq, SofthcaWq),
        VMSTATE_BOOL(xrc, SofthcaSrq),
        VMSTATE_UINT32(xrcdn, SofthcaSrq),
        VMSTATE_UINT32(cqn, SofthcaSrq),
        VMSTATE_END_OF_LIST()
    },
};

/* --- a sparse table ------------------------------------------------------ */

/*
 * An entry goes into the stream if its description's needed() says so,
 * or else if it is valid: every table entry starts with its valid flag.
 */
QEMU_BUILD_BUG_ON(offsetof(SofthcaCq, valid) != 0);
QEMU_BUILD_BUG_ON(offsetof(SofthcaMr, valid) != 0);
QEMU_BUILD_BUG_ON(offsetof(SofthcaSrq, valid) != 0);
QEMU_BUILD_BUG_ON(offsetof(SofthcaQp, valid) != 0);

#define SOFTHCA_TABLE_END       UINT32_MAX

static int softhca_table_put(QEMUFile *f, void *pv, size_t size,
                             const VMStateField *field, JSONWriter *vmdesc)
{
    uint8_t *table = *(uint8_t **)pv;
    int ret;

    for (uint32_t i = 0; i < field->start; i++) {
        uint8_t *entry = table + (size_t)i * field->size;

        if (field->vmsd->needed ? !field->vmsd->needed(entry)
                                : !*(bool *)entry) {
            continue;
        }
        qemu_put_be32(f, i);
        ret = vmstate_save_state(f, field->vmsd, entry, vmdesc, NULL);
        if (ret) {
            return ret;
        }
    }
    qemu_put_be32(f, SOFTHCA_TABLE_END);
    return 0;
}

/* Entries come in rising order, each once, into a table just reset. */
static int softhca_table_get(QEMUFile *f, void *pv, size_t size,
                             const VMStateField *field)
{
    uint8_t *table = *(uint8_t **)pv;
    uint32_t prev = 0;
    bool first = true;

    for (;;) {
        uint32_t i = qemu_get_be32(f);
        Error *err = NULL;
        int ret;

        if (i == SOFTHCA_TABLE_END) {
            return qemu_file_get_error(f);
        }
        if (i >= field->start || (!first && i <= prev)) {
            return -EINVAL;
        }
        ret = vmstate_load_state(f, field->vmsd,
                                 table + (size_t)i * field->size,
                                 field->vmsd->version_id, &err);
        if (ret) {
            /* QEMU's account names the field or hook that failed */
            error_report("softhca: incoming state refused: %s %u%s%s",
                         field->vmsd->name, i, err ? ": " : "",
                         err ? error_get_pretty(err) : "");
            error_free(err);
            return ret;
        }
        prev = i;
        first = false;
    }
}

const VMStateInfo softhca_vmstate_info_table = {
    .name = "softhca-table",
    .get = softhca_table_get,
    .put = softhca_table_put,
};

/* --- a queue of frames --------------------------------------------------- */

/* The most frames any of the device's queues holds (the loopback's). */
#define SOFTHCA_FRAMES_MAX      512

static int softhca_frames_put(QEMUFile *f, void *pv, size_t size,
                              const VMStateField *field, JSONWriter *vmdesc)
{
    SofthcaFrameList *list = pv;
    uint32_t count = *(uint32_t *)((uint8_t *)pv + field->start);
    SofthcaFrame *fr;

    qemu_put_be32(f, count);
    QSIMPLEQ_FOREACH(fr, list, next) {
        qemu_put_be32(f, fr->len);
        qemu_put_buffer(f, fr->data, fr->len);
    }
    return 0;
}

static int softhca_frames_get(QEMUFile *f, void *pv, size_t size,
                              const VMStateField *field)
{
    SofthcaFrameList *list = pv;
    uint32_t *count = (uint32_t *)((uint8_t *)pv + field->start);
    uint32_t n = qemu_get_be32(f);

    if (n > SOFTHCA_FRAMES_MAX || !QSIMPLEQ_EMPTY(list)) {
        return -EINVAL;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t len = qemu_get_be32(f);
        SofthcaFrame *fr;

        if (len > SHCA_NIC_FRAME_MAX) {
            return -EINVAL;
        }
        fr = g_malloc(sizeof(*fr) + len);
        fr->len = len;
        QSIMPLEQ_INSERT_TAIL(list, fr, next);
        ++*count;
        if (qemu_get_buffer(f, fr->data, len) != len) {
            return -EIO;
        }
    }
    return qemu_file_get_error(f);
}

const VMStateInfo softhca_vmstate_info_frames = {
    .name = "softhca-frames",
    .get = softhca_frames_get,
    .put = softhca_frames_put,
};
