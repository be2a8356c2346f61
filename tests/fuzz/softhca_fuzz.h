/*
 * What softhca's fuzzing harnesses share: writing their seed corpora, and
 * building the objects of their worlds that the qtests' helpers do not.
 * Include it after softhca-qtest.h.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef SOFTHCA_FUZZ_H
#define SOFTHCA_FUZZ_H

/* Write one seed input, dir/name, and free it. */
static inline void softhca_fuzz_write_seed(const char *dir, const char *name,
                                           GByteArray *input)
{
    g_autofree char *path = g_build_filename(dir, name, NULL);
    g_autoptr(GError) err = NULL;

    if (!g_file_set_contents(path, (const char *)input->data, input->len,
                             &err)) {
        g_error("%s", err->message);
    }
    g_byte_array_unref(input);
}

/*
 * An SRQ of the kernel's PD armed at limit (an XRC SRQ of the domain xrcdn
 * completing to CQ cqn, if xrcdn is not 0), its ring in a fresh zeroed
 * page.  Not srq_start(): QEMU's fuzzing wrapper of the qtest_memset() it
 * calls leaks its buffer.
 */
static inline void softhca_fuzz_srq(Rdma *r, Srq *q, uint32_t limit,
                                    uint32_t xrcdn, uint32_t cqn)
{
    struct shca_aq_entry cmd = { .opcode = SHCA_AQ_CREATE_SRQ };

    memset(q, 0, sizeof(*q));
    q->buf = guest_alloc(&r->h.alloc, 4096);
    q->log_size = SRQ_LOG;
    hca_fill(&r->h, q->buf, 0, 4096);
    cmd.create_srq.pdn = cpu_to_le32(r->pd);
    cmd.create_srq.srq_limit = cpu_to_le32(limit);
    cmd.create_srq.log_size = SRQ_LOG;
    cmd.create_srq.wqe_shift = SRQ_SHIFT;
    if (xrcdn) {
        cmd.create_srq.flags = SHCA_SRQ_F_XRC;
        cmd.create_srq.xrcdn = cpu_to_le32(xrcdn);
        cmd.create_srq.cqn = cpu_to_le32(cqn);
    }
    buf_direct(&cmd.create_srq.buf, q->buf, 1);
    g_assert_cmpuint(hca_cmd(&r->h, &cmd, &q->srqn), ==, SHCA_AQ_OK);
}

/* A target QP of the domain xrcdn, in RTR from rc_attr()'s peer. */
static inline uint32_t softhca_fuzz_xrc_tgt(Rdma *r, uint32_t xrcdn,
                                            uint32_t access)
{
    struct shca_aq_entry cmd = { .opcode = SHCA_AQ_CREATE_QP };
    struct shca_qp_attr a = rc_attr(SHCA_QPS_INIT);
    uint32_t qpn;

    cmd.create_qp.type = SHCA_QPT_XRC_TGT;
    cmd.create_qp.pdn = cpu_to_le32(xrcdn);
    g_assert_cmpuint(hca_cmd(&r->h, &cmd, &qpn), ==, SHCA_AQ_OK);
    a.access = cpu_to_le32(access);
    g_assert_cmpuint(rdma_modify(r, qpn, RC_INIT_MASK, &a), ==, SHCA_AQ_OK);
    a.state = SHCA_QPS_RTR;
    g_assert_cmpuint(rdma_modify(r, qpn, RC_RTR_MASK, &a), ==, SHCA_AQ_OK);
    return qpn;
}

/* The UD QP qpn into the multicast group of the IPv4 address ip. */
static inline void softhca_fuzz_mcast(Rdma *r, uint32_t qpn, uint32_t ip)
{
    struct shca_aq_entry cmd = { .opcode = SHCA_AQ_ATTACH_MCAST };

    cmd.mcast.qpn = cpu_to_le32(qpn);
    cmd.mcast.gid[10] = cmd.mcast.gid[11] = 0xff;
    stl_be_p(cmd.mcast.gid + 12, ip);
    g_assert_cmpuint(hca_cmd(&r->h, &cmd, NULL), ==, SHCA_AQ_OK);
}

/*
 * The pre_fuzz of a harness: with SOFTHCA_FUZZ_SEEDS set to a folder,
 * build the world its seeds name (build, if any), write the seeds there
 * and exit; _exit(), since libFuzzer takes exit() for a crash.
 */
static inline void softhca_fuzz_seeds(QTestState *s,
                                      void (*build)(QTestState *s),
                                      void (*write_seeds)(const char *dir))
{
    const char *dir = getenv("SOFTHCA_FUZZ_SEEDS");

    if (dir) {
        if (build) {
            build(s);
        }
        write_seeds(dir);
        _exit(0);
    }
}

#endif
