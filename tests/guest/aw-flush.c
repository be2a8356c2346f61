// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * RDMA ATOMIC WRITE and FLUSH (IBA 1.5) between two nodes, through
 * ibv_wr_atomic_write() and ibv_wr_flush(): the client stores a seeded
 * 8-byte value in each slot of the server's MR, flushing ranges and the
 * whole MR on the way; then the server checks every slot.  Last, a FLUSH
 * asking for persistence, which the server's MR does not grant, must
 * complete with IBV_WC_REM_ACCESS_ERR.  Every completion's status,
 * opcode, wr_id and length is checked.  The two sides meet on TCP port
 * 18515.
 *
 *   aw-flush [-d DEV] [-g GID_INDEX] [-n SLOTS] [-s SEED]        server
 *   aw-flush [-d DEV] [-g GID_INDEX] [-n SLOTS] [-s SEED] HOST   client
 *
 * Prints a summary; exits 1 on any mismatch or unexpected status.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "guest-util.h"

#define PORT		18515
#define DEPTH		16
#define TIMEOUT_S	60
#define FLUSH_EVERY	8	/* slots between FLUSHes */

/* What each side tells the other. */
struct peer {
	uint32_t qpn;
	uint32_t psn;
	uint8_t gid[16];
	uint64_t addr;
	uint32_t rkey;
	uint32_t slots;
	uint64_t seed;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static struct ibv_mr *mr;
static uint64_t *buf;

static void die(const char *what)
{
	printf("FAIL %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t slot_value(uint64_t seed, uint32_t i)
{
	uint64_t x = seed + (i + 1) * 0x9e3779b97f4a7c15ull;

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static void setup(bool client, uint32_t slots)
{
	struct ibv_qp_init_attr_ex init = {
		.qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_ATOMIC_WRITE |
				  IBV_QP_EX_WITH_FLUSH,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_FLUSH_GLOBAL |
				   IBV_ACCESS_FLUSH_PERSISTENT,
	};
	size_t bytes = ((slots * 8 + 4095) / 4096) * 4096;

	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, DEPTH, NULL, NULL, 0);
	buf = aligned_alloc(4096, bytes);
	if (!pd || !cq || !buf)
		die("alloc_pd, create_cq");
	memset(buf, 0, bytes);
	/* the server's MR takes FLUSHes of global placement only */
	mr = ibv_reg_mr(pd, buf, bytes, IBV_ACCESS_LOCAL_WRITE |
			(client ? 0 : IBV_ACCESS_REMOTE_WRITE |
				      IBV_ACCESS_FLUSH_GLOBAL));
	if (!mr)
		die("reg_mr");
	init.pd = pd;
	init.send_cq = init.recv_cq = cq;
	qp = ibv_create_qp_ex(ctx, &init);
	if (!qp)
		die("create_qp_ex with ATOMIC_WRITE and FLUSH");
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("modify_qp INIT");
}

static void connect_qp(const struct peer *remote, int gid_index,
		       uint32_t psn)
{
	struct guest_rc_peer rc = { .qpn = remote->qpn, .psn = remote->psn };

	memcpy(rc.gid, remote->gid, 16);
	if (guest_rc_connect(qp, &rc, gid_index, psn, DEPTH, 14))
		die("modify_qp RTR, RTS");
}

/* The next completion, which must be wr_id's, with status and opcode. */
static void expect_wc(uint64_t wr_id, enum ibv_wc_status status,
		      enum ibv_wc_opcode opcode, uint32_t byte_len)
{
	double end = guest_now() + TIMEOUT_S;
	struct ibv_wc wc;
	int n;

	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0 && guest_now() < end)
		;
	if (n != 1) {
		printf("FAIL wr %" PRIu64 ": no completion in %d s\n", wr_id,
		       TIMEOUT_S);
		exit(1);
	}
	GUEST_CHECK(wc.wr_id == wr_id, "wr_id %" PRIu64 ", want %" PRIu64,
	      wc.wr_id, wr_id);
	GUEST_CHECK(wc.status == status, "wr %" PRIu64 ": %s, want %s", wr_id,
	      ibv_wc_status_str(wc.status), ibv_wc_status_str(status));
	if (status == IBV_WC_SUCCESS) {
		GUEST_CHECK(wc.opcode == opcode, "wr %" PRIu64 ": opcode %d, want %d",
		      wr_id, wc.opcode, opcode);
		GUEST_CHECK(wc.byte_len == byte_len, "wr %" PRIu64 ": byte_len %u, "
		      "want %u", wr_id, wc.byte_len, byte_len);
	}
}

/*
 * Post WR wr: an ATOMIC WRITE into the next slot, or after every
 * FLUSH_EVERY of them a FLUSH, of their range or of the whole MR (then
 * of length 0).  Whether it was a FLUSH.
 */
static bool post_one(struct ibv_qp_ex *qx, const struct peer *remote,
		     uint64_t wr, uint32_t *slot)
{
	uint64_t v = slot_value(remote->seed, *slot);

	qx->wr_id = wr;
	qx->wr_flags = IBV_SEND_SIGNALED;
	if (wr % (FLUSH_EVERY + 1) != FLUSH_EVERY) {
		ibv_wr_atomic_write(qx, remote->rkey, remote->addr + 8 * *slot,
				    &v);
		(*slot)++;
		return false;
	}
	if (wr % 2)
		ibv_wr_flush(qx, remote->rkey, remote->addr, 0,
			     IBV_FLUSH_GLOBAL, IBV_FLUSH_MR);
	else
		ibv_wr_flush(qx, remote->rkey,
			     remote->addr + 8 * (*slot - FLUSH_EVERY),
			     8 * FLUSH_EVERY, IBV_FLUSH_GLOBAL, IBV_FLUSH_RANGE);
	return true;
}

static void client_run(const struct peer *remote)
{
	struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(qp);
	uint64_t posted = 0, done = 0, flushes = 0;
	uint32_t slot = 0, wslot = 0;
	bool flush[DEPTH];

	while (slot < remote->slots || done < posted) {
		ibv_wr_start(qx);
		while (posted - done < DEPTH && slot < remote->slots) {
			flush[posted % DEPTH] = post_one(qx, remote, posted,
							 &slot);
			posted++;
		}
		if (ibv_wr_complete(qx))
			die("wr_complete");
		while (done < posted) {
			bool f = flush[done % DEPTH];

			expect_wc(done, IBV_WC_SUCCESS,
				  f ? IBV_WC_FLUSH : IBV_WC_ATOMIC_WRITE,
				  f ? (done % 2 ? 0 : 8 * FLUSH_EVERY) : 8);
			flushes += f;
			wslot += !f;
			done++;
			if (guest_failures)
				exit(1);
		}
	}
	printf("client: %u ATOMIC WRITEs, %" PRIu64 " FLUSHes\n", wslot,
	       flushes);

	/* persistence the server's MR does not grant: a remote access NAK */
	ibv_wr_start(qx);
	qx->wr_id = posted;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_flush(qx, remote->rkey, remote->addr, 8, IBV_FLUSH_PERSISTENT,
		     IBV_FLUSH_RANGE);
	if (ibv_wr_complete(qx))
		die("wr_complete");
	expect_wc(posted, IBV_WC_REM_ACCESS_ERR, IBV_WC_FLUSH, 0);
}

static void server_check(const struct peer *local)
{
	uint32_t bad = 0;

	for (uint32_t i = 0; i < local->slots; i++) {
		uint64_t want = slot_value(local->seed, i);

		if (memcmp(&buf[i], &want, 8)) {
			if (bad++ < 5)
				printf("FAIL slot %u: %#" PRIx64 ", want %#"
				       PRIx64 "\n", i, buf[i], want);
		}
	}
	GUEST_CHECK(!bad, "%u of %u slots wrong", bad, local->slots);
	printf("server: %u slots checked\n", local->slots);
}

int main(int argc, char **argv)
{
	const char *dev = "softhca0", *host;
	struct peer local = { .slots = 512, .seed = 0xa5f1 }, remote;
	int opt, gid_index = 0, fd;
	union ibv_gid gid;
	int32_t verdict;

	while ((opt = getopt(argc, argv, "d:g:n:s:")) != -1) {
		switch (opt) {
		case 'd': dev = optarg; break;
		case 'g': gid_index = atoi(optarg); break;
		case 'n': local.slots = strtoul(optarg, NULL, 0); break;
		case 's': local.seed = strtoull(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: aw-flush [-d DEV] [-g GID] "
				"[-n SLOTS] [-s SEED] [HOST]\n");
			return 2;
		}
	}
	host = optind < argc ? argv[optind] : NULL;
	if (!local.slots || local.slots > 1u << 20) {
		fprintf(stderr, "aw-flush: 1 to 2^20 slots\n");
		return 2;
	}

	ctx = guest_open_device(dev);
	if (!ctx)
		die(dev);
	setup(host != NULL, local.slots);
	if (ibv_query_gid(ctx, 1, gid_index, &gid))
		die("query_gid");
	local.qpn = qp->qp_num;
	local.psn = 0xfff000 | (getpid() & 0xfff);	/* wraps in the run */
	memcpy(local.gid, gid.raw, 16);
	local.addr = (uintptr_t)buf;
	local.rkey = mr->rkey;

	fd = host ? guest_tcp_connect(host, PORT) : guest_tcp_accept(PORT);
	if (fd < 0 || guest_xfer(fd, &local, sizeof(local), true) ||
	    guest_xfer(fd, &remote, sizeof(remote), false))
		die("exchange over TCP");
	connect_qp(&remote, gid_index, local.psn);
	/* both QPs are ready to receive before the first request goes */
	verdict = 0;
	if (guest_xfer(fd, &verdict, sizeof(verdict), true) ||
	    guest_xfer(fd, &verdict, sizeof(verdict), false))
		die("sync over TCP");

	if (host) {
		/* the server's slot count and seed rule: its MR, its check */
		client_run(&remote);
		verdict = guest_failures;
		if (guest_xfer(fd, &verdict, sizeof(verdict), true) ||
		    guest_xfer(fd, &verdict, sizeof(verdict), false))
			die("result over TCP");
		GUEST_CHECK(!verdict, "the server found %d errors", verdict);
	} else {
		if (guest_xfer(fd, &verdict, sizeof(verdict), false))
			die("result over TCP");
		GUEST_CHECK(!verdict, "the client found %d errors", verdict);
		server_check(&local);
		verdict = guest_failures;
		if (guest_xfer(fd, &verdict, sizeof(verdict), true))
			die("result over TCP");
	}
	printf("%s: %s\n", host ? "client" : "server",
	       guest_failures ? "FAILED" : "ok");
	return guest_failures ? 1 : 0;
}
