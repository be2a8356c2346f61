/*
 * libFuzzer harness for softhca's doorbell hand-off (spec §14): doorbells
 * queued on their pages' queues (x-doorbell-handoff=on queues every one),
 * admin commands and resets, interleaved as the input says, with the
 * device's bottom halves run only where it says so.  Each reset builds
 * the world again, so that new QPs take the numbers of the old.  The QPs
 * talk to themselves over a lossy port: the device drops, duplicates and
 * reorders some of the frames it sends (fault-tx-*, spec §12), so that
 * retransmissions, duplicates and held frames meet the resets too.
 *
 * An input is a list of records (the DF_* kinds below).
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "fuzz.h"
#include "system/runstate.h"
#include "../softhca-qtest.h"
#include "softhca_fuzz.h"

enum {
    DF_DB,          /* le16 BAR2 offset (two pages), le32 value: queued */
    DF_CMD,         /* a 64-byte command, posted and rung, not waited for */
    DF_RESET,       /* 0: RESET, 1: CTRL.EN cleared; then the world again */
    DF_SETTLE,      /* the bottom halves run; completions are taken */
    DF_CLOCK,       /* n: the clock moves n + 1 ms */
    DF_STOP,        /* n: the VM stops, the clock moves n + 1 ms, it runs */
    DF_KINDS
};

/* Resets one input may make: each world takes guest memory anew. */
#define DF_RESETS_MAX   16

typedef struct DfWorld {
    Rdma r;
    Loop rc, uc;
} DfWorld;

static DfWorld world;

/* Fill every slot of a loop QP's rings: 0-byte signaled SENDs, receives. */
static void df_fill(Rdma *r, Loop *l)
{
    for (uint16_t i = 0; i < loop_sq_size(l); i++) {
        loop_send(r, l, i, 0x1000 + i, 0, 0, SHCA_WQE_SIGNALED);
    }
    for (uint16_t i = 0; i < 16; i++) {
        loop_recv(r, l, i, 0x2000 + i, 0, 0);
    }
}

/* An RC and a UC QP in RTS, each talking to itself through the loopback. */
static void df_objects(void)
{
    Rdma *r = &world.r;

    rdma_init(r);
    loop_start(r, &world.rc, SHCA_QPT_RC, 7);
    loop_connect(r, &world.rc, false);
    loop_start(r, &world.uc, SHCA_QPT_UC, 7);
    loop_connect(r, &world.uc, false);
    df_fill(r, &world.rc);
    df_fill(r, &world.uc);
}

static void df_world_build(QTestState *s)
{
    memset(&world, 0, sizeof(world));
    hca_attach(&world.r.h, s);
    world.r.h.settle = flush_events;
    df_objects();
}

static void df_reap(Hca *h)
{
    struct shca_acq_entry cqe;

    for (int i = 0; i < (1 << ACQ_LOG) && hca_poll(h, &cqe); i++) {
        continue;
    }
}

/* Post a command without waiting for it: the AQ may hold 7. */
static void df_post(Hca *h, const uint8_t *raw)
{
    struct shca_aq_entry cmd;

    memcpy(&cmd, raw, sizeof(cmd));
    cmd.cmd_id = cpu_to_le16(h->next_id++);
    qtest_memwrite(h->qts, h->aq + h->aq_tail * SHCA_AQ_ENTRY_SIZE, &cmd,
                   sizeof(cmd));
    h->aq_tail = (h->aq_tail + 1) & ((1 << AQ_LOG) - 1);
    wr(h, SHCA_REG_AQ_TAIL, h->aq_tail);
}

static void df_fuzz(QTestState *s, const unsigned char *data, size_t size)
{
    Hca *h = &world.r.h;
    unsigned resets = 0;

    df_world_build(s);
    while (size > 0) {
        uint8_t kind = *data % DF_KINDS;
        size_t used;

        data++;
        size--;
        used = size;            /* a record cut short takes the rest */
        switch (kind) {
        case DF_DB:
            if (size >= 6) {
                qpci_io_writel(h->dev, world.r.db,
                               lduw_le_p(data) & (2 * SHCA_DB_PAGE_SIZE - 4),
                               ldl_le_p(data + 2));
                used = 6;
            }
            break;
        case DF_CMD:
            if (size >= sizeof(struct shca_aq_entry)) {
                df_post(h, data);
                used = sizeof(struct shca_aq_entry);
            }
            break;
        case DF_RESET:
            if (size >= 1 && resets++ < DF_RESETS_MAX) {
                if (data[0] & 1) {
                    wr(h, SHCA_REG_CTRL, 0);
                } else {
                    wr(h, SHCA_REG_RESET, SHCA_RESET_MAGIC);
                }
                df_objects();
            }
            used = MIN(size, 1);
            break;
        case DF_SETTLE:
            flush_events(s);
            df_reap(h);
            used = 0;
            break;
        case DF_CLOCK:
            if (size >= 1) {
                qtest_clock_step(s, (data[0] + 1) * 1000 * 1000);
                used = 1;
            }
            break;
        case DF_STOP:
            used = MIN(size, 1);
            vm_stop(RUN_STATE_PAUSED);
            qtest_clock_step(s, ((used ? data[0] : 0) + 1) * 1000 * 1000);
            flush_events(s);
            vm_start();
            break;
        }
        data += used;
        size -= used;
    }
    flush_events(s);
    hca_detach(h);
    fuzz_reset(s);
}

/* --- The seed corpus ------------------------------------------------------ */

static void seed_db(GByteArray *b, uint32_t offset, uint32_t val)
{
    uint8_t rec[7] = { DF_DB };

    stw_le_p(rec + 1, offset);
    stl_le_p(rec + 3, val);
    g_byte_array_append(b, rec, sizeof(rec));
}

static void seed_kind(GByteArray *b, uint8_t kind, int arg)
{
    uint8_t rec[2] = { kind, arg };

    g_byte_array_append(b, rec, arg < 0 ? 1 : 2);
}

static void seed_cmd(GByteArray *b, const struct shca_aq_entry *cmd)
{
    uint8_t kind = DF_CMD;

    g_byte_array_append(b, &kind, 1);
    g_byte_array_append(b, (const uint8_t *)cmd, sizeof(*cmd));
}

static void df_write_seeds(const char *dir)
{
    struct shca_aq_entry destroy = { .opcode = SHCA_AQ_DESTROY_QP };
    uint32_t rc = world.rc.qpn, uc = world.uc.qpn;
    GByteArray *b;

    /* doorbells of both QPs queued, a reset, more, then the world again */
    b = g_byte_array_new();
    for (uint32_t i = 1; i <= 8; i++) {
        seed_db(b, SHCA_DB_RQ, i << 16 | rc);
        seed_db(b, SHCA_DB_SQ, i << 16 | rc);
        seed_db(b, SHCA_DB_SQ, i << 16 | uc);
    }
    seed_kind(b, DF_RESET, 1);
    for (uint32_t i = 9; i <= 16; i++) {
        seed_db(b, SHCA_DB_SQ, i << 16 | uc);
    }
    seed_kind(b, DF_SETTLE, -1);
    seed_kind(b, DF_CLOCK, 2);
    seed_kind(b, DF_SETTLE, -1);
    softhca_fuzz_write_seed(dir, "reset-between", b);

    /* doorbells queued before a DESTROY_QP, and after it */
    b = g_byte_array_new();
    seed_db(b, SHCA_DB_SQ, 4 << 16 | rc);
    seed_db(b, SHCA_DB_CQ, SHCA_DB_CQ_ARM | world.rc.scq);
    destroy.handle.handle = cpu_to_le32(rc);
    seed_cmd(b, &destroy);
    seed_db(b, SHCA_DB_SQ, 8 << 16 | rc);
    seed_kind(b, DF_SETTLE, -1);
    seed_kind(b, DF_RESET, 0);
    seed_db(b, SHCA_DB_SQ, 2 << 16 | rc);
    seed_kind(b, DF_SETTLE, -1);
    softhca_fuzz_write_seed(dir, "destroy-between", b);

    /* more writes than a page's queue holds, in order, then the queue */
    b = g_byte_array_new();
    for (uint32_t i = 1; i <= 80; i++) {
        seed_db(b, SHCA_DB_SQ, (i % 32) << 16 | uc);
        seed_db(b, SHCA_DB_CQ, SHCA_DB_CQ_ARM | world.uc.scq);
    }
    seed_kind(b, DF_SETTLE, -1);
    softhca_fuzz_write_seed(dir, "queue-overflow", b);

    /* doorbells queued while the VM is stopped, run when it runs again */
    b = g_byte_array_new();
    seed_db(b, SHCA_DB_SQ, 8 << 16 | rc);
    seed_kind(b, DF_STOP, 5);
    seed_db(b, SHCA_DB_SQ, 16 << 16 | rc);
    seed_db(b, SHCA_DB_SQ, 8 << 16 | uc);
    seed_kind(b, DF_STOP, 0);
    seed_kind(b, DF_SETTLE, -1);
    seed_kind(b, DF_CLOCK, 20);
    seed_kind(b, DF_SETTLE, -1);
    softhca_fuzz_write_seed(dir, "stopped", b);
}

/* The seeds name the world's QPs and CQs. */
static void df_pre_fuzz(QTestState *s)
{
    softhca_fuzz_seeds(s, df_world_build, df_write_seeds);
}

static GString *df_cmdline(FuzzTarget *t)
{
    return g_string_new(TARGET_NAME " -machine q35,accel=qtest -m 128 "
                        "-nodefaults -display none "
                        "-device softhca,x-doorbell-handoff=on,netdev=n0,"
                        "fault-tx-drop=30,fault-tx-dup=30,fault-tx-reorder=30 "
                        "-netdev user,id=n0");
}

static void register_softhca_doorbell_fuzz_target(void)
{
    fuzz_add_target(&(FuzzTarget){
        .name = "softhca-doorbell",
        .description = "Fuzz softhca's doorbell hand-off: queued doorbells, "
                       "admin commands and resets, interleaved",
        .get_init_cmdline = df_cmdline,
        .pre_fuzz = df_pre_fuzz,
        .fuzz = df_fuzz,
    });
}

fuzz_target_init(register_softhca_doorbell_fuzz_target);
