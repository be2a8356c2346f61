// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A UD ping-pong that outlives lost datagrams and counts them: UD carries
 * no retransmission, so across a migration (spec §20) a datagram may be
 * lost, but none may arrive changed and the path must come back.
 *
 * The client (the side with a HOST argument) sends numbered datagrams of
 * -s bytes to the server's UD QP, one at a time, for -t seconds; the
 * server sends each back to the client as it came.  Both sides check every
 * byte of every datagram against the pattern of its number.  An echo that
 * is not back within 100 ms counts as lost and the client sends the next
 * number; one that comes later is checked and counted late.
 *
 *   ud-echo [-d DEV] [-g IDX] [-p PORT] [-s SIZE] [-t SECONDS]
 *           [-l MAX-LOST] [HOST]
 *
 * Prints what each side counted, and the client the longest wait between
 * two echoes.  Exits 1 if a datagram was corrupt or out of order, if more
 * than MAX-LOST (100) were lost, or if the last 100 were not all echoed in
 * time (the path did not come back); 2 on a setup error.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "guest-util.h"

#define QKEY		0x1dec0de5u
#define GRH_BYTES	40
#define SIZE_MAX_UD	1024		/* the smallest path MTU of a lab */
#define SLOT		(GRH_BYTES + SIZE_MAX_UD)
#define DEPTH		64
#define ECHO_WAIT	0.1
#define LAST_GOOD	100

struct peer_info {
	uint32_t qpn;
	uint8_t gid[16];
};

static const char *dev_name = "softhca0";
static const char *host;
static int gid_index, tcp_port = 18515, sock, max_lost = 100;
static uint32_t size = 512;
static double seconds = 10;

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *send_cq, *recv_cq;
static struct ibv_qp *qp;
static struct ibv_mr *mr;
static struct ibv_ah *ah;
static uint8_t *buf;		/* slot 0 sends (client), 1..DEPTH receive */
static struct peer_info peer;

static void xfer(void *p, size_t len, bool out)
{
	if (guest_xfer(sock, p, len, out))
		guest_die("peer socket: %s", strerror(errno));
}

static uint8_t *slot(int i)
{
	return buf + (size_t)i * SLOT;
}

/* Datagram seq: its number, then bytes that depend on it and their place. */
static void fill(uint8_t *d, uint32_t seq)
{
	memcpy(d, &seq, sizeof(seq));
	for (uint32_t i = sizeof(seq); i < size; i++)
		d[i] = seq * 131 + i * 7 + (seq >> 8);
}

/* Whether d, of len bytes, is a whole datagram; its number in *seq. */
static bool intact(const uint8_t *d, uint32_t len, uint32_t *seq)
{
	if (len != size)
		return false;
	memcpy(seq, d, sizeof(*seq));
	for (uint32_t i = sizeof(*seq); i < size; i++)
		if (d[i] != (uint8_t)(*seq * 131 + i * 7 + (*seq >> 8)))
			return false;
	return true;
}

/* A UD QP in RTS, every receive slot posted, and the peer's address. */
static void setup(void)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 4, .max_recv_wr = DEPTH,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY,
	};
	struct ibv_ah_attr ah_attr = {
		.is_global = 1, .port_num = 1,
		.grh = { .sgid_index = gid_index, .hop_limit = 64 },
	};
	struct peer_info me;
	union ibv_gid gid;

	ctx = guest_open_device(dev_name);
	if (!ctx)
		guest_die("cannot open %s", dev_name);
	if (ibv_query_gid(ctx, 1, gid_index, &gid))
		guest_die("query gid %d", gid_index);
	pd = ibv_alloc_pd(ctx);
	send_cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	recv_cq = ibv_create_cq(ctx, DEPTH, NULL, NULL, 0);
	buf = calloc(DEPTH + 1, SLOT);
	if (!pd || !send_cq || !recv_cq || !buf)
		guest_die("alloc");
	mr = ibv_reg_mr(pd, buf, (size_t)(DEPTH + 1) * SLOT,
			IBV_ACCESS_LOCAL_WRITE);
	init.send_cq = send_cq;
	init.recv_cq = recv_cq;
	qp = ibv_create_qp(pd, &init);
	if (!mr || !qp)
		guest_die("reg_mr/create_qp: %s", strerror(errno));
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		guest_die("to INIT");
	attr.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE))
		guest_die("to RTR");
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN))
		guest_die("to RTS");
	for (int i = 1; i <= DEPTH; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)slot(i),
				       .length = SLOT, .lkey = mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge,
					  .num_sge = 1 }, *bad;

		if (ibv_post_recv(qp, &wr, &bad))
			guest_die("post_recv");
	}

	sock = host ? guest_tcp_connect(host, tcp_port) :
		      guest_tcp_accept(tcp_port);
	if (sock < 0)
		guest_die("no TCP connection on port %d: %s", tcp_port,
		    strerror(errno));
	me.qpn = qp->qp_num;
	memcpy(me.gid, gid.raw, 16);
	xfer(&me, sizeof(me), true);
	xfer(&peer, sizeof(peer), false);
	memcpy(ah_attr.grh.dgid.raw, peer.gid, 16);
	ah = ibv_create_ah(pd, &ah_attr);
	if (!ah)
		guest_die("create_ah: %s", strerror(errno));
}

static void repost(int i)
{
	struct ibv_sge sge = { .addr = (uintptr_t)slot(i), .length = SLOT,
			       .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 },
			   *bad;

	if (ibv_post_recv(qp, &wr, &bad))
		guest_die("post_recv: %s", strerror(errno));
}

/* Send len bytes at d to the peer and wait for the send's completion. */
static void send_to_peer(uint8_t *d, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)d, .length = len,
			       .lkey = mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = ah, .remote_qpn = peer.qpn,
			   .remote_qkey = QKEY },
	}, *bad;
	struct ibv_wc wc;
	int n;

	if (ibv_post_send(qp, &wr, &bad))
		guest_die("post_send: %s", strerror(errno));
	while ((n = ibv_poll_cq(send_cq, 1, &wc)) == 0)
		;
	if (n < 0 || wc.status != IBV_WC_SUCCESS)
		guest_die("send: %s", n < 0 ? "poll failed" :
		    ibv_wc_status_str(wc.status));
}

/* One received datagram: polled, its slot and length; false if none yet. */
static bool receive(int *i, uint32_t *len)
{
	struct ibv_wc wc;
	int n = ibv_poll_cq(recv_cq, 1, &wc);

	if (n < 0)
		guest_die("poll_cq failed");
	if (!n)
		return false;
	if (wc.status != IBV_WC_SUCCESS)
		guest_die("receive: %s", ibv_wc_status_str(wc.status));
	*i = wc.wr_id;
	*len = wc.byte_len - GRH_BYTES;
	return true;
}

static int client(void)
{
	unsigned long sent = 0, echoed = 0, lost = 0, late = 0, corrupt = 0;
	unsigned long streak = 0;
	double end = guest_now() + seconds, last = 0, longest = 0, wait_end;
	uint32_t seq, got, len;
	bool too_many, not_back;
	int i;
	char c = 'd';

	for (seq = 1; guest_now() < end; seq++) {
		fill(slot(0), seq);
		send_to_peer(slot(0), size);
		sent++;
		for (wait_end = guest_now() + ECHO_WAIT;;) {
			if (!receive(&i, &len)) {
				if (guest_now() < wait_end)
					continue;
				lost++;
				streak = 0;
				break;
			}
			if (!intact(slot(i) + GRH_BYTES, len, &got) ||
			    got > seq) {
				corrupt++;
				repost(i);
				continue;
			}
			repost(i);
			if (got < seq) {
				late++;
				continue;
			}
			echoed++;
			streak++;
			if (last && guest_now() - last > longest)
				longest = guest_now() - last;
			last = guest_now();
			break;
		}
	}
	xfer(&c, 1, true);
	xfer(&c, 1, false);
	printf("client: %lu sent, %lu echoed, %lu lost, %lu late, %lu corrupt\n",
	       sent, echoed, lost, late, corrupt);
	printf("client: longest wait between completions %.1f ms\n",
	       longest * 1000);
	too_many = lost > (unsigned long)max_lost;
	not_back = streak < LAST_GOOD && streak < sent;
	if (too_many)
		printf("FAIL: more than %d lost\n", max_lost);
	if (not_back)
		printf("FAIL: only the last %lu were echoed in time\n", streak);
	return corrupt || too_many || not_back;
}

static int server(void)
{
	unsigned long received = 0, corrupt = 0, disorder = 0;
	uint32_t seq, prev = 0, len;
	struct pollfd done = { .fd = sock, .events = POLLIN };
	double next_check = 0;
	int i;
	char c;

	for (;;) {
		if (receive(&i, &len)) {
			uint8_t *d = slot(i) + GRH_BYTES;

			if (!intact(d, len, &seq)) {
				corrupt++;
			} else {
				received++;
				disorder += seq <= prev;
				prev = seq;
				send_to_peer(d, len);
			}
			repost(i);
			continue;
		}
		/* the client says it is done over TCP: look every 10 ms */
		if (guest_now() < next_check)
			continue;
		next_check = guest_now() + 0.01;
		if (poll(&done, 1, 0) > 0)
			break;
	}
	xfer(&c, 1, false);
	printf("server: %lu received, %lu corrupt, %lu out of order\n",
	       received, corrupt, disorder);
	xfer(&c, 1, true);
	return corrupt || disorder;
}

int main(int argc, char **argv)
{
	int op;

	while ((op = getopt(argc, argv, "d:g:p:s:t:l:")) != -1) {
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
		case 's':
			size = atoi(optarg);
			break;
		case 't':
			seconds = atof(optarg);
			break;
		case 'l':
			max_lost = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-d DEV] [-g IDX] [-p PORT] "
				"[-s SIZE] [-t SECONDS] [-l MAX-LOST] [HOST]\n",
				argv[0]);
			return 2;
		}
	}
	if (optind < argc)
		host = argv[optind];
	if (size < sizeof(uint32_t) || size > SIZE_MAX_UD || seconds <= 0 ||
	    max_lost < 0)
		guest_die("-s 4..%d, -t above 0, -l 0..", SIZE_MAX_UD);
	setup();
	return host ? client() : server();
}
