/*
 * softhca: extended reliable connections (spec §13.7) -- the target QPs
 * of an XRC domain (softhca-pd.c holds the domains).
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bitmap.h"
#include "softhca-tp.h"
#include "trace.h"

/*
 * A target QP: the kernel's, in the domain pdn names, without rings, CQs
 * or a PD of its own.
 */
uint8_t softhca_xrc_tgt_create(SofthcaState *s,
                               const struct shca_aq_create_qp *c,
                               uint32_t *qpn)
{
    static const struct shca_buf_desc no_buf;
    uint32_t xrcdn = le32_to_cpu(c->pdn);
    SofthcaQp *qp;
    uint8_t status;

    if (le32_to_cpu(c->uctx) || !softhca_xrcd_ok(s, xrcdn)) {
        return SHCA_AQ_BAD_HANDLE;
    }
    if (c->send_cqn || c->recv_cqn || c->flags || c->srqn ||
        c->sq_log_size || c->sq_wqe_shift || c->rq_log_size ||
        c->rq_wqe_shift || memcmp(&c->sq, &no_buf, sizeof(no_buf)) ||
        memcmp(&c->rq, &no_buf, sizeof(no_buf))) {
        return SHCA_AQ_BAD_PARAM;
    }
    status = softhca_qp_alloc(s, c->type, qpn);
    if (status != SHCA_AQ_OK) {
        return status;
    }
    qp = &s->qps[*qpn];
    qp->type = SHCA_QPT_XRC_TGT;
    qp->qpn = *qpn;
    status = softhca_tp_create(s, qp);
    if (status != SHCA_AQ_OK) {
        *qp = (SofthcaQp) { 0 };
        return status;
    }
    qp->valid = true;
    qp->state = SHCA_QPS_RESET;
    qp->xrcdn = xrcdn;
    trace_softhca_qp_create(*qpn, c->type, 0, xrcdn, 0, 0);
    return SHCA_AQ_OK;
}
