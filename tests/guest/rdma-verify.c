// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Data integrity over an RC QP between two nodes: seeded random patterns
 * through SEND, SEND_WITH_IMM, RDMA WRITE, WRITE_WITH_IMM, RDMA READ and
 * the two atomics, over many sizes and offsets (zero length, one byte, odd
 * sizes, page crossings, MTU multiples +-1, the maximum), with several SGEs
 * on both sides, inline sends, unsignaled WQEs and fenced READs.  Both
 * sides derive every round from the same seed; they meet on a TCP socket
 * before and after each round.  The side that ends up holding the data
 * checks every byte against the pattern, its checksum against the one the
 * other side computed, and the guard bytes around it; atomics check the
 * returned old value and the resulting memory.  Every completion's status,
 * opcode, wr_id and length is checked.
 *
 *   rdma-verify [options]          server
 *   rdma-verify [options] HOST     client
 *
 *   -d DEV     device (softhca0)           -g IDX   GID index (0)
 *   -p PORT    TCP port (18515)            -n N     rounds (1000)
 *   -D SEC     rounds for SEC seconds at least, the client's clock; -n
 *              then bounds them (default: none)
 *   -m BYTES   MR size per side (64M)      -M BYTES largest message (4M)
 *   -s SEED    seed (client's counts; default: time)
 *   -t SEC     completion timeout (60)     -T N     QP timeout (14)
 *   -r N       QP retry_cnt (7)            -v       print every round
 *
 * Prints a summary, and the longest wait between two completions; exits 1
 * on any mismatch or unexpected status.
 */
#include <arpa/inet.h>
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
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "guest-util.h"

#define PAGE		4096
#define MAX_SGES	4
#define GUARD		16

enum op {
	OP_SEND,
	OP_SEND_IMM,
	OP_WRITE,
	OP_WRITE_IMM,
	OP_READ,
	OP_CMP_SWP,
	OP_FETCH_ADD,
	OP_COUNT,
};

static const char *const op_names[OP_COUNT] = {
	"SEND", "SEND_IMM", "WRITE", "WRITE_IMM", "READ", "CMP_SWP",
	"FETCH_ADD",
};

struct opts {
	const char *dev;
	const char *host;
	int gid_index;
	int port;
	unsigned int rounds;
	double duration_s;
	size_t mr_size;
	size_t max_msg;
	uint64_t seed;
	int timeout_s;
	int qp_timeout;
	int retry_cnt;
	bool verbose;
};

/* What each side tells the other at the start. */
struct conn_info {
	uint32_t qpn;
	uint32_t psn;
	uint8_t gid[16];
	uint64_t addr;
	uint32_t rkey;
	uint32_t max_inline;
	uint64_t seed;		/* the client's; the server takes it */
	uint64_t mr_size;
	uint64_t max_msg;
	uint32_t rounds;
	uint32_t pad;
};

/*
 * Per round, over TCP: status and the checksum of the data it holds; the
 * client's says whether the round is the last (-D).
 */
struct sync_msg {
	uint32_t round;
	uint32_t errors;
	uint64_t sum;
	uint32_t last;
	uint32_t pad;
};

/* One round, derived identically on both sides. */
struct sge_plan {
	size_t off;
	size_t len;
};

struct round {
	enum op op;
	size_t len;
	size_t remote_off;	/* in the target's MR: the server's */
	int nsge;		/* client side */
	struct sge_plan sge[MAX_SGES];
	int rnsge;		/* server's receive SGEs (SEND) */
	struct sge_plan rsge[MAX_SGES];
	bool inl;
	bool split;		/* two WQEs, the first unsignaled */
	bool fence;
	uint64_t pat_seed;
	uint64_t poison_seed;
	uint64_t init_val;	/* atomics */
	uint64_t compare_add;
	uint64_t swap;
	uint32_t imm;
};

struct ctx {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	uint32_t max_inline;
	enum ibv_mtu mtu;
	size_t mtu_bytes;
	struct conn_info local, remote;
	int sock;
};

struct stats {
	unsigned long ops[OP_COUNT];
	unsigned long long bytes;
	unsigned long wqes;
	unsigned long errors;
	uint64_t sum;
};

static struct opts o = {
	.dev = "softhca0",
	.port = 18515,
	.rounds = 1000,
	.mr_size = 64 << 20,
	.max_msg = 4 << 20,
	.timeout_s = 60,
	.qp_timeout = 14,
	.retry_cnt = 7,
};

static struct stats st;
static unsigned int cur_round;
static bool peer_failed;	/* the other side saw errors this round */
static bool last_round;		/* the client ends the run with this round */

static void err(const char *fmt, ...)
{
	va_list ap;

	st.errors++;
	if (st.errors > 50)
		return;
	fprintf(stderr, "round %u: ", cur_round);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "rdma-verify: round %u: ", cur_round);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* --- patterns ----------------------------------------------------------- */

static uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state += 0x9e3779b97f4a7c15ULL;
	return splitmix64(rng_state);
}

static size_t rnd_below(size_t n)
{
	return n ? rnd() % n : 0;
}

/* Byte @i of the stream @seed: any piece can be made on its own. */
static void pattern(uint8_t *dst, size_t len, uint64_t seed, size_t pos)
{
	while (len) {
		uint64_t w = splitmix64(seed ^ (pos >> 3));
		size_t sh = pos & 7;

		for (; sh < 8 && len; sh++, len--, pos++)
			*dst++ = w >> (sh * 8);
	}
}

/* Compares @len bytes at @p with the stream; returns the first bad index. */
static long pattern_check(const uint8_t *p, size_t len, uint64_t seed,
			  size_t pos)
{
	uint8_t tmp[4096];
	size_t done = 0;

	while (done < len) {
		size_t n = len - done < sizeof(tmp) ? len - done : sizeof(tmp);

		pattern(tmp, n, seed, pos + done);
		if (memcmp(tmp, p + done, n)) {
			for (size_t i = 0; i < n; i++)
				if (tmp[i] != p[done + i])
					return done + i;
		}
		done += n;
	}
	return -1;
}

static uint64_t fnv(uint64_t h, const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

#define FNV_INIT 0xcbf29ce484222325ULL

/* --- the round plan ------------------------------------------------------ */

static size_t pick_len(const struct ctx *c)
{
	size_t m = c->mtu_bytes, max = o.max_msg, len;

	switch (rnd_below(12)) {
	case 0:
		len = rnd_below(3);			/* 0, 1, 2 */
		break;
	case 1:
		len = rnd_below(64) | 1;		/* odd, small */
		break;
	case 2:
		len = m * (1 + rnd_below(8)) + rnd_below(3) - 1; /* MTU +-1 */
		break;
	case 3:
		len = PAGE * (1 + rnd_below(4)) + rnd_below(3) - 1;
		break;
	case 4:
		len = rnd_below(c->max_inline + 1);
		break;
	case 5:
		len = rnd_below(max / 4 + 1);
		break;
	case 6:
		len = rnd_below(65536) | 1;
		break;
	case 7:
		len = (rnd_below(5) == 0) ? max : rnd_below(max + 1);
		break;
	default:
		len = rnd_below(8192);
		break;
	}
	return len > max ? max : len;
}

/* Splits @len into @n pieces at scattered offsets of an MR of o.mr_size. */
static int plan_sges(struct sge_plan *sge, size_t len, size_t extra)
{
	int n = 1 + rnd_below(MAX_SGES);
	size_t left = len + extra, off, room;

	if (left < (size_t)n)
		n = left ? left : 1;
	/* spread over half the MR; gaps are unaligned, some cross pages */
	room = o.mr_size / 2 - left;
	off = GUARD + rnd_below(room / 2 / n);
	for (int i = 0; i < n; i++) {
		size_t l = i == n - 1 ? left : rnd_below(left / (n - i) * 2 + 1);

		if (l > left)
			l = left;
		sge[i].off = off;
		sge[i].len = l;
		left -= l;
		off += l + GUARD + rnd_below(room / 2 / n);
	}
	return n;
}

static void plan_round(const struct ctx *c, struct round *r, unsigned int i)
{
	size_t len;

	memset(r, 0, sizeof(*r));
	r->op = rnd_below(OP_COUNT);
	r->pat_seed = rnd();
	r->poison_seed = rnd();
	r->imm = (uint32_t)rnd();
	if (r->op == OP_CMP_SWP || r->op == OP_FETCH_ADD) {
		r->len = 8;
		/* 8-byte aligned, anywhere, sometimes the last word */
		r->remote_off = rnd_below(o.mr_size / 8) * 8;
		if (!rnd_below(8))
			r->remote_off = o.mr_size - 8;
		r->nsge = 1;
		r->sge[0].off = o.mr_size / 2 + rnd_below(o.mr_size / 16) * 8;
		r->sge[0].len = 8;
		r->init_val = rnd();
		r->compare_add = rnd_below(2) ? r->init_val : rnd();
		r->swap = rnd();
		r->fence = rnd_below(2);
		return;
	}
	/* the first round is the biggest: exhaust the largest size once */
	len = i == 0 ? o.max_msg : pick_len(c);
	r->len = len;
	/* the remote range: anywhere, often crossing a page or at the end */
	switch (rnd_below(4)) {
	case 0:
		r->remote_off = o.mr_size - GUARD - len;
		break;
	case 1:
		r->remote_off = (rnd_below((o.mr_size - len) / PAGE) * PAGE) +
				PAGE - 1 - rnd_below(len < PAGE ? len + 1 : PAGE);
		break;
	default:
		r->remote_off = GUARD + rnd_below(o.mr_size - len - 2 * GUARD);
		break;
	}
	if (r->remote_off < GUARD)
		r->remote_off = GUARD;
	if (r->remote_off + len + GUARD > o.mr_size)
		r->remote_off = o.mr_size - GUARD - len;
	r->nsge = plan_sges(r->sge, len, 0);
	/* local SGEs live in the upper half of the client's MR */
	for (int k = 0; k < r->nsge; k++)
		r->sge[k].off += o.mr_size / 2;
	r->inl = (r->op == OP_SEND || r->op == OP_SEND_IMM ||
		  r->op == OP_WRITE || r->op == OP_WRITE_IMM) &&
		 len <= c->max_inline && rnd_below(2);
	r->split = (r->op == OP_WRITE || r->op == OP_READ) && r->nsge > 1 &&
		   rnd_below(2);
	r->fence = r->op == OP_READ && rnd_below(2);
	if (r->op == OP_SEND || r->op == OP_SEND_IMM) {
		/* receive SGEs in the server's lower half, some slack after */
		r->rnsge = plan_sges(r->rsge, len, rnd_below(3) ? 0 :
				     rnd_below(4096));
	}
}

/* --- verbs set-up -------------------------------------------------------- */

static void setup(struct ctx *c)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 0,
		.cap = {
			.max_send_wr = 64,
			.max_recv_wr = 64,
			.max_send_sge = MAX_SGES,
			.max_recv_sge = MAX_SGES,
			.max_inline_data = 256,
		},
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};
	struct ibv_port_attr port;
	union ibv_gid gid;

	c->ctx = guest_open_device(o.dev);
	if (!c->ctx)
		die("cannot open %s", o.dev);
	if (ibv_query_port(c->ctx, 1, &port))
		die("query_port");
	c->mtu = port.active_mtu;
	c->mtu_bytes = 128u << c->mtu;
	c->pd = ibv_alloc_pd(c->ctx);
	if (!c->pd)
		die("alloc_pd");
	c->buf = aligned_alloc(PAGE, o.mr_size);
	if (!c->buf)
		die("no memory for %zu bytes", o.mr_size);
	memset(c->buf, 0x5a, o.mr_size);
	c->mr = ibv_reg_mr(c->pd, c->buf, o.mr_size,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	if (!c->mr)
		die("reg_mr %zu bytes: %s", o.mr_size, strerror(errno));
	c->cq = ibv_create_cq(c->ctx, 256, NULL, NULL, 0);
	if (!c->cq)
		die("create_cq");
	init.send_cq = c->cq;
	init.recv_cq = c->cq;
	c->qp = ibv_create_qp(c->pd, &init);
	if (!c->qp) {
		init.cap.max_inline_data = 64;
		c->qp = ibv_create_qp(c->pd, &init);
	}
	if (!c->qp)
		die("create_qp: %s", strerror(errno));
	c->max_inline = init.cap.max_inline_data;
	if (ibv_modify_qp(c->qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("modify_qp INIT");
	if (ibv_query_gid(c->ctx, 1, o.gid_index, &gid))
		die("query_gid %d", o.gid_index);

	c->local.qpn = c->qp->qp_num;
	c->local.psn = 0xfffe00 | (rand() & 0xff);	/* wraps in the run */
	memcpy(c->local.gid, gid.raw, 16);
	c->local.addr = (uintptr_t)c->buf;
	c->local.rkey = c->mr->rkey;
	c->local.max_inline = c->max_inline;
	c->local.seed = o.seed;
	c->local.mr_size = o.mr_size;
	c->local.max_msg = o.max_msg;
	c->local.rounds = o.rounds;
}

static void connect_qp(struct ctx *c)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = c->mtu,
		.dest_qp_num = c->remote.qpn,
		.rq_psn = c->remote.psn,
		.max_dest_rd_atomic = 16,
		.min_rnr_timer = 12,
		.ah_attr = {
			.is_global = 1,
			.port_num = 1,
			.grh = {
				.sgid_index = o.gid_index,
				.hop_limit = 64,
			},
		},
	};

	memcpy(attr.ah_attr.grh.dgid.raw, c->remote.gid, 16);
	if (ibv_modify_qp(c->qp, &attr, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("modify_qp RTR: %s", strerror(errno));
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = c->local.psn;
	attr.timeout = o.qp_timeout;
	attr.retry_cnt = o.retry_cnt;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = 16;
	if (ibv_modify_qp(c->qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN |
			  IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify_qp RTS: %s", strerror(errno));
}

/* --- TCP ----------------------------------------------------------------- */

static void xfer(int fd, void *p, size_t len, bool send_it)
{
	if (guest_xfer(fd, p, len, send_it))
		die("peer socket: %s", strerror(errno));
}

static void tx(int fd, const void *p, size_t len)
{
	xfer(fd, (void *)p, len, true);
}

static void rx(int fd, void *p, size_t len)
{
	xfer(fd, p, len, false);
}

/* --- completions --------------------------------------------------------- */

/*
 * The longest this side waited between two completions, rounds and their
 * TCP meetings included: what a stall of the peer (its migration) cost.
 */
static double last_wc, longest_gap;

/* Polls one completion and checks it; false if none came in time. */
static bool expect_wc(struct ctx *c, uint64_t wr_id, enum ibv_wc_opcode op,
		      long byte_len, bool imm, uint32_t imm_data)
{
	double deadline = guest_now() + o.timeout_s;
	struct ibv_wc wc;
	int n;

	while ((n = ibv_poll_cq(c->cq, 1, &wc)) == 0) {
		if (guest_now() > deadline) {
			err("no completion for wr_id %#" PRIx64 " in %d s",
			    wr_id, o.timeout_s);
			return false;
		}
	}
	if (last_wc && guest_now() - last_wc > longest_gap)
		longest_gap = guest_now() - last_wc;
	last_wc = guest_now();
	if (n < 0)
		die("poll_cq: %d", n);
	if (wc.status != IBV_WC_SUCCESS) {
		err("wr_id %#" PRIx64 ": status %s (%d), vendor_err %#x",
		    wc.wr_id, ibv_wc_status_str(wc.status), wc.status,
		    wc.vendor_err);
		return false;
	}
	if (wc.wr_id != wr_id)
		err("wr_id %#" PRIx64 ", expected %#" PRIx64, wc.wr_id, wr_id);
	if (wc.opcode != op)
		err("wr_id %#" PRIx64 ": opcode %d, expected %d", wc.wr_id,
		    wc.opcode, op);
	if (byte_len >= 0 && wc.byte_len != (uint32_t)byte_len)
		err("wr_id %#" PRIx64 ": byte_len %u, expected %ld", wc.wr_id,
		    wc.byte_len, byte_len);
	if (!!(wc.wc_flags & IBV_WC_WITH_IMM) != imm)
		err("wr_id %#" PRIx64 ": wc_flags %#x", wc.wr_id, wc.wc_flags);
	else if (imm && ntohl(wc.imm_data) != imm_data)
		err("wr_id %#" PRIx64 ": imm %#x, expected %#x", wc.wr_id,
		    ntohl(wc.imm_data), imm_data);
	if (wc.qp_num != c->qp->qp_num)
		err("qp_num %u", wc.qp_num);
	return true;
}

/* --- checks -------------------------------------------------------------- */

/* The pieces hold the stream; the guards around them the poison. */
static uint64_t check_pieces(const struct ctx *c, const struct round *r,
			     const struct sge_plan *p, int n, size_t len,
			     const char *what)
{
	uint64_t h = FNV_INIT;
	size_t pos = 0;

	for (int i = 0; i < n; i++) {
		const uint8_t *b = c->buf + p[i].off;
		size_t l = p[i].len, got = pos + l > len ? len - pos : l;
		long bad;

		if (pos >= len)
			got = 0;
		bad = pattern_check(b, got, r->pat_seed, pos);
		if (bad >= 0) {
			uint8_t want;

			pattern(&want, 1, r->pat_seed, pos + bad);
			err("%s %s len %zu: piece %d (at %#zx) byte %ld "
			    "(stream %zu) is %#x, expected %#x",
			    op_names[r->op], what, len, i, p[i].off, bad,
			    pos + bad, b[bad], want);
		}
		h = fnv(h, b, got);
		/* what lies past the message stays poisoned */
		if (got < l && pattern_check(b + got, l - got, r->poison_seed,
					     p[i].off + got) >= 0)
			err("%s %s: bytes past the message changed",
			    op_names[r->op], what);
		if (pattern_check(b - GUARD, GUARD, r->poison_seed,
				  p[i].off - GUARD) >= 0 ||
		    pattern_check(b + l, GUARD, r->poison_seed,
				  p[i].off + l) >= 0)
			err("%s %s: guard bytes around piece %d changed",
			    op_names[r->op], what, i);
		pos += got;
	}
	return h;
}

static void poison(struct ctx *c, const struct round *r,
		   const struct sge_plan *p, int n)
{
	for (int i = 0; i < n; i++)
		pattern(c->buf + p[i].off - GUARD, p[i].len + 2 * GUARD,
			r->poison_seed, p[i].off - GUARD);
}

static void fill(struct ctx *c, const struct round *r,
		 const struct sge_plan *p, int n)
{
	size_t pos = 0;

	for (int i = 0; i < n; i++) {
		pattern(c->buf + p[i].off, p[i].len, r->pat_seed, pos);
		pos += p[i].len;
	}
}

static uint64_t sum_pieces(const struct ctx *c, const struct sge_plan *p,
			   int n)
{
	uint64_t h = FNV_INIT;

	for (int i = 0; i < n; i++)
		h = fnv(h, c->buf + p[i].off, p[i].len);
	return h;
}

static void rsync(struct ctx *c, uint32_t errors, uint64_t sum,
		  struct sync_msg *peer)
{
	struct sync_msg m = { cur_round, errors, sum, last_round, 0 };

	tx(c->sock, &m, sizeof(m));
	rx(c->sock, peer, sizeof(*peer));
	if (peer->round != cur_round)
		die("out of step: peer at round %u", peer->round);
	if (peer->last)
		last_round = true;
}

/* --- the two sides ------------------------------------------------------- */

static void post_send(struct ctx *c, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	int e = ibv_post_send(c->qp, wr, &bad);

	if (e)
		die("post_send: %s", strerror(e));
	for (; wr; wr = wr->next)
		st.wqes++;
}

static void client_round(struct ctx *c, const struct round *r)
{
	struct ibv_sge sg[MAX_SGES];
	struct ibv_send_wr wr[2];
	struct sync_msg peer;
	uint64_t sum = 0, *ret;
	unsigned long before = st.errors;
	uint64_t wr_id = ((uint64_t)cur_round << 8) | 1;
	enum ibv_wc_opcode wcop = IBV_WC_SEND;
	long len = -1;

	for (int i = 0; i < r->nsge; i++) {
		sg[i].addr = (uintptr_t)c->buf + r->sge[i].off;
		sg[i].length = r->sge[i].len;
		sg[i].lkey = c->mr->lkey;
	}
	memset(wr, 0, sizeof(wr));
	wr[0].wr_id = wr_id;
	wr[0].sg_list = sg;
	wr[0].num_sge = r->nsge;
	wr[0].send_flags = IBV_SEND_SIGNALED;
	wr[0].wr.rdma.remote_addr = c->remote.addr + r->remote_off;
	wr[0].wr.rdma.rkey = c->remote.rkey;

	switch (r->op) {
	case OP_SEND:
	case OP_SEND_IMM:
	case OP_WRITE:
	case OP_WRITE_IMM:
		fill(c, r, r->sge, r->nsge);
		sum = sum_pieces(c, r->sge, r->nsge);
		break;
	case OP_READ:
		poison(c, r, r->sge, r->nsge);
		break;
	default:
		ret = (uint64_t *)(c->buf + r->sge[0].off);
		*ret = ~r->init_val;
		break;
	}
	/* the server has prepared its side */
	rx(c->sock, &peer, sizeof(peer));

	switch (r->op) {
	case OP_SEND:
		wr[0].opcode = IBV_WR_SEND;
		break;
	case OP_SEND_IMM:
		wr[0].opcode = IBV_WR_SEND_WITH_IMM;
		wr[0].imm_data = htonl(r->imm);
		break;
	case OP_WRITE:
		wr[0].opcode = IBV_WR_RDMA_WRITE;
		wcop = IBV_WC_RDMA_WRITE;
		break;
	case OP_WRITE_IMM:
		wr[0].opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
		wr[0].imm_data = htonl(r->imm);
		wcop = IBV_WC_RDMA_WRITE;
		break;
	case OP_READ:
		wr[0].opcode = IBV_WR_RDMA_READ;
		wcop = IBV_WC_RDMA_READ;
		if (r->fence)
			wr[0].send_flags |= IBV_SEND_FENCE;
		break;
	case OP_CMP_SWP:
	case OP_FETCH_ADD:
		wr[0].opcode = r->op == OP_CMP_SWP ? IBV_WR_ATOMIC_CMP_AND_SWP :
						     IBV_WR_ATOMIC_FETCH_AND_ADD;
		wcop = r->op == OP_CMP_SWP ? IBV_WC_COMP_SWAP :
					     IBV_WC_FETCH_ADD;
		wr[0].wr.atomic.remote_addr = c->remote.addr + r->remote_off;
		wr[0].wr.atomic.rkey = c->remote.rkey;
		wr[0].wr.atomic.compare_add = r->compare_add;
		wr[0].wr.atomic.swap = r->swap;
		if (r->fence)
			wr[0].send_flags |= IBV_SEND_FENCE;
		break;
	default:
		break;
	}
	if (r->inl)
		wr[0].send_flags |= IBV_SEND_INLINE;
	if (r->split) {
		/* SGE 0 goes first, unsignaled; the rest follows signaled */
		size_t first = r->sge[0].len;

		wr[1] = wr[0];
		wr[0].num_sge = 1;
		wr[0].send_flags &= ~IBV_SEND_SIGNALED;
		wr[0].wr_id = wr_id + 1;
		wr[0].next = &wr[1];
		wr[1].sg_list = sg + 1;
		wr[1].num_sge = r->nsge - 1;
		wr[1].wr.rdma.remote_addr += first;
	}
	post_send(c, wr);
	if (r->op == OP_READ)
		len = r->split ? r->len - r->sge[0].len : r->len;
	else if (r->op >= OP_CMP_SWP)
		len = 8;
	expect_wc(c, wr_id, wcop, len, false, 0);

	/* the side holding the data checks it */
	if (r->op == OP_READ) {
		sum = check_pieces(c, r, r->sge, r->nsge, r->len, "read data");
	} else if (r->op >= OP_CMP_SWP) {
		ret = (uint64_t *)(c->buf + r->sge[0].off);
		if (*ret != r->init_val)
			err("%s returned %#" PRIx64 ", expected %#" PRIx64,
			    op_names[r->op], *ret, r->init_val);
		sum = *ret;
	}
	rsync(c, st.errors - before, sum, &peer);
	if (r->op == OP_READ && peer.sum != sum)
		err("READ checksum %#" PRIx64 ", server's %#" PRIx64, sum,
		    peer.sum);
	st.errors += peer.errors;	/* the server's */
	peer_failed = st.errors - before;
	if (r->op >= OP_CMP_SWP)
		sum = peer.sum;		/* what memory holds now */
	st.sum = fnv(st.sum, (uint8_t *)&sum, sizeof(sum));
}

static void server_round(struct ctx *c, const struct round *r)
{
	struct ibv_sge sg[MAX_SGES];
	struct ibv_recv_wr rwr = { 0 }, *bad;
	struct sge_plan target = { r->remote_off, r->len };
	struct sync_msg peer;
	uint64_t sum = 0, *mem = (uint64_t *)(c->buf + r->remote_off);
	unsigned long before = st.errors;
	uint64_t wr_id = ((uint64_t)cur_round << 8) | 2;

	switch (r->op) {
	case OP_SEND:
	case OP_SEND_IMM:
		poison(c, r, r->rsge, r->rnsge);
		for (int i = 0; i < r->rnsge; i++) {
			sg[i].addr = (uintptr_t)c->buf + r->rsge[i].off;
			sg[i].length = r->rsge[i].len;
			sg[i].lkey = c->mr->lkey;
		}
		rwr.sg_list = sg;
		rwr.num_sge = r->rnsge;
		break;
	case OP_WRITE:
	case OP_WRITE_IMM:
		poison(c, r, &target, 1);
		/* WRITE_IMM consumes a receive WQE without SGEs */
		break;
	case OP_READ:
		poison(c, r, &target, 1);
		fill(c, r, &target, 1);
		sum = sum_pieces(c, &target, 1);
		break;
	default:
		*mem = r->init_val;
		break;
	}
	if (r->op == OP_SEND || r->op == OP_SEND_IMM || r->op == OP_WRITE_IMM) {
		rwr.wr_id = wr_id;
		if (ibv_post_recv(c->qp, &rwr, &bad))
			die("post_recv");
	}
	rsync(c, 0, sum, &peer);	/* ready; the client's data is sent */
	/* the client's WQE failed: nothing to wait for or check */
	peer_failed = peer.errors;
	if (peer_failed) {
		printf("round %u: the client failed %s len %zu\n", cur_round,
		       op_names[r->op], r->len);
		peer.errors = 0;
		tx(c->sock, &peer, sizeof(peer));
		return;
	}

	switch (r->op) {
	case OP_SEND:
	case OP_SEND_IMM:
		expect_wc(c, wr_id, IBV_WC_RECV, r->len, r->op == OP_SEND_IMM,
			  r->imm);
		sum = check_pieces(c, r, r->rsge, r->rnsge, r->len, "received");
		break;
	case OP_WRITE_IMM:
		expect_wc(c, wr_id, IBV_WC_RECV_RDMA_WITH_IMM, r->len, true,
			  r->imm);
		/* fall through */
	case OP_WRITE:
		sum = check_pieces(c, r, &target, 1, r->len, "written");
		break;
	case OP_READ:
		/* the READ must not have changed the source */
		if (pattern_check(c->buf + r->remote_off, r->len, r->pat_seed,
				  0) >= 0)
			err("READ changed its source");
		break;
	case OP_CMP_SWP:
		sum = r->compare_add == r->init_val ? r->swap : r->init_val;
		if (*mem != sum)
			err("CMP_SWP left %#" PRIx64 ", expected %#" PRIx64,
			    *mem, sum);
		break;
	case OP_FETCH_ADD:
		sum = r->init_val + r->compare_add;
		if (*mem != sum)
			err("FETCH_ADD left %#" PRIx64 ", expected %#" PRIx64,
			    *mem, sum);
		break;
	default:
		break;
	}
	if ((r->op <= OP_WRITE_IMM) && peer.sum != sum)
		err("%s checksum %#" PRIx64 ", client's %#" PRIx64,
		    op_names[r->op], sum, peer.sum);
	if (r->op >= OP_CMP_SWP && peer.sum != r->init_val)
		err("%s: client got old value %#" PRIx64, op_names[r->op],
		    peer.sum);
	/* the client adds our errors to its own */
	peer.errors = st.errors - before;
	peer.sum = sum;
	peer.round = cur_round;
	tx(c->sock, &peer, sizeof(peer));
	st.sum = fnv(st.sum, (uint8_t *)&sum, sizeof(sum));
}

static size_t parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);

	switch (*end) {
	case 'G': case 'g': v <<= 10; /* fall through */
	case 'M': case 'm': v <<= 10; /* fall through */
	case 'K': case 'k': v <<= 10; break;
	case 0: break;
	default: die("bad size %s", s);
	}
	return v;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: rdma-verify [-d DEV] [-g GIDIDX] [-p PORT] [-n ROUNDS] [-D SEC]\n"
		"       [-m MRSIZE] [-M MAXMSG] [-s SEED] [-t SEC] [-T TIMEOUT]\n"
		"       [-r RETRY] [-v] [SERVER]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct ctx c = { 0 };
	bool server, seeded = false, counted = false;
	double start;
	int ch;

	while ((ch = getopt(argc, argv, "d:g:p:n:D:m:M:s:t:T:r:vh")) != -1) {
		switch (ch) {
		case 'd': o.dev = optarg; break;
		case 'g': o.gid_index = atoi(optarg); break;
		case 'p': o.port = atoi(optarg); break;
		case 'n': o.rounds = strtoul(optarg, NULL, 0); counted = true;
			  break;
		case 'D': o.duration_s = atof(optarg); break;
		case 'm': o.mr_size = parse_size(optarg); break;
		case 'M': o.max_msg = parse_size(optarg); break;
		case 's': o.seed = strtoull(optarg, NULL, 0); seeded = true;
			  break;
		case 't': o.timeout_s = atoi(optarg); break;
		case 'T': o.qp_timeout = atoi(optarg); break;
		case 'r': o.retry_cnt = atoi(optarg); break;
		case 'v': o.verbose = true; break;
		default: usage();
		}
	}
	if (optind < argc)
		o.host = argv[optind++];
	if (optind != argc)
		usage();
	server = !o.host;
	if (o.duration_s > 0 && !counted)
		o.rounds = UINT32_MAX;
	if (!seeded)
		o.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	srand(o.seed ^ (server ? 1 : 2));

	setup(&c);
	c.sock = server ? guest_tcp_accept(o.port) :
			  guest_tcp_connect(o.host, o.port);
	if (c.sock < 0)
		die("no TCP connection on port %d: %s", o.port, strerror(errno));
	/* a peer that hangs without closing fails us too, in bounded time */
	setsockopt(c.sock, SOL_SOCKET, SO_RCVTIMEO,
		   &(struct timeval){ .tv_sec = 2 * o.timeout_s + 60 },
		   sizeof(struct timeval));
	tx(c.sock, &c.local, sizeof(c.local));
	rx(c.sock, &c.remote, sizeof(c.remote));
	if (server) {
		/* the client decides the run */
		if (c.remote.mr_size != o.mr_size)
			die("MR sizes differ: %" PRIu64 " and %zu",
			    c.remote.mr_size, o.mr_size);
		o.seed = c.remote.seed;
		o.max_msg = c.remote.max_msg;
		o.rounds = c.remote.rounds;
	}
	if (o.max_msg > o.mr_size / 4 || o.mr_size < 65536)
		die("the MR (%zu) must hold 4 largest messages (%zu)",
		    o.mr_size, o.max_msg);
	/* both sides plan with the smaller inline limit */
	if (c.remote.max_inline < c.max_inline)
		c.max_inline = c.remote.max_inline;
	connect_qp(&c);
	printf("%s: seed %#" PRIx64 ", %u rounds, MR %zu, max message %zu, "
	       "MTU %zu, inline %u, qpn %u -> %u\n",
	       server ? "server" : "client", o.seed, o.rounds, o.mr_size,
	       o.max_msg, c.mtu_bytes, c.max_inline, c.local.qpn,
	       c.remote.qpn);
	fflush(stdout);

	rng_state = o.seed;
	st.sum = FNV_INIT;
	start = guest_now();
	for (cur_round = 0; cur_round < o.rounds; cur_round++) {
		struct round r;

		plan_round(&c, &r, cur_round);
		if (!server && o.duration_s > 0 &&
		    guest_now() - start >= o.duration_s)
			last_round = true;
		if (o.verbose)
			printf("round %u: %s len %zu remote %#zx sges %d%s%s%s\n",
			       cur_round, op_names[r.op], r.len, r.remote_off,
			       r.nsge, r.inl ? " inline" : "",
			       r.split ? " split" : "", r.fence ? " fence" : "");
		if (server)
			server_round(&c, &r);
		else
			client_round(&c, &r);
		st.ops[r.op]++;
		st.bytes += r.len;
		/*
		 * after a failure the QP is in ERR: stop, both at once; and
		 * after the round the client called the last
		 */
		if (st.errors || peer_failed || last_round) {
			cur_round++;
			break;
		}
	}
	printf("%s: %u rounds in %.1f s, %llu bytes, %lu WQEs, checksum %#"
	       PRIx64 ", errors %lu\n", server ? "server" : "client",
	       cur_round, guest_now() - start, st.bytes, st.wqes, st.sum, st.errors);
	for (int i = 0; i < OP_COUNT; i++)
		printf("  %-9s %lu\n", op_names[i], st.ops[i]);
	printf("%s: longest wait between completions %.1f ms\n",
	       server ? "server" : "client", longest_gap * 1000);
	ibv_destroy_qp(c.qp);
	ibv_destroy_cq(c.cq);
	ibv_dereg_mr(c.mr);
	ibv_dealloc_pd(c.pd);
	ibv_close_device(c.ctx);
	close(c.sock);
	return st.errors ? 1 : 0;
}
