// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The host's ceiling for a frame-per-datagram fabric: how many bytes per
 * second one thread can push through UDP on 127.0.0.1 to another, with
 * datagrams of the given size (default 4160: a 4096-byte RoCE payload
 * with its headers).  Prints MB/s (10^6 bytes) received.
 *
 *   udp-ceiling [SIZE [SECONDS]]
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct sender {
	int fd;
	size_t size;
};

static volatile int stop;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *send_loop(void *arg)
{
	const struct sender *tx = arg;
	static char buf[65536];

	while (!stop)
		send(tx->fd, buf, tx->size, 0);
	return NULL;
}

int main(int argc, char **argv)
{
	size_t size = argc > 1 ? strtoul(argv[1], NULL, 0) : 4160;
	double seconds = argc > 2 ? atof(argv[2]) : 2.0;
	struct sockaddr_in addr = { .sin_family = AF_INET };
	socklen_t len = sizeof(addr);
	int rx = socket(AF_INET, SOCK_DGRAM, 0);
	int rcvbuf = 16 << 20;
	struct timeval timeout = { .tv_usec = 100000 };
	struct sender tx;
	char buf[65536];
	unsigned long long bytes = 0;
	pthread_t thread;
	double start, end;

	if (size == 0 || size > sizeof(buf) - 28 || rx < 0)
		return 1;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(rx, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (bind(rx, (struct sockaddr *)&addr, sizeof(addr)) ||
	    getsockname(rx, (struct sockaddr *)&addr, &len))
		return 1;
	tx.fd = socket(AF_INET, SOCK_DGRAM, 0);
	tx.size = size;
	if (tx.fd < 0 || connect(tx.fd, (struct sockaddr *)&addr, sizeof(addr)))
		return 1;
	/* so that the loop sees the deadline even if the sender stalls */
	setsockopt(rx, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
	pthread_create(&thread, NULL, send_loop, &tx);
	start = now();
	end = start + seconds;
	while (now() < end) {
		ssize_t n = recv(rx, buf, sizeof(buf), 0);

		if (n > 0)
			bytes += n;
	}
	end = now();
	stop = 1;
	pthread_join(thread, NULL);
	printf("%.0f\n", bytes / (end - start) / 1e6);
	return 0;
}
