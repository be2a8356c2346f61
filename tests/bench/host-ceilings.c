// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The host's own ceilings, which `make bench` prints beside the device's
 * figures.  Each mode prints one number; the UDP ones run between two
 * threads on 127.0.0.1, with SIZE-byte datagrams.
 *
 *   host-ceilings bw [SIZE [SECONDS]]        MB/s (10^6 bytes) received
 *   host-ceilings pps [SIZE [SECONDS]]       Mpps, a send() and a recv() each
 *   host-ceilings pps-mmsg [SIZE [SECONDS]]  Mpps, sendmmsg()/recvmmsg() of 64
 *   host-ceilings half-rtt [SIZE [ROUNDS]]   half a ping-pong's round trip, us
 *   host-ceilings memcpy [SIZE [SECONDS]]    MB/s copied in SIZE-byte blocks
 *                                            over a 64-MiB working set
 *
 * The defaults are in modes[]; bw's 4160 bytes are a 4096-byte RoCE
 * payload with its headers.
 */
#define _GNU_SOURCE	/* sendmmsg(), recvmmsg() */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define BATCH		64
#define DGRAM_BUF	65536
#define MAX_DGRAM	(DGRAM_BUF - 28)	/* less IPv4 and UDP headers */
#define WARMUP_ROUNDS	1000
#define WORKING_SET	(64 << 20)

struct sender {
	int fd;
	size_t size;
	unsigned int batch;	/* 1: send(); more: sendmmsg() */
};

struct rates {
	double bytes;		/* per second */
	double datagrams;	/* per second */
};

static atomic_int stop;
static char tx_buf[DGRAM_BUF];
static char rx_buf[BATCH][DGRAM_BUF];

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void start_thread(pthread_t *thread, void *(*fn)(void *), void *arg)
{
	errno = pthread_create(thread, NULL, fn, arg);
	if (errno)
		die("pthread_create");
}

/* A UDP socket bound to an ephemeral port on 127.0.0.1, its address in @addr */
static int open_rx(struct sockaddr_in *addr)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	int rcvbuf = 16 << 20;
	/* so that a receive loop sees its deadline even if the sender stalls */
	struct timeval timeo = { .tv_usec = 100000 };
	socklen_t len = sizeof(*addr);

	*addr = (struct sockaddr_in){ .sin_family = AF_INET };
	addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeo, sizeof(timeo)) ||
	    bind(fd, (struct sockaddr *)addr, sizeof(*addr)) ||
	    getsockname(fd, (struct sockaddr *)addr, &len))
		die("receiving socket");
	return fd;
}

static void connect_to(int fd, const struct sockaddr_in *addr)
{
	if (fd < 0 || connect(fd, (const struct sockaddr *)addr, sizeof(*addr)))
		die("sending socket");
}

/* Points datagram i of a batch at @bufs + i * @stride, @len bytes long. */
static void init_batch(struct mmsghdr *hdrs, struct iovec *iov, char *bufs,
		       size_t stride, size_t len)
{
	unsigned int i;

	for (i = 0; i < BATCH; i++) {
		iov[i] = (struct iovec){ bufs + i * stride, len };
		hdrs[i] = (struct mmsghdr){
			.msg_hdr = { .msg_iov = &iov[i], .msg_iovlen = 1 },
		};
	}
}

static void *send_loop(void *arg)
{
	const struct sender *tx = arg;
	struct mmsghdr hdrs[BATCH];
	struct iovec iov[BATCH];

	init_batch(hdrs, iov, tx_buf, 0, tx->size);
	while (!stop) {
		if (tx->batch == 1)
			send(tx->fd, tx_buf, tx->size, 0);
		else
			sendmmsg(tx->fd, hdrs, tx->batch, 0);
	}
	return NULL;
}

/* One receive call: how many datagrams it got, their lengths in @hdrs */
static int receive(int fd, struct mmsghdr *hdrs, unsigned int batch)
{
	ssize_t n;

	if (batch > 1)
		/* waits (up to the timeout) for the first datagram only */
		return recvmmsg(fd, hdrs, batch, MSG_WAITFORONE, NULL);
	n = recv(fd, rx_buf[0], DGRAM_BUF, 0);
	hdrs[0].msg_len = n;
	return n > 0;
}

/* One thread sends @size-byte datagrams to another for @seconds. */
static struct rates flood(size_t size, double seconds, unsigned int batch)
{
	struct sockaddr_in addr;
	int rx = open_rx(&addr);
	struct sender tx = { socket(AF_INET, SOCK_DGRAM, 0), size, batch };
	struct mmsghdr hdrs[BATCH];
	struct iovec iov[BATCH];
	unsigned long long bytes = 0, datagrams = 0;
	pthread_t thread;
	double start, end, elapsed;
	int i, n;

	connect_to(tx.fd, &addr);
	init_batch(hdrs, iov, rx_buf[0], DGRAM_BUF, DGRAM_BUF);
	start_thread(&thread, send_loop, &tx);
	start = now();
	end = start + seconds;
	while (now() < end) {
		n = receive(rx, hdrs, batch);
		for (i = 0; i < n; i++, datagrams++)
			bytes += hdrs[i].msg_len;
	}
	elapsed = now() - start;
	stop = 1;
	pthread_join(thread, NULL);
	return (struct rates){ bytes / elapsed, datagrams / elapsed };
}

static double run_bw(size_t size, double seconds)
{
	return flood(size, seconds, 1).bytes / 1e6;
}

static double run_pps(size_t size, double seconds)
{
	return flood(size, seconds, 1).datagrams / 1e6;
}

static double run_pps_mmsg(size_t size, double seconds)
{
	return flood(size, seconds, BATCH).datagrams / 1e6;
}

/* Returns each datagram to its sender until none comes within the timeout. */
static void *echo_loop(void *arg)
{
	const int *fd = arg;
	char buf[DGRAM_BUF];
	ssize_t n;

	do
		n = recv(*fd, buf, sizeof(buf), 0);
	while (n >= 0 && send(*fd, buf, n, 0) >= 0);
	return NULL;
}

/* Sends @rounds pings on @fd, each after the previous one's pong. */
static void ping(int fd, size_t size, unsigned long rounds)
{
	unsigned long i;

	for (i = 0; i < rounds; i++) {
		if (send(fd, tx_buf, size, 0) < 0 ||
		    recv(fd, rx_buf[0], DGRAM_BUF, 0) < 0)
			die("ping");
	}
}

static double run_half_rtt(size_t size, double arg)
{
	unsigned long rounds = arg > 1 ? arg : 1;
	struct sockaddr_in a_addr, b_addr;
	int a = open_rx(&a_addr), b = open_rx(&b_addr);
	pthread_t thread;
	double start, end;

	connect_to(a, &b_addr);
	connect_to(b, &a_addr);
	start_thread(&thread, echo_loop, &b);
	ping(a, size, WARMUP_ROUNDS);
	start = now();
	ping(a, size, rounds);
	end = now();
	pthread_join(thread, NULL);
	return (end - start) / rounds / 2 * 1e6;
}

static double run_memcpy(size_t size, double seconds)
{
	size_t half = WORKING_SET / 2, blocks = half / size, i;
	char *src = malloc(half), *dst = malloc(half);
	double bytes = 0, start, end;

	if (!src || !dst)
		die("malloc");
	/* fault the pages in, and off the shared zero page, before timing */
	memset(src, 1, half);
	memset(dst, 2, half);
	start = now();
	do {
		for (i = 0; i < blocks; i++)
			memcpy(dst + i * size, src + i * size, size);
		/* as if dst were read, so that no copy can be elided */
		asm volatile("" : : "r"(dst) : "memory");
		bytes += blocks * size;
		end = now();
	} while (end < start + seconds);
	return bytes / (end - start) / 1e6;
}

static const struct mode {
	const char *name;
	double (*run)(size_t size, double arg);
	size_t size;		/* default SIZE */
	double arg;		/* default SECONDS or ROUNDS */
	size_t max_size;
	int decimals;
} modes[] = {
	{ "bw", run_bw, 4160, 2, MAX_DGRAM, 0 },
	{ "pps", run_pps, 100, 2, MAX_DGRAM, 3 },
	{ "pps-mmsg", run_pps_mmsg, 100, 2, MAX_DGRAM, 3 },
	{ "half-rtt", run_half_rtt, 64, 20000, MAX_DGRAM, 2 },
	{ "memcpy", run_memcpy, 65536, 1, WORKING_SET / 2, 0 },
};

int main(int argc, char **argv)
{
	const struct mode *m;
	size_t size;
	double arg;

	for (m = modes; argc > 1 && m < modes + ARRAY_SIZE(modes); m++) {
		if (strcmp(argv[1], m->name))
			continue;
		size = argc > 2 ? strtoul(argv[2], NULL, 0) : m->size;
		arg = argc > 3 ? atof(argv[3]) : m->arg;
		if (size == 0 || size > m->max_size || !(arg > 0))
			break;
		printf("%.*f\n", m->decimals, m->run(size, arg));
		return 0;
	}
	fputs("usage: host-ceilings MODE [SIZE [SECONDS|ROUNDS]], MODE one of\n"
	      "  bw pps pps-mmsg half-rtt memcpy\n", stderr);
	return 1;
}
