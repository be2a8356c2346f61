// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ibv_resize_cq under traffic, on one node: an RC QP sends numbered
 * messages to a second QP through the device's loopback while both CQs are
 * resized again and again, larger and smaller, with completions left
 * unpolled.  Every completion must arrive exactly once and in order, with
 * its status, opcode, length and payload; a resize below the completions
 * waiting, to a negative size or beyond the device's limit must fail with
 * EINVAL and lose nothing.  Prints one line per failed check and exits non-zero if any
 * failed.
 *
 *   cq-resize [-d DEV] [-g GID_INDEX] [-n MESSAGES] [-s SEED]
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "guest-util.h"

#define QP_DEPTH	64
#define MSG		8
#define CQ_MAX		128
#define TIMEOUT_S	60


struct side {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint64_t posted, polled;	/* WRs posted, completions polled */
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *mr;
static uint8_t *buf;		/* QP_DEPTH send slots, then QP_DEPTH recv */
static int gid_index;
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static unsigned int rnd(unsigned int n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng % n;
}

static void die(const char *what)
{
	printf("FAIL %s: %s\n", what, strerror(errno));
	exit(1);
}

static void make_side(struct side *s)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
		.cap = {
			.max_send_wr = QP_DEPTH,
			.max_recv_wr = QP_DEPTH,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};

	s->cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	if (!s->cq)
		die("create_cq");
	init.send_cq = init.recv_cq = s->cq;
	s->qp = ibv_create_qp(pd, &init);
	if (!s->qp)
		die("create_qp");
	if (ibv_modify_qp(s->qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("modify_qp INIT");
}

/* RTR and RTS towards @peer, through the port's own GID. */
static void connect_side(struct side *s, const struct side *peer)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = peer->qp->qp_num,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 1,
		.ah_attr = {
			.is_global = 1,
			.port_num = 1,
			.grh = { .sgid_index = gid_index, .hop_limit = 64 },
		},
	};

	if (ibv_query_gid(ctx, 1, gid_index, &attr.ah_attr.grh.dgid))
		die("query_gid");
	if (ibv_modify_qp(s->qp, &attr, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("modify_qp RTR");
	attr.qp_state = IBV_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = 1;
	if (ibv_modify_qp(s->qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN |
			  IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify_qp RTS");
}

static void post_recv(struct side *s)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf + (QP_DEPTH + s->posted % QP_DEPTH) * MSG,
		.length = MSG,
		.lkey = mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = s->posted, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	if (ibv_post_recv(s->qp, &wr, &bad))
		die("post_recv");
	s->posted++;
}

static void post_send(struct side *s)
{
	uint8_t *slot = buf + (s->posted % QP_DEPTH) * MSG;
	struct ibv_sge sge = {
		.addr = (uintptr_t)slot,
		.length = MSG,
		.lkey = mr->lkey,
	};
	struct ibv_send_wr wr = { .wr_id = s->posted, .sg_list = &sge,
				  .num_sge = 1, .opcode = IBV_WR_SEND }, *bad;

	memcpy(slot, &s->posted, MSG);
	if (ibv_post_send(s->qp, &wr, &bad))
		die("post_send");
	s->posted++;
}

/* Poll up to @max completions of @s, each the next in order. */
static void poll_side(struct side *s, bool recv, int max)
{
	struct ibv_wc wc[8];
	uint64_t got;
	int n;

	n = ibv_poll_cq(s->cq, max < 8 ? max : 8, wc);
	GUEST_CHECK(n >= 0, "poll_cq: %d", n);
	for (int i = 0; i < n; i++, s->polled++) {
		GUEST_CHECK(wc[i].status == IBV_WC_SUCCESS, "wr %" PRIu64 ": %s",
		      wc[i].wr_id, ibv_wc_status_str(wc[i].status));
		GUEST_CHECK(wc[i].wr_id == s->polled, "wr_id %" PRIu64 ", want %"
		      PRIu64, wc[i].wr_id, s->polled);
		GUEST_CHECK(wc[i].opcode == (recv ? IBV_WC_RECV : IBV_WC_SEND),
		      "opcode %d", wc[i].opcode);
		if (!recv)
			continue;
		GUEST_CHECK(wc[i].byte_len == MSG, "byte_len %u", wc[i].byte_len);
		memcpy(&got, buf + (QP_DEPTH + wc[i].wr_id % QP_DEPTH) * MSG,
		       MSG);
		/* the sender numbers its messages as the receiver its WRs */
		GUEST_CHECK(got == wc[i].wr_id, "payload %" PRIu64 " in wr %" PRIu64,
		      got, wc[i].wr_id);
	}
	if (guest_failures)
		exit(1);
}

/*
 * Resize to a random size that holds the @waiting completions there may
 * be; now and then first try a size that is no size, or too large.
 */
static void resize(struct side *s, int waiting, const char *name)
{
	int cqe = waiting + rnd(CQ_MAX - waiting) + 1;
	int before = s->cq->cqe;

	if (!rnd(4)) {
		int bad = rnd(2) ? -1 : INT_MAX;
		int err = ibv_resize_cq(s->cq, bad);

		GUEST_CHECK(err == EINVAL, "%s: resize to %d: %d", name, bad, err);
		GUEST_CHECK(s->cq->cqe == before, "%s: cqe %d after a refused resize",
		      name, s->cq->cqe);
	}
	GUEST_CHECK(!ibv_resize_cq(s->cq, cqe), "%s: resize %d -> %d", name, before,
	      cqe);
	GUEST_CHECK(s->cq->cqe >= cqe, "%s: %d entries, asked for %d", name,
	      s->cq->cqe, cqe);
}

/*
 * Four sends, all received: once their ACKs are back (well within the
 * pause) four completions wait on the sender's CQ, and a CQ of one entry
 * (two, rounded) cannot take them.
 */
static void resize_too_small(struct side *a, struct side *b)
{
	double end = guest_now() + TIMEOUT_S;
	int err;

	while (a->posted - a->polled < 4)
		post_send(a);
	while (b->polled < a->posted && guest_now() < end)
		poll_side(b, true, 8);
	while (b->posted - b->polled < QP_DEPTH)
		post_recv(b);
	usleep(200 * 1000);
	err = ibv_resize_cq(a->cq, 1);
	GUEST_CHECK(err == EINVAL, "resize to 1 below 4 waiting: %d", err);
}

int main(int argc, char **argv)
{
	const char *dev = "softhca0";
	uint64_t total = 3000, resizes = 0;
	struct side a = {}, b = {};
	double end;
	int opt;

	while ((opt = getopt(argc, argv, "d:g:n:s:")) != -1) {
		switch (opt) {
		case 'd': dev = optarg; break;
		case 'g': gid_index = atoi(optarg); break;
		case 'n': total = strtoull(optarg, NULL, 0); break;
		case 's': rng = strtoull(optarg, NULL, 0) | 1; break;
		default:
			fprintf(stderr, "usage: cq-resize [-d DEV] [-g GID] "
				"[-n MESSAGES] [-s SEED]\n");
			return 2;
		}
	}

	ctx = guest_open_device(dev);
	if (!ctx)
		die(dev);
	pd = ibv_alloc_pd(ctx);
	buf = calloc(2 * QP_DEPTH, MSG);
	if (!pd || !buf)
		die("alloc_pd");
	mr = ibv_reg_mr(pd, buf, 2 * QP_DEPTH * MSG, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		die("reg_mr");
	make_side(&a);
	make_side(&b);
	connect_side(&a, &b);
	connect_side(&b, &a);
	while (b.posted < QP_DEPTH)
		post_recv(&b);

	resize_too_small(&a, &b);
	end = guest_now() + TIMEOUT_S;
	while ((a.polled < a.posted || a.posted < total) &&
	       guest_now() < end) {
		/* never more waiting than either CQ holds */
		while (a.posted < total && a.posted - a.polled < QP_DEPTH &&
		       a.posted - a.polled < (uint64_t)a.cq->cqe &&
		       a.posted - b.polled < (uint64_t)b.cq->cqe &&
		       rnd(4))
			post_send(&a);
		poll_side(&a, false, rnd(4));
		poll_side(&b, true, rnd(4));
		while (b.posted - b.polled < QP_DEPTH)
			post_recv(&b);
		if (!rnd(8)) {
			if (rnd(2))
				resize(&a, a.posted - a.polled, "send CQ");
			else
				resize(&b, a.posted - b.polled, "recv CQ");
			resizes++;
		}
	}
	while (b.polled < a.posted && guest_now() < end)
		poll_side(&b, true, 8);
	GUEST_CHECK(a.polled == total && b.polled == total,
	      "sent %" PRIu64 ", completed %" PRIu64 " sends and %" PRIu64
	      " receives", a.posted, a.polled, b.polled);
	printf("%" PRIu64 " messages, %" PRIu64 " resizes: %s\n", total,
	       resizes, guest_failures ? "FAILED" : "ok");
	return guest_failures ? 1 : 0;
}
