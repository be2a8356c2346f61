/*
 * libFuzzer harness for softhca's admin queue: commands, the memory they
 * point at (page lists, QP attributes), registers and doorbells, over a
 * device that already holds a PD, EQs, CQs and an RC QP to operate on, and
 * after them an SRQ at its limit, an XRC domain with an XRC SRQ and a
 * target QP, a UD QP in a multicast group, a window of each type and a
 * fast-registration MR.
 *
 * An input is a list of records (the AD_* kinds below).  The data area
 * that AD_MEM writes is at the same guest address in every run, and the
 * seeds point commands at it.  With SOFTHCA_FUZZ_SEEDS set to a folder,
 * the harness writes its seed corpus there and exits.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "fuzz.h"
#include "../softhca-qtest.h"
#include "softhca_fuzz.h"

enum {
    AD_CMD,         /* a 64-byte command, posted and rung */
    AD_MEM,         /* le16 offset, length, bytes into the data area */
    AD_REG,         /* le16 BAR0 offset (EQ doorbells too), le32 value */
    AD_DB,          /* le16 BAR2 offset (two pages), le32 value */
    AD_CLOCK,       /* n: the clock moves n + 1 ms */
    AD_KINDS
};

#define AD_DATA_LEN     (64 * 1024)

typedef struct AdWorld {
    Rdma r;
    Loop rc;
    Ud ud;
    Srq srq, xsrq;
    uint32_t xrcdn, xrc_qpn, mw[2], fr_key;
    uint32_t next_cqn, next_key;    /* what the next CQ and MR will get */
    uint64_t data;
} AdWorld;

static AdWorld world;

#define AD_SRQ_LIMIT    3

/*
 * The objects the commands can name besides the RC QP's, made after it so
 * that its handles stay what they were.
 */
static void ad_objects_build(Rdma *r)
{
    struct shca_aq_entry cmd = { .opcode = SHCA_AQ_ALLOC_MW };
    struct shca_buf_desc list = { 0 };
    uint64_t cqbuf;
    uint32_t cqn;

    softhca_fuzz_srq(r, &world.srq, AD_SRQ_LIMIT, 0, 0);
    g_assert_cmpuint(hca_simple(&r->h, SHCA_AQ_ALLOC_XRCD, 0, &world.xrcdn),
                     ==, SHCA_AQ_OK);
    cqn = rdma_cq(r, 0, LOOP_CQ_LOG, &cqbuf);
    softhca_fuzz_srq(r, &world.xsrq, AD_SRQ_LIMIT, world.xrcdn, cqn);
    world.xrc_qpn = softhca_fuzz_xrc_tgt(r, world.xrcdn,
                                         SHCA_ACCESS_REMOTE_WRITE);
    ud_start(r, &world.ud, SHCA_QPT_UD, UD_QKEY);
    softhca_fuzz_mcast(r, world.ud.qpn, UD_MCAST_IP);
    world.next_cqn = world.ud.rcq + 1;
    cmd.alloc_mw.pdn = cpu_to_le32(r->pd);
    for (int i = 0; i < 2; i++) {
        cmd.alloc_mw.type = i + 1;
        g_assert_cmpuint(hca_cmd(&r->h, &cmd, &world.mw[i]), ==, SHCA_AQ_OK);
    }
    buf_direct(&list, guest_alloc(&r->h.alloc, 4096), 4);
    g_assert_cmpuint(rdma_reg_mr(r, SHCA_ACCESS_FAST_REG, 0, 0, 0, &list,
                                 &world.fr_key), ==, SHCA_AQ_OK);
    world.next_key = world.fr_key + 0x100;
}

static void ad_world_build(QTestState *s)
{
    Rdma *r = &world.r;

    memset(&world, 0, sizeof(world));
    hca_attach(&r->h, s);
    r->h.settle = flush_events;
    rdma_init(r);
    loop_start(r, &world.rc, SHCA_QPT_RC, 7);
    world.data = guest_alloc(&r->h.alloc, AD_DATA_LEN);
    hca_fill(&r->h, world.data, 0, AD_DATA_LEN);
    ad_objects_build(r);
}

/* Take the completions the device wrote, so that the ACQ never fills. */
static void ad_reap(Hca *h)
{
    struct shca_acq_entry cqe;

    for (int i = 0; i < (1 << ACQ_LOG) && hca_poll(h, &cqe); i++) {
        continue;
    }
}

static void ad_fuzz(QTestState *s, const unsigned char *data, size_t size)
{
    Hca *h = &world.r.h;

    ad_world_build(s);
    while (size > 0) {
        uint8_t kind = *data % AD_KINDS;
        struct shca_aq_entry cmd;
        size_t used;

        data++;
        size--;
        used = size;            /* a record cut short takes the rest */
        switch (kind) {
        case AD_CMD:
            if (size >= sizeof(cmd)) {
                memcpy(&cmd, data, sizeof(cmd));
                hca_post(h, &cmd);
                used = sizeof(cmd);
            }
            break;
        case AD_MEM:
            if (size >= 3) {
                uint16_t off = lduw_le_p(data);
                size_t len = MIN(MIN(data[2], size - 3), AD_DATA_LEN - off);

                qtest_memwrite(s, world.data + off, data + 3, len);
                used = 3 + len;
            }
            break;
        case AD_REG:
            if (size >= 6) {
                wr(h, lduw_le_p(data) & (SHCA_REGS_SIZE - 4),
                   ldl_le_p(data + 2));
                used = 6;
            }
            break;
        case AD_DB:
            if (size >= 6) {
                qpci_io_writel(h->dev, world.r.db,
                               lduw_le_p(data) & (2 * SHCA_DB_PAGE_SIZE - 4),
                               ldl_le_p(data + 2));
                used = 6;
            }
            break;
        case AD_CLOCK:
            if (size >= 1) {
                qtest_clock_step(s, (data[0] + 1) * 1000 * 1000);
                used = 1;
            }
            break;
        }
        flush_events(s);
        ad_reap(h);
        data += used;
        size -= used;
    }
    hca_detach(h);
    fuzz_reset(s);
}

/* --- The seed corpus ------------------------------------------------------ */

static void seed_cmd(GByteArray *b, const struct shca_aq_entry *cmd)
{
    uint8_t kind = AD_CMD;

    g_byte_array_append(b, &kind, 1);
    g_byte_array_append(b, (const uint8_t *)cmd, sizeof(*cmd));
}

static void seed_mem(GByteArray *b, uint16_t off, const void *p, uint8_t len)
{
    uint8_t h[4] = { AD_MEM };

    stw_le_p(h + 1, off);
    h[3] = len;
    g_byte_array_append(b, h, sizeof(h));
    g_byte_array_append(b, p, len);
}

static void seed_reg(GByteArray *b, uint16_t off, uint32_t val)
{
    uint8_t h[7] = { AD_REG };

    stw_le_p(h + 1, off);
    stl_le_p(h + 3, val);
    g_byte_array_append(b, h, sizeof(h));
}

static struct shca_aq_entry seed_handle(uint8_t opcode, uint32_t handle)
{
    struct shca_aq_entry cmd = { .opcode = opcode };

    cmd.handle.handle = cpu_to_le32(handle);
    return cmd;
}

/* MODIFY_QP of the world's QP with attributes a, written at offset off. */
static void seed_modify(GByteArray *b, uint32_t mask,
                        const struct shca_qp_attr *a, uint16_t off)
{
    struct shca_aq_entry cmd = { .opcode = SHCA_AQ_MODIFY_QP };

    seed_mem(b, off, a, sizeof(*a));
    cmd.qp_attr.qpn = cpu_to_le32(world.rc.qpn);
    cmd.qp_attr.attr_mask = cpu_to_le32(mask);
    cmd.qp_attr.attr_addr = cpu_to_le64(world.data + off);
    seed_cmd(b, &cmd);
}

/* The world's QP RESET -> INIT -> RTR -> RTS, attributes at 0x8000.. */
static void seed_to_rts(GByteArray *b)
{
    struct shca_qp_attr a = rc_attr(SHCA_QPS_INIT);

    seed_modify(b, RC_INIT_MASK, &a, 0x8000);
    a = rc_attr(SHCA_QPS_RTR);
    seed_modify(b, RC_RTR_MASK, &a, 0x8040);
    a = rc_attr(SHCA_QPS_RTS);
    seed_modify(b, RC_RTS_MASK, &a, 0x8080);
}

/* Commands on the objects ad_objects_build() made */
static void ad_write_object_seeds(const char *dir)
{
    struct shca_aq_entry cmd;
    struct shca_qp_attr a;
    GByteArray *b;

    /* the SRQ: queried, its limit moved, resized, destroyed */
    b = g_byte_array_new();
    cmd = seed_handle(SHCA_AQ_QUERY_SRQ, world.srq.srqn);
    seed_cmd(b, &cmd);
    cmd = (struct shca_aq_entry) { .opcode = SHCA_AQ_MODIFY_SRQ };
    cmd.modify_srq.srqn = cpu_to_le32(world.srq.srqn);
    cmd.modify_srq.attr_mask = cpu_to_le32(SHCA_SRQ_ATTR_LIMIT);
    cmd.modify_srq.srq_limit = cpu_to_le32(1);
    seed_cmd(b, &cmd);
    cmd.modify_srq.attr_mask = cpu_to_le32(SHCA_SRQ_ATTR_LIMIT |
                                           SHCA_SRQ_ATTR_MAX_WR);
    cmd.modify_srq.log_size = 5;
    buf_direct(&cmd.modify_srq.buf, world.data, 2);
    seed_cmd(b, &cmd);
    cmd = seed_handle(SHCA_AQ_DESTROY_SRQ, world.srq.srqn);
    seed_cmd(b, &cmd);
    softhca_fuzz_write_seed(dir, "srq", b);

    /* XRC: the domain is busy, the target QP is queried, moved, destroyed */
    b = g_byte_array_new();
    cmd = seed_handle(SHCA_AQ_DEALLOC_XRCD, world.xrcdn);
    seed_cmd(b, &cmd);
    cmd = (struct shca_aq_entry) { .opcode = SHCA_AQ_QUERY_QP };
    cmd.qp_attr.qpn = cpu_to_le32(world.xrc_qpn);
    cmd.qp_attr.attr_addr = cpu_to_le64(world.data + 0x8000);
    seed_cmd(b, &cmd);
    a = rc_attr(SHCA_QPS_RTS);
    seed_mem(b, 0x8100, &a, sizeof(a));
    cmd = (struct shca_aq_entry) { .opcode = SHCA_AQ_MODIFY_QP };
    cmd.qp_attr.qpn = cpu_to_le32(world.xrc_qpn);
    cmd.qp_attr.attr_mask = cpu_to_le32(RC_RTS_MASK);
    cmd.qp_attr.attr_addr = cpu_to_le64(world.data + 0x8100);
    seed_cmd(b, &cmd);
    cmd = seed_handle(SHCA_AQ_DESTROY_SRQ, world.xsrq.srqn);
    seed_cmd(b, &cmd);
    cmd = seed_handle(SHCA_AQ_DESTROY_QP, world.xrc_qpn);
    seed_cmd(b, &cmd);
    cmd = seed_handle(SHCA_AQ_DEALLOC_XRCD, world.xrcdn);
    seed_cmd(b, &cmd);
    softhca_fuzz_write_seed(dir, "xrc", b);

    /* the UD QP: out of its group and in again, then destroyed in it */
    b = g_byte_array_new();
    cmd = (struct shca_aq_entry) { .opcode = SHCA_AQ_DETACH_MCAST };
    cmd.mcast.qpn = cpu_to_le32(world.ud.qpn);
    cmd.mcast.gid[10] = cmd.mcast.gid[11] = 0xff;
    stl_be_p(cmd.mcast.gid + 12, UD_MCAST_IP);
    seed_cmd(b, &cmd);
    seed_cmd(b, &cmd);
    cmd.opcode = SHCA_AQ_ATTACH_MCAST;
    seed_cmd(b, &cmd);
    seed_cmd(b, &cmd);
    cmd = seed_handle(SHCA_AQ_DESTROY_QP, world.ud.qpn);
    seed_cmd(b, &cmd);
    softhca_fuzz_write_seed(dir, "mcast", b);

    /* windows and the fast-registration MR freed, each by the wrong verb too */
    b = g_byte_array_new();
    cmd = seed_handle(SHCA_AQ_DEREG_MR, world.mw[0]);
    seed_cmd(b, &cmd);
    for (int i = 0; i < 2; i++) {
        cmd = seed_handle(SHCA_AQ_DEALLOC_MW, world.mw[i]);
        seed_cmd(b, &cmd);
    }
    cmd = seed_handle(SHCA_AQ_DEALLOC_MW, world.fr_key);
    seed_cmd(b, &cmd);
    cmd = seed_handle(SHCA_AQ_DEREG_MR, world.fr_key);
    seed_cmd(b, &cmd);
    softhca_fuzz_write_seed(dir, "mw-fastreg", b);
}

static void ad_write_seeds(const char *dir)
{
    struct shca_aq_entry cmd;
    struct shca_qp_attr a;
    uint64_t list[8];
    GByteArray *b;

    /* CQs: create, resize, destroy */
    b = g_byte_array_new();
    cmd = (struct shca_aq_entry) { .opcode = SHCA_AQ_CREATE_CQ };
    cmd.create_cq.eqn = cpu_to_le32(1);
    cmd.create_cq.log_size = 4;
    buf_direct(&cmd.create_cq.buf, world.data, 1);
    seed_cmd(b, &cmd);
    cmd = (struct shca_aq_entry) { .opcode = SHCA_AQ_RESIZE_CQ };
    cmd.resize_cq.cqn = cpu_to_le32(world.next_cqn);
    cmd.resize_cq.log_size = 6;
    buf_direct(&cmd.resize_cq.buf, world.data + 4096, 2);
    seed_cmd(b, &cmd);
    cmd = seed_handle(SHCA_AQ_DESTROY_CQ, world.next_cqn);
    seed_cmd(b, &cmd);
    softhca_fuzz_write_seed(dir, "cq", b);

    /* the world's QP through RESET -> INIT -> RTR -> RTS -> ERR, queried */
    b = g_byte_array_new();
    seed_to_rts(b);
    cmd = (struct shca_aq_entry) { .opcode = SHCA_AQ_QUERY_QP };
    cmd.qp_attr.qpn = cpu_to_le32(world.rc.qpn);
    cmd.qp_attr.attr_addr = cpu_to_le64(world.data + 0x80c0);
    seed_cmd(b, &cmd);
    a = rc_attr(SHCA_QPS_ERR);
    seed_modify(b, SHCA_QP_ATTR_STATE, &a, 0x8100);
    cmd = seed_handle(SHCA_AQ_DESTROY_QP, world.rc.qpn);
    seed_cmd(b, &cmd);
    softhca_fuzz_write_seed(dir, "qp-states", b);

    /*
     * EQ 0 armed, the QP drained (SQD) with an event asked for, drained
     * again, back to RTS, RTS to RTS; EQ 0 armed again with the events
     * unread, then EQ 1 with a bad consumer index
     */
    b = g_byte_array_new();
    seed_to_rts(b);
    seed_reg(b, SHCA_REG_EQ_DB(0), SHCA_EQ_DB_ARM);
    a = rc_attr(SHCA_QPS_SQD);
    seed_modify(b, SHCA_QP_ATTR_STATE | SHCA_QP_ATTR_SQD_NOTIFY, &a, 0x80c0);
    seed_modify(b, SHCA_QP_ATTR_STATE, &a, 0x8100);
    a = rc_attr(SHCA_QPS_RTS);
    seed_modify(b, SHCA_QP_ATTR_STATE, &a, 0x8140);
    seed_modify(b, SHCA_QP_ATTR_STATE, &a, 0x8180);
    seed_reg(b, SHCA_REG_EQ_DB(0), SHCA_EQ_DB_ARM);
    seed_reg(b, SHCA_REG_EQ_DB(1), SHCA_EQ_DB_ARM | 0xffff);
    softhca_fuzz_write_seed(dir, "qp-sqd-eq", b);

    /* a new QP on the world's CQs, in the data area */
    b = g_byte_array_new();
    rdma_qp_cmd(&world.r, &cmd, 0, SHCA_QPT_UD, world.rc.scq, world.rc.rcq,
                world.data, world.data + 4096);
    seed_cmd(b, &cmd);
    cmd.create_qp.type = SHCA_QPT_UC;
    cmd.create_qp.flags = SHCA_QP_F_SQ_RECORD;
    buf_direct(&cmd.create_qp.sq, world.data + 8192, 2);
    seed_cmd(b, &cmd);
    softhca_fuzz_write_seed(dir, "qp-create", b);

    /* MRs: direct, one-level and two-level page lists, rereg, dereg */
    b = g_byte_array_new();
    for (int i = 0; i < 8; i++) {
        list[i] = cpu_to_le64(world.data + 0x4000 + i * 4096);
    }
    seed_mem(b, 0x1000, list, sizeof(list));
    list[0] = cpu_to_le64(world.data + 0x1000);
    seed_mem(b, 0x2000, list, sizeof(list[0]));
    cmd = (struct shca_aq_entry) { .opcode = SHCA_AQ_REG_MR };
    cmd.reg_mr.pdn = cpu_to_le32(world.r.pd);
    cmd.reg_mr.access = cpu_to_le32(SHCA_ACCESS_LOCAL_WRITE |
                                    SHCA_ACCESS_REMOTE_WRITE);
    cmd.reg_mr.iova = cpu_to_le64(0x10000);
    cmd.reg_mr.length = cpu_to_le64(8 * 4096 - 100);
    cmd.reg_mr.first_offset = cpu_to_le32(100);
    buf_direct(&cmd.reg_mr.pages, world.data + 0x4000, 8);
    seed_cmd(b, &cmd);
    cmd.reg_mr.pages.flags = 0;
    cmd.reg_mr.pages.addr = cpu_to_le64(world.data + 0x1000);
    seed_cmd(b, &cmd);
    cmd.reg_mr.pages.flags = SHCA_BUF_LIST2;
    cmd.reg_mr.pages.addr = cpu_to_le64(world.data + 0x2000);
    seed_cmd(b, &cmd);
    cmd = (struct shca_aq_entry) { .opcode = SHCA_AQ_REREG_MR };
    cmd.rereg_mr.key = cpu_to_le32(world.next_key);
    cmd.rereg_mr.mr.pdn = cpu_to_le32(world.r.pd);
    cmd.rereg_mr.mr.access = cpu_to_le32(SHCA_ACCESS_REMOTE_READ);
    cmd.rereg_mr.mr.length = cpu_to_le64(4096);
    buf_direct(&cmd.rereg_mr.mr.pages, world.data + 0x4000, 1);
    seed_cmd(b, &cmd);
    cmd = seed_handle(SHCA_AQ_DEREG_MR, world.rc.key);
    seed_cmd(b, &cmd);
    softhca_fuzz_write_seed(dir, "mr", b);

    /* PDs, user contexts, XRC domains, memory windows, SRQs */
    b = g_byte_array_new();
    cmd = seed_handle(SHCA_AQ_ALLOC_UCTX, 0);
    seed_cmd(b, &cmd);
    cmd = seed_handle(SHCA_AQ_ALLOC_PD, 1);
    seed_cmd(b, &cmd);
    cmd = seed_handle(SHCA_AQ_ALLOC_XRCD, 1);
    seed_cmd(b, &cmd);
    cmd = (struct shca_aq_entry) { .opcode = SHCA_AQ_ALLOC_MW };
    cmd.alloc_mw.pdn = cpu_to_le32(world.r.pd);
    cmd.alloc_mw.type = 2;
    seed_cmd(b, &cmd);
    cmd = (struct shca_aq_entry) { .opcode = SHCA_AQ_CREATE_SRQ };
    cmd.create_srq.pdn = cpu_to_le32(world.r.pd);
    cmd.create_srq.log_size = 4;
    cmd.create_srq.wqe_shift = 5;
    buf_direct(&cmd.create_srq.buf, world.data, 1);
    seed_cmd(b, &cmd);
    cmd = seed_handle(SHCA_AQ_DEALLOC_PD, world.r.pd);
    seed_cmd(b, &cmd);
    cmd = seed_handle(SHCA_AQ_DEALLOC_UCTX, 1);
    seed_cmd(b, &cmd);
    softhca_fuzz_write_seed(dir, "objects", b);

    /* EQs, GIDs, multicast, counters */
    b = g_byte_array_new();
    cmd = (struct shca_aq_entry) { .opcode = SHCA_AQ_CREATE_EQ };
    cmd.create_eq.eqn = cpu_to_le32(2);
    cmd.create_eq.vector = cpu_to_le16(4);
    cmd.create_eq.log_size = 4;
    buf_direct(&cmd.create_eq.buf, world.data, 1);
    seed_cmd(b, &cmd);
    cmd = (struct shca_aq_entry) { .opcode = SHCA_AQ_SET_GID };
    cmd.set_gid.index = cpu_to_le32(3);
    cmd.set_gid.flags = cpu_to_le32(SHCA_GID_VALID);
    cmd.set_gid.gid[0] = 0xfe;
    cmd.set_gid.gid[1] = 0x80;
    seed_cmd(b, &cmd);
    cmd = (struct shca_aq_entry) { .opcode = SHCA_AQ_ATTACH_MCAST };
    cmd.mcast.qpn = cpu_to_le32(world.rc.qpn);
    cmd.mcast.gid[0] = 0xff;
    seed_cmd(b, &cmd);
    cmd.opcode = SHCA_AQ_DETACH_MCAST;
    seed_cmd(b, &cmd);
    cmd = (struct shca_aq_entry) { .opcode = SHCA_AQ_QUERY_STATS };
    cmd.query_stats.addr = cpu_to_le64(world.data + 0x3000);
    seed_cmd(b, &cmd);
    cmd = seed_handle(SHCA_AQ_DESTROY_EQ, 2);
    seed_cmd(b, &cmd);
    softhca_fuzz_write_seed(dir, "eq-gid-mcast-stats", b);

    ad_write_object_seeds(dir);
}

/* The seeds name the world's handles and addresses. */
static void ad_pre_fuzz(QTestState *s)
{
    softhca_fuzz_seeds(s, ad_world_build, ad_write_seeds);
}

static GString *ad_cmdline(FuzzTarget *t)
{
    return g_string_new(TARGET_NAME " -machine q35,accel=qtest -m 128 "
                        "-nodefaults -display none -device softhca");
}

static void register_softhca_admin_fuzz_target(void)
{
    fuzz_add_target(&(FuzzTarget){
        .name = "softhca-admin",
        .description = "Fuzz softhca's admin queue, with the memory its "
                       "commands name, its registers and doorbells",
        .get_init_cmdline = ad_cmdline,
        .pre_fuzz = ad_pre_fuzz,
        .fuzz = ad_fuzz,
    });
}

fuzz_target_init(register_softhca_admin_fuzz_target);
