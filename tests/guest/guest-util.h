/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Pieces shared by the programs that run in the guests (tests/guest).
 */
#ifndef SOFTHCA_GUEST_UTIL_H
#define SOFTHCA_GUEST_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <infiniband/verbs.h>

#include "guest-tcp.h"

/* Checks that failed, counted by GUEST_CHECK(). */
extern int guest_failures;

/* Print "FAIL cond: message" and count it, if cond is false. */
#define GUEST_CHECK(cond, ...)                                          \
	do {                                                            \
		if (!(cond)) {                                          \
			printf("FAIL %s: ", #cond);                     \
			printf(__VA_ARGS__);                            \
			printf("\n");                                   \
			guest_failures++;                               \
		}                                                       \
	} while (0)

/* Print "PROGRAM: message" on stderr and exit 2: a set-up error. */
void guest_die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

/* Seconds on the monotonic clock. */
double guest_now(void);

/* Open the RDMA device called name; NULL if there is none. */
struct ibv_context *guest_open_device(const char *name);

/* What the two sides of an RC connection tell each other. */
struct guest_rc_peer {
	uint32_t qpn;
	uint32_t psn;
	uint8_t gid[16];
};

/*
 * Take an RC QP in INIT to RTS towards remote, over GID gid_index, with
 * path MTU 1024, rd_atomic READs/atomics each way, the local ACK timeout
 * given (4.096 us << timeout) and 7 retries: 0, or -1 with errno.
 */
int guest_rc_connect(struct ibv_qp *qp, const struct guest_rc_peer *remote,
		     int gid_index, uint32_t sq_psn, uint8_t rd_atomic,
		     uint8_t timeout);

#endif
