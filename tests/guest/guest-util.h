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

/*
 * Send (out) or receive exactly len bytes on a stream socket: 0, or -1
 * with errno set (ECONNRESET when the peer closed it).
 */
int guest_xfer(int fd, void *buf, size_t len, bool out);

/*
 * The TCP connection the two sides of a test exchange their set-up over:
 * accept one on port (IPv6 and IPv4), or connect to host:port, retrying
 * for 10 s while the other side starts.  The socket, or -1 with errno.
 */
int guest_tcp_accept(int port);
int guest_tcp_connect(const char *host, int port);

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
