/*
 * Unit tests of the responder's atomic operations on a guest word
 * (qemu-device/softhca-atomic.h): the values they return and leave, the
 * word's little-endian layout, and atomicity against other threads doing
 * the same, as the guest's vCPUs do under multi-threaded TCG.  Built a
 * second time with SOFTHCA_UNIT_SWAPPED for the big-endian paths.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include <pthread.h>
#include "softhca-atomic.h"
#include "unit.h"

#define THREADS 4
#define ROUNDS  200000

static uint64_t word_get(const uint64_t *word)
{
    return le64_to_cpu(*word);
}

static void word_put(uint64_t *word, uint64_t val)
{
    *word = cpu_to_le64(val);
}

static void test_cmp_swap(void)
{
    uint64_t word;

    word_put(&word, 0x1122334455667788ull);
    CHECK(softhca_atomic_cmp_swap(&word, 0x1122334455667788ull, 7) ==
          0x1122334455667788ull);
    CHECK(word_get(&word) == 7);
    /* no match: the word stays, the value before comes back all the same */
    CHECK_EQ(softhca_atomic_cmp_swap(&word, 8, 9), 7);
    CHECK_EQ(word_get(&word), 7);
}

static void test_fetch_add(void)
{
    uint64_t word;

    word_put(&word, 0x00000000ffffffffull);
    CHECK_EQ(softhca_atomic_fetch_add(&word, 1), 0xffffffffull);
    CHECK(word_get(&word) == 0x100000000ull);   /* the carry crosses bytes */
    word_put(&word, ~0ull);
    CHECK(softhca_atomic_fetch_add(&word, 2) == ~0ull);
    CHECK_EQ(word_get(&word), 1);               /* modulo 2^64 */
}

/* The guest word is little-endian whatever the host. */
static void test_byte_order(void)
{
    static const uint8_t le[8] = { 8, 7, 6, 5, 4, 3, 2, 1 };
    uint64_t word, first;

    memcpy(&word, le, sizeof(word));
    first = word_get(&word);
    CHECK(softhca_atomic_fetch_add(&word, 0x0101010101010101ull) == first);
#ifndef SOFTHCA_UNIT_SWAPPED
    CHECK(softhca_atomic_cmp_swap(&word, 0x0203040506070809ull, 0) ==
          0x0203040506070809ull);
    CHECK_EQ(word, 0);
#endif
}

/* ATOMIC WRITE stores the bytes as they came, in one piece. */
static void test_store(void)
{
    static const uint8_t data[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    uint64_t word = 0;

    softhca_atomic_store(&word, data);
    CHECK(memcmp(&word, data, sizeof(word)) == 0);
}

static uint64_t shared;

static void *fetch_add_thread(void *arg)
{
    for (int i = 0; i < ROUNDS; i++) {
        softhca_atomic_fetch_add(&shared, 1);
    }
    return arg;
}

/* A counter incremented with COMPARE_SWAP, retried until it takes. */
static void *cmp_swap_thread(void *arg)
{
    for (int i = 0; i < ROUNDS; i++) {
        uint64_t seen = 0, before;

        while ((before = softhca_atomic_cmp_swap(&shared, seen,
                                                 seen + 1)) != seen) {
            seen = before;
        }
    }
    return arg;
}

/* THREADS threads run fn on shared, from 0: no increment may be lost. */
static void check_threads(void *(*fn)(void *))
{
    pthread_t t[THREADS];

    word_put(&shared, 0);
    for (int i = 0; i < THREADS; i++) {
        CHECK_EQ(pthread_create(&t[i], NULL, fn, NULL), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
    }
    CHECK_EQ(word_get(&shared), (uint64_t)THREADS * ROUNDS);
}

static void test_threads_fetch_add(void)
{
    check_threads(fetch_add_thread);
}

static void test_threads_cmp_swap(void)
{
    check_threads(cmp_swap_thread);
}

int main(void)
{
    RUN(test_cmp_swap);
    RUN(test_fetch_add);
    RUN(test_byte_order);
    RUN(test_store);
    RUN(test_threads_fetch_add);
    RUN(test_threads_cmp_swap);
    return unit_summary();
}
