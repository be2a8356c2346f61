/*
 * Unit tests of the doorbell queue (qemu-device/softhca-dbq.h): capacity,
 * order and wrap-around from one thread, then vCPU-like producer threads
 * ringing against a consumer thread: every write arrives once, each
 * producer's in its order.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include <pthread.h>
#include "softhca-dbq.h"
#include "unit.h"

static void test_fill_and_drain(void)
{
    SofthcaDbq q;
    uint64_t w;

    softhca_dbq_init(&q);
    CHECK(!softhca_dbq_pop(&q, &w));
    for (uint64_t i = 0; i < SOFTHCA_DBQ_SIZE; i++) {
        CHECK(softhca_dbq_push(&q, i));
    }
    CHECK(!softhca_dbq_push(&q, 99));   /* full: refused, not lost */
    for (uint64_t i = 0; i < SOFTHCA_DBQ_SIZE; i++) {
        CHECK(softhca_dbq_pop(&q, &w));
        CHECK_EQ(w, i);
    }
    CHECK(!softhca_dbq_pop(&q, &w));
}

/* Positions run past 2^32: the free-running counters wrap. */
static void test_wraps(void)
{
    SofthcaDbq q;
    uint64_t w;
    int bad = 0;

    softhca_dbq_init(&q);
    q.head = q.tail = UINT32_MAX - 100;
    for (uint32_t i = 0; i < SOFTHCA_DBQ_SIZE; i++) {
        q.cells[(q.head + i) & (SOFTHCA_DBQ_SIZE - 1)].seq = q.head + i;
    }
    for (uint64_t i = 0; i < 1000; i++) {
        bad += !softhca_dbq_push(&q, i) || !softhca_dbq_pop(&q, &w) || w != i;
    }
    CHECK_EQ(bad, 0);
    CHECK(!softhca_dbq_pop(&q, &w));
}

#define PRODUCERS       4
#define WRITES          200000

static SofthcaDbq shared;
static int refused;

static void *producer(void *arg)
{
    uint64_t id = (uintptr_t)arg;

    for (uint64_t i = 0; i < WRITES; i++) {
        /* a full queue is where the device takes the BQL: here, retry */
        while (!softhca_dbq_push(&shared, id << 32 | i)) {
            __atomic_fetch_add(&refused, 1, __ATOMIC_RELAXED);
            sched_yield();
        }
    }
    return NULL;
}

static void test_concurrent(void)
{
    pthread_t t[PRODUCERS];
    uint64_t next[PRODUCERS] = { 0 }, w, got = 0;
    int bad = 0;

    softhca_dbq_init(&shared);
    for (uintptr_t i = 0; i < PRODUCERS; i++) {
        pthread_create(&t[i], NULL, producer, (void *)i);
    }
    while (got < (uint64_t)PRODUCERS * WRITES) {
        if (!softhca_dbq_pop(&shared, &w)) {
            sched_yield();
            continue;
        }
        bad += w >> 32 >= PRODUCERS || (uint32_t)w != next[w >> 32]++;
        got++;
    }
    for (int i = 0; i < PRODUCERS; i++) {
        pthread_join(t[i], NULL);
    }
    CHECK_EQ(bad, 0);
    CHECK(!softhca_dbq_pop(&shared, &w));
    printf("# dbq: %d producers, %llu writes, %d refused as full\n",
           PRODUCERS, (unsigned long long)got, refused);
}

int main(void)
{
    RUN(test_fill_and_drain);
    RUN(test_wraps);
    RUN(test_concurrent);
    return unit_summary();
}
