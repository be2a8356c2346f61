// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A soak of many RC QPs at once, every byte checked.  Each of the QPs
 * plays a game of turns with its twin on the other node: in its turn a
 * side RDMA WRITEs a seeded pattern of a seeded size into the twin's
 * inbox, READs a seeded piece of the twin's shown region, FETCH_ADDs the
 * counter the twin keeps for it, and SENDs a message naming the turn.
 * The twin checks its inbox against the pattern before it takes its own
 * turn; each side checks what it READ and the counter's old value.  The
 * client starts the turns and, after the time given, ends them.  Both
 * sides derive every pattern from the seed the client sends.
 *
 *   rdma-soak [options]          server
 *   rdma-soak [options] HOST     client
 *
 *   -d DEV     device (softhca0)           -g IDX   GID index (0)
 *   -p PORT    TCP port (18600)            -q N     QPs (64)
 *   -M BYTES   largest message (16384)     -t SEC   the client's run (60)
 *   -s SEED    seed (default: time)        -w SEC   completion timeout (120)
 *
 * Prints a summary; exits 1 on any mismatch or unexpected completion.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "guest-util.h"

#define SQ_DEPTH	8
#define RD_ATOMIC	4
/*
 * 1.07 s, librdmacm's default: with hundreds of QPs in flight under TCG a
 * turn's responses can take longer than 67 ms (14), and retransmissions
 * would only add to the load.
 */
#define ACK_TIMEOUT	18
#define STOP		0xfffffffeu	/* a message that ends the game */

/*
 * A side's memory for one QP, all in one MR: four regions of max_msg bytes
 * (what it WRITEs, its inbox, the region the twin READs, where its READs
 * land), then the small things below.
 */
enum region { R_OUT, R_IN, R_SHOWN, R_READ, R_REGIONS };

/* The SEND of a turn: which turn, and how much was written. */
struct turn_msg {
	uint32_t turn;
	uint32_t size;
};

struct small {
	uint64_t counter;	/* the twin FETCH_ADDs 1 here each turn */
	uint64_t old;		/* where this side's FETCH_ADD returns */
	struct turn_msg out, in[2];
};

enum wr_kind { K_WRITE = 1, K_READ, K_ATOMIC, K_SEND, K_RECV };

/* What each side tells the other about itself, once. */
struct hello {
	uint64_t seed;		/* the client's; the server takes it */
	uint64_t addr;		/* its MR's start */
	uint32_t rkey;
	uint32_t nqp;
	uint32_t max_msg;
	uint32_t pad;
};

struct qp_state {
	struct ibv_qp *qp;
	uint32_t turn;		/* the turn this side takes next */
	uint32_t posted;	/* WQEs without a completion yet */
	uint32_t read_off, read_len;	/* of the READ in flight */
	uint64_t adds;		/* FETCH_ADDs done on the twin's counter */
	bool peer_moved;	/* the twin's message for this turn arrived */
	bool stopping, done;
};

static struct {
	bool client;
	int gid_index;
	uint32_t nqp, max_msg;
	uint64_t seed;
	double seconds, wait, start;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *mem;
	size_t per_qp;		/* bytes of memory per QP */
	struct hello peer;
	struct qp_state *qps;
	uint64_t turns, bytes, reads, atomics, errors;
} s;

static void die(const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", s.client ? "client" : "server", what,
		strerror(errno));
	exit(1);
}

static uint64_t mix(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Value i of side's (the client's: true) seeded stream what of QP qp. */
static uint64_t seeded(bool side, uint32_t qp, uint32_t what, uint64_t i)
{
	return mix(s.seed ^ mix((uint64_t)side << 63 | (uint64_t)qp << 32 | what) ^
		   (i + 1) * 0x9e3779b97f4a7c15ull);
}

/* Byte i of the pattern what of side's QP qp. */
static uint8_t pattern_byte(bool side, uint32_t qp, uint32_t what, size_t i)
{
	return seeded(side, qp, what, i / 8) >> (8 * (i % 8));
}

static void pattern(uint8_t *p, size_t len, bool side, uint32_t qp,
		    uint32_t what)
{
	for (size_t i = 0; i < len; i++)
		p[i] = pattern_byte(side, qp, what, i);
}

static bool pattern_ok(const uint8_t *p, size_t len, bool side, uint32_t qp,
		       uint32_t what, size_t from)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != pattern_byte(side, qp, what, from + i))
			return false;
	return true;
}

/* The shown region's pattern, and the size of a turn's WRITE. */
#define SHOWN	0xffffffffu

static uint32_t turn_size(bool side, uint32_t qp, uint32_t turn)
{
	return 1 + seeded(side, qp, SHOWN - 1, turn) % s.max_msg;
}

static uint8_t *region(uint32_t qp, enum region r)
{
	return s.mem + qp * s.per_qp + r * (size_t)s.max_msg;
}

static struct small *small(uint32_t qp)
{
	return (struct small *)region(qp, R_REGIONS);
}

static uint64_t remote(uint32_t qp, enum region r)
{
	return s.peer.addr + qp * s.per_qp + r * (uint64_t)s.max_msg;
}

static uint64_t wr_id(uint32_t qp, enum wr_kind k, unsigned slot)
{
	return (uint64_t)qp << 8 | k << 1 | slot;
}

static void post_recv(uint32_t i, unsigned slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)&small(i)->in[slot],
		.length = sizeof(struct turn_msg),
		.lkey = s.mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = wr_id(i, K_RECV, slot),
				  .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_recv(s.qps[i].qp, &wr, &bad))
		die("post_recv");
}

/*
 * Take a turn on QP i: WRITE the turn's pattern into the twin's inbox,
 * READ a piece of its shown region, FETCH_ADD its counter, SEND the turn.
 * A stopping turn only SENDs STOP.
 */
static void take_turn(uint32_t i)
{
	struct qp_state *q = &s.qps[i];
	struct small *m = small(i);
	uint32_t size = q->stopping ? 0 : turn_size(s.client, i, q->turn);
	uint64_t r = seeded(s.client, i, SHOWN - 2, q->turn);
	struct ibv_sge sges[4] = {
		{ (uintptr_t)region(i, R_OUT), size, s.mr->lkey },
		{ (uintptr_t)region(i, R_READ), 0, s.mr->lkey },
		{ (uintptr_t)&m->old, 8, s.mr->lkey },
		{ (uintptr_t)&m->out, sizeof(m->out), s.mr->lkey },
	};
	struct ibv_send_wr wrs[4], *bad;
	int n = 0;

	memset(wrs, 0, sizeof(wrs));
	if (size) {
		pattern(region(i, R_OUT), size, s.client, i, q->turn);
		wrs[n++] = (struct ibv_send_wr) {
			.wr_id = wr_id(i, K_WRITE, 0), .sg_list = &sges[0],
			.num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { .remote_addr = remote(i, R_IN),
				      .rkey = s.peer.rkey },
		};
		q->read_len = 1 + r % s.max_msg;
		q->read_off = (r >> 32) % (s.max_msg - q->read_len + 1);
		sges[1].length = q->read_len;
		wrs[n++] = (struct ibv_send_wr) {
			.wr_id = wr_id(i, K_READ, 0), .sg_list = &sges[1],
			.num_sge = 1, .opcode = IBV_WR_RDMA_READ,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { .remote_addr = remote(i, R_SHOWN) +
						    q->read_off,
				      .rkey = s.peer.rkey },
		};
		wrs[n++] = (struct ibv_send_wr) {
			.wr_id = wr_id(i, K_ATOMIC, 0), .sg_list = &sges[2],
			.num_sge = 1, .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.atomic = { .remote_addr = remote(i, R_REGIONS),
					.compare_add = 1, .rkey = s.peer.rkey },
		};
	}
	m->out = (struct turn_msg) { q->stopping ? STOP : q->turn, size };
	wrs[n++] = (struct ibv_send_wr) {
		.wr_id = wr_id(i, K_SEND, 0), .sg_list = &sges[3], .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	for (int k = 0; k + 1 < n; k++)
		wrs[k].next = &wrs[k + 1];
	if (ibv_post_send(q->qp, wrs, &bad))
		die("post_send");
	q->posted += n;
	q->peer_moved = false;
	if (q->stopping) {
		q->done = true;
	} else {
		q->turn++;
		s.turns++;
	}
}

/* A turn starts once the twin moved and this side's last one is done. */
static void maybe_turn(uint32_t i)
{
	struct qp_state *q = &s.qps[i];

	if (q->done || q->posted || !q->peer_moved)
		return;
	if (s.client && guest_now() - s.start >= s.seconds)
		q->stopping = true;
	take_turn(i);
}

static void check(bool ok, uint32_t i, const char *what)
{
	if (!ok) {
		printf("FAIL qp %u turn %u: %s\n", i, s.qps[i].turn, what);
		s.errors++;
	}
}

/* The twin's message for a turn (or STOP) on QP i arrived in slot. */
static void twin_moved(uint32_t i, unsigned slot)
{
	struct qp_state *q = &s.qps[i];
	struct turn_msg m = small(i)->in[slot];
	/* the client's turn t answers the server's t - 1 */
	uint32_t t = s.client ? q->turn - 1 : q->turn;

	if (m.turn == STOP && !s.client) {
		q->done = true;
		return;
	}
	post_recv(i, slot);
	check(m.turn == t, i, "the twin's message names another turn");
	check(m.size == turn_size(!s.client, i, t), i,
	      "the twin wrote another size");
	check(pattern_ok(region(i, R_IN), m.size, !s.client, i, t, 0), i,
	      "the inbox differs from the twin's pattern");
	s.bytes += m.size;
	q->peer_moved = true;
}

static void completed(const struct ibv_wc *wc)
{
	uint32_t i = wc->wr_id >> 8;
	enum wr_kind k = (wc->wr_id >> 1) & 0x7f;
	struct qp_state *q;

	if (i >= s.nqp) {
		printf("FAIL completion of unknown wr_id 0x%" PRIx64 "\n",
		       wc->wr_id);
		exit(1);
	}
	q = &s.qps[i];
	if (wc->status != IBV_WC_SUCCESS) {
		printf("FAIL qp %u turn %u: wr kind %d completed with %s\n", i,
		       q->turn, k, ibv_wc_status_str(wc->status));
		exit(1);
	}
	if (k == K_RECV) {
		check(wc->opcode == IBV_WC_RECV &&
		      wc->byte_len == sizeof(struct turn_msg), i,
		      "receive opcode or length");
		twin_moved(i, wc->wr_id & 1);
	} else {
		q->posted--;
	}
	if (k == K_READ) {
		check(wc->opcode == IBV_WC_RDMA_READ, i, "READ opcode");
		check(pattern_ok(region(i, R_READ), q->read_len, !s.client, i,
				 SHOWN, q->read_off), i,
		      "READ data differs from the twin's shown region");
		s.bytes += q->read_len;
		s.reads++;
	} else if (k == K_ATOMIC) {
		check(wc->opcode == IBV_WC_FETCH_ADD, i, "FETCH_ADD opcode");
		check(small(i)->old == q->adds, i,
		      "FETCH_ADD returned another old value");
		q->adds++;
		s.atomics++;
	}
	maybe_turn(i);
}

static void setup(const char *dev)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = SQ_DEPTH, .max_recv_wr = 2,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};
	struct ibv_context *ctx = guest_open_device(dev);
	size_t bytes;

	if (!ctx)
		die("open device");
	s.per_qp = R_REGIONS * (size_t)s.max_msg + 64;
	bytes = (s.nqp * s.per_qp + 4095) & ~(size_t)4095;
	s.pd = ibv_alloc_pd(ctx);
	s.cq = ibv_create_cq(ctx, s.nqp * (SQ_DEPTH + 2), NULL, NULL, 0);
	s.mem = aligned_alloc(4096, bytes);
	s.qps = calloc(s.nqp, sizeof(*s.qps));
	if (!s.pd || !s.cq || !s.mem || !s.qps)
		die("alloc_pd, create_cq, memory");
	memset(s.mem, 0, bytes);
	s.mr = ibv_reg_mr(s.pd, s.mem, bytes, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC);
	if (!s.mr)
		die("reg_mr");
	init.send_cq = init.recv_cq = s.cq;
	for (uint32_t i = 0; i < s.nqp; i++) {
		s.qps[i].qp = ibv_create_qp(s.pd, &init);
		if (!s.qps[i].qp)
			die("create_qp");
		if (ibv_modify_qp(s.qps[i].qp, &attr, IBV_QP_STATE |
				  IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS))
			die("modify_qp INIT");
		post_recv(i, 0);
		post_recv(i, 1);
	}
}

/* Meet the twin: agree on the seed, exchange the QPs, connect them. */
static void meet(int fd)
{
	struct hello me = {
		.seed = s.seed, .addr = (uintptr_t)s.mem, .rkey = s.mr->rkey,
		.nqp = s.nqp, .max_msg = s.max_msg,
	};
	struct guest_rc_peer *mine, *theirs;
	union ibv_gid gid;
	uint8_t go = 1;

	if (ibv_query_gid(s.qps[0].qp->context, 1, s.gid_index, &gid))
		die("query_gid");
	if (guest_xfer(fd, &me, sizeof(me), true) ||
	    guest_xfer(fd, &s.peer, sizeof(s.peer), false))
		die("hello");
	if (s.peer.nqp != s.nqp || s.peer.max_msg != s.max_msg) {
		errno = EINVAL;
		die("the twin has other -q or -M");
	}
	if (!s.client)
		s.seed = s.peer.seed;
	mine = calloc(s.nqp, sizeof(*mine));
	theirs = calloc(s.nqp, sizeof(*theirs));
	if (!mine || !theirs)
		die("calloc");
	for (uint32_t i = 0; i < s.nqp; i++) {
		mine[i].qpn = s.qps[i].qp->qp_num;
		mine[i].psn = mix(s.seed ^ s.client ^ (uint64_t)i << 8) & 0xffffff;
		memcpy(mine[i].gid, gid.raw, 16);
	}
	if (guest_xfer(fd, mine, s.nqp * sizeof(*mine), true) ||
	    guest_xfer(fd, theirs, s.nqp * sizeof(*theirs), false))
		die("QPs");
	for (uint32_t i = 0; i < s.nqp; i++) {
		pattern(region(i, R_SHOWN), s.max_msg, s.client, i, SHOWN);
		if (guest_rc_connect(s.qps[i].qp, &theirs[i], s.gid_index,
				     mine[i].psn, RD_ATOMIC, ACK_TIMEOUT))
			die("modify_qp RTR, RTS");
		s.qps[i].peer_moved = s.client;	/* the client moves first */
	}
	/* both sides in RTS before the first turn */
	if (guest_xfer(fd, &go, 1, true) || guest_xfer(fd, &go, 1, false))
		die("start");
	free(mine);
	free(theirs);
}

static bool all_done(void)
{
	for (uint32_t i = 0; i < s.nqp; i++)
		if (!s.qps[i].done || s.qps[i].posted)
			return false;
	return true;
}

static void run(void)
{
	struct ibv_wc wc[32];
	double last = guest_now();

	s.start = last;
	for (uint32_t i = 0; i < s.nqp; i++)
		maybe_turn(i);
	while (!all_done()) {
		int n = ibv_poll_cq(s.cq, 32, wc);

		if (n < 0)
			die("poll_cq");
		for (int k = 0; k < n; k++)
			completed(&wc[k]);
		if (n) {
			last = guest_now();
		} else if (guest_now() - last > s.wait) {
			printf("FAIL no completion for %.0f s\n", s.wait);
			exit(1);
		}
	}
}

int main(int argc, char **argv)
{
	const char *dev = "softhca0";
	int port = 18600, opt, fd;
	uint8_t bye = 1;

	s.nqp = 64;
	s.max_msg = 16384;
	s.seconds = 60;
	s.wait = 120;
	s.seed = time(NULL);
	while ((opt = getopt(argc, argv, "d:g:p:q:M:t:s:w:")) != -1) {
		switch (opt) {
		case 'd': dev = optarg; break;
		case 'g': s.gid_index = atoi(optarg); break;
		case 'p': port = atoi(optarg); break;
		case 'q': s.nqp = strtoul(optarg, NULL, 0); break;
		case 'M': s.max_msg = strtoul(optarg, NULL, 0); break;
		case 't': s.seconds = atof(optarg); break;
		case 's': s.seed = strtoull(optarg, NULL, 0); break;
		case 'w': s.wait = atof(optarg); break;
		default:
			fprintf(stderr, "usage: %s [-d DEV] [-g IDX] [-p PORT] "
				"[-q N] [-M BYTES] [-t SEC] [-s SEED] [-w SEC] "
				"[HOST]\n", argv[0]);
			return 2;
		}
	}
	s.client = optind < argc;
	if (!s.nqp || s.max_msg < 8) {
		errno = EINVAL;
		die("-q, -M");
	}
	setup(dev);
	fd = s.client ? guest_tcp_connect(argv[optind], port) :
			guest_tcp_accept(port);
	if (fd < 0)
		die("TCP");
	meet(fd);
	run();
	if (guest_xfer(fd, &bye, 1, true) || guest_xfer(fd, &bye, 1, false))
		die("end");
	printf("%s: %u QPs, %" PRIu64 " turns, %" PRIu64 " bytes checked, %"
	       PRIu64 " READs, %" PRIu64 " atomics in %.1f s, seed 0x%" PRIx64
	       ", errors %" PRIu64 "\n", s.client ? "client" : "server", s.nqp,
	       s.turns, s.bytes, s.reads, s.atomics, guest_now() - s.start,
	       s.seed, s.errors);
	return s.errors ? 1 : 0;
}
