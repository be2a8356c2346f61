/*
 * icrc-check: check the ICRC of every RoCEv2 frame in a capture.
 *
 *   icrc-check FILE.pcap [MAC...]
 *
 * Reads a classic pcap file (Ethernet link type, either byte order,
 * microsecond or nanosecond time stamps), parses each frame with the
 * device's own parser (softhca_parse_udp) and checks the ICRC of every UDP
 * datagram to port 4791 (softhca_icrc_check).  Prints, per source MAC, the
 * frames with a good and a bad ICRC and how many of each BTH opcode, then
 * the frames cut short by the capture (not checked).
 *
 * Exits 1 if any ICRC is bad, a RoCE frame is too short to hold a BTH and
 * an ICRC, the file is not a whole pcap, or one of the MACs given sent no
 * RoCE frame with a good ICRC; 2 on a usage or I/O error.
 *
 * Built by tests/vm/run against qemu-device/softhca-wire.c and -crc32.c with
 * tests/unit/qemu/osdep.h standing in for QEMU's.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "softhca-wire.h"

#include <stdio.h>
#include <stdlib.h>

#define MAX_MACS    16
#define SNAP_MAX    (256 * 1024)

typedef struct MacStats {
    uint8_t mac[6];
    unsigned long good, bad, runt;
    unsigned long opcode[256];
} MacStats;

static MacStats macs[MAX_MACS];
static int nmacs;

static uint32_t rd32(const uint8_t *p, bool swap)
{
    uint32_t v;

    memcpy(&v, p, 4);
    return swap ? __builtin_bswap32(v) : v;
}

static MacStats *mac_stats(const uint8_t *mac)
{
    int i;

    for (i = 0; i < nmacs; i++) {
        if (!memcmp(macs[i].mac, mac, 6)) {
            return &macs[i];
        }
    }
    if (nmacs == MAX_MACS) {
        fprintf(stderr, "icrc-check: more than %d source MACs\n", MAX_MACS);
        exit(2);
    }
    memcpy(macs[nmacs].mac, mac, 6);
    return &macs[nmacs++];
}

static bool parse_mac(const char *s, uint8_t *mac)
{
    unsigned int b[6];
    int i;

    if (sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4],
               &b[5]) != 6) {
        return false;
    }
    for (i = 0; i < 6; i++) {
        if (b[i] > 0xff) {
            return false;
        }
        mac[i] = b[i];
    }
    return true;
}

static void print_mac(const uint8_t *mac)
{
    printf("%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3],
           mac[4], mac[5]);
}

int main(int argc, char **argv)
{
    static uint8_t frame[SNAP_MAX];
    uint8_t gh[24], rh[16];
    unsigned long frames = 0, roce = 0, cut = 0, other = 0;
    bool swap, ok = true;
    FILE *f;
    int i, op;

    if (argc < 2) {
        fprintf(stderr, "usage: icrc-check FILE.pcap [MAC...]\n");
        return 2;
    }
    f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    if (fread(gh, 1, sizeof(gh), f) != sizeof(gh)) {
        fprintf(stderr, "%s: no pcap header\n", argv[1]);
        return 1;
    }
    switch (rd32(gh, false)) {
    case 0xa1b2c3d4: case 0xa1b23c4d: swap = false; break;
    case 0xd4c3b2a1: case 0x4d3cb2a1: swap = true; break;
    default:
        fprintf(stderr, "%s: not a classic pcap file\n", argv[1]);
        return 1;
    }
    if (rd32(gh + 20, swap) != 1) {
        fprintf(stderr, "%s: link type %u, not Ethernet\n", argv[1],
                rd32(gh + 20, swap));
        return 1;
    }

    for (;;) {
        size_t n = fread(rh, 1, sizeof(rh), f);
        uint32_t incl, orig;
        SofthcaUdpFrame u;
        SofthcaRocePacket p;
        MacStats *m;

        if (n == 0) {
            break;
        }
        if (n != sizeof(rh)) {
            fprintf(stderr, "frame %lu: record header cut short\n", frames + 1);
            ok = false;
            break;
        }
        incl = rd32(rh + 8, swap);
        orig = rd32(rh + 12, swap);
        if (incl > SNAP_MAX || incl > orig) {
            fprintf(stderr, "frame %lu: bad record lengths %u/%u\n",
                    frames + 1, incl, orig);
            ok = false;
            break;
        }
        if (fread(frame, 1, incl, f) != incl) {
            fprintf(stderr, "frame %lu: cut short\n", frames + 1);
            ok = false;
            break;
        }
        frames++;
        if (incl < orig) {
            cut++;              /* the capture kept only the start */
            continue;
        }
        if (!softhca_parse_udp(frame, incl, &u) ||
            u.dst_port != SOFTHCA_ROCE_UDP_PORT) {
            other++;
            continue;
        }
        roce++;
        m = mac_stats(frame + 6);
        if (u.payload_len < SOFTHCA_BTH_LEN + SOFTHCA_ICRC_LEN) {
            fprintf(stderr, "frame %lu: RoCE payload of %zu bytes\n", frames,
                    u.payload_len);
            m->runt++;
            ok = false;
            continue;
        }
        m->opcode[frame[u.payload_off]]++;
        if (softhca_icrc_check(frame, &u)) {
            m->good++;
        } else {
            uint32_t want = softhca_icrc(frame, &u), got;

            got = rd32(frame + u.payload_off + u.payload_len - 4, false);
            fprintf(stderr, "frame %lu: bad ICRC (opcode 0x%02x, %u bytes): "
                    "0x%08x on the wire, 0x%08x computed\n", frames,
                    frame[u.payload_off], incl, got, want);
            m->bad++;
            ok = false;
        }
        /* The transport headers too, where softhca supports the opcode. */
        if (softhca_opcode_info(frame[u.payload_off]) &&
            !softhca_parse_roce(frame + u.payload_off, u.payload_len, &p)) {
            fprintf(stderr, "frame %lu: malformed transport headers\n",
                    frames);
            ok = false;
        }
    }
    fclose(f);

    printf("%lu frames: %lu RoCE, %lu other, %lu cut short by the capture\n",
           frames, roce, other, cut);
    for (i = 0; i < nmacs; i++) {
        printf("from ");
        print_mac(macs[i].mac);
        printf(": %lu good ICRC, %lu bad, %lu runts; opcodes", macs[i].good,
               macs[i].bad, macs[i].runt);
        for (op = 0; op < 256; op++) {
            if (macs[i].opcode[op]) {
                printf(" 0x%02x:%lu", op, macs[i].opcode[op]);
            }
        }
        printf("\n");
    }
    for (i = 2; i < argc; i++) {
        uint8_t mac[6];
        int j;

        if (!parse_mac(argv[i], mac)) {
            fprintf(stderr, "icrc-check: bad MAC '%s'\n", argv[i]);
            return 2;
        }
        for (j = 0; j < nmacs && memcmp(macs[j].mac, mac, 6); j++) {
        }
        if (j == nmacs || !macs[j].good) {
            printf("no RoCE frame with a good ICRC from %s\n", argv[i]);
            ok = false;
        }
    }
    printf("%s\n", ok ? "ICRC OK" : "ICRC CHECK FAILED");
    return ok ? 0 : 1;
}
