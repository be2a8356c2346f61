/*
 * softhca: event queues (spec §9)
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "softhca.h"
#include "trace.h"

static uint32_t softhca_eq_mask(const SofthcaEq *eq)
{
    return (1u << eq->log_size) - 1;
}

bool softhca_eq_log_size_ok(uint32_t log_size)
{
    return log_size >= SHCA_RING_LOG_MIN &&
           (1ull << MIN(log_size, 63)) <= SOFTHCA_MAX_EQE;
}

uint8_t softhca_eq_create(SofthcaState *s, const struct shca_aq_create_eq *c)
{
    uint32_t eqn = le32_to_cpu(c->eqn);
    uint16_t vector = le16_to_cpu(c->vector);
    SofthcaEq *eq;
    uint8_t status;

    if (eqn >= SOFTHCA_MAX_EQ) {
        return SHCA_AQ_BAD_HANDLE;
    }
    eq = &s->eqs[eqn];
    if (eq->valid) {
        return SHCA_AQ_BUSY;
    }
    if (vector < SHCA_VEC_FIRST_EQ || vector >= s->vectors ||
        !softhca_eq_log_size_ok(c->log_size) || c->rsvd) {
        return SHCA_AQ_BAD_PARAM;
    }
    status = softhca_buf_init(s, &eq->buf, &c->buf,
                              (uint64_t)SHCA_EQE_SIZE << c->log_size);
    if (status != SHCA_AQ_OK) {
        return status;
    }
    eq->valid = true;
    eq->armed = false;
    eq->phase = true;
    eq->vector = vector;
    eq->log_size = c->log_size;
    eq->pi = 0;
    eq->ci = 0;
    trace_softhca_eq_create(eqn, vector, eq->log_size);
    return SHCA_AQ_OK;
}

static void softhca_eq_free(SofthcaEq *eq)
{
    softhca_buf_free(&eq->buf);
    *eq = (SofthcaEq) { 0 };
}

uint8_t softhca_eq_destroy(SofthcaState *s, uint32_t eqn)
{
    if (eqn >= SOFTHCA_MAX_EQ || !s->eqs[eqn].valid) {
        return SHCA_AQ_BAD_HANDLE;
    }
    softhca_eq_free(&s->eqs[eqn]);
    trace_softhca_eq_destroy(eqn);
    return SHCA_AQ_OK;
}

void softhca_eq_reset(SofthcaState *s)
{
    for (int i = 0; i < SOFTHCA_MAX_EQ; i++) {
        softhca_eq_free(&s->eqs[i]);
    }
}

static void softhca_eq_fire(SofthcaState *s, SofthcaEq *eq)
{
    eq->armed = false;
    softhca_irq(s, eq->vector);
}

static void softhca_eq_write(SofthcaState *s, uint32_t eqn, uint8_t type,
                             uint32_t obj, uint64_t data)
{
    SofthcaEq *eq = &s->eqs[eqn];
    struct shca_eqe eqe = {
        .data = cpu_to_le64(data),
        .obj = cpu_to_le32(obj),
        .type = type,
        .phase = eq->phase ? SHCA_PHASE_BIT : 0,
    };
    uint32_t next = (eq->pi + 1) & softhca_eq_mask(eq);

    if (next == eq->ci) {
        s->stats.eq_overflows++;
        qemu_log_mask(LOG_GUEST_ERROR, "softhca: EQ %u full, event dropped\n",
                      eqn);
        return;
    }
    if (!softhca_dma_write_owned(s, softhca_buf_addr(&eq->buf,
                                 (uint64_t)eq->pi * SHCA_EQE_SIZE),
                                 &eqe, sizeof(eqe))) {
        qemu_log_mask(LOG_GUEST_ERROR, "softhca: EQ %u not writable\n", eqn);
        return;
    }
    trace_softhca_eq_event(eqn, type, obj);
    eq->pi = next;
    if (next == 0) {
        eq->phase = !eq->phase;
    }
    if (eq->armed) {
        softhca_eq_fire(s, eq);
    }
}

/* An event for one EQ (a CQ's, or EQ 0): dropped if that EQ is gone. */
void softhca_eq_post(SofthcaState *s, uint32_t eqn, uint8_t type,
                     uint32_t obj, uint64_t data)
{
    if (!softhca_ready(s)) {
        return;
    }
    if (eqn >= SOFTHCA_MAX_EQ || !s->eqs[eqn].valid) {
        qemu_log_mask(LOG_GUEST_ERROR, "softhca: event %u for obj %u to "
                      "missing EQ %u dropped\n", type, obj, eqn);
        return;
    }
    softhca_eq_write(s, eqn, type, obj, data);
}

void softhca_eq_post_all(SofthcaState *s, uint8_t type, uint32_t obj,
                         uint64_t data)
{
    if (!softhca_ready(s)) {
        return;
    }
    for (uint32_t i = 0; i < SOFTHCA_MAX_EQ; i++) {
        if (s->eqs[i].valid) {
            softhca_eq_write(s, i, type, obj, data);
        }
    }
}

void softhca_eq_doorbell(SofthcaState *s, uint32_t eqn, uint32_t val)
{
    SofthcaEq *eq = &s->eqs[eqn];
    uint32_t ci = val & SHCA_EQ_DB_CI_MASK;

    trace_softhca_eq_doorbell(eqn, ci, !!(val & SHCA_EQ_DB_ARM));
    if (!softhca_ready(s) || !eq->valid || ci > softhca_eq_mask(eq)) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "softhca: bad doorbell 0x%x for EQ %u\n", val, eqn);
        return;
    }
    eq->ci = ci;
    if (val & SHCA_EQ_DB_ARM) {
        eq->armed = true;
        /* Events the driver has not consumed yet interrupt at once. */
        if (eq->pi != eq->ci) {
            softhca_eq_fire(s, eq);
        }
    }
}
