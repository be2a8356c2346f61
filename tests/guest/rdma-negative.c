// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Negative cases of the RC transport between two nodes; the client (node
 * with a HOST argument) does the failing operations, the server is the
 * responder.  The sides meet on TCP and run the same cases in step, each
 * on fresh QPs:
 *
 *   lkey    bad lkey, an SGE past the MR, a READ into an MR without local
 *           write: LOC_PROT_ERR, later WQEs flushed, the QP in ERR, nothing
 *           reaches the responder; a receive WQE with a bad lkey at the
 *           responder: LOC_PROT_ERR there, REM_OP_ERR at the requester
 *   rkey    WRITE/READ/atomic with a bad rkey, an rkey without the right,
 *           a range past the MR: REM_ACCESS_ERR, the requester's QP in
 *           ERR; the responder's QP state is checked against -R (IBA
 *           9.9.3.1.3 class C: ERR), a QP pair that was not involved
 *           and a new one still work
 *   state   post_send in RESET, INIT, RTR, post_recv in RESET: an error
 *           (return value or error completion), never a silent hold
 *   gone    the server destroys its QP: WRITEs end with RETRY_EXC_ERR,
 *           the rest flushed with WR_FLUSH_ERR, in bounded time
 *   killed  WRITEs stream until the peer node dies (the caller kills it):
 *           as for gone; the client prints "streaming" when under way
 *   all     lkey, rkey, state, gone
 *
 *   rdma-negative [-d DEV] [-g IDX] [-p PORT] [-c CASE] [-R err|rts]
 *                 [-S MS] [HOST]
 *
 * -S MS: the server takes each QP to RTR only MS ms after the exchange, a
 * peer slow to get ready (rdma-negative-slow-peer).
 *
 * Timeout 16 and retry_cnt 1 on the requester: an unanswered WQE fails in
 * 0.54 s.  Exits 1 if any check failed.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "guest-util.h"

#define BUF_SIZE	(1 << 20)
/*
 * 268 ms a try, 2 tries: 0.54 s.  A try is answered by a peer QEMU that a
 * loaded host may leave unscheduled.  At 16.8 ms a try, a READ with a bad
 * rkey ended in RETRY_EXC_ERR, not REM_ACCESS_ERR (rdma-negative-rkey): a
 * retry went out before the NAK came in, and the responder, in ERR since
 * it sent the NAK, answers no retry.  At those 4 tries of 16.8 ms (67 ms),
 * killed's stream had failed before the kill.
 */
#define QP_TIMEOUT	16
#define RETRY_CNT	1

struct peer_info {
	uint32_t qpn;
	uint32_t psn;
	uint8_t gid[16];
	uint64_t addr;
	uint32_t rkey;		/* all rights */
	uint32_t ro_rkey;	/* REMOTE_READ only */
};

static const char *dev_name = "softhca0";
static const char *host;
static const char *resp_state = "err";
static int gid_index, tcp_port = 18515, sock, server_slow_ms;
static bool server;
static int failures;
static const char *cur_case = "";

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *mr, *ro_mr, *nolw_mr;
static uint8_t *buf, *ro_buf, *nolw_buf;
static enum ibv_mtu mtu;
static union ibv_gid gid;

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			printf("FAIL %s: ", cur_case);			\
			printf(__VA_ARGS__);				\
			printf("\n");					\
			failures++;					\
		}							\
	} while (0)

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "rdma-negative: %s: ", cur_case);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* --- TCP ----------------------------------------------------------------- */

static void xfer(void *p, size_t len, bool out)
{
	if (guest_xfer(sock, p, len, out))
		die("peer socket: %s", strerror(errno));
}

/* Both sides reach the same point. */
static void sync_peer(void)
{
	char c = 's';

	xfer(&c, 1, true);
	xfer(&c, 1, false);
}

static void tcp_setup(void)
{
	sock = server ? guest_tcp_accept(tcp_port) :
		 guest_tcp_connect(host, tcp_port);
	if (sock < 0)
		die("no TCP connection on port %d: %s", tcp_port,
		    strerror(errno));
}

/* --- verbs ------------------------------------------------------------- */

static void setup(void)
{
	struct ibv_port_attr port;

	ctx = guest_open_device(dev_name);
	if (!ctx)
		die("cannot open %s", dev_name);
	if (ibv_query_port(ctx, 1, &port) ||
	    ibv_query_gid(ctx, 1, gid_index, &gid))
		die("query port/gid");
	mtu = port.active_mtu;
	pd = ibv_alloc_pd(ctx);
	buf = aligned_alloc(4096, BUF_SIZE);
	ro_buf = aligned_alloc(4096, BUF_SIZE);
	nolw_buf = aligned_alloc(4096, BUF_SIZE);
	if (!pd || !buf || !ro_buf || !nolw_buf)
		die("alloc");
	memset(buf, 0, BUF_SIZE);
	memset(ro_buf, 0x77, BUF_SIZE);
	memset(nolw_buf, 0x66, BUF_SIZE);
	mr = ibv_reg_mr(pd, buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_REMOTE_ATOMIC);
	ro_mr = ibv_reg_mr(pd, ro_buf, BUF_SIZE, IBV_ACCESS_REMOTE_READ);
	nolw_mr = ibv_reg_mr(pd, nolw_buf, BUF_SIZE, 0);
	if (!mr || !ro_mr || !nolw_mr)
		die("reg_mr");
}

struct conn {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct peer_info remote;
};

static void create_qp(struct conn *c)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64,
			 .max_send_sge = 2, .max_recv_sge = 2 },
	};

	c->cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	if (!c->cq)
		die("create_cq");
	init.send_cq = init.recv_cq = c->cq;
	c->qp = ibv_create_qp(pd, &init);
	if (!c->qp)
		die("create_qp: %s", strerror(errno));
}

static int to_init(struct conn *c)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};

	return ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

static int to_rtr(struct conn *c)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = mtu,
		.dest_qp_num = c->remote.qpn, .rq_psn = c->remote.psn,
		.max_dest_rd_atomic = 4, .min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .sgid_index = gid_index,
				      .hop_limit = 64 } },
	};

	memcpy(a.ah_attr.grh.dgid.raw, c->remote.gid, 16);
	return ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			     IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			     IBV_QP_MIN_RNR_TIMER);
}

static int to_rts(struct conn *c)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS, .sq_psn = c->qp->qp_num * 7,
		.timeout = QP_TIMEOUT, .retry_cnt = RETRY_CNT,
		.rnr_retry = 3, .max_rd_atomic = 4,
	};

	return ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

/*
 * A fresh QP on each side, connected to each other (both sides call).  The
 * client sends only once the server's QP is in RTR: a request that reaches
 * a QP still in INIT is dropped, and 67 ms is less than a guest on the
 * busy host may take to modify its QP (rdma-negative-slow-peer).
 */
static void connect_pair(struct conn *c)
{
	struct peer_info me = { 0 };

	memset(c, 0, sizeof(*c));
	create_qp(c);
	if (to_init(c))
		die("INIT");
	me.qpn = c->qp->qp_num;
	me.psn = me.qpn * 7;
	memcpy(me.gid, gid.raw, 16);
	me.addr = (uintptr_t)buf;
	me.rkey = mr->rkey;
	me.ro_rkey = ro_mr->rkey;
	xfer(&me, sizeof(me), true);
	xfer(&c->remote, sizeof(c->remote), false);
	if (server && server_slow_ms)
		usleep(server_slow_ms * 1000);
	if (to_rtr(c) || to_rts(c))
		die("RTR/RTS: %s", strerror(errno));
	sync_peer();
}

static void destroy_conn(struct conn *c)
{
	if (c->qp)
		ibv_destroy_qp(c->qp);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	c->qp = NULL;
	c->cq = NULL;
}

static enum ibv_qp_state qp_state(struct conn *c)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr i;

	if (ibv_query_qp(c->qp, &a, IBV_QP_STATE, &i))
		die("query_qp");
	return a.qp_state;
}

static const char *state_name(enum ibv_qp_state s)
{
	static const char *const n[] = { "RESET", "INIT", "RTR", "RTS",
					 "SQD", "SQE", "ERR" };

	return s < sizeof(n) / sizeof(n[0]) ? n[s] : "?";
}

/* Waits up to @sec for one completion; false if none came. */
static bool poll_one(struct conn *c, struct ibv_wc *wc, double sec)
{
	double end = guest_now() + sec;
	int n;

	while (!(n = ibv_poll_cq(c->cq, 1, wc)))
		if (guest_now() > end)
			return false;
	if (n < 0)
		die("poll_cq");
	return true;
}

static void expect_status(struct conn *c, uint64_t wr_id,
			  enum ibv_wc_status want, const char *what)
{
	struct ibv_wc wc;

	if (!poll_one(c, &wc, 30)) {
		CHECK(0, "%s: no completion in 30 s", what);
		return;
	}
	CHECK(wc.status == want && wc.wr_id == wr_id,
	      "%s: wr_id %" PRIu64 " status %s, expected wr_id %" PRIu64
	      " %s", what, wc.wr_id, ibv_wc_status_str(wc.status), wr_id,
	      ibv_wc_status_str(want));
	printf("%s: %s: %s\n", cur_case, what, ibv_wc_status_str(wc.status));
}

static int post(struct conn *c, enum ibv_wr_opcode op, uint64_t wr_id,
		uint64_t laddr, uint32_t len, uint32_t lkey, uint64_t raddr,
		uint32_t rkey)
{
	struct ibv_sge sge = { .addr = laddr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD ||
	    op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return ibv_post_send(c->qp, &wr, &bad);
}

static int post_recv(struct conn *c, uint64_t wr_id, uint64_t addr,
		     uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { .addr = addr, .length = len, .lkey = lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_recv(c->qp, &wr, &bad);
}

/* A good WRITE then READ back over @c, from the client. */
static void good_transfer(struct conn *c, const char *what)
{
	uint64_t b = (uintptr_t)buf;

	for (int i = 0; i < 4096; i++)
		buf[i] = i * 7 + 1;
	if (post(c, IBV_WR_RDMA_WRITE, 100, b, 4096, mr->lkey,
		 c->remote.addr + 8192, c->remote.rkey) ||
	    post(c, IBV_WR_RDMA_READ, 101, b + 16384, 4096, mr->lkey,
		 c->remote.addr + 8192, c->remote.rkey))
		die("post");
	expect_status(c, 100, IBV_WC_SUCCESS, what);
	expect_status(c, 101, IBV_WC_SUCCESS, what);
	CHECK(!memcmp(buf, buf + 16384, 4096), "%s: data read back differs",
	      what);
}

/* --- the cases ----------------------------------------------------------- */

static void case_lkey(void)
{
	struct { const char *what; enum ibv_wr_opcode op; uint64_t addr;
		 uint32_t len, lkey; } bad[] = {
		{ "WRITE, bad lkey", IBV_WR_RDMA_WRITE, (uintptr_t)buf, 64,
		  mr->lkey + 0x1000 },
		{ "SEND, SGE past the MR", IBV_WR_SEND,
		  (uintptr_t)buf + BUF_SIZE - 32, 64, mr->lkey },
		{ "READ into an MR without local write", IBV_WR_RDMA_READ,
		  (uintptr_t)nolw_buf, 64, nolw_mr->lkey },
	};
	struct ibv_wc wc;
	struct conn c;

	cur_case = "lkey";
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		connect_pair(&c);
		if (server) {
			CHECK(!post_recv(&c, 7, (uintptr_t)buf, 4096, mr->lkey),
			      "post_recv");
			sync_peer();	/* the client did its WQEs */
			sync_peer();
			CHECK(qp_state(&c) == IBV_QPS_RTS, "%s: responder %s",
			      bad[i].what, state_name(qp_state(&c)));
			CHECK(!poll_one(&c, &wc, 0.5), "%s: responder got "
			      "completion %s", bad[i].what,
			      ibv_wc_status_str(wc.status));
		} else {
			sync_peer();
			if (post(&c, bad[i].op, 1, bad[i].addr, bad[i].len,
				 bad[i].lkey, c.remote.addr, c.remote.rkey) ||
			    post(&c, IBV_WR_RDMA_WRITE, 2, (uintptr_t)buf, 64,
				 mr->lkey, c.remote.addr, c.remote.rkey))
				die("post_send");
			expect_status(&c, 1, IBV_WC_LOC_PROT_ERR, bad[i].what);
			expect_status(&c, 2, IBV_WC_WR_FLUSH_ERR,
				      "the WQE after it");
			CHECK(qp_state(&c) == IBV_QPS_ERR, "%s: requester %s",
			      bad[i].what, state_name(qp_state(&c)));
			sync_peer();
		}
		destroy_conn(&c);
	}

	/* a receive WQE with a bad lkey at the responder */
	connect_pair(&c);
	if (server) {
		CHECK(!post_recv(&c, 7, (uintptr_t)buf, 4096, mr->lkey + 0x1000),
		      "post_recv");
		CHECK(!post_recv(&c, 8, (uintptr_t)buf, 4096, mr->lkey),
		      "post_recv");
		sync_peer();
		expect_status(&c, 7, IBV_WC_LOC_PROT_ERR,
			      "responder: receive WQE with a bad lkey");
		expect_status(&c, 8, IBV_WC_WR_FLUSH_ERR,
			      "responder: the receive WQE after it");
		sync_peer();
	} else {
		sync_peer();
		if (post(&c, IBV_WR_SEND, 1, (uintptr_t)buf, 64, mr->lkey, 0, 0))
			die("post_send");
		expect_status(&c, 1, IBV_WC_REM_OP_ERR,
			      "SEND into a receive WQE with a bad lkey");
		sync_peer();
	}
	destroy_conn(&c);
}

static void case_rkey(void)
{
	struct conn c, bystander;
	enum ibv_qp_state s;
	struct ibv_wc wc;
	int n = 0;

	cur_case = "rkey";
	connect_pair(&bystander);
	for (int i = 0; i < 6; i++) {
		connect_pair(&c);
		if (server) {
			CHECK(!post_recv(&c, 7, (uintptr_t)buf, 4096, mr->lkey),
			      "post_recv");
			sync_peer();
			sync_peer();	/* the client has its completions */
			s = qp_state(&c);
			printf("rkey: case %d: responder QP %s after the remote "
			       "access NAK\n", i, state_name(s));
			if (!strcmp(resp_state, "err")) {
				CHECK(s == IBV_QPS_ERR, "case %d: responder QP "
				      "%s, IBA class C wants ERR", i,
				      state_name(s));
				expect_status(&c, 7, IBV_WC_WR_FLUSH_ERR,
					      "responder: its receive WQE");
			} else {
				CHECK(s == IBV_QPS_RTS, "case %d: responder QP"
				      " %s, wanted RTS (unharmed)", i,
				      state_name(s));
			}
			sync_peer();
		} else {
			uint64_t ra = c.remote.addr;
			uint32_t rk = c.remote.rkey, ro = c.remote.ro_rkey;
			uint64_t la = (uintptr_t)buf;
			const char *what = "";
			int e = 0;

			sync_peer();
			switch (i) {
			case 0:
				what = "WRITE, bad rkey";
				e = post(&c, IBV_WR_RDMA_WRITE, 1, la, 64,
					 mr->lkey, ra, rk + 0x1000);
				break;
			case 1:
				what = "WRITE, rkey without remote write";
				e = post(&c, IBV_WR_RDMA_WRITE, 1, la, 64,
					 mr->lkey, ra, ro);
				break;
			case 2:
				what = "WRITE past the end of the MR";
				e = post(&c, IBV_WR_RDMA_WRITE, 1, la, 64,
					 mr->lkey, ra + BUF_SIZE - 32, rk);
				break;
			case 3:
				what = "READ, bad rkey";
				e = post(&c, IBV_WR_RDMA_READ, 1, la, 64,
					 mr->lkey, ra, rk ^ 0x80000000);
				break;
			case 4:
				what = "READ before the start of the MR";
				e = post(&c, IBV_WR_RDMA_READ, 1, la, 64,
					 mr->lkey, ra - 4096, rk);
				break;
			case 5:
				what = "FETCH_ADD, rkey without remote atomic";
				e = post(&c, IBV_WR_ATOMIC_FETCH_AND_ADD, 1, la,
					 8, mr->lkey, c.remote.addr, ro);
				break;
			}
			e = e || post(&c, IBV_WR_RDMA_WRITE, 2, la, 64,
				      mr->lkey, ra, rk);
			if (e)
				die("post_send");
			expect_status(&c, 1, IBV_WC_REM_ACCESS_ERR, what);
			expect_status(&c, 2, IBV_WC_WR_FLUSH_ERR,
				      "the WQE after it");
			CHECK(qp_state(&c) == IBV_QPS_ERR, "%s: requester %s",
			      what, state_name(qp_state(&c)));
			sync_peer();
			sync_peer();
		}
		destroy_conn(&c);
	}

	/* the responder is unharmed: the bystander and a new pair work */
	if (server) {
		sync_peer();
		CHECK(qp_state(&bystander) == IBV_QPS_RTS, "bystander %s",
		      state_name(qp_state(&bystander)));
		while (ibv_poll_cq(bystander.cq, 1, &wc) > 0)
			n++;
		CHECK(n == 0, "bystander: %d stray completions", n);
	} else {
		good_transfer(&bystander, "bystander QP afterwards");
		sync_peer();
	}
	destroy_conn(&bystander);
	connect_pair(&c);
	if (!server)
		good_transfer(&c, "new QP afterwards");
	sync_peer();
	destroy_conn(&c);
}

static void case_state(void)
{
	static const enum ibv_qp_state states[] = {
		IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR,
	};
	struct conn c, peer;
	struct ibv_wc wc;

	cur_case = "state";
	connect_pair(&peer);	/* an AV for RTR: the peer's QP */
	if (server) {
		sync_peer();
		destroy_conn(&peer);
		return;
	}
	for (size_t i = 0; i <= sizeof(states) / sizeof(states[0]); i++) {
		bool recv = i == sizeof(states) / sizeof(states[0]);
		enum ibv_qp_state s = recv ? IBV_QPS_RESET : states[i];
		char what[64];
		int e;

		memset(&c, 0, sizeof(c));
		create_qp(&c);
		c.remote = peer.remote;
		if (s >= IBV_QPS_INIT && to_init(&c))
			die("INIT");
		if (s >= IBV_QPS_RTR && to_rtr(&c))
			die("RTR");
		snprintf(what, sizeof(what), "%s in %s",
			 recv ? "post_recv" : "post_send", state_name(s));
		e = recv ? post_recv(&c, 1, (uintptr_t)buf, 64, mr->lkey) :
			   post(&c, IBV_WR_RDMA_WRITE, 1, (uintptr_t)buf, 64,
				mr->lkey, peer.remote.addr, peer.remote.rkey);
		if (e) {
			printf("state: %s: returns %s\n", what, strerror(e));
		} else if (poll_one(&c, &wc, 2)) {
			printf("state: %s: returns 0, completes %s\n", what,
			       ibv_wc_status_str(wc.status));
			CHECK(wc.status != IBV_WC_SUCCESS, "%s: succeeded",
			      what);
		} else {
			CHECK(0, "%s: returns 0 and no completion in 2 s "
			      "(the WQE is held, not failed)", what);
		}
		destroy_conn(&c);
	}
	sync_peer();
	destroy_conn(&peer);
}

/* WRITEs, all signaled, 16 in flight, until one fails; then the rest. */
static void stream_until_error(struct conn *c, double limit, bool announce)
{
	uint64_t posted = 0, done = 0, ok = 0, flushed = 0;
	enum ibv_wc_status first = IBV_WC_SUCCESS;
	double start = guest_now(), t_err = 0;
	bool failed = false;
	struct ibv_wc wc;

	for (;;) {
		while (!failed && posted - done < 16) {
			if (post(c, IBV_WR_RDMA_WRITE, posted,
				 (uintptr_t)buf, 65536, mr->lkey,
				 c->remote.addr + (posted % 8) * 65536,
				 c->remote.rkey))
				break;	/* an error return after the failure */
			posted++;
		}
		if (failed && done == posted)
			break;
		if (!poll_one(c, &wc, 1)) {
			if (guest_now() - start > limit)
				break;
			continue;
		}
		CHECK(wc.wr_id == done, "completion of wr_id %" PRIu64
		      ", expected %" PRIu64, wc.wr_id, done);
		done++;
		if (wc.status == IBV_WC_SUCCESS) {
			CHECK(!failed, "wr_id %" PRIu64 " succeeded after "
			      "the failure", wc.wr_id);
			ok++;
			if (announce && ok == 32) {
				printf("streaming\n");
				fflush(stdout);
			}
		} else if (!failed) {
			failed = true;
			first = wc.status;
			t_err = guest_now();
		} else {
			CHECK(wc.status == IBV_WC_WR_FLUSH_ERR,
			      "wr_id %" PRIu64 ": %s after the failure",
			      wc.wr_id, ibv_wc_status_str(wc.status));
			flushed++;
		}
		if (guest_now() - start > limit)
			break;
	}
	printf("%s: %" PRIu64 " WRITEs posted, %" PRIu64 " succeeded, then "
	       "%s, %" PRIu64 " flushed; %" PRIu64 " completions missing; "
	       "%.2f s to the failure\n", cur_case, posted, ok,
	       ibv_wc_status_str(first), flushed, posted - done,
	       failed ? t_err - start : -1.0);
	CHECK(failed, "no failure in %.0f s", limit);
	CHECK(first == IBV_WC_RETRY_EXC_ERR, "first failure %s",
	      ibv_wc_status_str(first));
	CHECK(done == posted, "%" PRIu64 " WQEs never completed",
	      posted - done);
	CHECK(qp_state(c) == IBV_QPS_ERR, "requester %s",
	      state_name(qp_state(c)));
}

static void case_gone(void)
{
	struct conn c;

	cur_case = "gone";
	connect_pair(&c);
	if (server) {
		sync_peer();	/* a good transfer first */
		destroy_conn(&c);
		sync_peer();
		sync_peer();
		return;
	}
	good_transfer(&c, "before the peer's QP is destroyed");
	sync_peer();
	sync_peer();		/* the server's QP is gone */
	stream_until_error(&c, 60, false);
	sync_peer();
	destroy_conn(&c);
}

static void case_killed(void)
{
	struct conn c;

	cur_case = "killed";
	connect_pair(&c);
	if (server) {
		printf("killed: serving until this node is killed\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	stream_until_error(&c, 120, true);
	destroy_conn(&c);
}

int main(int argc, char **argv)
{
	const char *which = "all";
	int ch;

	while ((ch = getopt(argc, argv, "d:g:p:c:R:S:")) != -1) {
		switch (ch) {
		case 'd': dev_name = optarg; break;
		case 'g': gid_index = atoi(optarg); break;
		case 'p': tcp_port = atoi(optarg); break;
		case 'c': which = optarg; break;
		case 'R': resp_state = optarg; break;
		case 'S': server_slow_ms = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: rdma-negative [-d DEV] "
				"[-g IDX] [-p PORT] [-c lkey|rkey|state|gone|"
				"killed|all] [-R err|rts] [-S MS] [HOST]\n");
			return 2;
		}
	}
	if (optind < argc)
		host = argv[optind];
	server = !host;
	setup();
	tcp_setup();
	if (strcmp(which, "killed"))
		setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO,
			   &(struct timeval){ .tv_sec = 120 },
			   sizeof(struct timeval));
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (!strcmp(which, "lkey") || !strcmp(which, "all"))
		case_lkey();
	if (!strcmp(which, "rkey") || !strcmp(which, "all"))
		case_rkey();
	if (!strcmp(which, "state") || !strcmp(which, "all"))
		case_state();
	if (!strcmp(which, "gone") || !strcmp(which, "all"))
		case_gone();
	if (!strcmp(which, "killed"))
		case_killed();
	printf("%s: %d failures\n", server ? "server" : "client", failures);
	return failures ? 1 : 0;
}
