/*
 * softhca: sequence arithmetic of the RoCEv2 transport (spec §16) -- PSNs,
 * segmentation, the opcode of each packet of a message, the order rule
 * of a responder, ACK requests and the IBA timer encodings.  Free of QEMU
 * state so that it can be unit-tested on the host (tests/unit).
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_SOFTHCA_SEQ_H
#define HW_SOFTHCA_SEQ_H

#include "softhca_hw.h"
#include "softhca-wire.h"

#define SOFTHCA_PSN_MASK        0xffffffu

/*
 * The requester asks for an ACK on the last packet of each message and
 * at least once every this many packets, as rdma_rxe does.
 */
#define SOFTHCA_PKTS_PER_ACK    64

static inline uint32_t softhca_psn_add(uint32_t psn, uint32_t n)
{
    return (psn + n) & SOFTHCA_PSN_MASK;
}

/*
 * a - b as a signed distance on the 24-bit circle: positive when a is
 * after b, negative when it is before (within half the circle).
 */
static inline int32_t softhca_psn_diff(uint32_t a, uint32_t b)
{
    return (int32_t)((a - b) << 8) >> 8;
}

/* Bytes of an IBA path MTU code (1 = 256 .. 5 = 4096); 0 if invalid. */
static inline uint32_t softhca_mtu_bytes(uint8_t path_mtu)
{
    return path_mtu >= 1 && path_mtu <= 5 ? 128u << path_mtu : 0;
}

/* Packets (and PSNs) of a message of len bytes: a 0-byte one takes one. */
static inline uint32_t softhca_msg_pkts(uint64_t len, uint32_t mtu)
{
    return len ? (uint32_t)((len + mtu - 1) / mtu) : 1;
}

/* A READ or atomic: done only once its responses bring the data. */
static inline bool softhca_wr_is_read_atomic(uint8_t wr_opcode)
{
    return wr_opcode == SHCA_WR_RDMA_READ ||
           wr_opcode == SHCA_WR_ATOMIC_CMP_SWP ||
           wr_opcode == SHCA_WR_ATOMIC_FETCH_ADD;
}

/* ATOMIC WRITE and FLUSH: RC only, one packet, no data comes back. */
static inline bool softhca_wr_is_aw_flush(uint8_t wr_opcode)
{
    return wr_opcode == SHCA_WR_ATOMIC_WRITE || wr_opcode == SHCA_WR_FLUSH;
}

/* What counts among a requester's MAX_RD_ATOMIC, and FENCE waits for. */
static inline bool softhca_wr_takes_rd(uint8_t wr_opcode)
{
    return softhca_wr_is_read_atomic(wr_opcode) ||
           softhca_wr_is_aw_flush(wr_opcode);
}

/*
 * The wire opcode of a request packet: operation wr_opcode, first and/or
 * last packet of its message, transport SOFTHCA_TRANSPORT_RC, _UC or _XRC.
 * Returns -1 for an operation the transport does not carry.
 */
static inline int softhca_req_opcode(uint8_t wr_opcode, bool first,
                                     bool last, uint8_t transport)
{
    static const uint8_t send[2][2] = {
        /* [first][last] */
        { SOFTHCA_OP_SEND_MIDDLE, SOFTHCA_OP_SEND_LAST },
        { SOFTHCA_OP_SEND_FIRST, SOFTHCA_OP_SEND_ONLY },
    };
    static const uint8_t write[2][2] = {
        { SOFTHCA_OP_RDMA_WRITE_MIDDLE, SOFTHCA_OP_RDMA_WRITE_LAST },
        { SOFTHCA_OP_RDMA_WRITE_FIRST, SOFTHCA_OP_RDMA_WRITE_ONLY },
    };
    uint8_t op;

    switch (wr_opcode) {
    case SHCA_WR_SEND:
        op = send[first][last];
        break;
    case SHCA_WR_SEND_IMM:
        op = !last ? send[first][last] :
             first ? SOFTHCA_OP_SEND_ONLY_IMM : SOFTHCA_OP_SEND_LAST_IMM;
        break;
    case SHCA_WR_SEND_INV:
        if (transport == SOFTHCA_TRANSPORT_UC) {
            return -1;
        }
        op = !last ? send[first][last] :
             first ? SOFTHCA_OP_SEND_ONLY_INV : SOFTHCA_OP_SEND_LAST_INV;
        break;
    case SHCA_WR_RDMA_WRITE:
        op = write[first][last];
        break;
    case SHCA_WR_RDMA_WRITE_IMM:
        op = !last ? write[first][last] :
             first ? SOFTHCA_OP_RDMA_WRITE_ONLY_IMM :
                     SOFTHCA_OP_RDMA_WRITE_LAST_IMM;
        break;
    case SHCA_WR_RDMA_READ:
        op = SOFTHCA_OP_RDMA_READ_REQUEST;
        break;
    case SHCA_WR_ATOMIC_CMP_SWP:
        op = SOFTHCA_OP_COMPARE_SWAP;
        break;
    case SHCA_WR_ATOMIC_FETCH_ADD:
        op = SOFTHCA_OP_FETCH_ADD;
        break;
    case SHCA_WR_FLUSH:
    case SHCA_WR_ATOMIC_WRITE:
        if (transport != SOFTHCA_TRANSPORT_RC) {
            return -1;
        }
        op = wr_opcode == SHCA_WR_FLUSH ? SOFTHCA_OP_FLUSH
                                        : SOFTHCA_OP_ATOMIC_WRITE;
        break;
    default:
        return -1;
    }
    if (transport == SOFTHCA_TRANSPORT_UC &&
        (softhca_wr_is_read_atomic(wr_opcode))) {
        return -1;
    }
    return transport | op;
}

/* The message kind of a request operation (low 5 bits): 's', 'w' or 0. */
static inline char softhca_op_kind(uint8_t op)
{
    op &= ~SOFTHCA_TRANSPORT_MASK;
    if (op <= SOFTHCA_OP_SEND_ONLY_IMM || op == SOFTHCA_OP_SEND_LAST_INV ||
        op == SOFTHCA_OP_SEND_ONLY_INV) {
        return 's';
    }
    if (op >= SOFTHCA_OP_RDMA_WRITE_FIRST &&
        op <= SOFTHCA_OP_RDMA_WRITE_ONLY_IMM) {
        return 'w';
    }
    return 0;
}

static inline bool softhca_op_starts(uint8_t op)
{
    const SofthcaOpInfo *info = softhca_opcode_info(op);

    return info && (info->flags & SOFTHCA_OPF_FIRST);
}

static inline bool softhca_op_ends(uint8_t op)
{
    const SofthcaOpInfo *info = softhca_opcode_info(op);

    return info && (info->flags & SOFTHCA_OPF_LAST);
}

/*
 * The responder's order rule (IBA C9-89..): after a FIRST or MIDDLE packet
 * of a SEND or WRITE only a MIDDLE or LAST of the same kind may follow;
 * otherwise only a packet that starts a message.  prev is the last
 * in-order request opcode (a SEND_ONLY when none).
 */
static inline bool softhca_op_follows(uint8_t prev, uint8_t op)
{
    bool in_msg = !softhca_op_ends(prev) && softhca_op_kind(prev);

    if (in_msg) {
        return softhca_op_kind(op) == softhca_op_kind(prev) &&
               !softhca_op_starts(op);
    }
    return softhca_op_starts(op);
}

/*
 * Whether a request packet asks for an ACK (the A bit): the last of its
 * message, or since_ack_req packets went out since the last that did.
 */
static inline bool softhca_ack_req(bool last, uint32_t since_ack_req)
{
    return last || since_ack_req + 1 >= SOFTHCA_PKTS_PER_ACK;
}

/* AETH syndromes (IBA 9.7.5.1) */
#define SOFTHCA_AETH_TYPE_MASK      0xe0
#define SOFTHCA_AETH_ACK            0x00
#define SOFTHCA_AETH_RNR_NAK        0x20
#define SOFTHCA_AETH_NAK            0x60
#define SOFTHCA_AETH_VALUE_MASK     0x1f
/* An ACK with the credit count "invalid": no end-to-end flow control. */
#define SOFTHCA_AETH_ACK_UNLIMITED  0x1f
#define SOFTHCA_NAK_PSN_SEQ         0x60
#define SOFTHCA_NAK_INVALID_REQ     0x61
#define SOFTHCA_NAK_REM_ACCESS      0x62
#define SOFTHCA_NAK_REM_OP          0x63

/* The local ACK timeout: 4.096 us * 2^timeout; 0 means none. */
static inline uint64_t softhca_ack_timeout_ns(uint8_t timeout)
{
    return timeout ? 4096ull << (timeout & 31) : 0;
}

/* The RNR NAK timer code (IBA table 45) in nanoseconds. */
static inline uint64_t softhca_rnr_timer_ns(uint8_t code)
{
    static const uint32_t us[32] = {
        655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
        1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
        40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
    };

    return us[code & 31] * 1000ull;
}

#endif /* HW_SOFTHCA_SEQ_H */
