// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Verbs conformance on one node, its QPs looped back through the device
 * (spec §7.1): what verbs consumers and real HCAs (mlx5) expect where the
 * provider or the driver once answered otherwise.  Each case is a bug
 * that was:
 *
 *   cq-zero-entries   create_cq, create_cq_ex and resize_cq of 0 entries
 *                     fail with EINVAL (they succeeded)
 *   ud-unknown-qpn    a datagram to a QPN no QP has, of 24 bits or more,
 *                     posts and completes at the sender, and the receiver
 *                     drops it (post_send failed with EINVAL)
 *   zero-length-mr    ibv_reg_mr of 0 bytes succeeds, and 0-byte SEND,
 *                     WRITE and READ through it complete (reg_mr failed)
 *   atomic-bad        a misaligned FETCH_ADD and a CMP_SWP with a 4-byte
 *                     SGE post and complete with an error (post_send
 *                     failed with EINVAL)
 *   mw-type2b         query_device reports MEM_WINDOW_TYPE_2B, not 2A, and
 *                     a type 2 window behaves so: bound only by a QP of
 *                     its PD, then reached through that QP alone, and
 *                     invalidated by another QP of the PD (the device
 *                     reported 2A, and suites skipped their type 2 tests)
 *
 * and each limit query_device reports can be created, on its own:
 *
 *   max-qp, max-ah, max-cq, max-pd, max-mr, max-mw, max-srq
 *                     that many QPs (RC), AHs, CQs, PDs, MRs, windows
 *                     (type 1), SRQs, all together
 *   max-cqe           a CQ of max_cqe entries
 *   max-qp-wr         an RC QP of max_qp_wr send and receive WQEs
 *   max-sge           an RC QP of max_sge send and receive SGEs
 *   max-mcast         max_mcast_qp_attach UD QPs in each of max_mcast_grp
 *                     groups: max_total_mcast_qp_attach attachments
 *   max-qp-rd-atom    an RC QP of max_qp_rd_atom READs and atomics each way
 *   srq-max-wr-sge    an SRQ of max_srq_wr WQEs of max_srq_sge SGEs
 *
 *   verbs-conformance [-d DEV] -c CASE
 *
 * Prints one line per failed check; exits 0 if all passed, 1 if one
 * failed, 2 on a setup error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "guest-util.h"

#define QKEY		0x11111111u
#define GRH_BYTES	40
#define MSG_LEN		64
#define SLOT		(GRH_BYTES + MSG_LEN)
#define DEPTH		8
/* creating a limit's worth of objects: in this much guest time at most */
#define LIMIT_SECONDS	300

static const char *dev_name = "softhca0";
static struct ibv_context *ctx;
static struct ibv_device_attr dev_attr;
static struct ibv_pd *pd;
static int gid_index = -1;
static union ibv_gid gid;

/* The device, a PD, and its first RoCE v2 GID of an IPv4 address. */
static void open_device(void)
{
	static const uint8_t v4_prefix[12] = { [10] = 0xff, [11] = 0xff };
	struct ibv_gid_entry entries[32];
	ssize_t n;

	ctx = guest_open_device(dev_name);
	if (!ctx)
		guest_die("cannot open %s", dev_name);
	if (ibv_query_device(ctx, &dev_attr))
		guest_die("query_device");
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		guest_die("alloc_pd");
	n = ibv_query_gid_table(ctx, entries, 32, 0);
	for (ssize_t i = 0; i < n && gid_index < 0; i++) {
		if (entries[i].gid_type == IBV_GID_TYPE_ROCE_V2 &&
		    !memcmp(entries[i].gid.raw, v4_prefix, 12)) {
			gid_index = entries[i].gid_index;
			gid = entries[i].gid;
		}
	}
	if (gid_index < 0)
		guest_die("no RoCE v2 IPv4 GID");
}

static struct ibv_cq *create_cq(int cqe)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, cqe, NULL, NULL, 0);

	if (!cq)
		guest_die("create_cq of %d: %s", cqe, strerror(errno));
	return cq;
}

static struct ibv_qp *create_qp(enum ibv_qp_type type, struct ibv_cq *cq,
				int depth)
{
	struct ibv_qp_init_attr init = {
		.qp_type = type,
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = depth, .max_recv_wr = depth,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(pd, &init);
}

/* One completion within 5 s; its status, or -1 if none came. */
static int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc)
{
	double end = guest_now() + 5;
	int n;

	while ((n = ibv_poll_cq(cq, 1, wc)) == 0 && guest_now() < end)
		;
	return n == 1 ? (int)wc->status : -1;
}

/* --- cq-zero-entries ---------------------------------------------------- */

static void cq_zero_entries(void)
{
	struct ibv_cq_init_attr_ex attr = { .cqe = 0 };
	struct ibv_cq_ex *cq_ex;
	struct ibv_cq *cq;

	errno = 0;
	cq = ibv_create_cq(ctx, 0, NULL, NULL, 0);
	GUEST_CHECK(!cq && errno == EINVAL, "create_cq of 0: %s",
		    cq ? "created" : strerror(errno));
	if (cq)
		ibv_destroy_cq(cq);

	errno = 0;
	cq_ex = ibv_create_cq_ex(ctx, &attr);
	GUEST_CHECK(!cq_ex && errno == EINVAL, "create_cq_ex of 0: %s",
		    cq_ex ? "created" : strerror(errno));
	if (cq_ex)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq_ex));

	cq = create_cq(4);
	GUEST_CHECK(ibv_resize_cq(cq, 0) == EINVAL, "resize_cq to 0 allowed");
	ibv_destroy_cq(cq);
}

/* --- ud-unknown-qpn ------------------------------------------------------ */

static void ud_to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY,
	};

	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		guest_die("UD QP to INIT");
	attr.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE))
		guest_die("UD QP to RTR");
	attr.qp_state = IBV_QPS_RTS;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN))
		guest_die("UD QP to RTS");
}

/*
 * A UD QP sends to itself: first to QPNs no QP has, then to its own; only
 * the last datagram may arrive.
 */
static void ud_unknown_qpn(void)
{
	struct ibv_cq *scq = create_cq(DEPTH), *rcq = create_cq(DEPTH);
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_UD, .send_cq = scq, .recv_cq = rcq,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_ah_attr ah_attr = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = gid, .sgid_index = gid_index,
			 .hop_limit = 64 },
	};
	uint8_t *buf = calloc(DEPTH + 1, SLOT);
	struct ibv_qp *qp = ibv_create_qp(pd, &init);
	struct ibv_mr *mr;
	struct ibv_ah *ah;
	struct ibv_wc wc;
	uint32_t dest[3];
	int i, err;

	if (!buf || !qp)
		guest_die("UD QP: %s", strerror(errno));
	mr = ibv_reg_mr(pd, buf, (size_t)(DEPTH + 1) * SLOT,
			IBV_ACCESS_LOCAL_WRITE);
	ah = ibv_create_ah(pd, &ah_attr);
	if (!mr || !ah)
		guest_die("reg_mr/create_ah: %s", strerror(errno));
	ud_to_rts(qp);
	for (i = 0; i < DEPTH; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)buf + (i + 1) * SLOT,
				       .length = SLOT, .lkey = mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge,
					  .num_sge = 1 }, *bad;

		if (ibv_post_recv(qp, &wr, &bad))
			guest_die("post_recv");
	}

	/* the largest 24-bit QPN a QP may have, then one of 32 bits */
	dest[0] = 0xfffffe;
	dest[1] = 0x5afffffd;
	dest[2] = qp->qp_num;
	for (i = 0; i < 3; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)buf,
				       .length = MSG_LEN, .lkey = mr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = i, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
			.wr.ud = { .ah = ah, .remote_qpn = dest[i],
				   .remote_qkey = QKEY },
		}, *bad;

		memset(buf, 'a' + i, MSG_LEN);
		err = ibv_post_send(qp, &wr, &bad);
		GUEST_CHECK(!err, "post_send to QPN %#x: %s", dest[i],
			    strerror(err));
		if (err)
			continue;
		err = wait_wc(scq, &wc);
		GUEST_CHECK(err == IBV_WC_SUCCESS, "send to QPN %#x: %s",
			    dest[i], err < 0 ? "no completion" :
			    ibv_wc_status_str(wc.status));
	}

	err = wait_wc(rcq, &wc);
	GUEST_CHECK(err == IBV_WC_SUCCESS, "the datagram to QP %#x: %s",
		    qp->qp_num, err < 0 ? "did not arrive" :
		    ibv_wc_status_str(wc.status));
	if (!err) {
		uint8_t tag = buf[(wc.wr_id + 1) * SLOT + GRH_BYTES];

		GUEST_CHECK(tag == 'c', "received datagram %c, not c", tag);
	}
	usleep(200000);
	GUEST_CHECK(ibv_poll_cq(rcq, 1, &wc) == 0, "an extra datagram, %s",
		    ibv_wc_status_str(wc.status));

	ibv_destroy_qp(qp);
	ibv_destroy_ah(ah);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(scq);
	ibv_destroy_cq(rcq);
	free(buf);
}

/* --- zero-length-mr ------------------------------------------------------ */

/* An RC QP in RTS, connected to itself, with the given rights. */
static struct ibv_qp *rc_self(struct ibv_cq *cq, int access)
{
	struct ibv_qp *qp = create_qp(IBV_QPT_RC, cq, DEPTH);
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = access,
	};
	struct guest_rc_peer self = { .psn = 0x321 };

	if (!qp)
		guest_die("RC QP: %s", strerror(errno));
	self.qpn = qp->qp_num;
	memcpy(self.gid, gid.raw, 16);
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) ||
	    guest_rc_connect(qp, &self, gid_index, self.psn, 1, 10))
		guest_die("RC QP to RTS: %s", strerror(errno));
	return qp;
}

/*
 * An MR of 0 bytes, as rxe and mlx5 register (at an address inside a
 * page: the kernel pins no page for 0 bytes at a page's start), and 0-byte
 * operations through it on an RC QP connected to itself.
 */
static void zero_length_mr(void)
{
	const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ;
	static const struct {
		const char *what;
		enum ibv_wr_opcode opcode;
	} ops[] = {
		{ "SEND", IBV_WR_SEND },
		{ "RDMA WRITE", IBV_WR_RDMA_WRITE },
		{ "RDMA READ", IBV_WR_RDMA_READ },
	};
	struct ibv_cq *cq = create_cq(DEPTH);
	struct ibv_qp *qp = rc_self(cq, access);
	uint8_t *buf = aligned_alloc(4096, 4096);
	struct ibv_mr *mr;
	struct ibv_wc wc;

	if (!buf)
		guest_die("no memory");
	errno = 0;
	mr = ibv_reg_mr(pd, buf + 64, 0, access);
	GUEST_CHECK(mr, "reg_mr of 0 bytes: %s", strerror(errno));
	if (!mr)
		return;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)buf + 64, .lkey = mr->lkey,
		};
		struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &sge,
					   .num_sge = 1 }, *rbad;
		struct ibv_send_wr wr = {
			.wr_id = 1, .sg_list = &sge, .num_sge = 1,
			.opcode = ops[i].opcode,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { .remote_addr = (uintptr_t)buf + 64,
				     .rkey = mr->rkey },
		}, *bad;
		int err, want = ops[i].opcode == IBV_WR_SEND ? 2 : 1;

		if (ops[i].opcode == IBV_WR_SEND && ibv_post_recv(qp, &rwr, &rbad))
			guest_die("post_recv");
		err = ibv_post_send(qp, &wr, &bad);
		GUEST_CHECK(!err, "0-byte %s: post_send: %s", ops[i].what,
			    strerror(err));
		while (!err && want--) {
			int st = wait_wc(cq, &wc);

			GUEST_CHECK(st == IBV_WC_SUCCESS && !wc.byte_len,
				    "0-byte %s: %s, %u bytes", ops[i].what,
				    st < 0 ? "no completion" :
				    ibv_wc_status_str(wc.status), wc.byte_len);
		}
	}
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	free(buf);
}

/* --- atomic-bad ---------------------------------------------------------- */

/*
 * An RC QP connected to itself sends one atomic: it must post, and
 * complete with an error that is not a flush.
 */
static void atomic_bad_one(const char *what, enum ibv_wr_opcode opcode,
			   uint64_t offset, uint32_t sge_len)
{
	struct ibv_cq *cq = create_cq(DEPTH);
	struct ibv_qp *qp = rc_self(cq, IBV_ACCESS_LOCAL_WRITE |
				    IBV_ACCESS_REMOTE_ATOMIC);
	uint64_t *buf = aligned_alloc(4096, 4096);
	struct ibv_send_wr wr = {
		.wr_id = 1, .num_sge = 1, .opcode = opcode,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.atomic = { .remote_addr = (uintptr_t)&buf[8] + offset,
			       .compare_add = 1 },
	}, *bad;
	struct ibv_sge sge = { .addr = (uintptr_t)&buf[0], .length = sge_len };
	struct ibv_mr *mr;
	struct ibv_wc wc;
	int err;

	if (!buf)
		guest_die("no memory");
	memset(buf, 0, 4096);
	mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_ATOMIC);
	if (!mr)
		guest_die("reg_mr: %s", strerror(errno));

	sge.lkey = mr->lkey;
	wr.sg_list = &sge;
	wr.wr.atomic.rkey = mr->rkey;
	err = ibv_post_send(qp, &wr, &bad);
	GUEST_CHECK(!err, "%s: post_send: %s", what, strerror(err));
	if (!err) {
		err = wait_wc(cq, &wc);
		GUEST_CHECK(err > 0 && err != IBV_WC_WR_FLUSH_ERR,
			    "%s: completed %s", what, err < 0 ?
			    "not at all" : ibv_wc_status_str(wc.status));
		if (err > 0)
			printf("# %s: %s\n", what, ibv_wc_status_str(wc.status));
	}
	GUEST_CHECK(!buf[8] && !buf[9], "%s: the target changed", what);

	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	free(buf);
}

static void atomic_bad(void)
{
	atomic_bad_one("misaligned FETCH_ADD", IBV_WR_ATOMIC_FETCH_AND_ADD, 4,
		       8);
	atomic_bad_one("CMP_SWP into 4 bytes", IBV_WR_ATOMIC_CMP_AND_SWP, 0,
		       4);
}

/* --- mw-type2b ----------------------------------------------------------- */

/* wr, signalled, on qp: its completion's status, or -1 if none came. */
static int post_wait(struct ibv_qp *qp, struct ibv_cq *cq,
		     struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int err;

	wr->send_flags = IBV_SEND_SIGNALED;
	err = ibv_post_send(qp, wr, &bad);
	GUEST_CHECK(!err, "post_send of opcode %d: %s", wr->opcode,
		    strerror(err));
	return err ? -1 : wait_wc(cq, &wc);
}

static const char *wc_str(int status)
{
	return status < 0 ? "no completion" : ibv_wc_status_str(status);
}

/* An RDMA WRITE of 8 bytes of src on qp through rkey to addr: its status. */
static int write_through(struct ibv_qp *qp, struct ibv_cq *cq,
			 struct ibv_mr *src, uint32_t rkey, uint64_t addr)
{
	struct ibv_sge sge = { .addr = (uintptr_t)src->addr, .length = 8,
			       .lkey = src->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.wr.rdma = { .remote_addr = addr, .rkey = rkey },
	};

	return post_wait(qp, cq, &wr);
}

/*
 * IBA's type 2B: a type 2 window is associated with the QP that bound it
 * and with its PD.  QPs a, b, c, d of the PD, each its own peer: c may not
 * bind a window of another PD, a binds one of its PD and writes through
 * it, b may not, and d's LOCAL_INV takes it back from a.  A refused write
 * completes with an error: REM_ACCESS_ERR, or a flush where the responder
 * that refused it, the same QP, went to ERR first.
 */
static void mw_type2b(void)
{
	struct ibv_pd *other_pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq_a = create_cq(DEPTH), *cq_b = create_cq(DEPTH);
	struct ibv_cq *cq_c = create_cq(DEPTH), *cq_d = create_cq(DEPTH);
	uint64_t *buf = aligned_alloc(4096, 4096);
	struct ibv_qp *qp_a, *qp_b, *qp_c, *qp_d;
	struct ibv_send_wr bind = { .opcode = IBV_WR_BIND_MW };
	struct ibv_send_wr inv = { .opcode = IBV_WR_LOCAL_INV };
	uint64_t target;
	struct ibv_mr *mr;
	struct ibv_mw *mw, *other_mw;
	int st;

	GUEST_CHECK((dev_attr.device_cap_flags &
		     (IBV_DEVICE_MEM_WINDOW_TYPE_2A |
		      IBV_DEVICE_MEM_WINDOW_TYPE_2B)) ==
		    IBV_DEVICE_MEM_WINDOW_TYPE_2B,
		    "device_cap_flags %#x: type 2A %d, type 2B %d, not 2B alone",
		    dev_attr.device_cap_flags,
		    !!(dev_attr.device_cap_flags &
		       IBV_DEVICE_MEM_WINDOW_TYPE_2A),
		    !!(dev_attr.device_cap_flags &
		       IBV_DEVICE_MEM_WINDOW_TYPE_2B));
	if (!other_pd || !buf)
		guest_die("alloc_pd: %s", strerror(errno));
	memset(buf, 0, 4096);
	mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND);
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	other_mw = ibv_alloc_mw(other_pd, IBV_MW_TYPE_2);
	if (!mr || !mw || !other_mw)
		guest_die("reg_mr/alloc_mw: %s", strerror(errno));
	qp_a = rc_self(cq_a, IBV_ACCESS_REMOTE_WRITE);
	qp_b = rc_self(cq_b, IBV_ACCESS_REMOTE_WRITE);
	qp_c = rc_self(cq_c, IBV_ACCESS_REMOTE_WRITE);
	qp_d = rc_self(cq_d, IBV_ACCESS_REMOTE_WRITE);
	buf[0] = 0x2b2b2b2b2b2b2b2bull;
	target = (uintptr_t)&buf[8];

	bind.bind_mw.bind_info = (struct ibv_mw_bind_info){
		.mr = mr, .addr = (uintptr_t)buf, .length = 4096,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	bind.bind_mw.mw = other_mw;
	bind.bind_mw.rkey = ibv_inc_rkey(other_mw->rkey);
	st = post_wait(qp_c, cq_c, &bind);
	GUEST_CHECK(st == IBV_WC_MW_BIND_ERR,
		    "bind of a window of another PD: %s", wc_str(st));
	bind.bind_mw.mw = mw;
	bind.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	st = post_wait(qp_a, cq_a, &bind);
	GUEST_CHECK(st == IBV_WC_SUCCESS, "bind by a QP of the PD: %s",
		    wc_str(st));

	st = write_through(qp_a, cq_a, mr, bind.bind_mw.rkey, target);
	GUEST_CHECK(st == IBV_WC_SUCCESS && buf[8] == buf[0],
		    "write through the window on its QP: %s, %s", wc_str(st),
		    buf[8] == buf[0] ? "written" : "not written");
	buf[8] = 0;
	st = write_through(qp_b, cq_b, mr, bind.bind_mw.rkey, target);
	GUEST_CHECK(st > 0 && !buf[8],
		    "write through the window on another QP of the PD: %s, %s",
		    wc_str(st), buf[8] ? "written" : "not written");

	inv.invalidate_rkey = bind.bind_mw.rkey;
	st = post_wait(qp_d, cq_d, &inv);
	GUEST_CHECK(st == IBV_WC_SUCCESS,
		    "LOCAL_INV by another QP of the PD: %s", wc_str(st));
	st = write_through(qp_a, cq_a, mr, bind.bind_mw.rkey, target);
	GUEST_CHECK(st > 0 && !buf[8],
		    "write through the invalidated window: %s, %s",
		    wc_str(st), buf[8] ? "written" : "not written");

	ibv_destroy_qp(qp_a);
	ibv_destroy_qp(qp_b);
	ibv_destroy_qp(qp_c);
	ibv_destroy_qp(qp_d);
	ibv_dealloc_mw(mw);
	ibv_dealloc_mw(other_mw);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq_a);
	ibv_destroy_cq(cq_b);
	ibv_destroy_cq(cq_c);
	ibv_destroy_cq(cq_d);
	ibv_dealloc_pd(other_pd);
	free(buf);
}

/* --- the limits ---------------------------------------------------------- */

/* Whether the limit's time is up after n of max objects; says so if it is. */
static int limit_late(const char *what, double end, int n, int max)
{
	if (guest_now() < end)
		return 0;
	GUEST_CHECK(0, "%s: only %d of %d in %d s", what, n, max,
		    LIMIT_SECONDS);
	return 1;
}

/*
 * Create max objects with create(), all of them together, and not one
 * more: the limit is exact.  Then destroy them.
 */
static void limit_count(const char *what, int max, void *(*create)(void),
			int (*destroy)(void *))
{
	double end = guest_now() + LIMIT_SECONDS;
	void **objs = calloc(max + 1, sizeof(*objs));
	int n;

	if (!objs)
		guest_die("%d of %s: no memory", max, what);
	for (n = 0; n < max; n++) {
		objs[n] = create();
		GUEST_CHECK(objs[n], "%s: %d of %d: %s", what, n + 1, max,
			    strerror(errno));
		if (!objs[n] || limit_late(what, end, n + 1, max))
			break;
	}
	if (n == max) {
		objs[n] = create();
		GUEST_CHECK(!objs[n], "%s: %d created, one more than %d", what,
			    n + 1, max);
		n += !!objs[n];
	}
	printf("# %s %d: %d created\n", what, max, n);
	while (n-- > 0)
		if (objs[n])
			destroy(objs[n]);
	free(objs);
}

static void *create_cq_1(void)
{
	return ibv_create_cq(ctx, 1, NULL, NULL, 0);
}

static int destroy_cq(void *cq)
{
	return ibv_destroy_cq(cq);
}

static void *alloc_pd(void)
{
	return ibv_alloc_pd(ctx);
}

static int dealloc_pd(void *p)
{
	return ibv_dealloc_pd(p);
}

static uint8_t mr_page[4096] __attribute__((aligned(4096)));

static void *reg_mr(void)
{
	return ibv_reg_mr(pd, mr_page, sizeof(mr_page),
			  IBV_ACCESS_LOCAL_WRITE);
}

static int dereg_mr(void *mr)
{
	return ibv_dereg_mr(mr);
}

static void *alloc_mw(void)
{
	return ibv_alloc_mw(pd, IBV_MW_TYPE_1);
}

static int dealloc_mw(void *mw)
{
	return ibv_dealloc_mw(mw);
}

static void *create_srq_1(void)
{
	struct ibv_srq_init_attr init = { .attr = { .max_wr = 1,
						    .max_sge = 1 } };

	return ibv_create_srq(pd, &init);
}

static int destroy_srq(void *srq)
{
	return ibv_destroy_srq(srq);
}

static struct ibv_cq *limit_cq;

static void *create_rc_qp(void)
{
	return create_qp(IBV_QPT_RC, limit_cq, 1);
}

static int destroy_qp(void *qp)
{
	return ibv_destroy_qp(qp);
}

static struct ibv_ah_attr self_ah;

static void *create_self_ah(void)
{
	return ibv_create_ah(pd, &self_ah);
}

static int destroy_ah(void *ah)
{
	return ibv_destroy_ah(ah);
}

static void max_qp(void)
{
	limit_cq = create_cq(DEPTH);
	limit_count("max_qp", dev_attr.max_qp, create_rc_qp, destroy_qp);
	ibv_destroy_cq(limit_cq);
}

static void max_ah(void)
{
	self_ah = (struct ibv_ah_attr){
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = gid, .sgid_index = gid_index,
			 .hop_limit = 64 },
	};
	limit_count("max_ah", dev_attr.max_ah, create_self_ah, destroy_ah);
}

static void max_cq(void)
{
	limit_count("max_cq", dev_attr.max_cq, create_cq_1, destroy_cq);
}

/* without the PD of the other cases */
static void max_pd(void)
{
	ibv_dealloc_pd(pd);
	limit_count("max_pd", dev_attr.max_pd, alloc_pd, dealloc_pd);
}

static void max_mr(void)
{
	limit_count("max_mr", dev_attr.max_mr, reg_mr, dereg_mr);
}

static void max_mw(void)
{
	limit_count("max_mw", dev_attr.max_mw, alloc_mw, dealloc_mw);
}

static void max_srq(void)
{
	limit_count("max_srq", dev_attr.max_srq, create_srq_1, destroy_srq);
}

/* One QP of cap, whose sizes each reach a limit. */
static void qp_of(const char *what, const struct ibv_qp_cap *cap)
{
	struct ibv_cq *cq = create_cq(dev_attr.max_cqe);
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC, .send_cq = cq, .recv_cq = cq,
		.cap = *cap,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	GUEST_CHECK(qp, "%s: %s", what, strerror(errno));
	if (qp)
		ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
}

static void max_cqe(void)
{
	ibv_destroy_cq(create_cq(dev_attr.max_cqe));
}

static void max_qp_wr(void)
{
	struct ibv_qp_cap cap = { .max_send_wr = dev_attr.max_qp_wr,
				  .max_recv_wr = dev_attr.max_qp_wr,
				  .max_send_sge = 1, .max_recv_sge = 1 };

	qp_of("QP of max_qp_wr", &cap);
}

static void max_sge(void)
{
	struct ibv_qp_cap cap = { .max_send_wr = 1, .max_recv_wr = 1,
				  .max_send_sge = dev_attr.max_sge,
				  .max_recv_sge = dev_attr.max_sge };

	qp_of("QP of max_sge", &cap);
}

/*
 * max_mcast_qp_attach UD QPs, each attached to max_mcast_grp groups:
 * max_total_mcast_qp_attach attachments.
 */
static void max_mcast(void)
{
	int nqp = dev_attr.max_mcast_qp_attach, ngrp = dev_attr.max_mcast_grp;
	struct ibv_cq *cq = create_cq(DEPTH);
	struct ibv_qp **qps = calloc(nqp, sizeof(*qps));
	union ibv_gid mgid = { .raw = { 0xff, 0x0e } };
	int q, g, attached = 0;

	if (!qps)
		guest_die("%d QPs: no memory", nqp);
	for (q = 0; q < nqp; q++) {
		qps[q] = create_qp(IBV_QPT_UD, cq, 1);
		if (!qps[q])
			guest_die("UD QP %d: %s", q, strerror(errno));
		for (g = 0; g < ngrp; g++) {
			mgid.raw[15] = g;
			errno = ibv_attach_mcast(qps[q], &mgid, 0);
			GUEST_CHECK(!errno, "QP %d to group %d: %s", q, g,
				    strerror(errno));
			attached += !errno;
		}
	}
	GUEST_CHECK(attached == dev_attr.max_total_mcast_qp_attach,
		    "%d attachments, max_total_mcast_qp_attach %d", attached,
		    dev_attr.max_total_mcast_qp_attach);
	printf("# max_mcast_grp %d, max_mcast_qp_attach %d: %d attached\n",
	       ngrp, nqp, attached);
	for (q = 0; q < nqp; q++)
		ibv_destroy_qp(qps[q]);
	ibv_destroy_cq(cq);
	free(qps);
}

/*
 * An RC QP connected to itself with max_qp_rd_atom READs and atomics each
 * way (query_device reports max_qp_init_rd_atom the same).
 */
static void max_qp_rd_atom(void)
{
	struct ibv_cq *cq = create_cq(DEPTH);
	struct ibv_qp *qp = create_qp(IBV_QPT_RC, cq, 1);
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_READ,
	};
	struct guest_rc_peer self = { .psn = 1 };

	if (!qp)
		guest_die("RC QP: %s", strerror(errno));
	self.qpn = qp->qp_num;
	memcpy(self.gid, gid.raw, 16);
	GUEST_CHECK(dev_attr.max_qp_init_rd_atom == dev_attr.max_qp_rd_atom &&
		    dev_attr.max_qp_rd_atom <= UINT8_MAX,
		    "max_qp_rd_atom %d, max_qp_init_rd_atom %d",
		    dev_attr.max_qp_rd_atom, dev_attr.max_qp_init_rd_atom);
	GUEST_CHECK(!ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				   IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) &&
		    !guest_rc_connect(qp, &self, gid_index, 1,
				      dev_attr.max_qp_rd_atom, 14),
		    "RC QP of %d READs and atomics: %s",
		    dev_attr.max_qp_rd_atom, strerror(errno));
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
}

static void srq_max(void)
{
	struct ibv_srq_init_attr init = {
		.attr = { .max_wr = dev_attr.max_srq_wr,
			  .max_sge = dev_attr.max_srq_sge },
	};
	struct ibv_srq *srq = ibv_create_srq(pd, &init);

	GUEST_CHECK(srq, "SRQ of %d WQEs of %d SGEs: %s",
		    dev_attr.max_srq_wr, dev_attr.max_srq_sge,
		    strerror(errno));
	if (srq)
		ibv_destroy_srq(srq);
}

static const struct {
	const char *name;
	void (*run)(void);
} cases[] = {
	{ "cq-zero-entries", cq_zero_entries },
	{ "ud-unknown-qpn", ud_unknown_qpn },
	{ "zero-length-mr", zero_length_mr },
	{ "atomic-bad", atomic_bad },
	{ "mw-type2b", mw_type2b },
	{ "max-qp", max_qp },
	{ "max-ah", max_ah },
	{ "srq-max-wr-sge", srq_max },
	{ "max-cq", max_cq },
	{ "max-pd", max_pd },
	{ "max-mr", max_mr },
	{ "max-mw", max_mw },
	{ "max-srq", max_srq },
	{ "max-cqe", max_cqe },
	{ "max-qp-wr", max_qp_wr },
	{ "max-sge", max_sge },
	{ "max-mcast", max_mcast },
	{ "max-qp-rd-atom", max_qp_rd_atom },
};

int main(int argc, char **argv)
{
	const char *name = NULL;
	size_t i;
	int op;

	while ((op = getopt(argc, argv, "d:c:")) != -1) {
		switch (op) {
		case 'd':
			dev_name = optarg;
			break;
		case 'c':
			name = optarg;
			break;
		default:
			fprintf(stderr, "usage: %s [-d DEV] -c CASE\n",
				argv[0]);
			return 2;
		}
	}
	for (i = 0; name && i < sizeof(cases) / sizeof(cases[0]); i++)
		if (!strcmp(name, cases[i].name))
			break;
	if (!name || i == sizeof(cases) / sizeof(cases[0]))
		guest_die("-c names none of the cases");
	open_device();
	cases[i].run();
	return guest_failures ? 1 : 0;
}
