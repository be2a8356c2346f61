/*
 * A minimal harness for host unit tests: CHECK records a failure and goes
 * on; RUN prints one PASS/FAIL line per test function.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef SOFTHCA_UNIT_H
#define SOFTHCA_UNIT_H

#include <stdio.h>
#include <stdlib.h>

static int unit_failures;       /* in the current test */
static int unit_failed_tests;

#define CHECK(cond)                                                     \
    do {                                                                \
        if (!(cond)) {                                                  \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__,      \
                    __LINE__, #cond);                                   \
            unit_failures++;                                            \
        }                                                               \
    } while (0)

#define CHECK_EQ(a, b)                                                  \
    do {                                                                \
        long long a_ = (long long)(a), b_ = (long long)(b);             \
        if (a_ != b_) {                                                 \
            fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", \
                    __FILE__, __LINE__, #a, a_, #b, b_);                \
            unit_failures++;                                            \
        }                                                               \
    } while (0)

#define RUN(fn)                                                         \
    do {                                                                \
        unit_failures = 0;                                              \
        fn();                                                           \
        printf("%s unit/%s\n", unit_failures ? "FAIL" : "PASS", #fn);   \
        unit_failed_tests += unit_failures != 0;                        \
    } while (0)

static inline int unit_summary(void)
{
    return unit_failed_tests ? 1 : 0;
}

#endif
