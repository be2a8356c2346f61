/*
 * softhca: memory windows (spec §13.6) -- ALLOC_MW and DEALLOC_MW, the
 * BIND_MW work request, access through a window's key, and invalidation.
 * Windows live in the MR table: a key names an MR or a window.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/cutils.h"
#include "qemu/log.h"
#include "softhca-rdma.h"
#include "trace.h"

uint8_t softhca_mw_alloc(SofthcaState *s, const struct shca_aq_alloc_mw *c,
                         uint32_t *key)
{
    uint32_t pdn = le32_to_cpu(c->pdn);
    SofthcaMr *mw;

    if (!softhca_pd_ok(s, pdn)) {
        return SHCA_AQ_BAD_HANDLE;
    }
    if ((c->type != 1 && c->type != 2) ||
        !buffer_is_zero(c->rsvd, sizeof(c->rsvd))) {
        return SHCA_AQ_BAD_PARAM;
    }
    mw = softhca_mr_free_slot(s);
    if (!mw) {
        return SHCA_AQ_NO_RESOURCES;
    }
    mw->valid = true;
    mw->pdn = pdn;
    softhca_pd_hold(s, pdn);
    mw->mw_type = c->type;
    *key = softhca_mr_key(s, mw);
    trace_softhca_mw_alloc(*key, pdn, c->type);
    return SHCA_AQ_OK;
}

static void softhca_mw_unbind(SofthcaState *s, SofthcaMr *mw)
{
    if (mw->mw_bound) {
        s->mrs[mw->mw_mr].mws_bound--;
    }
    mw->mw_bound = false;
    mw->mw_mr = mw->mw_qpn = 0;
    mw->access = 0;
    mw->iova = mw->length = 0;
}

/* By index, as DEREG_MR: software may not know the tag a bind gave it. */
uint8_t softhca_mw_dealloc(SofthcaState *s, uint32_t key)
{
    uint32_t index = key >> SOFTHCA_KEY_TAG_BITS;
    SofthcaMr *mw;

    if (index == 0 || index >= SOFTHCA_MR_TABLE) {
        return SHCA_AQ_BAD_HANDLE;
    }
    mw = &s->mrs[index];
    if (!mw->valid || !mw->mw_type) {
        return SHCA_AQ_BAD_HANDLE;
    }
    softhca_mw_unbind(s, mw);
    softhca_mr_free(s, mw);
    trace_softhca_mw_dealloc(key);
    return SHCA_AQ_OK;
}

/* The checks of spec §13.6 on a BIND_MW; the window and MR if it may. */
static bool softhca_mw_bind_ok(SofthcaState *s, SofthcaQp *qp,
                               const struct shca_bind_mw_wqe *w,
                               SofthcaMr **mwp, SofthcaMr **mrp)
{
    uint32_t mw_key = le32_to_cpu(w->mw_key);
    uint32_t new_key = le32_to_cpu(w->new_key);
    uint32_t access = le32_to_cpu(w->access);
    uint64_t addr = le64_to_cpu(w->addr);
    uint64_t length = le64_to_cpu(w->length);
    SofthcaMr *mw = softhca_mr_lookup(s, mw_key);
    SofthcaMr *mr = softhca_mr_lookup(s, le32_to_cpu(w->mr_key));

    if (!mw || !mw->mw_type || mw->pdn != qp->pdn ||
        new_key >> SOFTHCA_KEY_TAG_BITS != mw_key >> SOFTHCA_KEY_TAG_BITS ||
        (access & ~SOFTHCA_MW_ACCESS) ||
        (mw->mw_type == 2 && (mw->mw_bound || !length))) {
        return false;
    }
    if (!length) {
        /* type 1: a bind of length 0 unbinds */
        *mwp = mw;
        *mrp = NULL;
        return true;
    }
    if (!mr || mr->mw_type || mr->fast_reg || mr->pdn != qp->pdn ||
        !(mr->access & SHCA_ACCESS_MW_BIND) ||
        ((access & (SHCA_ACCESS_REMOTE_WRITE | SHCA_ACCESS_REMOTE_ATOMIC)) &&
         !(mr->access & SHCA_ACCESS_LOCAL_WRITE)) ||
        addr < mr->iova || length > mr->length ||
        addr - mr->iova > mr->length - length) {
        return false;
    }
    *mwp = mw;
    *mrp = mr;
    return true;
}

uint8_t softhca_mw_bind(SofthcaState *s, SofthcaQp *qp, const uint8_t *raw)
{
    struct shca_bind_mw_wqe w;
    SofthcaMr *mw, *mr;

    memcpy(&w, raw, sizeof(w));
    if (!softhca_mw_bind_ok(s, qp, &w, &mw, &mr)) {
        qemu_log_mask(LOG_GUEST_ERROR, "softhca: QP %u: BIND_MW of key 0x%x "
                      "refused\n", qp->qpn, le32_to_cpu(w.mw_key));
        return SHCA_CQE_MW_BIND_ERR;
    }
    softhca_mw_unbind(s, mw);
    mw->tag = le32_to_cpu(w.new_key) & SOFTHCA_KEY_TAG_MASK;
    if (mr) {
        mw->mw_bound = true;
        mw->mw_mr = mr - s->mrs;
        mw->mw_qpn = mw->mw_type == 2 ? qp->qpn : 0;
        mw->access = le32_to_cpu(w.access);
        mw->iova = le64_to_cpu(w.addr);
        mw->length = le64_to_cpu(w.length);
        mr->mws_bound++;
    }
    trace_softhca_mw_bind(softhca_mr_key(s, mw), mw->iova, mw->length,
                          mw->access);
    return SHCA_CQE_SUCCESS;
}

SofthcaMr *softhca_mw_type2(SofthcaState *s, const SofthcaQp *qp, uint32_t key,
                            bool remote)
{
    SofthcaMr *mw = softhca_mr_lookup(s, key);

    if (!mw || mw->mw_type != 2 || !mw->mw_bound || mw->pdn != qp->pdn ||
        (remote && mw->mw_qpn != qp->qpn)) {
        return NULL;
    }
    return mw;
}

void softhca_mw_invalidate(SofthcaState *s, SofthcaMr *mw)
{
    trace_softhca_mw_invalidate(softhca_mr_key(s, mw));
    softhca_mw_unbind(s, mw);
}
