/*
 * softhca: protection domains, user contexts (spec §5.3) and XRC domains
 * (§13.7), which the objects of §13 name
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bitmap.h"
#include "softhca-rdma.h"
#include "trace.h"

/* Lowest free handle >= 1 of a handle bitmap of size bits. */
static uint8_t softhca_handle_alloc(unsigned long *map, uint32_t size,
                                    uint32_t *handle)
{
    unsigned long h = find_next_zero_bit(map, size, 1);

    if (h >= size) {
        return SHCA_AQ_NO_RESOURCES;
    }
    set_bit(h, map);
    *handle = h;
    return SHCA_AQ_OK;
}

static uint8_t softhca_handle_free(unsigned long *map, uint32_t size,
                                   uint32_t handle)
{
    if (handle == 0 || handle >= size || !test_bit(handle, map)) {
        return SHCA_AQ_BAD_HANDLE;
    }
    clear_bit(handle, map);
    return SHCA_AQ_OK;
}

/*
 * A PD or a context still used by QPs, CQs or MRs stays: freed, its number
 * could go to another process while the objects still answer to it.
 * A PD's users are counted, not searched for: a scan of every QP, MR and
 * SRQ per DEALLOC_PD let one admin doorbell cost seconds (issue 11,
 * defect 4).  An XRC target QP only borrows the PD of the SRQ it serves.
 */
void softhca_pd_hold(SofthcaState *s, uint32_t pdn)
{
    s->pd_users[pdn]++;
}

void softhca_pd_release(SofthcaState *s, uint32_t pdn)
{
    assert(s->pd_users[pdn]);
    s->pd_users[pdn]--;
}

static bool softhca_pd_busy(SofthcaState *s, uint32_t pdn)
{
    return s->pd_users[pdn] != 0;
}

bool softhca_pd_ok(SofthcaState *s, uint32_t pdn)
{
    return pdn && pdn <= SOFTHCA_MAX_PD && test_bit(pdn, s->pd_map);
}

/* A PD of the context uctx: only that context's objects may use it. */
uint8_t softhca_pd_alloc(SofthcaState *s, uint32_t uctx,
                                uint32_t *pdn)
{
    uint8_t status;

    if (!softhca_uctx_ok(s, uctx)) {
        return SHCA_AQ_BAD_HANDLE;
    }
    status = softhca_handle_alloc(s->pd_map, SOFTHCA_MAX_PD + 1, pdn);
    if (status == SHCA_AQ_OK) {
        s->pd_uctx[*pdn] = uctx;
    }
    return status;
}

static bool softhca_uctx_busy(SofthcaState *s, uint32_t uctx)
{
    for (uint32_t pdn = 1; pdn <= SOFTHCA_MAX_PD; pdn++) {
        if (test_bit(pdn, s->pd_map) && s->pd_uctx[pdn] == uctx) {
            return true;
        }
    }
    for (uint32_t i = 0; i < SOFTHCA_QP_TABLE; i++) {
        if (s->qps[i].valid && s->qps[i].uctx == uctx) {
            return true;
        }
    }
    for (uint32_t i = 0; i < SOFTHCA_MAX_CQ; i++) {
        if (s->cqs[i].valid && s->cqs[i].uctx == uctx) {
            return true;
        }
    }
    return false;
}

/* Every PD, context and XRC domain forgotten; their objects went first. */
void softhca_pd_reset(SofthcaState *s)
{
    bitmap_zero(s->pd_map, SOFTHCA_MAX_PD + 1);
    bitmap_zero(s->uctx_map, s->db_pages);
    bitmap_zero(s->xrcd_map, SOFTHCA_MAX_XRCD + 1);
}

uint8_t softhca_pd_dealloc(SofthcaState *s, uint32_t pdn)
{
    if (pdn && pdn <= SOFTHCA_MAX_PD && softhca_pd_busy(s, pdn)) {
        return SHCA_AQ_BUSY;
    }
    return softhca_handle_free(s->pd_map, SOFTHCA_MAX_PD + 1, pdn);
}

/* The driver's own context (0) or an allocated user context. */
bool softhca_uctx_ok(SofthcaState *s, uint32_t uctx)
{
    return uctx == 0 || (uctx < s->db_pages && test_bit(uctx, s->uctx_map));
}

/* A user context: its number is its doorbell page (§14). */
uint8_t softhca_uctx_alloc(SofthcaState *s, uint32_t *uctx)
{
    return softhca_handle_alloc(s->uctx_map, s->db_pages, uctx);
}

uint8_t softhca_uctx_dealloc(SofthcaState *s, uint32_t uctx)
{
    if (uctx && softhca_uctx_busy(s, uctx)) {
        return SHCA_AQ_BUSY;
    }
    return softhca_handle_free(s->uctx_map, s->db_pages, uctx);
}

/* XRC domains (spec §13.7) */

bool softhca_xrcd_ok(SofthcaState *s, uint32_t xrcdn)
{
    return xrcdn && xrcdn <= SOFTHCA_MAX_XRCD && test_bit(xrcdn, s->xrcd_map);
}

/* Domains belong to no context: uctx MUST be 0. */
uint8_t softhca_xrcd_alloc(SofthcaState *s, uint32_t uctx, uint32_t *xrcdn)
{
    uint8_t status;

    if (uctx) {
        return SHCA_AQ_BAD_PARAM;
    }
    status = softhca_handle_alloc(s->xrcd_map, SOFTHCA_MAX_XRCD + 1, xrcdn);
    if (status == SHCA_AQ_OK) {
        trace_softhca_xrcd(*xrcdn, true);
    }
    return status;
}

uint8_t softhca_xrcd_dealloc(SofthcaState *s, uint32_t xrcdn)
{
    if (!softhca_xrcd_ok(s, xrcdn)) {
        return SHCA_AQ_BAD_HANDLE;
    }
    for (uint32_t i = 1; i <= SOFTHCA_MAX_SRQ; i++) {
        if (s->srqs[i].valid && s->srqs[i].xrc && s->srqs[i].xrcdn == xrcdn) {
            return SHCA_AQ_BUSY;
        }
    }
    for (uint32_t i = 0; i < SOFTHCA_QP_TABLE; i++) {
        if (s->qps[i].valid && s->qps[i].type == SHCA_QPT_XRC_TGT &&
            s->qps[i].xrcdn == xrcdn) {
            return SHCA_AQ_BUSY;
        }
    }
    clear_bit(xrcdn, s->xrcd_map);
    trace_softhca_xrcd(xrcdn, false);
    return SHCA_AQ_OK;
}
