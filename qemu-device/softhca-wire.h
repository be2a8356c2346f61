/*
 * softhca: parsing of received frames, free of QEMU state so that it can
 * be unit-tested on the host (tests/unit).
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
 * headers or lengths do not fit in len; never reads past buf + len.
 */
bool softhca_parse_udp(const uint8_t *buf, size_t len, SofthcaUdpFrame *f);

#endif /* HW_SOFTHCA_WIRE_H */
