/*
 * softhca: the RoCEv2 wire format (parsing and building of frames, the
 * ICRC), free of QEMU state so that it can be unit-tested on the host
 * (tests/unit).
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_SOFTHCA_WIRE_H
#define HW_SOFTHCA_WIRE_H

/* The IP/UDP envelope of a received frame. */
typedef struct SofthcaUdpFrame {
    /* IP addresses as GIDs: IPv4 as ::ffff:a.b.c.d */
    uint8_t src_gid[16];
    uint8_t dst_gid[16];
    bool ipv6;
    uint16_t src_port;
    uint16_t dst_port;
    size_t payload_off;         /* offset of the UDP payload in the frame */
    size_t payload_len;
} SofthcaUdpFrame;

/*
 * Parse an Ethernet frame carrying an unfragmented IPv4 or IPv6 UDP
 * datagram.  Returns false for anything else, including every frame whose
 * headers or lengths do not fit in len and every IPv4 header with a wrong
 * checksum; never reads past buf + len.
 */
bool softhca_parse_udp(const uint8_t *buf, size_t len, SofthcaUdpFrame *f);

/*
 * Whether a GID names a multicast address: IPv6 ff00::/8, or an
 * IPv4-mapped address in 224.0.0.0/4.
 */
bool softhca_gid_is_mcast(const uint8_t *gid);

/*
 * RoCEv2: the InfiniBand transport (BTH, extended headers, payload, ICRC)
 * in a UDP datagram to port 4791.  Multi-byte fields are big-endian on the
 * wire, except the ICRC (see softhca_icrc()).
 */
#define SOFTHCA_ROCE_UDP_PORT       4791

#define SOFTHCA_BTH_LEN             12
#define SOFTHCA_DETH_LEN            8
#define SOFTHCA_RETH_LEN            16
#define SOFTHCA_ATOMICETH_LEN       28
#define SOFTHCA_AETH_LEN            4
#define SOFTHCA_ATOMICACKETH_LEN    8
#define SOFTHCA_IMMDT_LEN           4
#define SOFTHCA_IETH_LEN            4
#define SOFTHCA_XRCETH_LEN          4
#define SOFTHCA_FETH_LEN            4
#define SOFTHCA_ICRC_LEN            4
#define SOFTHCA_ROCE_TAIL_MAX       (3 + SOFTHCA_ICRC_LEN)  /* pad, ICRC */

/* An opcode is a transport (top 3 bits) ORed with an operation (low 5). */
#define SOFTHCA_TRANSPORT_MASK      0xe0
#define SOFTHCA_TRANSPORT_RC        0x00
#define SOFTHCA_TRANSPORT_UC        0x20
#define SOFTHCA_TRANSPORT_UD        0x60
#define SOFTHCA_TRANSPORT_XRC       0xa0

enum {
    SOFTHCA_OP_SEND_FIRST               = 0x00,
    SOFTHCA_OP_SEND_MIDDLE              = 0x01,
    SOFTHCA_OP_SEND_LAST                = 0x02,
    SOFTHCA_OP_SEND_LAST_IMM            = 0x03,
    SOFTHCA_OP_SEND_ONLY                = 0x04,
    SOFTHCA_OP_SEND_ONLY_IMM            = 0x05,
    SOFTHCA_OP_RDMA_WRITE_FIRST         = 0x06,
    SOFTHCA_OP_RDMA_WRITE_MIDDLE        = 0x07,
    SOFTHCA_OP_RDMA_WRITE_LAST          = 0x08,
    SOFTHCA_OP_RDMA_WRITE_LAST_IMM      = 0x09,
    SOFTHCA_OP_RDMA_WRITE_ONLY          = 0x0a,
    SOFTHCA_OP_RDMA_WRITE_ONLY_IMM      = 0x0b,
    SOFTHCA_OP_RDMA_READ_REQUEST        = 0x0c,
    SOFTHCA_OP_READ_RESPONSE_FIRST      = 0x0d,
    SOFTHCA_OP_READ_RESPONSE_MIDDLE     = 0x0e,
    SOFTHCA_OP_READ_RESPONSE_LAST       = 0x0f,
    SOFTHCA_OP_READ_RESPONSE_ONLY       = 0x10,
    SOFTHCA_OP_ACKNOWLEDGE              = 0x11,
    SOFTHCA_OP_ATOMIC_ACKNOWLEDGE       = 0x12,
    SOFTHCA_OP_COMPARE_SWAP             = 0x13,
    SOFTHCA_OP_FETCH_ADD                = 0x14,
    /* 0x15 is reserved (RESYNC, for RD only) */
    SOFTHCA_OP_SEND_LAST_INV            = 0x16,
    SOFTHCA_OP_SEND_ONLY_INV            = 0x17,
    /* IBA 1.5 */
    SOFTHCA_OP_FLUSH                    = 0x1c,
    SOFTHCA_OP_ATOMIC_WRITE             = 0x1d,
};

/*
 * The extended transport headers that may follow the BTH.  When several
 * are present they appear on the wire in the order of these bits, lowest
 * first (e.g. RETH then ImmDt, DETH then ImmDt, AETH then AtomicAckETH).
 */
enum {
    SOFTHCA_XH_XRCETH       = 1 << 0,   /* XRC requests: the target SRQ */
    SOFTHCA_XH_FETH         = 1 << 1,   /* FLUSH: placement type, level */
    SOFTHCA_XH_DETH         = 1 << 2,
    SOFTHCA_XH_RETH         = 1 << 3,
    SOFTHCA_XH_ATOMICETH    = 1 << 4,
    SOFTHCA_XH_AETH         = 1 << 5,
    SOFTHCA_XH_ATOMICACKETH = 1 << 6,
    SOFTHCA_XH_IMMDT        = 1 << 7,
    SOFTHCA_XH_IETH         = 1 << 8,
};

/* Packet of a message: FIRST|LAST is an only packet, neither a middle one */
enum {
    SOFTHCA_OPF_PAYLOAD = 1 << 0,
    SOFTHCA_OPF_FIRST   = 1 << 1,
    SOFTHCA_OPF_LAST    = 1 << 2,
};

typedef struct SofthcaOpInfo {
    uint16_t xh;                /* SOFTHCA_XH_* that follow the BTH */
    uint8_t flags;              /* SOFTHCA_OPF_* */
    uint8_t hdr_len;            /* BTH and extended headers */
} SofthcaOpInfo;

/* What an opcode carries; NULL for an opcode softhca does not support. */
const SofthcaOpInfo *softhca_opcode_info(uint8_t opcode);

typedef struct SofthcaBth {
    uint8_t opcode;
    bool solicited;             /* SE */
    bool mig_req;               /* M */
    uint8_t pad;                /* bytes after the payload, 0..3 */
    uint16_t pkey;
    bool fecn;
    bool becn;
    uint32_t dest_qpn;          /* 24 bits */
    bool ack_req;               /* A */
    uint32_t psn;               /* 24 bits */
} SofthcaBth;

typedef struct SofthcaReth {
    uint64_t va;
    uint32_t rkey;
    uint32_t dma_len;
} SofthcaReth;

typedef struct SofthcaDeth {
    uint32_t qkey;
    uint32_t src_qpn;           /* 24 bits */
} SofthcaDeth;

typedef struct SofthcaAeth {
    uint8_t syndrome;
    uint32_t msn;               /* 24 bits */
} SofthcaAeth;

typedef struct SofthcaAtomicEth {
    uint64_t va;
    uint32_t rkey;
    uint64_t swap_add;          /* swap data, or the value to add */
    uint64_t compare;
} SofthcaAtomicEth;

/*
 * A RoCE packet: the BTH and everything after it.  Of each extended header
 * only the fields of those in xh are meaningful.  The immediate data is
 * the wire's big-endian number, as verbs hand it over opaquely.
 */
typedef struct SofthcaRocePacket {
    SofthcaBth bth;
    uint16_t xh;                /* SOFTHCA_XH_* present */
    SofthcaDeth deth;
    SofthcaReth reth;
    SofthcaAtomicEth atomic;
    SofthcaAeth aeth;
    uint64_t atomic_ack;        /* AtomicAckETH: the original remote data */
    uint32_t imm;               /* ImmDt */
    uint32_t inv_rkey;          /* IETH */
    uint32_t xrc_srqn;          /* XRCETH, 24 bits */
    uint32_t feth;              /* FETH: bits 3:0 type, 5:4 level */
    size_t payload_off;         /* from the BTH */
    size_t payload_len;         /* without the pad bytes and the ICRC */
} SofthcaRocePacket;

/*
 * Parse the UDP payload of a RoCEv2 datagram (f->payload_off/len as given
 * by softhca_parse_udp()).  Returns false for an unsupported opcode, a
 * transport header version other than 0, headers that do not fit, a pad
 * count larger than the payload, payload on an opcode that has none, or a
 * length that is not a whole number of 4-byte words; never reads past
 * buf + len.  Does not check the ICRC: see softhca_icrc_check().
 */
bool softhca_parse_roce(const uint8_t *buf, size_t len, SofthcaRocePacket *p);

/* The IP/UDP envelope of a frame to send. */
typedef struct SofthcaRoceEnvelope {
    uint8_t dst_mac[6];
    uint8_t src_mac[6];
    /* IPv4 when both are ::ffff:a.b.c.d, IPv6 when neither is */
    uint8_t src_gid[16];
    uint8_t dst_gid[16];
    uint16_t src_port;          /* see softhca_roce_src_port() */
    uint8_t traffic_class;      /* IPv4 TOS (DSCP and ECN) or IPv6's */
    uint8_t hop_limit;          /* or IPv4 TTL */
    uint32_t flow_label;        /* IPv6 only, 20 bits */
    /*
     * IPv4 identification.  Frames are sent with DF, so any value will do
     * (RFC 6864); a parameter so that a frame can be rebuilt exactly.
     */
    uint16_t ip_id;
} SofthcaRoceEnvelope;

/*
 * Write a whole frame to frame[0..size): Ethernet, IPv4 (DF, header
 * checksum) or IPv6, UDP with checksum 0 (also over IPv6, as rdma_rxe
 * sends and accepts it: the ICRC protects the datagram), then the BTH and
 * the extended headers of p->bth.opcode from p, p->payload_len bytes from
 * payload (which may already be in place in frame, or NULL when there is
 * none), zeroed pad bytes and the ICRC.  The pad count is computed;
 * p->xh, p->bth.pad and p->payload_off are ignored.  Returns the frame
 * length, or 0 if the opcode is not supported, the opcode carries no
 * payload but payload_len is not 0, or the frame does not fit in 16-bit
 * IP/UDP lengths or in size.
 */
size_t softhca_build_roce(uint8_t *frame, size_t size,
                          const SofthcaRoceEnvelope *env,
                          const SofthcaRocePacket *p, const void *payload);

/*
 * The same frame with its payload left where it is, in the n pieces of
 * payload (p->payload_len bytes in all): the headers go to frame[0..size),
 * the pad and the ICRC to tail (SOFTHCA_ROCE_TAIL_MAX), whose length is in
 * *tail_len.  The frame is then headers, payload and tail, in that order.
 * Returns the length of the headers, or 0 as softhca_build_roce() does.
 */
size_t softhca_build_roce_gather(uint8_t *frame, size_t size,
                                 const SofthcaRoceEnvelope *env,
                                 const SofthcaRocePacket *p,
                                 const struct iovec *payload, int n,
                                 uint8_t *tail, size_t *tail_len);

/*
 * Where softhca_build_roce() puts the payload of an opcode's frame for env,
 * so that it can be written there first; 0 if the opcode is not supported.
 */
size_t softhca_roce_payload_off(const SofthcaRoceEnvelope *env,
                                uint8_t opcode);

/*
 * The UDP source port RoCEv2 senders use for flow entropy, the convention
 * of Linux's RoCE drivers (rdma_get_udp_sport()): from the flow label, or
 * when that is 0 from a hash of both QP numbers, so that both ends of a
 * connection use the same port.
 */
uint16_t softhca_roce_src_port(uint32_t flow_label, uint32_t lqpn,
                               uint32_t rqpn);

/*
 * The ICRC of a RoCEv2 frame parsed by softhca_parse_udp() into u, which
 * must have u->payload_len >= SOFTHCA_BTH_LEN + SOFTHCA_ICRC_LEN: a CRC-32
 * over 8 bytes of 1s (the LRH an InfiniBand packet would have), the IP
 * header, the UDP header and the UDP payload up to the ICRC, with the
 * fields routers may change masked to 1s.  On the wire the ICRC is stored
 * least significant byte first, like an Ethernet FCS.
 */
uint32_t softhca_icrc(const uint8_t *frame, const SofthcaUdpFrame *u);

/*
 * Whether the frame's last 4 UDP payload bytes are its ICRC, or, for an RC
 * FLUSH, the ICRC rdma_rxe of Linux 6.12 computes (spec §16).
 */
bool softhca_icrc_check(const uint8_t *frame, const SofthcaUdpFrame *u);

/*
 * Give a frame built by softhca_build_roce() that is an RC FLUSH the ICRC
 * rdma_rxe of Linux 6.12 expects instead (x-rxe-flush-icrc, spec §12);
 * false, and the frame unchanged, for any other frame.
 */
bool softhca_icrc_set_rxe_flush(uint8_t *frame, size_t len);

#endif /* HW_SOFTHCA_WIRE_H */
