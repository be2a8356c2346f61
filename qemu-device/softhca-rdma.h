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
};

/* A send or receive queue in guest memory; a QP without an RQ has none. */
typedef struct SofthcaWq {
    SofthcaBuf buf;
    uint32_t log_size;
    uint32_t wqe_shift;
    uint16_t pi;                /* producer count from the last doorbell */
    uint16_t ci;                /* WQEs the device has taken */
} SofthcaWq;

struct SofthcaQp {
    bool valid;
    uint8_t type;               /* enum shca_qp_type */
    uint8_t state;              /* enum shca_qp_state */
    uint32_t qpn;
    uint32_t uctx;
    uint32_t pdn;
    uint32_t send_cqn;
    uint32_t recv_cqn;
    SofthcaWq sq;
    SofthcaWq rq;
    struct shca_qp_attr attr;   /* last values set, in host byte order */
    SofthcaQpTransport tp;      /* requester/responder/completer state */
};

/* Outcome of an access through a key (spec §13.3). */
typedef enum SofthcaMemStatus {
    SOFTHCA_MEM_OK,
    SOFTHCA_MEM_BAD_KEY,        /* no such MR, another PD */
    SOFTHCA_MEM_BAD_RANGE,      /* outside the MR */
    SOFTHCA_MEM_NO_ACCESS,      /* the MR does not grant it */
    SOFTHCA_MEM_DMA_ERROR,      /* the pages are no longer guest RAM */
} SofthcaMemStatus;

/* --- object layer services, used by the transport ----------------------- */

SofthcaQp *softhca_qp_get(SofthcaState *s, uint32_t qpn);
SofthcaCq *softhca_cq_get(SofthcaState *s, uint32_t cqn);

/* Read the WQE in slot (index mod size) of wq; false if not readable. */
bool softhca_wq_read(SofthcaState *s, const SofthcaWq *wq, uint16_t index,
                     void *wqe, size_t len);

/*
 * Write a CQE (its phase is set here) to CQ cqn, with overrun detection,
 * arming and the completion event; false if the CQ overran (or is in error
 * from an earlier overrun, or does not exist).  softhca_cq_push_se() is the
 * same for a completion that is solicited (a received SEND with the SE
 * bit): it also wakes a CQ armed with SOLICITED, which the CQE alone does
 * not tell.
 */
bool softhca_cq_push(SofthcaState *s, uint32_t cqn, struct shca_cqe *cqe);
bool softhca_cq_push_se(SofthcaState *s, uint32_t cqn, struct shca_cqe *cqe,
                        bool solicited);

/*
 * Copy len bytes between buf and the memory of MR key at addr, for PD
 * pdn, checking that the MR grants access (SHCA_ACCESS_*, or 0 for a local
 * read).  to_guest: buf -> guest memory.
 */
SofthcaMemStatus softhca_mem_copy(SofthcaState *s, uint32_t pdn, uint32_t key,
                                  uint64_t addr, void *buf, uint64_t len,
                                  uint32_t access, bool to_guest);

/*
 * Move a QP to ERR (flushing its WQEs through softhca_tp_flush) and post
 * eqe_type (SHCA_EQE_QP_*, obj = qpn) on EQ 0 unless it is 0.  Nothing
 * happens to a QP already in ERR.
 */
void softhca_qp_error(SofthcaState *s, SofthcaQp *qp, uint8_t eqe_type);

/* --- transport hooks, called by the object layer and the NIC ------------- */

/* The QP was created, or moved to RESET: clear the transport state. */
void softhca_tp_reset(SofthcaState *s, SofthcaQp *qp);
/*
 * MODIFY_QP applied attr_mask (to qp->attr; SQ_PSN and RQ_PSN also to
 * qp->tp.sq_psn and qp->tp.rq_psn, which QUERY_QP reports), moving the QP
 * from old_state.  Not called for a move to RESET (softhca_tp_reset is).
 */
void softhca_tp_modified(SofthcaState *s, SofthcaQp *qp, uint8_t old_state,
                         uint32_t attr_mask);
/*
 * The QP entered ERR, or WQEs were posted to it in ERR: complete every
 * outstanding WQE with WR_FLUSH_ERR.
 */
void softhca_tp_flush(SofthcaState *s, SofthcaQp *qp);
/* The QP is being destroyed: stop timers, free state. */
void softhca_tp_destroy(SofthcaState *s, SofthcaQp *qp);
/*
 * New WQEs were posted to the SQ (QP in RTS, or entering RTS with SQ
 * doorbells held since RESET/INIT/RTR) or the RQ (QP in INIT, RTR or RTS).
 */
void softhca_tp_sq_kick(SofthcaState *s, SofthcaQp *qp);
void softhca_tp_rq_kick(SofthcaState *s, SofthcaQp *qp);
/* A received RoCEv2 frame for one of our GIDs (spec §7). */
void softhca_tp_receive(SofthcaState *s, const uint8_t *frame, size_t len);

#endif /* HW_SOFTHCA_RDMA_H */
