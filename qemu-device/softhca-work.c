/*
 * softhca: the work budget (spec §19.3).  Each callback a guest or a peer
 * can trigger (a register or doorbell write, a received frame, a bottom
 * half, a timer) may spend SOFTHCA_WORK_BUDGET units of work; what does
 * not fit goes on from a bottom half, so that no callback holds the vCPU
 * or the main loop for long.  A unit is about one page address checked;
 * the costs of the other steps are in softhca.h, calibrated in the spec.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "softhca.h"
#include "trace.h"

void softhca_work_begin(SofthcaState *s)
{
    if (!s->work_depth++) {
        s->work_used = 0;
    }
}

void softhca_work_end(SofthcaState *s)
{
    assert(s->work_depth);
    if (--s->work_depth) {
        return;
    }
    if (s->work_used > s->work_max) {
        s->work_max = s->work_used;
        trace_softhca_work_max(s->work_max);
    }
}

/*
 * The first step of a callback always fits, so that work goes on however
 * costly a step is; every step costs less than the budget.
 */
bool softhca_work_spend(SofthcaState *s, uint32_t units)
{
    if (s->work_used && s->work_used + units > SOFTHCA_WORK_BUDGET) {
        return false;
    }
    s->work_used += units;
    return true;
}
