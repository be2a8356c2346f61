/*
 * softhca: fault injection on the RoCEv2 port (spec §12) -- drops,
 * duplicates and reorders the transport's frames on purpose, so that its
 * recovery is exercised, reproducibly for a given seed.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_SOFTHCA_FAULT_H
#define HW_SOFTHCA_FAULT_H

typedef struct SofthcaState SofthcaState;
typedef struct SofthcaUdpFrame SofthcaUdpFrame;

typedef enum SofthcaFaultDir {
    SOFTHCA_FAULT_TX,           /* frames the transport sends */
    SOFTHCA_FAULT_RX,           /* RoCEv2 frames the port receives */
    SOFTHCA_FAULT_DIRS
} SofthcaFaultDir;

/* What may happen to a frame, in the order it is decided. */
typedef enum SofthcaFaultKind {
    SOFTHCA_FAULT_DROP,
    SOFTHCA_FAULT_DUP,          /* passed on twice */
    SOFTHCA_FAULT_REORDER,      /* held back until after the next frame */
    SOFTHCA_FAULT_KINDS
} SofthcaFaultKind;

#define SOFTHCA_FAULT_PER_MILLE_MAX 1000

/*
 * Where the frames of a direction go on: the wire, or the transport.  udp
 * is the IP/UDP envelope the port parsed a received frame into, so that
 * the transport does not parse it again; NULL for a frame sent.
 */
typedef void SofthcaFrameSink(SofthcaState *s, const uint8_t *frame,
                              size_t len, const SofthcaUdpFrame *udp);

typedef struct SofthcaFaultPath {
    SofthcaState *s;
    SofthcaFaultDir dir;
    SofthcaFrameSink *sink;
    uint32_t per_mille[SOFTHCA_FAULT_KINDS];    /* properties */
    uint64_t rng;
    /* a frame held back, and how many times to pass it on */
    uint8_t *held;
    uint32_t held_len;
    SofthcaUdpFrame *held_udp;  /* its envelope, if it came with one */
    unsigned held_copies;
    QEMUTimer *timer;           /* so that a held frame is never stuck */
} SofthcaFaultPath;

typedef struct SofthcaFault {
    uint64_t seed;              /* property; 0: a fixed default */
    SofthcaFaultPath path[SOFTHCA_FAULT_DIRS];
} SofthcaFault;

bool softhca_fault_check_props(SofthcaState *s, Error **errp);
void softhca_fault_init(SofthcaState *s);
/* The layer that takes a direction's frames: set once, at realize. */
void softhca_fault_set_sink(SofthcaState *s, SofthcaFaultDir dir,
                            SofthcaFrameSink *sink);
/* Discard held frames and restart the generators from the seed. */
void softhca_fault_reset(SofthcaState *s);
void softhca_fault_exit(SofthcaState *s);
/*
 * A frame of the transport on its way to the wire (TX) or from it (RX):
 * passed on to the direction's sink zero, one or two times, now or after
 * the next frame.
 */
/* Whether frames of dir pass untouched: no fault armed, none held. */
bool softhca_fault_idle(SofthcaState *s, SofthcaFaultDir dir);
void softhca_fault_pass(SofthcaState *s, SofthcaFaultDir dir,
                        const uint8_t *frame, size_t len,
                        const SofthcaUdpFrame *udp);

#endif /* HW_SOFTHCA_FAULT_H */
