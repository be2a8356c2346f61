/*
 * softhca: what differs between the QEMU releases the device builds on
 * (10.0 to 10.2), in one place.  The device is written for the newest;
 * an upstream submission would drop this header.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_SOFTHCA_COMPAT_H
#define HW_SOFTHCA_COMPAT_H

#define SOFTHCA_QEMU_AT_LEAST(major, minor) \
    (QEMU_VERSION_MAJOR > (major) || \
     (QEMU_VERSION_MAJOR == (major) && QEMU_VERSION_MINOR >= (minor)))

/* 10.1 made the data of a class_init const. */
#if SOFTHCA_QEMU_AT_LEAST(10, 1)
typedef const void SofthcaClassData;
#else
typedef void SofthcaClassData;
#endif

/* 10.2 lets a region be accessed without the BQL; 10.0 has no such thing. */
#if SOFTHCA_QEMU_AT_LEAST(10, 2)
#define softhca_enable_lockless_io memory_region_enable_lockless_io
#else
static inline void softhca_enable_lockless_io(MemoryRegion *mr)
{
}
#endif

/* 10.2 passes an Error through a nested save or load of VMState. */
#include "migration/vmstate.h"
#if !SOFTHCA_QEMU_AT_LEAST(10, 2)
#define vmstate_save_state(f, vmsd, opaque, vmdesc, errp) \
    vmstate_save_state(f, vmsd, opaque, vmdesc)
#define vmstate_load_state(f, vmsd, opaque, version_id, errp) \
    vmstate_load_state(f, vmsd, opaque, version_id)
#endif

#endif
