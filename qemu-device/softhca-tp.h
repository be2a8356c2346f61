/*
 * softhca: interface between the parts of the RoCEv2 transport engine
 * (softhca-transport.c, softhca-req.c, softhca-comp.c, softhca-resp.c).
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_SOFTHCA_TP_H
#define HW_SOFTHCA_TP_H

#include "softhca-rdma.h"
#include "softhca-wire.h"
#include "softhca-seq.h"

/*
 * PSNs the requester sends beyond the oldest unacknowledged one.  As each
 * WQE takes at least one PSN, it also bounds the WQEs started and not
 * completed, and so the ring of SofthcaSendOp (a power of 2 above it).
 */
#define SOFTHCA_REQ_WINDOW      128
#define SOFTHCA_REQ_OPS_MAX     (2 * SOFTHCA_REQ_WINDOW)


/*
 * The requester asks for a long READ in requests of at most this many
 * responses, aligned on it from the first PSN, one at a time: the next
 * goes once the responses of the last are in, so that a READ is paced
 * like a WRITE and a loss costs at most a request's worth again.
 */
#define SOFTHCA_READ_CHUNK      SOFTHCA_REQ_WINDOW

/*
 * Packets an SQ doorbell sends itself, on the vCPU thread that rang it, if
 * nothing is outstanding: a lone small message leaves at once.  The rest,
 * and all a doorbell finds behind packets in flight, go from the main
 * loop's bottom half, so that the vCPU is back in the guest posting the
 * next WQEs while the main loop moves the frames.
 */
#define SOFTHCA_DOORBELL_PKTS   1

/* Packets a QP sends in its turn of the scheduler before the next QP's. */
#define SOFTHCA_SCHED_QUANTUM   16

/* softhca-sched.c: the work a QP has left for the scheduler */
#define SOFTHCA_SCHED_REQ       1u      /* send, or flush in ERR */
#define SOFTHCA_SCHED_RESP      2u      /* READ responses and atomic ACKs */

void softhca_sched_init(SofthcaState *s);
void softhca_sched_exit(SofthcaState *s);
/* Queue the QP for work, at the back unless it is queued already. */
void softhca_sched_qp(SofthcaState *s, SofthcaQp *qp, unsigned work);
/* Take work back; the QP leaves the queue once it has none. */
void softhca_sched_cancel(SofthcaState *s, SofthcaQp *qp, unsigned work);
bool softhca_sched_pending(const SofthcaQp *qp, unsigned work);
/* Whether no QP waits for its turn. */
bool softhca_sched_idle(const SofthcaState *s);

/* The largest RoCEv2 frame: 4096-byte MTU and the longest headers. */
#define SOFTHCA_TP_FRAME_MAX    4352

/* softhca-transport.c */
/*
 * A received frame of the transport, from fault injection (its RX sink),
 * with the IP/UDP envelope the port parsed it into.
 */
void softhca_tp_deliver(SofthcaState *s, const uint8_t *frame, size_t len,
                        const SofthcaUdpFrame *udp);
/* Drop a received frame, counting it in rdma_stats[stat] (SHCA_STAT_*). */
void softhca_tp_drop(SofthcaState *s, unsigned stat, size_t len,
                     const char *why);
/* SOFTHCA_TRANSPORT_RC or _UC, by the QP's type. */
uint8_t softhca_tp_transport(const SofthcaQp *qp);
uint32_t softhca_tp_mtu(const SofthcaQp *qp);

/* RTR, RTS or SQD: the states in which a QP takes requests and answers. */
static inline bool softhca_tp_answers(const SofthcaQp *qp)
{
    return qp->state == SHCA_QPS_RTR || qp->state == SHCA_QPS_RTS ||
           qp->state == SHCA_QPS_SQD;
}

/*
 * RTS or SQD: the states in which the requester and completer work; only
 * RTS starts new WQEs, SQD drains those started (spec §13.2).
 */
static inline bool softhca_tp_sends(const SofthcaQp *qp)
{
    return qp->state == SHCA_QPS_RTS || qp->state == SHCA_QPS_SQD;
}

/* SQD with SQD_NOTIFY and every WQE started completed: SQ_DRAINED, once. */
void softhca_comp_sqd_drained(SofthcaState *s, SofthcaQp *qp);

/*
 * Pieces of guest memory a payload may leave in; payloads smaller than
 * SOFTHCA_TX_GATHER_MIN are copied, which costs less than the pieces.
 */
#define SOFTHCA_TX_PIECES       8
#define SOFTHCA_TX_GATHER_MIN   1024

/*
 * A frame built in place: its payload is written to payload first, from
 * guest memory straight, then the headers and the ICRC around it.  Or,
 * with pieces, the payload stays in guest memory, iov[1..pieces], and the
 * port gathers headers (iov[0]), payload and tail (pad and ICRC).
 */
typedef struct SofthcaTxFrame {
    SofthcaRoceEnvelope env;
    uint8_t *payload;
    int pieces;
    struct iovec iov[SOFTHCA_TX_PIECES + 2];
    uint8_t tail[SOFTHCA_ROCE_TAIL_MAX];
    uint8_t buf[SOFTHCA_TP_FRAME_MAX];
} SofthcaTxFrame;

/*
 * Address packet p, whose opcode and payload_len are set, to a host-order
 * AV and QPN (p->bth.dest_qpn and pkey are filled in), and set f->payload;
 * false if the AV has no source GID or the packet cannot be built.
 */
bool softhca_tp_frame(SofthcaState *s, SofthcaQp *qp,
                      const struct shca_av *av, uint32_t dest_qpn,
                      SofthcaRocePacket *p, SofthcaTxFrame *f);
/* Build f around the payload written to it, and send it. */
bool softhca_tp_frame_send(SofthcaState *s, SofthcaQp *qp,
                           const SofthcaRocePacket *p, SofthcaTxFrame *f);
/* Send packet p (p->bth.dest_qpn and pkey are filled in) to the QP's AV. */
bool softhca_tp_send(SofthcaState *s, SofthcaQp *qp, SofthcaRocePacket *p,
                     const void *payload);
/* The same to a host-order AV and QPN of its own (UD, spec §17.1). */
bool softhca_tp_send_av(SofthcaState *s, SofthcaQp *qp,
                        const struct shca_av *av, uint32_t dest_qpn,
                        SofthcaRocePacket *p, const void *payload);
/*
 * Copy len bytes at byte off of the message the scatter/gather list
 * describes, to (to_guest) or from buf.  Local access: LOCAL_WRITE when
 * writing to the guest.  SOFTHCA_MEM_BAD_RANGE if the list is too short.
 */
SofthcaMemStatus softhca_sge_copy(SofthcaState *s, SofthcaQp *qp,
                                  const struct shca_sge *sge, unsigned nsge,
                                  uint64_t off, void *buf, uint64_t len,
                                  bool to_guest);
/*
 * Leave len bytes at byte off of the message in guest memory for f to
 * gather (f->pieces), if they are at least SOFTHCA_TX_GATHER_MIN, f's port
 * takes pieces, and local reads may read them in place.  Otherwise false:
 * softhca_sge_copy() copies them, or says why it cannot.  The caller holds
 * the RCU read lock until the frame is sent.
 */
bool softhca_sge_gather(SofthcaState *s, SofthcaQp *qp,
                        const struct shca_sge *sge, unsigned nsge,
                        uint64_t off, uint64_t len, SofthcaTxFrame *f);
/* The same for len bytes at addr through key with the rights access. */
bool softhca_mem_gather(SofthcaState *s, SofthcaQp *qp, uint32_t key,
                        uint64_t addr, uint64_t len, uint32_t access,
                        SofthcaTxFrame *f);
/*
 * Complete to cqn; solicited: the message asked for an event (SE).  A CQ
 * that overran moves the QP to ERR.
 */
void softhca_tp_cqe(SofthcaState *s, SofthcaQp *qp, uint32_t cqn,
                    struct shca_cqe *cqe, bool solicited);

/* The requester's ring, allocated on first use; NULL if the QP has none. */
SofthcaSendOp *softhca_tp_ops(SofthcaQp *qp);

/* softhca-req.c */
SofthcaSendOp *softhca_req_op(SofthcaQp *qp, uint16_t index);
/*
 * A taken WQE as the guest wrote it (stride bytes), and back: the form the
 * migration stream carries (spec §20).  From it, false if the WQE and what
 * the stream says the requester made of it disagree.
 */
void softhca_req_op_to_le(const SofthcaQp *qp, const SofthcaSendOp *op,
                          uint8_t *raw, uint32_t stride);
bool softhca_req_op_from_le(SofthcaQp *qp, SofthcaSendOp *op,
                            const uint8_t *raw, uint32_t stride);
void softhca_req_run(SofthcaState *s, SofthcaQp *qp);
/*
 * From an SQ doorbell: at most pkts packets now, the rest from the
 * scheduler.
 */
void softhca_req_run_doorbell(SofthcaState *s, SofthcaQp *qp, uint32_t pkts);
/* From the scheduler: at most pkts packets, or the flush of an ERR QP. */
void softhca_req_run_quantum(SofthcaState *s, SofthcaQp *qp, uint32_t pkts);
/* Send again from psn, which lies in a started WQE. */
void softhca_req_rewind(SofthcaState *s, SofthcaQp *qp, uint32_t psn);
/*
 * Complete the SQ's WQEs with WR_FLUSH_ERR, as many as the work budget
 * allows; true when none is left.
 */
bool softhca_req_flush(SofthcaState *s, SofthcaQp *qp);

/* softhca-comp.c */
void softhca_comp_receive(SofthcaState *s, SofthcaQp *qp,
                          const SofthcaRocePacket *p, const uint8_t *payload);
/* Complete, in order, the WQEs that are done, PSNs up to acked included. */
void softhca_comp_advance(SofthcaState *s, SofthcaQp *qp, uint32_t acked);
void softhca_comp_timer_update(SofthcaState *s, SofthcaQp *qp);
void softhca_comp_timer_cb(void *opaque);

/* softhca-resp.c */
/* What executing a request came to. */
typedef enum SofthcaRespResult {
    SOFTHCA_RESP_DONE,          /* executed: advance the PSN */
    SOFTHCA_RESP_ANSWERED,      /* READ/atomic: executed and answered */
    SOFTHCA_RESP_RNR,           /* no receive WQE */
    SOFTHCA_RESP_INVALID,       /* invalid request */
    SOFTHCA_RESP_ACCESS,        /* remote access error */
    SOFTHCA_RESP_OP_ERR,        /* remote operational error */
} SofthcaRespResult;

/*
 * Take the next receive WQE for a message, if one is posted (DONE; none:
 * RNR).  A bad one completes with LOC_QP_OP_ERR (OP_ERR).
 */
SofthcaRespResult softhca_resp_take_recv(SofthcaState *s, SofthcaQp *qp);
/*
 * Copy len bytes at buf to byte off of the receive WQE taken.  Its keys
 * are checked against the PD of the queue it was posted to: an SRQ's PD
 * governs its WQEs, whatever the QP's (spec §13.5).
 */
SofthcaMemStatus softhca_resp_recv_copy(SofthcaState *s, SofthcaQp *qp,
                                        uint64_t off, const void *buf,
                                        uint64_t len);
/* Complete the receive WQE taken: wr_id and wqe_index are filled in. */
void softhca_resp_recv_done(SofthcaState *s, SofthcaQp *qp,
                            struct shca_cqe *cqe, bool solicited);
void softhca_resp_receive(SofthcaState *s, SofthcaQp *qp,
                          const SofthcaRocePacket *p, const uint8_t *payload);
/*
 * Drop pending responses, and complete the receive WQEs with WR_FLUSH_ERR,
 * as many as the work budget allows; true when none is left.
 */
bool softhca_resp_flush(SofthcaState *s, SofthcaQp *qp);
/* From the scheduler: at most pkts more of the pending READ responses. */
void softhca_resp_run(SofthcaState *s, SofthcaQp *qp, uint32_t pkts);
void softhca_resp_ack_flush(SofthcaState *s, SofthcaQp *qp);
void softhca_resp_ack_timer_cb(void *opaque);

/* softhca-ud.c: datagram QPs (spec §17) */
void softhca_ud_send_run(SofthcaState *s, SofthcaQp *qp, uint32_t pkts);
/* A packet with a UD opcode, parsed and with a good ICRC. */
void softhca_ud_receive(SofthcaState *s, const uint8_t *frame,
                        const SofthcaUdpFrame *u, const SofthcaRocePacket *p,
                        const uint8_t *payload);

#endif /* HW_SOFTHCA_TP_H */
