/*
 * softhca: RDMA objects (spec §13) and the interface between the object
 * layer (softhca-cq.c, softhca-qp.c, softhca-mr.c) and the transport
 * engine (softhca-transport.h and its files).
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_SOFTHCA_RDMA_H
#define HW_SOFTHCA_RDMA_H

#include "softhca.h"
#include "softhca-transport.h"

struct SofthcaCq {
    bool valid;
    bool armed;
    bool solicited_only;        /* armed for solicited completions only */
    bool error;                 /* overran: takes no further CQEs */
    uint32_t uctx;
    uint32_t eqn;
    uint32_t log_size;
    uint32_t pi;                /* CQEs written, free-running */
    uint32_t ci;                /* consumer count last read from the record */
    uint32_t users;             /* QPs completing here: DESTROY_CQ is BUSY */
    SofthcaBuf buf;
};

struct SofthcaMr {
    bool valid;
    uint8_t tag;                /* key = (index << 8) | tag */
    uint32_t pdn;
    uint32_t access;            /* SHCA_ACCESS_* */
    uint64_t iova;
    uint64_t length;
    uint32_t first_offset;
    SofthcaBuf pages;           /* empty for SHCA_ACCESS_PHYS */
    /*
     * A fast-registration MR (spec §18): registered by REG_MR WQEs from
     * the page addresses at list_addr, up to max_pages of them; until one
     * has (and after an invalidation) no access through it succeeds.
     */
    bool fast_reg;
    bool fast_valid;
    uint64_t list_addr;
    uint32_t max_pages;
    /*
     * A memory window (spec §13.6), type 1 or 2, has no pages: bound, it
     * grants access to iova .. iova + length of the MR at index mw_mr; a
     * type 2 window only to requests on the QP mw_qpn.  An MR counts the
     * windows bound to it.
     */
    uint8_t mw_type;            /* 0: an MR */
    bool mw_bound;
    uint32_t mw_mr;
    uint32_t mw_qpn;
    uint32_t mws_bound;
};

/* A send or receive queue in guest memory; a QP without an RQ has none. */
typedef struct SofthcaWq {
    SofthcaBuf buf;
    uint32_t log_size;
    uint32_t wqe_shift;
    uint16_t pi;                /* producer count from the last doorbell */
    uint16_t ci;                /* WQEs the device has taken */
} SofthcaWq;

/* A shared receive queue (spec §13.5). */
struct SofthcaSrq {
    bool valid;
    uint32_t srqn;
    uint32_t uctx;
    uint32_t pdn;
    uint32_t limit;             /* srq_limit; 0: not armed */
    uint32_t users;             /* QPs receiving through it */
    SofthcaWq wq;               /* the ring; a struct shca_srq_record after */
    bool xrc;                   /* of the domain xrcdn, completing to cqn */
    uint32_t xrcdn;
    uint32_t cqn;
};

struct SofthcaQp {
    bool valid;
    uint8_t type;               /* enum shca_qp_type */
    uint8_t state;              /* enum shca_qp_state */
    uint32_t qpn;
    uint32_t uctx;
    uint32_t pdn;
    uint32_t send_cqn;
    uint32_t recv_cqn;
    uint32_t srqn;              /* 0: its own RQ */
    uint32_t xrcdn;             /* XRC_TGT: its domain (spec §13.7) */
    SofthcaWq sq;
    SofthcaWq rq;
    bool sq_record;             /* a struct shca_sq_record follows the SQ */
    bool sq_polling;            /* the record's POLLING as last written */
    struct shca_qp_attr attr;   /* last values set, in host byte order */
    SofthcaQpTransport tp;      /* requester/responder/completer state */
};

/* key = (MR index << 8) | tag (spec §13.3) */
#define SOFTHCA_KEY_TAG_BITS    8
#define SOFTHCA_KEY_TAG_MASK    0xffu

/* Outcome of an access through a key (spec §13.3). */
typedef enum SofthcaMemStatus {
    SOFTHCA_MEM_OK,
    SOFTHCA_MEM_BAD_KEY,        /* no such MR, another PD */
    SOFTHCA_MEM_BAD_RANGE,      /* outside the MR */
    SOFTHCA_MEM_NO_ACCESS,      /* the MR does not grant it */
    SOFTHCA_MEM_DMA_ERROR,      /* the pages are no longer guest RAM */
} SofthcaMemStatus;

/* --- object layer services, used by the transport ----------------------- */

/* softhca-wq.c: the QP table and its work queues */
SofthcaQp *softhca_qp_get(SofthcaState *s, uint32_t qpn);
SofthcaCq *softhca_cq_get(SofthcaState *s, uint32_t cqn);

#define SOFTHCA_FLOW_LABEL_MASK 0xfffffu

/* An address vector (spec §13.2) in host byte order, from the wire's. */
void softhca_av_from_le(struct shca_av *av, const struct shca_av *le);
/* Whether a host-order AV names a valid source GID and a 20-bit flow label */
bool softhca_av_ok(SofthcaState *s, const struct shca_av *av);

/* The allocated MR a key names (index and tag), if any; and its key. */
SofthcaMr *softhca_mr_lookup(SofthcaState *s, uint32_t key);
uint32_t softhca_mr_key(const SofthcaState *s, const SofthcaMr *mr);


/* Strides of send and receive WQEs, and of all WQEs at most (§13.2). */
#define SOFTHCA_SQ_SHIFT_MIN    6
#define SOFTHCA_RQ_SHIFT_MIN    4
#define SOFTHCA_WQE_SHIFT_MAX   9

/* A work queue's ring size and stride, of at least 2^shift_min bytes. */
bool softhca_wq_geometry_ok(uint32_t log_size, uint32_t wqe_shift,
                            uint32_t shift_min);
/* Check a work queue's geometry and take its buffer, record bytes more. */
uint8_t softhca_wq_init(SofthcaState *s, SofthcaWq *wq,
                        const struct shca_buf_desc *desc, uint8_t log_size,
                        uint8_t wqe_shift, uint8_t shift_min, size_t record);
/* Read the WQE in slot (index mod size) of wq; false if not readable. */
bool softhca_wq_read(SofthcaState *s, const SofthcaWq *wq, uint16_t index,
                     void *wqe, size_t len);

/*
 * Write a CQE (its phase is set here) to CQ cqn, with overrun detection,
 * arming and the completion event; false if the CQ overran (or is in error
 * from an earlier overrun, or does not exist).  solicited: the completion
 * of a received SEND with the SE bit, which also wakes a CQ armed with
 * SOLICITED (the CQE alone does not tell).
 */
bool softhca_cq_push_se(SofthcaState *s, uint32_t cqn, struct shca_cqe *cqe,
                        bool solicited);
/* Whether a CQ of 2^log_size CQEs is within the limits (spec §3.1). */
bool softhca_cq_log_size_ok(uint32_t log_size);
/* Whether CQ cqn overran: it takes no more CQEs (spec §13.1). */
bool softhca_cq_in_error(SofthcaState *s, uint32_t cqn);

/*
 * The checks of softhca_mem_copy() alone; with whole, of the key and its
 * rights only, whatever addr and len say (a FLUSH of a whole MR).
 */
SofthcaMemStatus softhca_mem_check(SofthcaState *s, const SofthcaQp *qp,
                                   uint32_t key, uint64_t addr, uint64_t len,
                                   uint32_t access, bool whole);
/*
 * Copy len bytes between buf and the memory of MR key at addr, for PD
 * pdn, checking that the MR grants access (SHCA_ACCESS_*, or 0 for a local
 * read).  to_guest: buf -> guest memory.
 */
SofthcaMemStatus softhca_mem_copy(SofthcaState *s, const SofthcaQp *qp,
                                  uint32_t key,
                                  uint64_t addr, void *buf, uint64_t len,
                                  uint32_t access, bool to_guest);
/*
 * A read of len bytes (not 0) at addr through key, checked as
 * softhca_mem_copy() checks it, in place: the host pieces of guest RAM
 * holding them, added to iov (softhca_dma_map_read()).  False if
 * a check fails or the pieces do not fit: softhca_mem_copy() then says why.
 */
bool softhca_mem_map_read(SofthcaState *s, const SofthcaQp *qp, uint32_t key,
                          uint64_t addr, uint64_t len, uint32_t access,
                          struct iovec *iov, int *n, int max);
/* The checks of softhca_mem_copy(), and that guest RAM holds the range. */
SofthcaMemStatus softhca_mem_readable(SofthcaState *s, const SofthcaQp *qp,
                                      uint32_t key, uint64_t addr,
                                      uint64_t len, uint32_t access);
/*
 * The 8 bytes at addr (8-byte aligned) of MR key, checked as
 * softhca_mem_copy() checks them, mapped in place for an atomic access
 * (softhca_dma_map_word()); NULL if the checks fail or the word cannot be
 * mapped so.
 */
uint64_t *softhca_mem_map_word(SofthcaState *s, const SofthcaQp *qp,
                               uint32_t key, uint64_t addr, uint32_t access);

/* The QPs of the datagram service (spec §17). */
/* RC, and both halves of XRC: acknowledged, with READ and atomics. */
static inline bool softhca_qp_is_rc(const SofthcaQp *qp)
{
    return qp->type == SHCA_QPT_RC || qp->type == SHCA_QPT_XRC_INI ||
           qp->type == SHCA_QPT_XRC_TGT;
}

static inline bool softhca_qp_is_ud(const SofthcaQp *qp)
{
    return qp->type == SHCA_QPT_UD || qp->type == SHCA_QPT_GSI;
}

/*
 * softhca-fastreg.c: fast registration and invalidation (spec §18); the
 * pages of a fast-registration MR are listed in one page of addresses
 */
#define SOFTHCA_FAST_PAGE_SHIFT_MIN 12
#define SOFTHCA_FAST_LIST_SIZE      4096
/*
 * Execute a REG_MR, LOCAL_INV or BIND_MW WQE (raw, as in the SQ) of a QP;
 * SHCA_CQE_SUCCESS or the status to complete it with.
 */
uint8_t softhca_mr_local_op(SofthcaState *s, SofthcaQp *qp,
                            const uint8_t *raw);
/* The valid fast-registration MR of PD pdn that key names, or NULL. */
SofthcaMr *softhca_mr_fast_valid(SofthcaState *s, uint32_t pdn, uint32_t key);
void softhca_mr_invalidate(SofthcaState *s, SofthcaMr *mr);
/*
 * What a SEND_INV arriving at qp may invalidate (spec §18, §13.6): a valid
 * fast-registration MR of its PD, or a type 2 window associated with it;
 * NULL if key names neither.  And invalidate either kind.
 */
SofthcaMr *softhca_remote_inv_target(SofthcaState *s, const SofthcaQp *qp,
                                     uint32_t key);
void softhca_key_invalidate(SofthcaState *s, SofthcaMr *mr);

/* softhca-mr.c: MR table entries, for windows too */
SofthcaMr *softhca_mr_free_slot(SofthcaState *s);
void softhca_mr_free(SofthcaState *s, SofthcaMr *mr);

/* softhca-mw.c: memory windows (spec §13.6), and the rights they grant */
#define SOFTHCA_MW_ACCESS       (SHCA_ACCESS_REMOTE_WRITE | \
                                 SHCA_ACCESS_REMOTE_READ | \
                                 SHCA_ACCESS_REMOTE_ATOMIC)
uint8_t softhca_mw_bind(SofthcaState *s, SofthcaQp *qp, const uint8_t *raw);
/* The bound type 2 window key of qp's PD (remote: associated with qp). */
SofthcaMr *softhca_mw_type2(SofthcaState *s, const SofthcaQp *qp, uint32_t key,
                            bool remote);
void softhca_mw_invalidate(SofthcaState *s, SofthcaMr *mw);

/* softhca-wq.c: a free QP number for a QP of type */
uint8_t softhca_qp_alloc(SofthcaState *s, uint8_t type, uint32_t *qpn);

/* softhca-pd.c: whether xrcdn is an allocated XRC domain (spec §13.7) */
bool softhca_xrcd_ok(SofthcaState *s, uint32_t xrcdn);

/* softhca-xrc.c: XRC target QPs (spec §13.7) */
uint8_t softhca_xrc_tgt_create(SofthcaState *s,
                               const struct shca_aq_create_qp *c,
                               uint32_t *qpn);

/* softhca-srq.c: shared receive queues (spec §13.5) */
SofthcaSrq *softhca_srq_get(SofthcaState *s, uint32_t srqn);
/* The queue a QP takes receive WQEs from: its SRQ's ring or its RQ. */
SofthcaWq *softhca_qp_recv_wq(SofthcaState *s, SofthcaQp *qp);
/* After a QP took a WQE from its SRQ: the record, the limit event. */
void softhca_srq_taken(SofthcaState *s, SofthcaQp *qp);

/* softhca-mcast.c: multicast groups (spec §17.3) */
uint8_t softhca_mcast_attach(SofthcaState *s, const struct shca_aq_mcast *c);
uint8_t softhca_mcast_detach(SofthcaState *s, const struct shca_aq_mcast *c);
/* DESTROY_QP: the QP leaves every group. */
void softhca_mcast_detach_qp(SofthcaState *s, uint32_t qpn);
/* The QPs attached to the group gid, copied to qpns; how many. */
uint32_t softhca_mcast_qps(SofthcaState *s, const uint8_t *gid,
                           uint32_t qpns[SOFTHCA_MAX_MCAST_QP_ATTACH]);

/* --- transport hooks, called by the object layer and the NIC ------------- */

/* The engine's device-wide state: realize, unrealize. */
void softhca_tp_init(SofthcaState *s);
void softhca_tp_exit(SofthcaState *s);
/*
 * Move a QP to ERR (flushing its WQEs through softhca_tp_flush) and post
 * eqe_type (SHCA_EQE_QP_*, obj = qpn) on EQ 0 unless it is 0.  Nothing
 * happens to a QP already in ERR.
 */
void softhca_tp_error(SofthcaState *s, SofthcaQp *qp, uint8_t eqe_type);
/* A QP entered ERR: with an SRQ it reports its last WQE reached. */
void softhca_tp_last_wqe(SofthcaState *s, SofthcaQp *qp);
/*
 * Take count pi of a QP's SQ or RQ as its doorbell (spec §14); false, and
 * the QP in ERR with QP_FATAL, if it runs past the ring.
 */
bool softhca_tp_wq_post(SofthcaState *s, SofthcaQp *qp, SofthcaWq *wq,
                        uint16_t pi);
/*
 * The SQ record (spec §14): take new WQEs from its pi, as an SQ doorbell
 * would; true if there were any.  And keep its POLLING in step with whether
 * the requester is busy; true if clearing it turned up new WQEs.  Both do
 * nothing for a QP without a record.
 */
bool softhca_tp_sq_record_poll(SofthcaState *s, SofthcaQp *qp);
bool softhca_tp_sq_polling(SofthcaState *s, SofthcaQp *qp, bool busy);

/*
 * CREATE_QP, its type and SQ set: reserve the host memory of its
 * transport state within transport-mem (spec §19) and set it up;
 * NO_RESOURCES if it does not fit.
 */
uint8_t softhca_tp_create(SofthcaState *s, SofthcaQp *qp);
/*
 * Migration (spec §20): before a save, the QP's timers into the stream's
 * fields; after a load, the QP's transport made whole again (false if
 * transport-mem has no room for it).
 */
void softhca_tp_save_timers(SofthcaQp *qp);
bool softhca_tp_loaded(SofthcaState *s, SofthcaQp *qp);
/* The QP moved to RESET: clear the transport state. */
void softhca_tp_reset(SofthcaState *s, SofthcaQp *qp);
/*
 * MODIFY_QP applied attr_mask (to qp->attr; SQ_PSN and RQ_PSN also to
 * qp->tp.sq_psn and qp->tp.rq_psn, which QUERY_QP reports), moving the QP
 * from old_state.  Not called for a move to RESET (softhca_tp_reset is).
 */
void softhca_tp_modified(SofthcaState *s, SofthcaQp *qp, uint8_t old_state,
                         uint32_t attr_mask);
/*
 * The QP is about to leave its state (MODIFY_QP) or be destroyed: an ACK
 * it holds back for requests it executed goes now (spec §16).
 */
void softhca_tp_stop(SofthcaState *s, SofthcaQp *qp);
/*
 * The QP entered ERR, or WQEs were posted to it in ERR: complete every
 * outstanding WQE with WR_FLUSH_ERR, as many as the work budget allows
 * now and the rest from a bottom half; true if none is left.
 */
bool softhca_tp_flush(SofthcaState *s, SofthcaQp *qp);
/* RTS -> SQD: drain the SQ, and post SQ_DRAINED when done if notify. */
void softhca_tp_sqd(SofthcaState *s, SofthcaQp *qp, bool notify);
/* The QP is being destroyed: stop timers, free state. */
void softhca_tp_destroy(SofthcaState *s, SofthcaQp *qp);
/*
 * New WQEs were posted to the SQ (QP in RTS, or entering RTS with SQ
 * doorbells held since RESET/INIT/RTR) or the RQ (QP in INIT, RTR or RTS).
 */
void softhca_tp_sq_kick(SofthcaState *s, SofthcaQp *qp);
void softhca_tp_rq_kick(SofthcaState *s, SofthcaQp *qp);

#endif /* HW_SOFTHCA_RDMA_H */
