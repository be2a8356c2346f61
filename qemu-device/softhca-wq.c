/*
 * softhca: the QP table and its work queues (spec §13.2, §15) -- lookup
 * and allocation of QP numbers, ring geometry, reading a WQE, address
 * vectors -- which the objects, the engine and the port all use
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "softhca-rdma.h"

SofthcaQp *softhca_qp_get(SofthcaState *s, uint32_t qpn)
{
    if (qpn >= SOFTHCA_QP_TABLE || !s->qps[qpn].valid) {
        return NULL;
    }
    return &s->qps[qpn];
}

bool softhca_wq_read(SofthcaState *s, const SofthcaWq *wq, uint16_t index,
                     void *wqe, size_t len)
{
    uint64_t slot = index & ((1u << wq->log_size) - 1);

    /* A stride never crosses a page: both are powers of 2, stride <= page */
    if (!wq->buf.npages || len > (1u << wq->wqe_shift)) {
        return false;
    }
    return softhca_dma_read(s, softhca_buf_addr(&wq->buf,
                                                slot << wq->wqe_shift),
                            wqe, len);
}

bool softhca_wq_geometry_ok(uint32_t log_size, uint32_t wqe_shift,
                            uint32_t shift_min)
{
    return wqe_shift >= shift_min && wqe_shift <= SOFTHCA_WQE_SHIFT_MAX &&
           log_size <= 31 && (1u << log_size) <= SOFTHCA_MAX_QP_WR;
}

uint8_t softhca_wq_init(SofthcaState *s, SofthcaWq *wq,
                        const struct shca_buf_desc *desc, uint8_t log_size,
                        uint8_t wqe_shift, uint8_t shift_min, size_t record)
{
    if (!softhca_wq_geometry_ok(log_size, wqe_shift, shift_min)) {
        return SHCA_AQ_BAD_PARAM;
    }
    wq->log_size = log_size;
    wq->wqe_shift = wqe_shift;
    return softhca_buf_init(s, &wq->buf, desc,
                            (1ull << (log_size + wqe_shift)) + record);
}

void softhca_av_from_le(struct shca_av *av, const struct shca_av *le)
{
    *av = *le;
    av->flow_label = le32_to_cpu(le->flow_label);
    av->sgid_index = le16_to_cpu(le->sgid_index);
    av->udp_sport = le16_to_cpu(le->udp_sport);
}

bool softhca_av_ok(SofthcaState *s, const struct shca_av *av)
{
    return av->sgid_index < SOFTHCA_MAX_GID &&
           s->gids[av->sgid_index].valid &&
           !(av->flow_label & ~SOFTHCA_FLOW_LABEL_MASK);
}

uint8_t softhca_qp_alloc(SofthcaState *s, uint8_t type, uint32_t *qpn)
{
    uint32_t i;

    if (type == SHCA_QPT_GSI) {
        if (s->qps[SOFTHCA_QPN_GSI].valid) {
            return SHCA_AQ_BUSY;
        }
        *qpn = SOFTHCA_QPN_GSI;
        return SHCA_AQ_OK;
    }
    for (i = SOFTHCA_QPN_FIRST; i < SOFTHCA_QP_TABLE; i++) {
        if (!s->qps[i].valid) {
            *qpn = i;
            return SHCA_AQ_OK;
        }
    }
    return SHCA_AQ_NO_RESOURCES;
}
