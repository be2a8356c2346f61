/*
 * softhca: fast registration and invalidation of memory regions (spec
 * §18) -- the REG_MR and LOCAL_INV work requests and SEND with invalidate
 * that change a fast-registration MR (REG_MR made it, softhca-mr.c).
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/cutils.h"
#include "softhca-rdma.h"
#include "trace.h"

#define SOFTHCA_FAST_PAGE_SHIFT_MAX 21
#define SOFTHCA_FAST_ACCESS     (SHCA_ACCESS_LOCAL_WRITE | \
                                 SHCA_ACCESS_REMOTE_WRITE | \
                                 SHCA_ACCESS_REMOTE_READ | \
                                 SHCA_ACCESS_REMOTE_ATOMIC)

SofthcaMr *softhca_mr_fast_valid(SofthcaState *s, uint32_t pdn, uint32_t key)
{
    SofthcaMr *mr = softhca_mr_lookup(s, key);

    if (!mr || !mr->fast_reg || !mr->fast_valid || mr->pdn != pdn) {
        return NULL;
    }
    return mr;
}

void softhca_mr_invalidate(SofthcaState *s, SofthcaMr *mr)
{
    trace_softhca_mr_invalidate(softhca_mr_key(s, mr));
    mr->fast_valid = false;
    mr->access = 0;
    mr->iova = mr->length = 0;
    mr->first_offset = 0;
    softhca_buf_free(&mr->pages);
}

SofthcaMr *softhca_remote_inv_target(SofthcaState *s, const SofthcaQp *qp,
                                     uint32_t key)
{
    return softhca_mr_fast_valid(s, qp->pdn, key) ?:
           softhca_mw_type2(s, qp, key, true);
}

void softhca_key_invalidate(SofthcaState *s, SofthcaMr *mr)
{
    if (mr->mw_type) {
        softhca_mw_invalidate(s, mr);
    } else {
        softhca_mr_invalidate(s, mr);
    }
}

/* Check a REG_MR WQE's fields and take its page list (spec §18). */
static bool softhca_mr_fast_register(SofthcaState *s, SofthcaQp *qp,
                                     const struct shca_fast_reg_wqe *w)
{
    uint32_t key = le32_to_cpu(w->key);
    uint32_t access = le32_to_cpu(w->access);
    uint64_t iova = le64_to_cpu(w->iova);
    uint64_t length = le64_to_cpu(w->length);
    uint32_t npages = le32_to_cpu(w->npages);
    uint32_t index = key >> SOFTHCA_KEY_TAG_BITS;
    uint64_t page_size, first_offset;
    uint64_t *pages;
    SofthcaMr *mr;

    if (index == 0 || index >= SOFTHCA_MR_TABLE) {
        return false;
    }
    mr = &s->mrs[index];
    if (!mr->valid || !mr->fast_reg || mr->fast_valid ||
        mr->pdn != qp->pdn ||
        (access & ~SOFTHCA_FAST_ACCESS) ||
        ((access & (SHCA_ACCESS_REMOTE_WRITE | SHCA_ACCESS_REMOTE_ATOMIC)) &&
         !(access & SHCA_ACCESS_LOCAL_WRITE)) ||
        w->page_shift < SOFTHCA_FAST_PAGE_SHIFT_MIN ||
        w->page_shift > SOFTHCA_FAST_PAGE_SHIFT_MAX ||
        npages == 0 || npages > mr->max_pages ||
        length > SOFTHCA_MAX_MR_SIZE || iova + length < iova) {
        return false;
    }
    page_size = 1ull << w->page_shift;
    first_offset = iova & (page_size - 1);
    if (first_offset + length > (uint64_t)npages << w->page_shift) {
        return false;
    }
    pages = g_new(uint64_t, npages);
    if (!softhca_dma_read(s, mr->list_addr, pages, npages * sizeof(*pages))) {
        g_free(pages);
        return false;
    }
    for (uint32_t i = 0; i < npages; i++) {
        pages[i] = le64_to_cpu(pages[i]);
        if (!QEMU_IS_ALIGNED(pages[i], page_size) ||
            !softhca_dma_ok(s, pages[i], page_size)) {
            g_free(pages);
            return false;
        }
    }
    mr->pages = (SofthcaBuf) {
        .pages = pages,
        .npages = npages,
        .page_shift = w->page_shift,
    };
    mr->tag = key & SOFTHCA_KEY_TAG_MASK;
    mr->access = access;
    mr->iova = iova;
    mr->length = length;
    mr->first_offset = first_offset;
    mr->fast_valid = true;
    trace_softhca_mr_reg(key, mr->pdn, access, iova, length, npages);
    return true;
}

uint8_t softhca_mr_local_op(SofthcaState *s, SofthcaQp *qp,
                            const uint8_t *raw)
{
    uint32_t key = ldl_le_p(raw + offsetof(struct shca_send_wqe, imm));
    struct shca_fast_reg_wqe w;
    SofthcaMr *mr;

    memcpy(&w, raw, sizeof(w));
    /* on connected QPs; windows of any context (spec §13.6) */
    if (!softhca_has_dgram(s) || softhca_qp_is_ud(qp)) {
        return SHCA_CQE_LOC_QP_OP_ERR;
    }
    if (w.opcode == SHCA_WR_BIND_MW) {
        return softhca_mw_bind(s, qp, raw);
    }
    mr = w.opcode == SHCA_WR_LOCAL_INV ? softhca_mw_type2(s, qp, key, false)
                                       : NULL;
    if (mr) {
        softhca_mw_invalidate(s, mr);
        return SHCA_CQE_SUCCESS;
    }
    /* fast registration: kernel consumers only */
    if (qp->uctx != 0) {
        return SHCA_CQE_LOC_QP_OP_ERR;
    }
    if (w.opcode == SHCA_WR_REG_MR) {
        if (!softhca_mr_fast_register(s, qp, &w)) {
            qemu_log_mask(LOG_GUEST_ERROR, "softhca: QP %u: REG_MR of key "
                          "0x%x refused\n", qp->qpn, le32_to_cpu(w.key));
            return SHCA_CQE_LOC_PROT_ERR;
        }
        return SHCA_CQE_SUCCESS;
    }
    /* LOCAL_INV: imm holds the key, little-endian */
    mr = softhca_mr_fast_valid(s, qp->pdn, key);
    if (!mr) {
        qemu_log_mask(LOG_GUEST_ERROR, "softhca: QP %u: LOCAL_INV of a key "
                      "that is not a valid fast-registration MR\n", qp->qpn);
        return SHCA_CQE_LOC_PROT_ERR;
    }
    softhca_mr_invalidate(s, mr);
    return SHCA_CQE_SUCCESS;
}
