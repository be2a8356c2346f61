/*
 * softhca: the device's state in QEMU's migration stream (spec §20).
 * softhca-migration.c holds the device's section, its quiesce and its
 * checks across objects; softhca-vmstate-objects.c and
 * softhca-vmstate-qp.c describe the objects.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_SOFTHCA_MIGRATION_H
#define HW_SOFTHCA_MIGRATION_H

#include "migration/vmstate.h"
#include "softhca-compat.h"

/* The device's section, for DeviceClass.vmsd. */
extern const VMStateDescription vmstate_softhca;

/* softhca-vmstate-objects.c */
extern const VMStateDescription vmstate_softhca_ring;
extern const VMStateDescription vmstate_softhca_eq;
extern const VMStateDescription vmstate_softhca_gid;
extern const VMStateDescription vmstate_softhca_mcast_group;
extern const VMStateDescription vmstate_softhca_cq;
extern const VMStateDescription vmstate_softhca_mr;
extern const VMStateDescription vmstate_softhca_srq;
extern const VMStateDescription vmstate_softhca_wq;
/* A loaded work queue's geometry, checked as softhca_wq_init() checks it. */
bool softhca_vmstate_wq_ok(const SofthcaWq *wq, uint8_t shift_min,
                           size_t record);
extern const VMStateInfo softhca_vmstate_info_table;
extern const VMStateInfo softhca_vmstate_info_frames;

/*
 * A sparse object table of _n entries of _type at the pointer _field:
 * only entries with their valid flag set go into the stream, each after
 * its index, as _vmsd describes it.
 */
#define VMSTATE_SOFTHCA_TABLE(_field, _state, _n, _vmsd, _type) {     \
    .name   = stringify(_field),                                        \
    .info   = &softhca_vmstate_info_table,                              \
    .vmsd   = &(_vmsd),                                                 \
    .size   = sizeof(_type),                                            \
    .start  = (_n),                                                     \
    .offset = vmstate_offset_pointer(_state, _field, _type),            \
}

/* A SofthcaFrameList, and the number of frames it holds at _count. */
#define VMSTATE_SOFTHCA_FRAMES(_field, _state, _count) {              \
    .name   = stringify(_field),                                        \
    .info   = &softhca_vmstate_info_frames,                             \
    .start  = offsetof(_state, _count) - offsetof(_state, _field) +     \
              type_check(uint32_t, typeof_field(_state, _count)),       \
    .offset = vmstate_offset_value(_state, _field, SofthcaFrameList),   \
}

/* softhca-vmstate-qp.c */
extern const VMStateDescription vmstate_softhca_qp;

#endif /* HW_SOFTHCA_MIGRATION_H */
