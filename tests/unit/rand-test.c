/*
 * Unit tests of the fault-injection generator (qemu-device/softhca-rand.h):
 * reproducible per seed, independent streams, draws at the asked rate.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "softhca-rand.h"
#include "unit.h"

static void test_reproducible(void)
{
    uint64_t a = softhca_rand_seed(42, 0), b = softhca_rand_seed(42, 0);
    uint64_t c = softhca_rand_seed(43, 0), d = softhca_rand_seed(42, 1);
    int same_c = 0, same_d = 0;

    for (int i = 0; i < 1000; i++) {
        uint64_t x = softhca_rand_next(&a);

        CHECK_EQ(x, softhca_rand_next(&b));
        same_c += x == softhca_rand_next(&c);
        same_d += x == softhca_rand_next(&d);
    }
    CHECK_EQ(same_c, 0);
    CHECK_EQ(same_d, 0);
}

static void test_seed_zero(void)
{
    uint64_t s = softhca_rand_seed(0, 0);

    CHECK(s != 0);                      /* xorshift would stay at 0 */
    CHECK(softhca_rand_next(&s) != 0);
}

static void test_per_mille(void)
{
    static const uint32_t rates[] = { 0, 1, 20, 500, 999, 1000 };
    const int draws = 200000;

    for (size_t r = 0; r < sizeof(rates) / sizeof(rates[0]); r++) {
        uint64_t s = softhca_rand_seed(7, r);
        int hits = 0;
        double expect = (double)draws * rates[r] / 1000;

        for (int i = 0; i < draws; i++) {
            hits += softhca_rand_per_mille(&s, rates[r]);
        }
        if (rates[r] == 0 || rates[r] == 1000) {
            CHECK_EQ(hits, expect);
        } else {
            /* within 5 standard deviations of the binomial mean */
            double p = rates[r] / 1000.0;
            double var = draws * p * (1 - p), dev = hits - expect;

            CHECK(dev * dev < 25 * var);
        }
    }
}

int main(void)
{
    RUN(test_reproducible);
    RUN(test_seed_zero);
    RUN(test_per_mille);
    return unit_summary();
}
