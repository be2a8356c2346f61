/*
 * softhca: an RDMA host channel adapter with one RoCEv2 port.
 * Private header shared by the device's files; the hardware interface
 * itself is spec/softhca.md and softhca_hw.h.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_SOFTHCA_H
#define HW_SOFTHCA_H

#include "qemu/units.h"
#include "qemu/iov.h"
#include "qemu/coroutine.h"
#include "qemu/thread.h"
#include "system/iothread.h"
#include "hw/pci/pci_device.h"
#include "net/net.h"
#include "qom/object.h"
#include "softhca_hw.h"
#include "softhca-dbq.h"
#include "softhca-fault.h"

#define TYPE_SOFTHCA "softhca"
OBJECT_DECLARE_SIMPLE_TYPE(SofthcaState, SOFTHCA)

/*
 * Resource limits this model implements (spec §3.1).  QPNs 0 and 1 name
 * the SMI and GSI QPs, so MAX_QP ordinary QPs take 2..MAX_QP + 1; MR
 * indexes run 1..MAX_MR, CQNs 0..MAX_CQ - 1.
 */
#define SOFTHCA_MAX_QP          4096
#define SOFTHCA_MAX_QP_WR       4096
#define SOFTHCA_MAX_SGE         16
#define SOFTHCA_MAX_CQ          4096
#define SOFTHCA_MAX_CQE         32768
#define SOFTHCA_MAX_MR          65536
#define SOFTHCA_MAX_PD          4096
#define SOFTHCA_MAX_EQ          32
#define SOFTHCA_MAX_EQE         4096
#define SOFTHCA_MAX_GID         128
#define SOFTHCA_MAX_INLINE      256
#define SOFTHCA_MAX_MSG_SIZE    (1u << 30)
#define SOFTHCA_MAX_QP_RD_ATOM  128
#define SOFTHCA_MAX_MR_SIZE     (1ull << 30)
#define SOFTHCA_PAGE_SIZE_CAP   ((1u << 12) | (1u << 21) | (1u << 30))
#define SOFTHCA_MAX_MTU         9000
#define SOFTHCA_MIN_MTU         68
#define SOFTHCA_DEFAULT_MTU     1500
#define SOFTHCA_MAX_AQ_LOG      12
#define SOFTHCA_MAX_MCAST_GRP   64
#define SOFTHCA_MAX_MCAST_QP_ATTACH 8
#define SOFTHCA_MAX_FAST_REG_PAGES 512
#define SOFTHCA_MAX_SRQ         1024    /* srqns 1..MAX_SRQ */
#define SOFTHCA_MAX_SRQ_WR      4096
#define SOFTHCA_MAX_XRCD        1024    /* xrcdns 1..MAX_XRCD */
#define SOFTHCA_QPN_GSI         1
#define SOFTHCA_QPN_FIRST       2
#define SOFTHCA_QP_TABLE        (SOFTHCA_QPN_FIRST + SOFTHCA_MAX_QP)
#define SOFTHCA_MR_TABLE        (SOFTHCA_MAX_MR + 1)
/*
 * Page addresses all MRs together may hold (8 bytes each in host memory):
 * bounds what a guest can make the device allocate.  Beyond it REG_MR
 * answers NO_RESOURCES.
 */
#define SOFTHCA_MAX_MR_PAGES    (1u << 24)
/*
 * Host memory the transport state of all QPs together may take (the
 * transport-mem property, spec §19); beyond it CREATE_QP answers
 * NO_RESOURCES.  The default fits 1365 QPs of the largest SQ stride and
 * 256 WQEs or more, and all 4096 QPs with SQs of up to 64 WQEs.
 */
#define SOFTHCA_TRANSPORT_MEM_DEFAULT   (128 * MiB)

/*
 * The work one callback may do (spec §19.3, softhca-work.c), in units of
 * about 10 ns of a 2-core host's time, and what each step costs.  Calibrated
 * on 2-core hosts without KVM: a callback that spends the whole budget
 * takes well under 5 ms there.
 */
#define SOFTHCA_WORK_BUDGET     32768
#define SOFTHCA_WORK_CMD        64      /* an admin command's own work */
#define SOFTHCA_WORK_PAGE       2       /* a page address read, or checked */
#define SOFTHCA_WORK_CQE        32      /* a CQE moved */
#define SOFTHCA_WORK_FLUSH      16      /* a WQE completed with WR_FLUSH_ERR */
/* A frame sent or received: its fixed cost, and per byte. */
#define SOFTHCA_WORK_FRAME(len) (64 + (len) / 8)

typedef struct SofthcaCq SofthcaCq;
typedef struct SofthcaQp SofthcaQp;
typedef struct SofthcaMr SofthcaMr;
typedef struct SofthcaSrq SofthcaSrq;

/* A guest buffer made of equal pages, checked once when it is described. */
typedef struct SofthcaBuf {
    uint64_t *pages;
    uint32_t npages;
    uint8_t page_shift;
} SofthcaBuf;

/* A ring the driver produces into and the device consumes (AQ, NIC). */
typedef struct SofthcaRing {
    uint64_t base;
    uint32_t log_size;
    uint32_t head;              /* device's next entry */
    uint32_t tail;              /* driver's last doorbell */
} SofthcaRing;

typedef struct SofthcaEq {
    bool valid;
    bool armed;
    bool phase;
    uint16_t vector;
    uint32_t log_size;
    uint32_t pi;                /* device's producer index */
    uint32_t ci;                /* driver's last doorbell */
    SofthcaBuf buf;
} SofthcaEq;

/* A multicast group (spec §17.3): its GID and the UD QPs attached. */
typedef struct SofthcaMcastGroup {
    uint8_t gid[16];
    uint32_t nqps;              /* 0: the entry is free */
    uint32_t qpns[SOFTHCA_MAX_MCAST_QP_ATTACH];
} SofthcaMcastGroup;

/* A frame the port receives, from the wire or its own loopback. */
typedef void SofthcaPortInput(SofthcaState *s, const uint8_t *frame,
                              size_t len);

/* A frame waiting in one of the device's queues, and such a queue. */
typedef struct SofthcaFrame {
    QSIMPLEQ_ENTRY(SofthcaFrame) next;
    size_t len;
    uint8_t data[];
} SofthcaFrame;
typedef QSIMPLEQ_HEAD(, SofthcaFrame) SofthcaFrameList;

/* A copy of the frame in cnt pieces at iov, for a queue. */
static inline SofthcaFrame *softhca_frame_new(const struct iovec *iov, int cnt)
{
    size_t len = iov_size(iov, cnt);
    SofthcaFrame *f = g_malloc(sizeof(*f) + len);

    f->len = iov_to_buf(iov, cnt, 0, f->data, len);
    return f;
}

/* The port's loopback queue (spec §7.1): frames on their way back in. */
typedef struct SofthcaLoopback {
    QEMUBH *bh;
    SofthcaPortInput *sink;     /* where frames come back in: the port */
    SofthcaFrameList frames;
    uint32_t count;
    bool running;               /* in bh, which wakes itself again */
    bool sched_waits;           /* the scheduler waits for room */
} SofthcaLoopback;

/*
 * What crosses between the engine's thread and the main loop when the
 * engine has an iothread (softhca-iothread.c, spec §12.1).
 */
typedef struct SofthcaCrossing {
    SofthcaPortInput *sink;     /* where the inbox's frames go: the port */
    QemuMutex lock;             /* guards the fields below */
    SofthcaFrameList inbox;     /* from the netdev */
    uint32_t inbox_count;
    bool inbox_held;            /* the netdev was told to wait */
    SofthcaFrameList outbox;    /* to the netdev */
    uint32_t outbox_count;
    uint64_t irqs;              /* MSI-X vectors to raise */
    uint32_t waiting;           /* SOFTHCA_WAIT_*: who waits for room */
    bool purge;                 /* a reset: the netdev's queue goes too */
    QEMUBH *in_bh;              /* the engine's: empties the inbox */
    QEMUBH *out_bh;             /* the main loop's: empties the outbox */
} SofthcaCrossing;

typedef struct SofthcaGid {
    bool valid;
    uint8_t raw[16];
} SofthcaGid;

/* Device counters; exposed to the driver by a later spec version. */
typedef struct SofthcaStats {
    uint64_t nic_tx_frames;
    uint64_t nic_tx_errors;
    uint64_t nic_rx_frames;
    uint64_t nic_rx_too_long;
    uint64_t nic_rx_no_buffer;
    uint64_t nic_rx_errors;
    uint64_t eq_overflows;
} SofthcaStats;

struct SofthcaState {
    PCIDevice parent_obj;

    MemoryRegion regs;
    MemoryRegion db;
    NICState *nic;
    NICConf conf;

    /* properties */
    uint32_t vectors;
    uint32_t db_pages;
    bool caps_qp;               /* x-caps-qp=off: a 0.1 device, no QP/CQ/MR */
    bool db_handoff;            /* x-doorbell-handoff: queue every doorbell */
    bool rxe_flush_icrc;        /* x-rxe-flush-icrc: FLUSH as rxe 6.12 */
    uint64_t tp_mem_max;        /* transport-mem */
    SofthcaFault fault;         /* fault-* properties and their state */
    IOThread *iothread;         /* iothread: where the engine runs */

    /* the engine's thread (spec §12.1) */
    AioContext *ctx;            /* the iothread's, or the main loop's */
    SofthcaCrossing x;          /* what crosses to and from the main loop */

    /* control and admin (spec §3.2, §3.3) */
    uint32_t ctrl;
    uint32_t status;
    uint32_t fatal_code;
    uint64_t aq_base_reg;
    uint64_t acq_base_reg;
    uint32_t aq_log_reg;
    uint32_t acq_log_reg;
    SofthcaRing aq;
    SofthcaRing acq;            /* head: driver's ACQ_HEAD; tail: device pi */
    bool acq_phase;

    /* port (spec §3.4) */
    uint8_t mac[6];
    uint32_t mtu;
    SofthcaGid gids[SOFTHCA_MAX_GID];

    /* NIC function (spec §3.5, §6) */
    uint32_t nic_ctrl;
    uint32_t nic_irq;
    SofthcaRing nic_tx;
    SofthcaRing nic_rx;
    uint8_t frame[SHCA_NIC_FRAME_MAX];
    SofthcaLoopback loopback;
    QEMUBH *admin_bh;           /* admin work past a callback's budget */
    Coroutine *admin_co;        /* the commands being run, across callbacks */
    bool admin_abort;           /* a reset: the command in progress ends */
    bool admin_posted;          /* completions not yet signalled */
    QEMUBH *nic_tx_bh;          /* TX descriptors past a callback's budget */

    /* doorbell pages (spec §8, §14): the writes queued for the BQL */
    SofthcaDbq *dbq;            /* one queue per page */
    unsigned long *db_pending;  /* pages with queued writes */
    QEMUBH *db_bh;

    /* objects */
    SofthcaEq eqs[SOFTHCA_MAX_EQ];
    unsigned long *pd_map;
    uint32_t pd_uctx[SOFTHCA_MAX_PD + 1];       /* each PD's context */
    uint32_t pd_users[SOFTHCA_MAX_PD + 1];      /* QPs, MRs, MWs, SRQs */
    unsigned long *uctx_map;
    SofthcaCq *cqs;             /* SOFTHCA_MAX_CQ, by cqn */
    SofthcaQp *qps;             /* SOFTHCA_QP_TABLE, by qpn */
    SofthcaMr *mrs;             /* SOFTHCA_MR_TABLE, by key >> 8 */
    SofthcaSrq *srqs;           /* SOFTHCA_MAX_SRQ + 1, by srqn */
    unsigned long *xrcd_map;    /* XRC domains, by xrcdn */
    int32_t pd_bits;            /* the maps' sizes, for their VMState */
    int32_t uctx_bits;
    int32_t xrcd_bits;
    uint64_t mr_pages;          /* page addresses held by all MRs */
    uint64_t tp_mem;            /* bytes of QP transport state reserved */
    SofthcaMcastGroup mcast[SOFTHCA_MAX_MCAST_GRP];
    QEMUBH *cq_error_bh;        /* moves the QPs of overrun CQs to ERR */
    /* the QPs with work left, in turn (softhca-sched.c) */
    QTAILQ_HEAD(, SofthcaQp) sched_qps;
    QEMUBH *sched_bh;
    bool sched_running;         /* in sched_bh, which wakes itself again */

    /* the work budget (spec §19.3) */
    uint32_t work_depth;        /* callbacks of the device nested */
    uint32_t work_used;         /* units the outermost one has spent */
    uint64_t work_max;          /* the most any callback spent: x-work-max */
    uint64_t wakeups;           /* softhca_work_wake() calls: x-wakeups */
    VMChangeStateEntry *vm_state;   /* stopped: the bottom halves wait */

    SofthcaStats stats;
    uint64_t rdma_stats[SHCA_STAT_COUNT];   /* QUERY_STATS, enum shca_stat */
};

static inline uint32_t softhca_ring_mask(const SofthcaRing *r)
{
    return (1u << r->log_size) - 1;
}

/*
 * CAPS.DGRAM (version 0.3: UD and GSI QPs, multicast, fast registration)
 * comes with CAPS.QP; x-caps-qp=off is a version 0.1 device.
 */
static inline bool softhca_has_dgram(const SofthcaState *s)
{
    return s->caps_qp;
}

/*
 * A QEMU_CLOCK_VIRTUAL timer of the engine's thread whose callback runs
 * under the device's re-entrancy guard (softhca-guard.c); freed with
 * timer_free().
 */
QEMUTimer *softhca_timer_new(SofthcaState *s, QEMUTimerCB *cb, void *opaque);

/*
 * softhca-iothread.c: the engine's thread (spec §12.1).  Everything that
 * touches the device's state runs there: its bottom halves and timers,
 * and, through softhca_engine_call(), register accesses and resets.
 */
/* sink: the port's receive, which the netdev's frames go to */
void softhca_iothread_init(SofthcaState *s, SofthcaPortInput *sink);
void softhca_iothread_stop(SofthcaState *s);
void softhca_iothread_exit(SofthcaState *s);
/*
 * A bottom half of the engine's thread, under the re-entrancy guard on
 * the main loop (an iothread has none: see softhca-iothread.c).
 */
MemReentrancyGuard *softhca_bh_guard(SofthcaState *s);
#define softhca_bh_new(s, cb) \
    aio_bh_new_guarded((s)->ctx, (cb), (s), softhca_bh_guard(s))
/*
 * Run fn(opaque) in the engine's thread and wait for it; the caller holds
 * the BQL and is not the engine's thread.  Without an iothread, a call.
 */
void softhca_engine_call(SofthcaState *s, QEMUBHFunc *fn, void *opaque);
/* A frame for the netdev (in cnt pieces), an MSI-X message: from the engine */
void softhca_port_out(SofthcaState *s, const struct iovec *iov, int cnt);
void softhca_irq_out(SofthcaState *s, unsigned vector);
/*
 * Whether the frames waiting for the main loop fill the outbox: if so,
 * the bottom half waiter (SOFTHCA_WAIT_*) is woken when they have left.
 */
#define SOFTHCA_WAIT_SCHED      1
#define SOFTHCA_WAIT_INBOX      2
bool softhca_port_busy(SofthcaState *s, uint32_t waiter);
/* The netdev's frame for the engine: false if the inbox is full. */
bool softhca_inbox_push(SofthcaState *s, const uint8_t *frame, size_t len);
bool softhca_inbox_room(SofthcaState *s);
/*
 * A reset: what waits in the inbox and the outbox goes, and what the
 * netdev still holds of the port's frames.
 */
void softhca_crossing_reset(SofthcaState *s);

static inline bool softhca_ready(const SofthcaState *s)
{
    return (s->status & (SHCA_STATUS_RDY | SHCA_STATUS_FATAL)) ==
           SHCA_STATUS_RDY;
}

/*
 * softhca-work.c: a callback's work (spec §19.3).  Every MMIO write,
 * received frame, bottom half and timer of the device runs between
 * softhca_work_begin() and softhca_work_end(), which may nest.
 */
void softhca_work_begin(SofthcaState *s);
void softhca_work_end(SofthcaState *s);
/* Spend units of this callback's budget; false if they do not fit. */
bool softhca_work_spend(SofthcaState *s, uint32_t units);
/* Whether units would fit: for a step whose cost is known only after it. */
bool softhca_work_fits(const SofthcaState *s, uint32_t units);
/*
 * softhca_work_begin() for a bottom half; false while the VM is stopped:
 * the BH then does nothing, and runs again when the VM does (spec §19).
 */
bool softhca_work_begin_bh(SofthcaState *s);
/*
 * Wake a bottom half of the engine that has work waiting (counted in
 * x-wakeups).  Its callers wake it only when it will not run anyway,
 * because each qemu_bh_schedule() may cost the main loop an eventfd
 * write, even for a bottom half already pending: a burst costs one
 * wakeup per run, not one per packet.
 */
void softhca_work_wake(SofthcaState *s, QEMUBH *bh);
/*
 * In an admin command: spend units, waiting for the budgets of later
 * callbacks if this one's is spent; false if a reset ends the command,
 * which then gives back what it took and fails.
 */
bool coroutine_fn softhca_work_step(SofthcaState *s, uint32_t units);
/* Wait for the next callback's budget; false if a reset ends the command. */
bool coroutine_fn softhca_work_wait(SofthcaState *s);
void softhca_work_init(SofthcaState *s);
void softhca_work_exit(SofthcaState *s);

/* softhca-regs.c */
extern const MemoryRegionOps softhca_regs_ops;
void softhca_regs_reset(SofthcaState *s);

/*
 * softhca-dma.c; and an MSI-X message, if MSI-X is enabled: from the
 * engine (softhca_irq), or now, with the BQL (softhca_irq_now)
 */
void softhca_irq(SofthcaState *s, unsigned vector);
void softhca_irq_now(SofthcaState *s, unsigned vector);
bool softhca_dma_ok(SofthcaState *s, uint64_t addr, uint64_t len);
bool softhca_dma_read(SofthcaState *s, uint64_t addr, void *buf, size_t len);
bool softhca_dma_write(SofthcaState *s, uint64_t addr, const void *buf,
                       size_t len);
bool softhca_dma_write_owned(SofthcaState *s, uint64_t addr, const void *entry,
                             size_t len);
/*
 * Guest RAM at addr, len bytes, in place for reading: its host pieces
 * added to iov[*n..max), the first joined to iov[*n - 1] where it follows
 * on.  False if the range is not all RAM or needs more pieces.  The
 * pieces stay valid while the caller holds the RCU read lock.
 */
bool softhca_dma_map_read(SofthcaState *s, uint64_t addr, uint64_t len,
                          struct iovec *iov, int *n, int max);
/*
 * The 8-byte aligned guest word at addr mapped for an atomic access, or
 * NULL if it is not guest RAM the device can write in place; unmapped
 * with written set if the access changed it (dirty tracking).
 */
uint64_t *softhca_dma_map_word(SofthcaState *s, uint64_t addr);
void softhca_dma_unmap_word(SofthcaState *s, uint64_t *word, bool written);
uint8_t softhca_buf_init(SofthcaState *s, SofthcaBuf *buf,
                         const struct shca_buf_desc *desc, uint64_t min_len);
uint8_t softhca_buf_init_list2(SofthcaState *s, SofthcaBuf *buf,
                               const struct shca_buf_desc *desc,
                               uint64_t min_len);
void softhca_buf_free(SofthcaBuf *buf);
uint64_t softhca_buf_addr(const SofthcaBuf *buf, uint64_t offset);

/* softhca-admin.c */
void softhca_fatal(SofthcaState *s, uint32_t code);
void softhca_admin_kick(SofthcaState *s);
void softhca_admin_init(SofthcaState *s);
void softhca_admin_exit(SofthcaState *s);
void softhca_admin_reset(SofthcaState *s);

/* softhca-doorbell.c */
void softhca_db_init(SofthcaState *s);
void softhca_db_exit(SofthcaState *s);
void softhca_db_reset(SofthcaState *s);
void softhca_db_drain(SofthcaState *s);
bool softhca_admin_start(SofthcaState *s);

/* softhca-eq.c */
/* Whether an EQ of 2^log_size EQEs is within the limits (spec §3.1). */
bool softhca_eq_log_size_ok(uint32_t log_size);
uint8_t softhca_eq_create(SofthcaState *s, const struct shca_aq_create_eq *c);
uint8_t softhca_eq_destroy(SofthcaState *s, uint32_t eqn);
void softhca_eq_doorbell(SofthcaState *s, uint32_t eqn, uint32_t val);
void softhca_eq_post(SofthcaState *s, uint32_t eqn, uint8_t type,
                     uint32_t obj, uint64_t data);
void softhca_eq_post_all(SofthcaState *s, uint8_t type, uint32_t obj,
                         uint64_t data);
void softhca_eq_reset(SofthcaState *s);

/* softhca-pd.c: protection domains and user contexts (spec §5.3) */
uint8_t softhca_pd_alloc(SofthcaState *s, uint32_t uctx, uint32_t *pdn);
uint8_t softhca_pd_dealloc(SofthcaState *s, uint32_t pdn);
bool softhca_pd_ok(SofthcaState *s, uint32_t pdn);
/* An object of §13 takes or gives back its PD (DEALLOC_PD: BUSY). */
void softhca_pd_hold(SofthcaState *s, uint32_t pdn);
void softhca_pd_release(SofthcaState *s, uint32_t pdn);
uint8_t softhca_uctx_alloc(SofthcaState *s, uint32_t *uctx);
uint8_t softhca_uctx_dealloc(SofthcaState *s, uint32_t uctx);
bool softhca_uctx_ok(SofthcaState *s, uint32_t uctx);
void softhca_pd_reset(SofthcaState *s);

/* softhca-cq.c, softhca-qp.c, softhca-mr.c: RDMA objects (spec §13) */
uint8_t softhca_cq_create(SofthcaState *s, const struct shca_aq_create_cq *c,
                          uint32_t *cqn);
uint8_t softhca_cq_destroy(SofthcaState *s, uint32_t cqn);
uint8_t softhca_cq_resize(SofthcaState *s, const struct shca_aq_resize_cq *c,
                          uint32_t *copied);
/* the bits of a CQ's CQE count that a queued doorbell keeps */
#define SOFTHCA_CQ_PI_SNAP      30
#define SOFTHCA_CQ_PI_SNAP_MASK ((1u << SOFTHCA_CQ_PI_SNAP) - 1)
void softhca_cq_doorbell(SofthcaState *s, uint32_t uctx, uint32_t val,
                         uint32_t pi_then);
void softhca_cq_reset(SofthcaState *s);
uint8_t softhca_qp_create(SofthcaState *s, const struct shca_aq_create_qp *c,
                          uint32_t *qpn);
uint8_t softhca_qp_modify(SofthcaState *s, const struct shca_aq_qp_attr *c);
uint8_t softhca_qp_query(SofthcaState *s, const struct shca_aq_qp_attr *c);
uint8_t softhca_qp_destroy(SofthcaState *s, uint32_t qpn);
void softhca_qp_doorbell(SofthcaState *s, uint32_t uctx, bool sq,
                         uint32_t val);
void softhca_qp_reset(SofthcaState *s);
uint8_t softhca_mr_reg(SofthcaState *s, const struct shca_aq_reg_mr *c,
                       uint32_t *key);
uint8_t softhca_mr_rereg(SofthcaState *s, const struct shca_aq_rereg_mr *c);
uint8_t softhca_mr_dereg(SofthcaState *s, uint32_t key);
void softhca_mr_reset(SofthcaState *s);
void softhca_mcast_reset(SofthcaState *s);
uint8_t softhca_mw_alloc(SofthcaState *s, const struct shca_aq_alloc_mw *c,
                         uint32_t *key);
uint8_t softhca_mw_dealloc(SofthcaState *s, uint32_t key);
uint8_t softhca_xrcd_alloc(SofthcaState *s, uint32_t uctx, uint32_t *xrcdn);
uint8_t softhca_xrcd_dealloc(SofthcaState *s, uint32_t xrcdn);
uint8_t softhca_srq_create(SofthcaState *s, const struct shca_aq_create_srq *c,
                           uint32_t *srqn);
uint8_t softhca_srq_modify(SofthcaState *s,
                           const struct shca_aq_modify_srq *c);
uint8_t softhca_srq_query(SofthcaState *s, uint32_t srqn, uint32_t *limit);
uint8_t softhca_srq_destroy(SofthcaState *s, uint32_t srqn);
void softhca_srq_doorbell(SofthcaState *s, uint32_t uctx, uint32_t val);
void softhca_srq_reset(SofthcaState *s);

/* softhca-nic.c */
/* The netdev's receive callbacks (NetClientInfo). */
bool softhca_nic_can_receive(NetClientState *nc);
ssize_t softhca_nic_receive(NetClientState *nc, const uint8_t *buf,
                            size_t size);
void softhca_nic_write_ctrl(SofthcaState *s, uint32_t val);
void softhca_nic_write_irq(SofthcaState *s, uint32_t val);
void softhca_nic_tx_doorbell(SofthcaState *s, uint32_t tail);
void softhca_nic_rx_doorbell(SofthcaState *s, uint32_t tail);
void softhca_nic_reset(SofthcaState *s);
void softhca_nic_init(SofthcaState *s);
void softhca_nic_exit(SofthcaState *s);
/*
 * The port (spec §7): a frame from the wire or the loopback, the
 * transport's (through fault injection to its sink) or the NIC's; a frame
 * of the transport to send, through fault injection to the wire; the
 * largest IBA MTU (256..4096) not above the port's Ethernet MTU.
 */
void softhca_port_receive(SofthcaState *s, const uint8_t *buf, size_t size);
void softhca_port_send(SofthcaState *s, const uint8_t *frame, size_t len);
uint32_t softhca_port_mtu(const SofthcaState *s);
/*
 * Whether a transport frame to dst_mac may leave in pieces, which the
 * netdev (or the engine's outbox) gathers: nothing on its way through the
 * port needs it whole.  Then softhca_port_sendv() sends it.
 */
bool softhca_port_takes_iov(SofthcaState *s, const uint8_t *dst_mac);
void softhca_port_sendv(SofthcaState *s, const struct iovec *iov, int cnt);

/* softhca-loopback.c */
/* sink: the port's receive, which the loopback's frames go back into */
void softhca_loopback_init(SofthcaState *s, SofthcaPortInput *sink);
void softhca_loopback_reset(SofthcaState *s);
void softhca_loopback_exit(SofthcaState *s);
/*
 * Loop a frame the port sends (transport: the RDMA transport's, else the
 * NIC function's) back to its receive side where spec §7.1 says so; true
 * if the frame must not leave the port as well.
 */
bool softhca_loopback_tx(SofthcaState *s, const uint8_t *frame, size_t len,
                         bool transport);
/*
 * Whether requesters must wait for the loopback queue (spec §7.1); if so,
 * the scheduler's bottom half is woken once it has room again.
 */
bool softhca_loopback_busy(SofthcaState *s);

#endif /* HW_SOFTHCA_H */
