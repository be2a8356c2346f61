/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The TCP connection of the programs that run in the guests (tests/guest),
 * without verbs: the host's unit tests build it too.
 */
#ifndef SOFTHCA_GUEST_TCP_H
#define SOFTHCA_GUEST_TCP_H

#include <stdbool.h>
#include <stddef.h>

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

#endif
