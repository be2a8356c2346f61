/*
 * The device alone (issue 26): softhca driven through QEMU's qtest
 * protocol, with no guest and no vCPU, so that what is measured is the
 * device and its port.  The harness writes each QP's rings once, WQEs
 * that stay valid, and then only rings doorbells, many WQEs each, and
 * polls one CQE per batch; `make bench` (tests/bench/run) prints the
 * figures beside the host's own ceilings.  Never a test: nothing here is
 * asserted but that the device does the work.
 *
 *   softhca-bench loopback|dgram|tap [SECONDS [iothread]]
 *
 * loopback: one device, its QPs connected to each other through the
 * device's own loopback.  dgram: two QEMUs joined by -netdev dgram on
 * 127.0.0.1, the QPs of one connected to those of the other.  tap: the
 * same over -netdev tap, on tap1 and tap2, which must exist on one bridge
 * of the network namespace it runs in (tests/bench/run makes them).
 * iothread: each device's engine in an iothread of its own (spec §12.1).
 * Prints one line per figure: "name<TAB>value<TAB>unit".
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "libqtest.h"
#include "libqos/pci.h"
#include "qemu/bswap.h"
#include "hw/softhca/softhca_hw.h"
#include "softhca-qtest.h"

#define BQ_LOG          12      /* 4096 WQEs per SQ and RQ: MAX_QP_WR */
#define BQ_SIZE         (1u << BQ_LOG)
#define BQ_SQ_SHIFT     7       /* a send WQE and one SGE */
#define BQ_RQ_SHIFT     5       /* a receive WQE and one SGE */
#define BQ_CQ_LOG       13      /* a round of receives, twice over */
#define BQ_QPS          16
#define BUF_LEN         (64 * 1024)
#define BUF_IOVA        0x10000000ull
/*
 * The fairness figure with a hog: one QP's SENDs of HOG_LEN against 2-byte
 * WRITEs on the 15 others, for HOG_SECONDS, each node with HOG_RAM of RAM.
 */
#define HOG_LEN         (64u << 20)
#define HOG_IOVA        0x40000000ull
#define HOG_RAM         " -m 512"
#define HOG_SECONDS     8.0
#define PORT_MTU        9000    /* path MTU 4096, as `make bench` runs */
/*
 * Under qtest the VM clock moves only when told to: the harness moves it
 * as the host's clock moves, every CLOCK_TICK_NS, so that the device's
 * timers (retransmission after a loss) run as in a VM.  A step never
 * exceeds the tick: the device handles no frame during a step, and a long
 * one would fire a retransmission timer again and again.
 */
#define CLOCK_TICK_NS   (1000 * 1000)
#define GIVE_UP_NS      (10 * 1000 * 1000 * 1000ll)

typedef struct Node {
    Rdma r;
    uint8_t mac[6];
    uint32_t ip;
    uint64_t buf;               /* BUF_LEN, registered at BUF_IOVA */
    uint32_t key;
    uint32_t hog_key;           /* HOG_LEN at HOG_IOVA, for the hog */
} Node;

typedef struct BQp {
    Node *n;
    uint32_t qpn, scq, rcq;
    uint64_t sq, rq, scqbuf, rcqbuf;
    uint32_t sq_pi, rq_pi;      /* WQEs posted, free-running */
    uint32_t sq_done;           /* WQEs completed */
    uint32_t scq_n, rcq_n;      /* CQEs taken */
} BQp;

/* A stream: WQEs of one kind on one QP, in batches of batch. */
typedef struct Stream {
    BQp *q, *peer;              /* the peer receives (SEND) */
    uint8_t opcode;
    uint32_t len, batch;
    uint64_t done;              /* WQEs completed in the timed run */
    uint8_t status;             /* of a CQE that failed: the run ends */
} Stream;

static double seconds = 2.0;

static int64_t now_ns(void)
{
    return g_get_monotonic_time() * 1000;
}

static const char *fabric;     /* "loopback", "dgram" or "tap" */
static bool iothread;           /* the engine of each device in an iothread */

/* A buffer of len bytes, registered at iova for local and remote access. */
static uint32_t node_mr(Node *n, uint64_t iova, uint64_t len, uint64_t *buf)
{
    struct shca_buf_desc pages;
    uint32_t key;

    *buf = guest_alloc(&n->r.h.alloc, len);
    buf_direct(&pages, *buf, len / 4096);
    g_assert_cmpuint(rdma_reg_mr(&n->r, SHCA_ACCESS_LOCAL_WRITE |
                                 SHCA_ACCESS_REMOTE_WRITE |
                                 SHCA_ACCESS_REMOTE_READ, iova, len,
                                 0, &pages, &key), ==, SHCA_AQ_OK);
    return key;
}

static void node_start(Node *n, const char *extra, uint32_t ip, bool hog)
{
    /* the device's own options first, then the machine's */
    g_autofree char *args = g_strconcat(iothread ? ",iothread=io0" : "",
                                        extra ?: "", hog ? HOG_RAM : "",
                                        iothread ? " -object iothread,id=io0"
                                                 : "", NULL);
    uint64_t hog_buf;

    rdma_start_with(&n->r, args);
    wr(&n->r.h, SHCA_REG_MTU, PORT_MTU);
    stl_le_p(n->mac, rd(&n->r.h, SHCA_REG_MAC_LO));
    stw_le_p(n->mac + 4, rd(&n->r.h, SHCA_REG_MAC_HI));
    n->ip = ip;
    rdma_set_gid_ipv4(&n->r, 0, ip);
    n->key = node_mr(n, BUF_IOVA, BUF_LEN, &n->buf);
    if (hog) {
        n->hog_key = node_mr(n, HOG_IOVA, HOG_LEN, &hog_buf);
    }
}

/* Where a stream's WQEs read and write on node n: the hog's buffer or not. */
static uint64_t stream_iova(const Stream *st, const Node *n, uint32_t *key)
{
    bool hog = st->len > BUF_LEN;

    *key = hog ? n->hog_key : n->key;
    return hog ? HOG_IOVA : BUF_IOVA;
}

static void bqp_create(Node *n, BQp *q)
{
    struct shca_aq_entry cmd;
    uint32_t sq_bytes = BQ_SIZE << BQ_SQ_SHIFT;
    uint32_t rq_bytes = BQ_SIZE << BQ_RQ_SHIFT;

    memset(q, 0, sizeof(*q));
    q->n = n;
    q->scq = rdma_cq(&n->r, 0, BQ_CQ_LOG, &q->scqbuf);
    q->rcq = rdma_cq(&n->r, 0, BQ_CQ_LOG, &q->rcqbuf);
    q->sq = guest_alloc(&n->r.h.alloc, sq_bytes);
    q->rq = guest_alloc(&n->r.h.alloc, rq_bytes);
    rdma_qp_cmd(&n->r, &cmd, 0, SHCA_QPT_RC, q->scq, q->rcq, q->sq, q->rq);
    cmd.create_qp.sq_log_size = BQ_LOG;
    cmd.create_qp.sq_wqe_shift = BQ_SQ_SHIFT;
    buf_direct(&cmd.create_qp.sq, q->sq, sq_bytes / 4096);
    cmd.create_qp.rq_log_size = BQ_LOG;
    cmd.create_qp.rq_wqe_shift = BQ_RQ_SHIFT;
    buf_direct(&cmd.create_qp.rq, q->rq, rq_bytes / 4096);
    g_assert_cmpuint(hca_cmd(&n->r.h, &cmd, &q->qpn), ==, SHCA_AQ_OK);
}

/* RESET -> INIT -> RTR -> RTS, to the QP peer, at a 4096-byte path MTU. */
static void bqp_connect(BQp *q, const BQp *peer)
{
    uint32_t access = SHCA_ACCESS_REMOTE_WRITE | SHCA_ACCESS_REMOTE_READ;
    struct shca_qp_attr a = rc_attr(SHCA_QPS_INIT);
    Rdma *r = &q->n->r;

    a.access = cpu_to_le32(access);
    g_assert_cmpuint(rdma_modify(r, q->qpn, RC_INIT_MASK, &a), ==,
                     SHCA_AQ_OK);
    a = rc_attr(SHCA_QPS_RTR);
    a.access = cpu_to_le32(access);
    a.path_mtu = 5;
    a.timeout = 14;             /* 67 ms, as perftest asks */
    a.max_rd_atomic = a.max_dest_rd_atomic = 16;
    a.dest_qpn = cpu_to_le32(peer->qpn);
    a.sq_psn = a.rq_psn;        /* what the peer expects: the same constant */
    memset(a.av.dgid, 0, 16);
    a.av.dgid[10] = a.av.dgid[11] = 0xff;
    stl_be_p(a.av.dgid + 12, peer->n->ip);
    memcpy(a.av.dmac, peer->n->mac, 6);
    g_assert_cmpuint(rdma_modify(r, q->qpn, RC_RTR_MASK, &a), ==,
                     SHCA_AQ_OK);
    a.state = SHCA_QPS_RTS;
    g_assert_cmpuint(rdma_modify(r, q->qpn, RC_RTS_MASK, &a), ==,
                     SHCA_AQ_OK);
}

/*
 * Fill the SQ with WQEs of opcode and len from the node's buffer to the
 * peer's, the last of each batch signaled: they stay valid round after
 * round.
 */
static void stream_write_sq(Stream *st)
{
    const size_t slot = 1u << BQ_SQ_SHIFT;
    g_autofree uint8_t *ring = g_malloc0(BQ_SIZE * slot);
    Node *n = st->q->n, *p = st->peer->n;
    uint32_t key, rkey;
    uint64_t iova = stream_iova(st, n, &key);
    struct shca_send_wqe w = {
        .opcode = st->opcode,
        .num_sge = 1,
        .remote_addr = cpu_to_le64(stream_iova(st, p, &rkey)),
        .rkey = cpu_to_le32(rkey),
    };
    struct shca_sge sge = {
        .addr = cpu_to_le64(iova),
        .length = cpu_to_le32(st->len),
        .lkey = cpu_to_le32(key),
    };

    /* batches start where the SQ stands; batch divides the ring's size */
    for (uint32_t i = 0; i < BQ_SIZE; i++) {
        uint32_t k = (i - st->q->sq_pi) % BQ_SIZE;

        w.wr_id = cpu_to_le64(i);
        w.flags = (k + 1) % st->batch ? 0 : SHCA_WQE_SIGNALED;
        memcpy(ring + i * slot, &w, sizeof(w));
        memcpy(ring + i * slot + sizeof(w), &sge, sizeof(sge));
    }
    qtest_memwrite(n->r.h.qts, st->q->sq, ring, BQ_SIZE * slot);
}

/* The peer's RQ full of receives into its buffer, for SENDs. */
static void stream_fill_rq(Stream *st)
{
    const size_t slot = 1u << BQ_RQ_SHIFT;
    g_autofree uint8_t *ring = g_malloc0(BQ_SIZE * slot);
    BQp *q = st->peer;
    uint32_t key;
    uint64_t iova = stream_iova(st, q->n, &key);
    struct shca_recv_wqe w = { .num_sge = 1 };
    struct shca_sge sge = {
        .addr = cpu_to_le64(iova),
        .length = cpu_to_le32(MAX(st->len, BUF_LEN)),
        .lkey = cpu_to_le32(key),
    };

    for (uint32_t i = 0; i < BQ_SIZE; i++) {
        memcpy(ring + i * slot, &w, sizeof(w));
        memcpy(ring + i * slot + sizeof(w), &sge, sizeof(sge));
    }
    qtest_memwrite(q->n->r.h.qts, q->rq, ring, BQ_SIZE * slot);
    q->rq_pi += BQ_SIZE;
    rdma_db(&q->n->r, 0, SHCA_DB_RQ, (q->rq_pi & 0xffff) << 16 | q->qpn);
}

static void stream_post(Stream *st)
{
    BQp *q = st->q;

    q->sq_pi += st->batch;
    rdma_db(&q->n->r, 0, SHCA_DB_SQ, (q->sq_pi & 0xffff) << 16 | q->qpn);
}

/*
 * The stream's oldest batch is done: take its CQE, and for SENDs give the
 * peer back its receives.  False if it is still going.
 */
static bool stream_reap(Stream *st)
{
    BQp *q = st->q, *p = st->peer;
    struct shca_cqe cqe;

    if (!rdma_cqe_ready(&q->n->r, q->scqbuf, BQ_CQ_LOG, q->scq_n, &cqe)) {
        return false;
    }
    if (cqe.status != SHCA_CQE_SUCCESS) {
        st->status = cqe.status;
        return false;
    }
    rdma_cq_consumed(&q->n->r, q->scqbuf, BQ_CQ_LOG, ++q->scq_n);
    q->sq_done += st->batch;
    if (st->opcode == SHCA_WR_SEND) {
        p->rcq_n += st->batch;
        rdma_cq_consumed(&p->n->r, p->rcqbuf, BQ_CQ_LOG, p->rcq_n);
        p->rq_pi += st->batch;
        rdma_db(&p->n->r, 0, SHCA_DB_RQ, (p->rq_pi & 0xffff) << 16 | p->qpn);
    }
    return true;
}

/*
 * Move the VM clock of every node as far as the host's moved since the
 * last tick, once CLOCK_TICK_NS have passed.
 */
static void clocks_follow(Node **nodes, unsigned nnodes)
{
    static int64_t last;
    int64_t t = now_ns();

    if (!last) {
        last = t;
    }
    if (t - last < CLOCK_TICK_NS) {
        return;
    }
    for (unsigned i = 0; i < nnodes; i++) {
        qtest_clock_step(nodes[i]->r.h.qts, MIN(t - last, CLOCK_TICK_NS));
    }
    last = t;
}

/*
 * Run the streams together for the bench's seconds, each with two batches
 * in flight, reaping them round-robin: each one's count of WQEs done in
 * that time; the time it took, in ns, or -1 if a WQE failed or none
 * completed for GIVE_UP_NS.
 */
static int64_t streams_run(Stream *st, unsigned n, Node **nodes,
                           unsigned nnodes, double secs)
{
    int64_t start, end, last = now_ns();
    bool timing = false;

    for (unsigned i = 0; i < n; i++) {
        stream_write_sq(&st[i]);
        if (st[i].opcode == SHCA_WR_SEND && !st[i].peer->rq_pi) {
            stream_fill_rq(&st[i]);     /* once: each batch gives back */
        }
        stream_post(&st[i]);
        stream_post(&st[i]);
    }
    /* the first batches warm up; the clock starts after them */
    start = now_ns();
    end = start + secs * 1e9;
    for (;;) {
        int64_t t = now_ns();
        bool moved = false;

        if (t >= end) {
            break;
        }
        for (unsigned i = 0; i < n; i++) {
            if (!stream_reap(&st[i])) {
                if (st[i].status) {
                    return -1;
                }
                continue;
            }
            moved = true;
            if (!timing) {
                timing = true;
                start = now_ns();
                end = start + secs * 1e9;
                for (unsigned k = 0; k < n; k++) {
                    st[k].done = 0;
                }
            } else {
                st[i].done += st[i].batch;
            }
            stream_post(&st[i]);
        }
        clocks_follow(nodes, nnodes);
        if (moved) {
            last = t;
        } else if (t - last > GIVE_UP_NS) {
            return -1;
        } else {
            g_usleep(20);
        }
    }
    end = now_ns();
    /* let the batches in flight finish, so that the QPs can go on */
    for (unsigned i = 0; i < n; i++) {
        for (int64_t t0 = now_ns(); st[i].q->sq_done < st[i].q->sq_pi;) {
            if (!stream_reap(&st[i])) {
                if (st[i].status || now_ns() - t0 > GIVE_UP_NS) {
                    return -1;
                }
                clocks_follow(nodes, nnodes);
                g_usleep(50);
            }
        }
    }
    return end - start;
}

/* The devices of one figure, made afresh for it, and their QP pairs. */
typedef struct World {
    Node a, b;
    Node *nodes[2];
    unsigned nnodes;
    BQp qa[BQ_QPS], qb[BQ_QPS];
} World;


/* The -device properties and -netdev of node i (0 or 1) of the fabric. */
static char *node_netdev(int i)
{
    static int port;

    if (!strcmp(fabric, "tap")) {
        return g_strdup_printf("%s,netdev=n0 -netdev tap,id=n0,ifname=tap%d,"
                               "script=no,downscript=no",
                               i ? ",mac=52:54:00:12:34:57" : "", i + 1);
    }
    if (!i) {
        port = 20000 + g_random_int_range(0, 20000);
    }
    return g_strdup_printf("%s,netdev=n0 -netdev dgram,id=n0,"
                           "local.type=inet,local.host=127.0.0.1,"
                           "local.port=%d,remote.type=inet,"
                           "remote.host=127.0.0.1,remote.port=%d",
                           i ? ",mac=52:54:00:12:34:57" : "",
                           port + i * 20000, port + !i * 20000);
}

static void world_up(World *w, unsigned nqps, bool hog)
{
    memset(w, 0, sizeof(*w));
    if (!strcmp(fabric, "loopback")) {
        node_start(&w->a, NULL, 0x0a000001, hog);
        w->nodes[0] = &w->a;
        w->nnodes = 1;
    } else {
        g_autofree char *na = node_netdev(0);
        g_autofree char *nb = node_netdev(1);

        node_start(&w->a, na, 0x0a000001, hog);
        node_start(&w->b, nb, 0x0a000002, hog);
        w->nodes[0] = &w->a;
        w->nodes[1] = &w->b;
        w->nnodes = 2;
    }
    for (unsigned i = 0; i < nqps; i++) {
        bqp_create(w->nodes[0], &w->qa[i]);
        bqp_create(w->nodes[w->nnodes - 1], &w->qb[i]);
    }
    for (unsigned i = 0; i < nqps; i++) {
        bqp_connect(&w->qa[i], &w->qb[i]);
        bqp_connect(&w->qb[i], &w->qa[i]);
    }
}

/* On stderr: what the sender lost and sent again, when it did. */
static void losses_note(World *w)
{
    uint64_t stats[SHCA_STAT_COUNT];

    rdma_stats(&w->a.r, stats);
    if (stats[SHCA_STAT_TIMEOUTS] || stats[SHCA_STAT_NAKS_RECEIVED]) {
        fprintf(stderr, "  %" PRIu64 " packets sent, %" PRIu64 " timeouts, %"
                PRIu64 " NAKs, %" PRIu64 " retransmitted, %" PRIu64
                " dropped by the loopback\n",
                stats[SHCA_STAT_TX_PACKETS], stats[SHCA_STAT_TIMEOUTS],
                stats[SHCA_STAT_NAKS_RECEIVED], stats[SHCA_STAT_RETRANSMITS],
                stats[SHCA_STAT_LOOPBACK_DROPPED]);
    }
}

static void world_down(World *w)
{
    for (unsigned i = 0; i < w->nnodes; i++) {
        hca_stop(&w->nodes[i]->r.h);
    }
}

static void print(const char *name, double value, const char *unit)
{
    printf("%s\t%.3f\t%s\n", name, value, unit);
    fflush(stdout);
}

static void print_fail(const char *name, const Stream *st, unsigned n)
{
    uint8_t status = 0;

    for (unsigned i = 0; i < n; i++) {
        status = status ?: st[i].status;
    }
    printf("%s\tfail\t%s %u\n", name,
           status ? "CQE status" : "no completion for s", status ?:
           (unsigned)(GIVE_UP_NS / 1000000000ll));
    fflush(stdout);
}

/* The packets (path MTU 4096) of the WQEs a stream completed. */
static double stream_pkts(const Stream *st)
{
    return (double)st->done * DIV_ROUND_UP(st->len, 4096);
}

/* Jain's fairness index of the streams' packets: 1 is perfectly fair. */
static double jain(const Stream *st, unsigned n)
{
    double sum = 0, sq = 0;

    for (unsigned i = 0; i < n; i++) {
        double pkts = stream_pkts(&st[i]);

        sum += pkts;
        sq += pkts * pkts;
    }
    return sq ? sum * sum / (n * sq) : 0;
}

/*
 * n streams of opcode and len, in batches of batch, on fresh devices: WQEs
 * per second, or a negative figure if a WQE failed.
 */
static double run_figure(Stream *st, unsigned n, uint8_t opcode,
                         uint32_t len, uint32_t batch)
{
    static World w;
    uint64_t total = 0;
    int64_t ns;

    world_up(&w, n, false);
    for (unsigned i = 0; i < n; i++) {
        st[i] = (Stream) { &w.qa[i], &w.qb[i], opcode, len, batch };
    }
    ns = streams_run(st, n, w.nodes, w.nnodes, seconds);
    losses_note(&w);
    world_down(&w);
    for (unsigned i = 0; i < n; i++) {
        total += st[i].done;
    }
    return ns > 0 ? total / (ns / 1e9) : -1;
}

/*
 * Fairness with a hog: QP 0 SENDs HOG_LEN, two messages in flight, while
 * the 15 others WRITE 2 bytes, for HOG_SECONDS (its messages take long);
 * false if a WQE failed.
 */
static bool hog_figure(Stream *st)
{
    static World w;
    int64_t ns;

    world_up(&w, BQ_QPS, true);
    st[0] = (Stream) { &w.qa[0], &w.qb[0], SHCA_WR_SEND, HOG_LEN, 1 };
    for (unsigned i = 1; i < BQ_QPS; i++) {
        st[i] = (Stream) { &w.qa[i], &w.qb[i], SHCA_WR_RDMA_WRITE, 2, 512 };
    }
    ns = streams_run(st, BQ_QPS, w.nodes, w.nnodes, HOG_SECONDS);
    losses_note(&w);
    world_down(&w);
    return ns > 0;
}

#define LAT_ITERS       1000
#define LAT_DST         8192    /* where each side's answer lands */

/*
 * The SQ of q holds LAT_ITERS WRITEs of 2 bytes, WQE i from q's buffer at
 * 2 * i, which holds i, to the peer's at LAT_DST: a ping is one doorbell.
 */
static void lat_ring(BQp *q, const BQp *peer)
{
    const size_t slot = 1u << BQ_SQ_SHIFT;
    g_autofree uint8_t *ring = g_malloc0(LAT_ITERS * slot);
    g_autofree uint16_t *vals = g_new(uint16_t, LAT_ITERS);
    struct shca_send_wqe w = {
        .opcode = SHCA_WR_RDMA_WRITE,
        .num_sge = 1,
        .remote_addr = cpu_to_le64(BUF_IOVA + LAT_DST),
        .rkey = cpu_to_le32(peer->n->key),
    };
    struct shca_sge sge = {
        .length = cpu_to_le32(2),
        .lkey = cpu_to_le32(q->n->key),
    };

    for (uint32_t i = 0; i < LAT_ITERS; i++) {
        vals[i] = cpu_to_le16(i + 1);
        sge.addr = cpu_to_le64(BUF_IOVA + 2 * i);
        memcpy(ring + i * slot, &w, sizeof(w));
        memcpy(ring + i * slot + sizeof(w), &sge, sizeof(sge));
    }
    qtest_memwrite(q->n->r.h.qts, q->n->buf, vals, LAT_ITERS * 2);
    qtest_memwrite(q->n->r.h.qts, q->sq, ring, LAT_ITERS * slot);
}

static void lat_ping(BQp *q)
{
    q->sq_pi++;
    rdma_db(&q->n->r, 0, SHCA_DB_SQ, (q->sq_pi & 0xffff) << 16 | q->qpn);
}

/* Poll the node's buffer at LAT_DST until it holds i. */
static bool lat_wait(World *w, Node *n, uint32_t i)
{
    int64_t t0 = now_ns();
    uint16_t v;

    for (;;) {
        qtest_memread(n->r.h.qts, n->buf + LAT_DST, &v, sizeof(v));
        if (le16_to_cpu(v) == i) {
            return true;
        }
        if (now_ns() - t0 > GIVE_UP_NS) {
            return false;
        }
        clocks_follow(w->nodes, w->nnodes);
    }
}

/*
 * Ping-pong: a 2-byte WRITE from A to B, seen there, answered by one from
 * B to A: the half round trip.  The harness rings each WRITE with one
 * qtest write and sees it arrive by polling with qtest reads: the qtest
 * round trip is printed beside it, and a half trip costs about two.
 */
static void latency(void)
{
    static World w;
    Node *a;
    int64_t t;
    uint16_t v;

    world_up(&w, 1, false);
    a = w.qa[0].n;
    lat_ring(&w.qa[0], &w.qb[0]);
    lat_ring(&w.qb[0], &w.qa[0]);
    t = now_ns();
    for (uint32_t i = 1; i <= LAT_ITERS; i++) {
        lat_ping(&w.qa[0]);
        if (!lat_wait(&w, w.qb[0].n, i)) {
            break;
        }
        lat_ping(&w.qb[0]);
        if (!lat_wait(&w, a, i)) {
            break;
        }
    }
    t = now_ns() - t;
    if (w.qa[0].sq_pi == LAT_ITERS && w.qb[0].sq_pi == LAT_ITERS) {
        print("write_lat_2", t / 2e3 / LAT_ITERS, "us");
    } else {
        printf("write_lat_2\tfail\tno arrival\n");
    }
    t = now_ns();
    for (uint32_t i = 0; i < LAT_ITERS; i++) {
        qtest_memread(a->r.h.qts, a->buf, &v, sizeof(v));
    }
    print("qtest_roundtrip", (now_ns() - t) / 1e3 / LAT_ITERS, "us");
    world_down(&w);
}

static void bench(void)
{
    static const struct {
        const char *name;
        uint8_t opcode;
        uint32_t len, batch;
    } bw[] = {
        /* WRITE at each size of the plot's curve (tests/bench/plot) */
        { "write_bw_64", SHCA_WR_RDMA_WRITE, 64, 512 },
        { "write_bw_256", SHCA_WR_RDMA_WRITE, 256, 512 },
        { "write_bw_1k", SHCA_WR_RDMA_WRITE, 1024, 512 },
        { "write_bw_4k", SHCA_WR_RDMA_WRITE, 4096, 512 },
        { "write_bw_16k", SHCA_WR_RDMA_WRITE, 16384, 256 },
        { "write_bw_64k", SHCA_WR_RDMA_WRITE, 65536, 64 },
        { "send_bw_4k", SHCA_WR_SEND, 4096, 512 },
        { "send_bw_64k", SHCA_WR_SEND, 65536, 64 },
        { "read_bw_4k", SHCA_WR_RDMA_READ, 4096, 512 },
        { "read_bw_64k", SHCA_WR_RDMA_READ, 65536, 64 },
    };
    Stream st[BQ_QPS];
    double rate;

    /* the rate of 2-byte WRITEs; and with twice the WQEs per doorbell */
    for (uint32_t batch = 1024; batch <= 2048; batch *= 2) {
        const char *name = batch == 1024 ? "write_rate_1qp" :
                           "write_rate_1qp_2x_batch";

        rate = run_figure(st, 1, SHCA_WR_RDMA_WRITE, 2, batch);
        if (rate < 0) {
            print_fail(name, st, 1);
        } else {
            print(name, rate / 1e6, "Mpps");
        }
    }
    rate = run_figure(st, BQ_QPS, SHCA_WR_RDMA_WRITE, 2, 512);
    if (rate < 0) {
        print_fail("write_rate_16qp", st, BQ_QPS);
    } else {
        print("write_rate_16qp", rate / 1e6, "Mpps");
        print("fairness_16qp", jain(st, BQ_QPS), "Jain");
    }
    if (hog_figure(st)) {
        double all = 0;

        for (unsigned i = 0; i < BQ_QPS; i++) {
            all += stream_pkts(&st[i]);
        }
        print("fairness_hog", jain(st, BQ_QPS), "Jain");
        print("hog_share", all ? 100 * stream_pkts(&st[0]) / all : 0, "%");
    } else {
        print_fail("fairness_hog", st, BQ_QPS);
    }
    for (size_t i = 0; i < ARRAY_SIZE(bw); i++) {
        rate = run_figure(st, 1, bw[i].opcode, bw[i].len, bw[i].batch);
        if (rate < 0) {
            print_fail(bw[i].name, st, 1);
        } else {
            print(bw[i].name, rate * bw[i].len / 1e6, "MB/s");
        }
    }
    latency();
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";

    if (argc > 2) {
        seconds = g_ascii_strtod(argv[2], NULL);
    }
    iothread = argc > 3 && !strcmp(argv[3], "iothread");
    if (!getenv("QTEST_QEMU_BINARY") || seconds <= 0 ||
        (strcmp(mode, "loopback") && strcmp(mode, "dgram") &&
         strcmp(mode, "tap")) || (argc > 3 && !iothread)) {
        fprintf(stderr, "usage: QTEST_QEMU_BINARY=... %s loopback|dgram|tap "
                "[SECONDS [iothread]]\n", argv[0]);
        return 2;
    }
    g_test_init(&argc, &argv, NULL);
    fabric = mode;
    bench();
    return 0;
}
