/*
 * softhca: parsing of received frames
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "softhca-wire.h"

#define ETH_HDR_LEN     14
#define ETHERTYPE_IPV4  0x0800
#define ETHERTYPE_IPV6  0x86dd
#define IPV4_HDR_MIN    20
#define IPV6_HDR_LEN    40
#define UDP_HDR_LEN     8
#define IP_PROTO_UDP_   17

static uint16_t rd_be16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

/* Returns the offset of the UDP header, or 0 if this is not IPv4/UDP. */
static size_t softhca_parse_ipv4(const uint8_t *ip, size_t len,
                                 SofthcaUdpFrame *f)
{
    size_t ihl, total;

    if (len < IPV4_HDR_MIN || (ip[0] >> 4) != 4) {
        return 0;
    }
    ihl = (ip[0] & 0xf) * 4;
    total = rd_be16(ip + 2);
    /* more fragments, or a fragment offset: not a whole datagram */
    if (ihl < IPV4_HDR_MIN || total < ihl || total > len ||
        (rd_be16(ip + 6) & 0x3fff) || ip[9] != IP_PROTO_UDP_) {
        return 0;
    }
    memset(f->src_gid, 0, 10);
    f->src_gid[10] = f->src_gid[11] = 0xff;
    memcpy(f->src_gid + 12, ip + 12, 4);
    memset(f->dst_gid, 0, 10);
    f->dst_gid[10] = f->dst_gid[11] = 0xff;
    memcpy(f->dst_gid + 12, ip + 16, 4);
    f->ipv6 = false;
    f->payload_len = total - ihl;       /* of IP, UDP header included */
    return ihl;
}

static size_t softhca_parse_ipv6(const uint8_t *ip, size_t len,
                                 SofthcaUdpFrame *f)
{
    size_t payload;

    if (len < IPV6_HDR_LEN || (ip[0] >> 4) != 6 || ip[6] != IP_PROTO_UDP_) {
        return 0;
    }
    payload = rd_be16(ip + 4);
    if (payload > len - IPV6_HDR_LEN) {
        return 0;
    }
    memcpy(f->src_gid, ip + 8, 16);
    memcpy(f->dst_gid, ip + 24, 16);
    f->ipv6 = true;
    f->payload_len = payload;
    return IPV6_HDR_LEN;
}

bool softhca_parse_udp(const uint8_t *buf, size_t len, SofthcaUdpFrame *f)
{
    const uint8_t *ip = buf + ETH_HDR_LEN;
    size_t ip_len, l4, udp_len;

    if (len < ETH_HDR_LEN) {
        return false;
    }
    ip_len = len - ETH_HDR_LEN;
    switch (rd_be16(buf + 12)) {
    case ETHERTYPE_IPV4:
        l4 = softhca_parse_ipv4(ip, ip_len, f);
        break;
    case ETHERTYPE_IPV6:
        l4 = softhca_parse_ipv6(ip, ip_len, f);
        break;
    default:
        return false;
    }
    /* f->payload_len holds the IP payload length here */
    if (l4 == 0 || f->payload_len < UDP_HDR_LEN) {
        return false;
    }
    udp_len = rd_be16(ip + l4 + 4);
    if (udp_len < UDP_HDR_LEN || udp_len > f->payload_len) {
        return false;
    }
    f->src_port = rd_be16(ip + l4);
    f->dst_port = rd_be16(ip + l4 + 2);
    f->payload_off = ETH_HDR_LEN + l4 + UDP_HDR_LEN;
    f->payload_len = udp_len - UDP_HDR_LEN;
    return true;
}
