/*
 * Stand-in for QEMU's qemu/atomic.h: the operations the device's
 * softhca-atomic.h and softhca-dbq.h use, as QEMU defines them.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef SOFTHCA_UNIT_ATOMIC_H
#define SOFTHCA_UNIT_ATOMIC_H

#define qatomic_read__nocheck(ptr) __atomic_load_n(ptr, __ATOMIC_RELAXED)
#define qatomic_set__nocheck(ptr, i) __atomic_store_n(ptr, i, __ATOMIC_RELAXED)
#define qatomic_cmpxchg__nocheck(ptr, old, new)    ({                   \
    __typeof__(*(ptr)) _old = (old);                                    \
    (void)__atomic_compare_exchange_n(ptr, &_old, new, false,           \
                                      __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
    _old;                                                               \
})
#define qatomic_fetch_add(ptr, n) __atomic_fetch_add(ptr, n, __ATOMIC_SEQ_CST)
#define smp_wmb() __atomic_thread_fence(__ATOMIC_RELEASE)
#define qatomic_read(ptr) __atomic_load_n(ptr, __ATOMIC_RELAXED)
#define qatomic_cmpxchg(ptr, old, new) qatomic_cmpxchg__nocheck(ptr, old, new)
#define qatomic_load_acquire(ptr) __atomic_load_n(ptr, __ATOMIC_ACQUIRE)
#define qatomic_store_release(ptr, i) __atomic_store_n(ptr, i, __ATOMIC_RELEASE)

#endif
