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
 * Responses the responder sends in one go at most: the rest of a long
 * READ follows from a bottom half, so that the main loop runs between.
 */
#define SOFTHCA_RESP_BURST      SOFTHCA_REQ_WINDOW

/*
 * The requester asks for a long READ in requests of at most this many
 * responses, aligned on it from the first PSN, one at a time: the next
 * goes once the responses of the last are in, so that a READ is paced
 * like a WRITE and a loss costs at most a request's worth again.
 */
#define SOFTHCA_READ_CHUNK      SOFTHCA_REQ_WINDOW

/* The largest RoCEv2 frame: 4096-byte MTU and the longest headers. */
#define SOFTHCA_TP_FRAME_MAX    4352

/* softhca-transport.c */
/* Send a frame of the transport: through fault injection to the wire. */
void softhca_port_send(SofthcaState *s, const uint8_t *frame, size_t len);
/* The frames fault injection passes on: to the wire, to the transport. */
void softhca_port_xmit(SofthcaState *s, const uint8_t *frame, size_t len);
void softhca_tp_deliver(SofthcaState *s, const uint8_t *frame, size_t len);
/* SOFTHCA_TRANSPORT_RC or _UC, by the QP's type. */
uint8_t softhca_tp_transport(const SofthcaQp *qp);
uint32_t softhca_tp_mtu(const SofthcaQp *qp);
/* Send packet p (p->bth.dest_qpn and pkey are filled in) to the QP's AV. */
bool softhca_tp_send(SofthcaState *s, SofthcaQp *qp, SofthcaRocePacket *p,
                     const void *payload);
/*
 * Copy len bytes at byte off of the message the scatter/gather list
 * describes, to (to_guest) or from buf.  Local access: LOCAL_WRITE when
 * writing to the guest.  SOFTHCA_MEM_BAD_RANGE if the list is too short.
 */
SofthcaMemStatus softhca_sge_copy(SofthcaState *s, SofthcaQp *qp,
                                  const struct shca_sge *sge, unsigned nsge,
                                  uint64_t off, void *buf, uint64_t len,
                                  bool to_guest);
/* Complete to cqn; solicited: the message asked for an event (SE). */
void softhca_tp_cqe(SofthcaState *s, SofthcaQp *qp, uint32_t cqn,
                    struct shca_cqe *cqe, bool solicited);

/* softhca-req.c */
SofthcaSendOp *softhca_req_op(SofthcaQp *qp, uint16_t index);
void softhca_req_run(SofthcaState *s, SofthcaQp *qp);
/* Send again from psn, which lies in a started WQE. */
void softhca_req_rewind(SofthcaState *s, SofthcaQp *qp, uint32_t psn);
void softhca_req_flush(SofthcaState *s, SofthcaQp *qp);

/* softhca-comp.c */
void softhca_comp_receive(SofthcaState *s, SofthcaQp *qp,
                          const SofthcaRocePacket *p, const uint8_t *payload);
/* Complete, in order, the WQEs that are done, PSNs up to acked included. */
void softhca_comp_advance(SofthcaState *s, SofthcaQp *qp, uint32_t acked);
void softhca_comp_timer_update(SofthcaState *s, SofthcaQp *qp);
void softhca_comp_timer_cb(void *opaque);

/* softhca-resp.c */
void softhca_resp_receive(SofthcaState *s, SofthcaQp *qp,
                          const SofthcaRocePacket *p, const uint8_t *payload);
/* Complete every receive WQE with WR_FLUSH_ERR; drop pending responses. */
void softhca_resp_flush(SofthcaState *s, SofthcaQp *qp);
/* Send more of the pending READ responses (opaque: the QP). */
void softhca_resp_bh(void *opaque);

#endif /* HW_SOFTHCA_TP_H */
