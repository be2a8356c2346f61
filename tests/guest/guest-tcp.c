// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The TCP connection the two sides of a guest test program exchange their
 * set-up and their steps over (tests/guest).
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "guest-tcp.h"

int guest_xfer(int fd, void *buf, size_t len, bool out)
{
	uint8_t *b = buf;

	while (len) {
		ssize_t n = out ? send(fd, b, len, MSG_NOSIGNAL) :
				  recv(fd, b, len, 0);

		if (n == 0)
			errno = ECONNRESET;
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			return -1;
		}
		b += n;
		len -= n;
	}
	return 0;
}

/*
 * The two sides exchange small messages, often two in a row before the
 * reply: with Nagle's algorithm the second waits for the peer's delayed
 * ACK, some 40 ms each time, which made rdma-verify's rounds ten times
 * slower.
 */
static int tcp_nodelay(int fd)
{
	int one = 1;

	if (fd >= 0)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

int guest_tcp_accept(int port)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6,
				   .sin6_port = htons(port) };
	int one = 1, lfd, fd;

	lfd = socket(AF_INET6, SOCK_STREAM, 0);
	if (lfd < 0)
		return -1;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 1)) {
		close(lfd);
		return -1;
	}
	fd = accept(lfd, NULL, NULL);
	close(lfd);
	return tcp_nodelay(fd);
}

int guest_tcp_connect(const char *host, int port)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *res, *t;
	char service[16];
	int fd = -1;

	snprintf(service, sizeof(service), "%d", port);
	if (getaddrinfo(host, service, &hints, &res)) {
		errno = EHOSTUNREACH;
		return -1;
	}
	for (int tries = 0; tries < 50 && fd < 0; tries++) {
		for (t = res; t; t = t->ai_next) {
			fd = socket(t->ai_family, t->ai_socktype, 0);
			if (fd < 0)
				continue;
			if (!connect(fd, t->ai_addr, t->ai_addrlen))
				break;
			close(fd);
			fd = -1;
		}
		if (fd < 0)
			usleep(200000);
	}
	freeaddrinfo(res);
	return tcp_nodelay(fd);
}
