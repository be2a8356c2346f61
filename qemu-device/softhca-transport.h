/*
 * softhca: per-QP state of the RoCEv2 transport engine (spec §16):
 * requester (softhca-req.c), completer (softhca-comp.c) and responder
 * (softhca-resp.c).
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_SOFTHCA_TRANSPORT_H
#define HW_SOFTHCA_TRANSPORT_H

#include "qemu/timer.h"
#include "softhca.h"

/*
 * A send WQE the requester has started: the device reads a WQE once
 * (spec §15), so what retransmission needs is kept here.  Host byte order.
 */
typedef struct SofthcaSendOp {
    struct shca_send_wqe wqe;
    uint64_t len;               /* message length */
    uint32_t first_psn;
    uint32_t npkts;             /* PSNs the message takes */
    uint32_t resp_pkts;         /* READ: responses received, in order */
    uint8_t status;             /* a local error found when it was started */
    bool done;                  /* READ/atomic: every response arrived */
    /*
     * What follows the WQE in its SQ slot: SGEs, or inline data read as
     * bytes; as much as the SQ's stride has room for, up to
     * SOFTHCA_MAX_SGE SGEs or SOFTHCA_MAX_INLINE bytes (spec §13.2).
     */
    struct shca_sge sge[];
} SofthcaSendOp;

/*
 * A READ, atomic, ATOMIC WRITE or FLUSH the responder executed, kept to
 * answer duplicates.  The last two are answered with an empty READ
 * response (len 0).
 */
typedef struct SofthcaRdAtomic {
    bool valid;
    bool atomic;
    bool empty;                 /* ATOMIC WRITE, FLUSH */
    uint32_t first_psn;
    uint32_t npkts;
    uint64_t orig;              /* atomic: the value before */
    /* READ: what the request named, all a duplicate may ask for again */
    uint32_t req_rkey;
    uint64_t req_va;
    uint64_t req_len;
    /*
     * Responses still to send (they go out paced, spec §16): an atomic
     * ACK, or the READ responses from PSN resume_psn, for len bytes from
     * va, of which sent are out.
     */
    bool pending;
    uint32_t rkey;
    uint32_t resume_psn;
    uint32_t sent;
    uint64_t va;
    uint64_t len;
} SofthcaRdAtomic;

typedef struct SofthcaQpTransport {
    SofthcaState *s;
    uint16_t ip_id;

    /*
     * Host memory reserved at CREATE_QP for ops and rd (spec §13.2),
     * counted in SofthcaState.tp_mem; both are allocated when first used.
     */
    uint64_t mem;

    /* requester and completer; SQ counts are free-running like sq.ci */
    SofthcaSendOp *ops;         /* nops entries of op_size bytes */
    uint32_t nops;
    uint32_t op_size;
    uint16_t sq_comp;           /* oldest WQE not completed */
    uint16_t sq_send;           /* WQE being (re)transmitted */
    uint32_t send_pkt;          /* its packets sent */
    uint32_t sq_psn;            /* next PSN of a new message */
    uint32_t una_psn;           /* oldest PSN not acknowledged */
    /* one past the last PSN a sent packet asks to be answered for */
    uint32_t sent_psn;
    uint32_t since_ack_req;
    uint32_t rd_atomic;         /* READ/atomic WQEs outstanding */
    bool sqd_notify;            /* SQD: post SQ_DRAINED once drained */
    uint8_t retry_left;
    uint8_t rnr_left;
    bool rnr_wait;              /* sending stopped by an RNR NAK */
    bool read_nak;              /* a READ response gap was retried */
    QEMUTimer *retry_timer;     /* ACK timeout, then RNR wait */

    /* responder */
    uint32_t rq_psn;            /* next PSN expected */
    uint32_t msn;
    uint8_t prev_op;            /* last in-order request opcode */
    bool nak_sent;              /* a sequence NAK is outstanding */
    bool uc_drop;               /* UC: drop until the next message */
    bool have_recv;             /* a receive WQE is being filled */
    uint16_t recv_index;
    uint8_t recv_nsge;
    uint64_t recv_wr_id;
    uint64_t recv_off;          /* bytes received into it */
    uint64_t recv_len;          /* bytes it can take */
    struct shca_sge recv_sge[SOFTHCA_MAX_SGE];
    uint64_t write_va;          /* RDMA WRITE in progress */
    uint32_t write_rkey;
    uint64_t write_left;
    uint64_t write_len;
    SofthcaRdAtomic *rd;        /* RC from RTR: nrd of them */
    uint32_t nrd;               /* max_dest_rd_atomic, at least 1 */
    uint32_t rd_next;
    bool ack_defer;             /* an ACK waits behind pending responses */
    bool ack_delayed;           /* an ACK waits for ack_timer or a request */
    bool ack_ride;              /* requests go out: ACKs may wait for one */
    QEMUTimer *ack_timer;
    /* the timers' expiry on the VM clock, or -1: in the migration stream */
    int64_t retry_expiry;
    int64_t ack_expiry;

    /* the scheduler (softhca-sched.c): work left, and its place in line */
    unsigned sched;             /* SOFTHCA_SCHED_*; 0: not queued */
    QTAILQ_ENTRY(SofthcaQp) sched_next;
} SofthcaQpTransport;

#endif /* HW_SOFTHCA_TRANSPORT_H */
