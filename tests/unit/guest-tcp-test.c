/*
 * Unit tests of the guest programs' TCP connection (tests/guest/guest-tcp.c),
 * over the host's loopback.
 *
 * rdma_verify_rounds_wait_on_nagle: both ends turn Nagle's algorithm off.
 * rdma-verify's server sends two small messages in a row before it reads;
 * with Nagle on, the second waited for the client's delayed ACK, some
 * 40 ms a round, and 1000 rounds took 48 s instead of 5.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>
#include "guest-tcp.h"
#include "unit.h"

struct accepted {
    int port;
    int fd;
};

static void *accept_one(void *opaque)
{
    struct accepted *a = opaque;

    a->fd = guest_tcp_accept(a->port);
    return NULL;
}

/* A loopback port nothing listens on now. */
static int free_port(void)
{
    struct sockaddr_in6 sa = { .sin6_family = AF_INET6 };
    socklen_t len = sizeof(sa);
    int fd = socket(AF_INET6, SOCK_STREAM, 0), port = -1;

    if (fd >= 0 && !bind(fd, (struct sockaddr *)&sa, sizeof(sa)) &&
        !getsockname(fd, (struct sockaddr *)&sa, &len)) {
        port = ntohs(sa.sin6_port);
    }
    if (fd >= 0) {
        close(fd);
    }
    return port;
}

static int nodelay(int fd)
{
    int on = 0;
    socklen_t len = sizeof(on);

    if (getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, &len)) {
        return -1;
    }
    return on;
}

static void rdma_verify_rounds_wait_on_nagle(void)
{
    struct accepted a = { .port = free_port(), .fd = -1 };
    pthread_t t;
    uint64_t out = 0x5eed, in = 0;
    int fd;

    CHECK(a.port > 0);
    if (a.port <= 0 || pthread_create(&t, NULL, accept_one, &a)) {
        unit_failures++;
        return;
    }
    /* retries while the other thread gets to accept() */
    fd = guest_tcp_connect("127.0.0.1", a.port);
    pthread_join(t, NULL);
    CHECK(fd >= 0);
    CHECK(a.fd >= 0);
    if (fd < 0 || a.fd < 0) {
        return;
    }
    CHECK_EQ(nodelay(fd), 1);
    CHECK_EQ(nodelay(a.fd), 1);
    /* and the connection carries what the programs exchange */
    CHECK_EQ(guest_xfer(fd, &out, sizeof(out), true), 0);
    CHECK_EQ(guest_xfer(a.fd, &in, sizeof(in), false), 0);
    CHECK_EQ(in, out);
    close(fd);
    close(a.fd);
}

int main(void)
{
    RUN(rdma_verify_rounds_wait_on_nagle);
    return unit_summary();
}
