/*
 * softhca: multicast groups of UD QPs (spec §17.3) -- ATTACH_MCAST and
 * DETACH_MCAST, and the group a received multicast datagram goes to.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "softhca-rdma.h"
#include "softhca-wire.h"
#include "trace.h"

static SofthcaMcastGroup *softhca_mcast_find(SofthcaState *s,
                                             const uint8_t *gid)
{
    for (unsigned i = 0; i < SOFTHCA_MAX_MCAST_GRP; i++) {
        SofthcaMcastGroup *g = &s->mcast[i];

        if (g->nqps && !memcmp(g->gid, gid, sizeof(g->gid))) {
            return g;
        }
    }
    return NULL;
}

/* The index of qpn in the group, or -1. */
static int softhca_mcast_index(const SofthcaMcastGroup *g, uint32_t qpn)
{
    for (uint32_t i = 0; i < g->nqps; i++) {
        if (g->qpns[i] == qpn) {
            return i;
        }
    }
    return -1;
}

/* The group and QP of a command; SHCA_AQ_OK if both are good. */
static uint8_t softhca_mcast_check(SofthcaState *s,
                                   const struct shca_aq_mcast *c)
{
    SofthcaQp *qp = softhca_qp_get(s, le32_to_cpu(c->qpn));

    if (!qp) {
        return SHCA_AQ_BAD_HANDLE;
    }
    if (qp->type != SHCA_QPT_UD || c->rsvd || !softhca_gid_is_mcast(c->gid)) {
        return SHCA_AQ_BAD_PARAM;
    }
    return SHCA_AQ_OK;
}

uint8_t softhca_mcast_attach(SofthcaState *s, const struct shca_aq_mcast *c)
{
    uint32_t qpn = le32_to_cpu(c->qpn);
    uint8_t status = softhca_mcast_check(s, c);
    SofthcaMcastGroup *g;

    if (status != SHCA_AQ_OK) {
        return status;
    }
    g = softhca_mcast_find(s, c->gid);
    if (g && softhca_mcast_index(g, qpn) >= 0) {
        return SHCA_AQ_OK;              /* attached already */
    }
    if (!g) {
        for (unsigned i = 0; i < SOFTHCA_MAX_MCAST_GRP && !g; i++) {
            if (!s->mcast[i].nqps) {
                g = &s->mcast[i];
                memcpy(g->gid, c->gid, sizeof(g->gid));
            }
        }
    }
    if (!g || g->nqps == SOFTHCA_MAX_MCAST_QP_ATTACH) {
        return SHCA_AQ_NO_RESOURCES;
    }
    g->qpns[g->nqps++] = qpn;
    trace_softhca_mcast(qpn, true, g - s->mcast, g->nqps);
    return SHCA_AQ_OK;
}

static void softhca_mcast_remove(SofthcaState *s, SofthcaMcastGroup *g,
                                 int i)
{
    uint32_t qpn = g->qpns[i];

    g->qpns[i] = g->qpns[--g->nqps];    /* no QPs left: the group goes */
    trace_softhca_mcast(qpn, false, g - s->mcast, g->nqps);
}

uint8_t softhca_mcast_detach(SofthcaState *s, const struct shca_aq_mcast *c)
{
    uint8_t status = softhca_mcast_check(s, c);
    SofthcaMcastGroup *g;
    int i;

    if (status != SHCA_AQ_OK) {
        return status;
    }
    g = softhca_mcast_find(s, c->gid);
    i = g ? softhca_mcast_index(g, le32_to_cpu(c->qpn)) : -1;
    if (i < 0) {
        return SHCA_AQ_BAD_PARAM;
    }
    softhca_mcast_remove(s, g, i);
    return SHCA_AQ_OK;
}

void softhca_mcast_detach_qp(SofthcaState *s, uint32_t qpn)
{
    for (unsigned i = 0; i < SOFTHCA_MAX_MCAST_GRP; i++) {
        int j = softhca_mcast_index(&s->mcast[i], qpn);

        if (j >= 0) {
            softhca_mcast_remove(s, &s->mcast[i], j);
        }
    }
}

void softhca_mcast_reset(SofthcaState *s)
{
    memset(s->mcast, 0, sizeof(s->mcast));
}

uint32_t softhca_mcast_qps(SofthcaState *s, const uint8_t *gid,
                           uint32_t qpns[SOFTHCA_MAX_MCAST_QP_ATTACH])
{
    SofthcaMcastGroup *g = softhca_mcast_find(s, gid);

    if (!g) {
        return 0;
    }
    memcpy(qpns, g->qpns, g->nqps * sizeof(qpns[0]));
    return g->nqps;
}
