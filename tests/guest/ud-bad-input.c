// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Bad datagrams between two nodes (spec §17.2).  The server has a UD QP
 * with Q_Key 0x11111111; the client (the side with a HOST argument), from
 * a UD QP of its own, sends it
 *
 *   1. -b datagrams with a wrong Q_Key (0x11111112), tagged 'B';
 *   2. three datagrams to the peer's QP1 (GSI Q_Key) that are not MADs:
 *      100 bytes, 256 bytes of base version 0x7f, 300 bytes;
 *   3. -n datagrams with the right Q_Key, tagged 'G' and numbered;
 *
 * then says "done" over TCP.  The server must receive exactly the -n good
 * datagrams, in order, each with a GRH and the client's QPN as source,
 * and none of the others.  The device's counters of the dropped datagrams
 * (rx_bad_qkey, rx_bad_mad) are the caller's to check.
 *
 *   ud-bad-input [-d DEV] [-g IDX] [-p PORT] [-n GOOD] [-b BAD] [HOST]
 *
 * Exits 0 if every check passed, 1 if one failed, 2 on a setup error.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "guest-util.h"

#define QKEY		0x11111111u
#define BAD_QKEY	0x11111112u
#define GSI_QKEY	0x80010000u	/* bit 31: the sending QP's own Q_Key */
#define GRH_BYTES	40
#define MSG_MAX		512
#define SLOT		(GRH_BYTES + MSG_MAX)
#define GOOD_LEN	64

struct peer_info {
	uint32_t qpn;
	uint8_t gid[16];
};

static const char *dev_name = "softhca0";
static const char *host;
static int gid_index, tcp_port = 18515, sock, n_good = 20, n_bad = 20;
static int failures;

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static struct ibv_mr *mr;
static uint8_t *buf;
static union ibv_gid gid;

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			printf("FAIL: ");				\
			printf(__VA_ARGS__);				\
			printf("\n");					\
			failures++;					\
		}							\
	} while (0)

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ud-bad-input: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void xfer(void *p, size_t len, bool out)
{
	if (guest_xfer(sock, p, len, out))
		die("peer socket: %s", strerror(errno));
}

static void tcp_setup(void)
{
	sock = !host ? guest_tcp_accept(tcp_port) :
		 guest_tcp_connect(host, tcp_port);
	if (sock < 0)
		die("no TCP connection on port %d: %s", tcp_port,
		    strerror(errno));
}

/* A UD QP in RTS with Q_Key qkey. */
static void setup(uint32_t qkey, int depth)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = depth, .max_recv_wr = depth,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = qkey,
	};

	ctx = guest_open_device(dev_name);
	if (!ctx)
		die("cannot open %s", dev_name);
	if (ibv_query_gid(ctx, 1, gid_index, &gid))
		die("query gid %d", gid_index);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 2 * depth, NULL, NULL, 0);
	buf = calloc(depth, SLOT);
	if (!pd || !cq || !buf)
		die("alloc");
	mr = ibv_reg_mr(pd, buf, (size_t)depth * SLOT, IBV_ACCESS_LOCAL_WRITE);
	init.send_cq = cq;
	init.recv_cq = cq;
	qp = ibv_create_qp(pd, &init);
	if (!mr || !qp)
		die("reg_mr/create_qp: %s", strerror(errno));
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		die("to INIT");
	attr.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE))
		die("to RTR");
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN))
		die("to RTS");
}

static void post_recv(int slot)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf + (size_t)slot * SLOT,
			       .length = SLOT, .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	if (ibv_post_recv(qp, &wr, &bad))
		die("post_recv");
}

/* One datagram of len bytes from buf's first slot, completed. */
static void send_one(struct ibv_ah *ah, uint32_t qpn, uint32_t qkey,
		     uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = len,
			       .lkey = mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = ah, .remote_qpn = qpn, .remote_qkey = qkey },
	}, *bad;
	struct ibv_wc wc;
	double end = guest_now() + 5;
	int n;

	if (ibv_post_send(qp, &wr, &bad))
		die("post_send: %s", strerror(errno));
	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0 && guest_now() < end)
		;
	if (n != 1)
		die("send to QP %#x: no completion in 5 s", qpn);
	CHECK(wc.status == IBV_WC_SUCCESS, "send to QP %#x: %s", qpn,
	      ibv_wc_status_str(wc.status));
}

static void client(void)
{
	struct peer_info peer;
	struct ibv_ah_attr ah_attr = {
		.is_global = 1, .port_num = 1,
		.grh = { .sgid_index = gid_index, .hop_limit = 64 },
	};
	static const uint32_t mad_len[] = { 100, 256, 300 };
	struct ibv_ah *ah;
	char c = 'd';
	int i;

	/* The Q_Key of QP1 is sent by the rule of bit 31: make it ours. */
	setup(GSI_QKEY, 4);
	tcp_setup();
	xfer(&peer, sizeof(peer), false);
	memcpy(ah_attr.grh.dgid.raw, peer.gid, 16);
	ah = ibv_create_ah(pd, &ah_attr);
	if (!ah)
		die("create_ah: %s", strerror(errno));

	memset(buf, 'B', GOOD_LEN);
	for (i = 0; i < n_bad; i++)
		send_one(ah, peer.qpn, BAD_QKEY, GOOD_LEN);
	for (i = 0; i < 3; i++) {
		for (uint32_t b = 0; b < mad_len[i]; b++)
			buf[b] = b * 7 + i;
		buf[0] = 0x7f; /* base version: not 1 */
		send_one(ah, 1, GSI_QKEY, mad_len[i]);
	}
	for (i = 0; i < n_good; i++) {
		memset(buf, 'G', GOOD_LEN);
		memcpy(buf + 1, &i, sizeof(i));
		send_one(ah, peer.qpn, QKEY, GOOD_LEN);
	}
	printf("client: sent %d bad-Q_Key, 3 non-MAD, %d good datagrams\n",
	       n_bad, n_good);
	xfer(&c, 1, true);
	xfer(&c, 1, false);
	ibv_destroy_ah(ah);
}

static void server(void)
{
	int depth = n_good + n_bad + 4, got = 0, bad = 0, i, n;
	struct peer_info me;
	uint32_t peer_qpn;
	struct ibv_wc wc;
	double end;
	char c;

	setup(QKEY, depth);
	for (i = 0; i < depth; i++)
		post_recv(i);
	me.qpn = qp->qp_num;
	memcpy(me.gid, gid.raw, 16);
	tcp_setup();
	xfer(&me, sizeof(me), true);
	xfer(&c, 1, false);

	/* The client's sends have completed: the datagrams have left it. */
	end = guest_now() + 5;
	while (got < n_good && guest_now() < end) {
		n = ibv_poll_cq(cq, 1, &wc);
		if (n <= 0)
			continue;
		uint8_t *d = buf + wc.wr_id * SLOT + GRH_BYTES;
		int seq;

		memcpy(&seq, d + 1, sizeof(seq));
		if (wc.status != IBV_WC_SUCCESS || d[0] != 'G') {
			bad++;
			CHECK(0, "received status %s, tag %c",
			      ibv_wc_status_str(wc.status), d[0]);
			continue;
		}
		peer_qpn = wc.src_qp;
		CHECK(seq == got, "datagram %d arrived as number %d", seq, got);
		CHECK(wc.byte_len == GRH_BYTES + GOOD_LEN, "byte_len %u",
		      wc.byte_len);
		CHECK(wc.wc_flags & IBV_WC_GRH, "no GRH flag");
		CHECK(wc.qp_num == qp->qp_num, "qp_num %#x", wc.qp_num);
		CHECK(peer_qpn > 1, "src_qp %#x", peer_qpn);
		got++;
	}
	/* Nothing else may come in. */
	usleep(200000);
	while ((n = ibv_poll_cq(cq, 1, &wc)) > 0) {
		bad++;
		CHECK(0, "an extra datagram, status %s",
		      ibv_wc_status_str(wc.status));
	}
	CHECK(got == n_good, "received %d of %d good datagrams", got, n_good);
	printf("server: received %d good datagrams, %d others\n", got, bad);
	xfer(&c, 1, true);
}

int main(int argc, char **argv)
{
	int op;

	while ((op = getopt(argc, argv, "d:g:p:n:b:")) != -1) {
		switch (op) {
		case 'd':
			dev_name = optarg;
			break;
		case 'g':
			gid_index = atoi(optarg);
			break;
		case 'p':
			tcp_port = atoi(optarg);
			break;
		case 'n':
			n_good = atoi(optarg);
			break;
		case 'b':
			n_bad = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-d DEV] [-g IDX] [-p PORT] "
				"[-n GOOD] [-b BAD] [HOST]\n", argv[0]);
			return 2;
		}
	}
	if (optind < argc)
		host = argv[optind];
	if (n_good < 1 || n_bad < 0 || n_good + n_bad > 4000)
		die("-n 1.., -b 0.., together at most 4000");
	if (host)
		client();
	else
		server();
	return failures ? 1 : 0;
}
