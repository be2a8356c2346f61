/*
 * softhca: the NIC function of the Ethernet port (spec §6, §7)
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "net/eth.h"
#include "softhca-rdma.h"
#include "softhca-wire.h"
#include "trace.h"

static bool softhca_nic_ring_ok(SofthcaState *s, const SofthcaRing *r)
{
    return r->log_size >= SHCA_RING_LOG_MIN &&
           r->log_size <= SHCA_NIC_RING_LOG_MAX &&
           QEMU_IS_ALIGNED(r->base, SHCA_NIC_DESC_SIZE) &&
           softhca_dma_ok(s, r->base,
                          (uint64_t)SHCA_NIC_DESC_SIZE << r->log_size);
}

static uint64_t softhca_desc_addr(const SofthcaRing *r, uint32_t index)
{
    return r->base + (uint64_t)index * SHCA_NIC_DESC_SIZE;
}

/* Enabling a direction checks its ring and starts it at index 0. */
void softhca_nic_write_ctrl(SofthcaState *s, uint32_t val)
{
    static const struct {
        uint32_t bit;
        const char *name;
    } dirs[] = { { SHCA_NIC_TX_EN, "TX" }, { SHCA_NIC_RX_EN, "RX" } };

    val &= SHCA_NIC_TX_EN | SHCA_NIC_RX_EN;
    for (int i = 0; i < ARRAY_SIZE(dirs); i++) {
        SofthcaRing *r = dirs[i].bit == SHCA_NIC_TX_EN ? &s->nic_tx
                                                       : &s->nic_rx;

        if (!(val & dirs[i].bit) || (s->nic_ctrl & dirs[i].bit)) {
            continue;
        }
        if (!softhca_nic_ring_ok(s, r)) {
            qemu_log_mask(LOG_GUEST_ERROR, "softhca: bad NIC %s ring\n",
                          dirs[i].name);
            val &= ~dirs[i].bit;
            continue;
        }
        r->head = 0;
        r->tail = 0;
    }
    s->nic_ctrl = val;
    trace_softhca_nic_ctrl(val);
}

static void softhca_nic_signal(SofthcaState *s)
{
    s->nic_irq |= SHCA_NIC_IRQ_PENDING;
    if (s->nic_irq & SHCA_NIC_IRQ_EN) {
        s->nic_irq &= ~SHCA_NIC_IRQ_EN;
        softhca_irq(s, SHCA_VEC_NIC);
    }
}

void softhca_nic_write_irq(SofthcaState *s, uint32_t val)
{
    if (val & SHCA_NIC_IRQ_PENDING) {
        s->nic_irq &= ~SHCA_NIC_IRQ_PENDING;
    }
    s->nic_irq = (s->nic_irq & ~SHCA_NIC_IRQ_EN) | (val & SHCA_NIC_IRQ_EN);
    /* An event that came while disabled interrupts as soon as enabled. */
    if ((s->nic_irq & SHCA_NIC_IRQ_EN) &&
        (s->nic_irq & SHCA_NIC_IRQ_PENDING)) {
        s->nic_irq &= ~SHCA_NIC_IRQ_EN;
        softhca_irq(s, SHCA_VEC_NIC);
    }
}

static bool softhca_nic_doorbell_ok(SofthcaState *s, const SofthcaRing *r,
                                    uint32_t en, uint32_t tail)
{
    if (!softhca_ready(s) || !(s->nic_ctrl & en) ||
        tail > softhca_ring_mask(r)) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "softhca: bad NIC doorbell %u (ring %s)\n", tail,
                      (s->nic_ctrl & en) ? "enabled" : "disabled");
        return false;
    }
    return true;
}

static bool softhca_nic_tx_one(SofthcaState *s, struct shca_nic_txd *txd)
{
    uint16_t len = le16_to_cpu(txd->len);

    if (len < ETH_HLEN || len > SHCA_NIC_FRAME_MAX ||
        !softhca_dma_read(s, le64_to_cpu(txd->addr), s->frame, len)) {
        return false;
    }
    trace_softhca_nic_tx(len);
    if (!softhca_loopback_tx(s, s->frame, len, false)) {
        softhca_port_out(s, &(struct iovec) {
                             .iov_base = s->frame, .iov_len = len,
                         }, 1);
    }
    return true;
}

/*
 * Send descriptors head..tail as the work budget allows; nic_tx_bh sends
 * the rest (issue 25, defect 2: a ring of 4095 jumbo frames held the vCPU
 * for 50 ms).  Each pass consumes one, so it terminates.
 */
static void softhca_nic_tx(SofthcaState *s)
{
    SofthcaRing *r = &s->nic_tx;
    bool done = false;

    while (softhca_ready(s) && (s->nic_ctrl & SHCA_NIC_TX_EN) &&
           r->head != r->tail) {
        uint64_t addr = softhca_desc_addr(r, r->head);
        struct shca_nic_txd txd;
        uint16_t len;

        if (!softhca_dma_read(s, addr, &txd, sizeof(txd))) {
            break;
        }
        len = MIN(le16_to_cpu(txd.len), SHCA_NIC_FRAME_MAX);
        if (!softhca_work_spend(s, SOFTHCA_WORK_FRAME(len))) {
            qemu_bh_schedule(s->nic_tx_bh);
            break;
        }
        txd.flags = SHCA_NIC_DESC_DONE;
        if (softhca_nic_tx_one(s, &txd)) {
            s->stats.nic_tx_frames++;
        } else {
            s->stats.nic_tx_errors++;
            txd.flags |= SHCA_NIC_DESC_ERR;
            qemu_log_mask(LOG_GUEST_ERROR, "softhca: bad TX descriptor %u\n",
                          r->head);
        }
        softhca_dma_write(s, addr + offsetof(struct shca_nic_txd, flags),
                          &txd.flags, 1);
        r->head = (r->head + 1) & softhca_ring_mask(r);
        done = true;
    }
    if (done) {
        softhca_nic_signal(s);
    }
}

void softhca_nic_tx_doorbell(SofthcaState *s, uint32_t tail)
{
    if (softhca_nic_doorbell_ok(s, &s->nic_tx, SHCA_NIC_TX_EN, tail)) {
        s->nic_tx.tail = tail;
        softhca_nic_tx(s);
    }
}

static void softhca_nic_tx_bh(void *opaque)
{
    SofthcaState *s = opaque;

    if (softhca_work_begin_bh(s)) {
        softhca_nic_tx(s);
        softhca_work_end(s);
    }
}

static void softhca_port_xmit(SofthcaState *s, const uint8_t *frame,
                              size_t len, const SofthcaUdpFrame *udp);

void softhca_nic_init(SofthcaState *s)
{
    s->nic_tx_bh = softhca_bh_new(s, softhca_nic_tx_bh);
    softhca_fault_set_sink(s, SOFTHCA_FAULT_TX, softhca_port_xmit);
}

void softhca_nic_exit(SofthcaState *s)
{
    qemu_bh_delete(s->nic_tx_bh);
    s->nic_tx_bh = NULL;
}

void softhca_nic_rx_doorbell(SofthcaState *s, uint32_t tail)
{
    if (!softhca_nic_doorbell_ok(s, &s->nic_rx, SHCA_NIC_RX_EN, tail)) {
        return;
    }
    s->nic_rx.tail = tail;
}

void softhca_nic_reset(SofthcaState *s)
{
    /* frames the port handed the netdev that have not left yet go too */
    softhca_crossing_reset(s);
    qemu_bh_cancel(s->nic_tx_bh);
    s->nic_ctrl = 0;
    s->nic_irq = 0;
    s->nic_tx = (SofthcaRing) { 0 };
    s->nic_rx = (SofthcaRing) { 0 };
}

/*
 * Is this a RoCEv2 frame for one of our GIDs (spec §7)?  Only such frames
 * belong to the transport; everything else is the NIC function's.
 */
static bool softhca_is_roce(SofthcaState *s, const uint8_t *buf, size_t size,
                            SofthcaUdpFrame *f)
{
    if (!softhca_parse_udp(buf, size, f) ||
        f->dst_port != SHCA_ROCE_UDP_PORT) {
        return false;
    }
    /* multicast datagrams (spec §17.3): the transport finds the group */
    if (softhca_has_dgram(s) && softhca_gid_is_mcast(f->dst_gid)) {
        return true;
    }
    for (int i = 0; i < SOFTHCA_MAX_GID; i++) {
        if (s->gids[i].valid &&
            !memcmp(s->gids[i].raw, f->dst_gid, sizeof(f->dst_gid))) {
            return true;
        }
    }
    return false;
}

/*
 * The port never holds frames back: RoCEv2 frames go to the transport
 * whatever the state of the NIC rings, and like a real NIC the device
 * drops (and counts) other frames when the driver has posted no buffer.
 */
static bool softhca_nic_has_buffer(SofthcaState *s)
{
    return softhca_ready(s) && (s->nic_ctrl & SHCA_NIC_RX_EN) &&
           s->nic_rx.head != s->nic_rx.tail;
}

/* --- the port: the transport's frames, and the NIC function's ---------- */

void softhca_port_send(SofthcaState *s, const uint8_t *frame, size_t len)
{
    s->rdma_stats[SHCA_STAT_TX_PACKETS]++;
    softhca_fault_pass(s, SOFTHCA_FAULT_TX, frame, len, NULL);
}

/* Where fault injection passes the transport's frames on: the wire. */
static void softhca_port_xmit(SofthcaState *s, const uint8_t *frame,
                              size_t len, const SofthcaUdpFrame *udp)
{
    if (!softhca_loopback_tx(s, frame, len, true)) {
        softhca_port_out(s, &(struct iovec) {
                             .iov_base = (void *)frame, .iov_len = len,
                         }, 1);
    }
}

bool softhca_port_takes_iov(SofthcaState *s, const uint8_t *dst_mac)
{
    NetClientState *peer;

    /* fault injection and the loopback take whole frames */
    if (!softhca_fault_idle(s, SOFTHCA_FAULT_TX) || (dst_mac[0] & 1) ||
        !memcmp(dst_mac, s->mac, ETH_ALEN)) {
        return false;
    }
    if (s->iothread) {
        return true;                    /* the outbox gathers */
    }
    /* a netdev without receive_iov would gather into a buffer of its own */
    peer = qemu_get_queue(s->nic)->peer;
    return peer && peer->info->receive_iov;
}

void softhca_port_sendv(SofthcaState *s, const struct iovec *iov, int cnt)
{
    s->rdma_stats[SHCA_STAT_TX_PACKETS]++;
    softhca_port_out(s, iov, cnt);
}

uint32_t softhca_port_mtu(const SofthcaState *s)
{
    uint32_t mtu = 4096;

    while (mtu > 256 && mtu > s->mtu) {
        mtu >>= 1;
    }
    return mtu;
}

void softhca_port_receive(SofthcaState *s, const uint8_t *buf, size_t size)
{
    SofthcaRing *r = &s->nic_rx;
    uint64_t addr = softhca_desc_addr(r, r->head);
    struct shca_nic_rxd rxd;
    SofthcaUdpFrame udp;

    /* to the transport, through fault injection, whose sink it set */
    if (softhca_is_roce(s, buf, size, &udp)) {
        softhca_fault_pass(s, SOFTHCA_FAULT_RX, buf, size, &udp);
        return;
    }
    if (!softhca_nic_has_buffer(s)) {
        s->stats.nic_rx_no_buffer++;
        return;
    }
    if (!softhca_dma_read(s, addr, &rxd, sizeof(rxd))) {
        s->stats.nic_rx_errors++;
        return;
    }
    if (size > le16_to_cpu(rxd.buf_len)) {
        s->stats.nic_rx_too_long++;
        trace_softhca_nic_rx_drop(size, le16_to_cpu(rxd.buf_len));
        return;
    }

    rxd.len = cpu_to_le16(size);
    rxd.flags = SHCA_NIC_DESC_DONE;
    if (!softhca_dma_write(s, le64_to_cpu(rxd.addr), buf, size)) {
        rxd.len = 0;
        rxd.flags |= SHCA_NIC_DESC_ERR;
        s->stats.nic_rx_errors++;
    } else {
        s->stats.nic_rx_frames++;
    }
    trace_softhca_nic_rx(size);
    softhca_dma_write_owned(s, addr, &rxd, sizeof(rxd));
    r->head = (r->head + 1) & softhca_ring_mask(r);
    softhca_nic_signal(s);
}

/* With an iothread the netdev waits while the engine's inbox is full. */
bool softhca_nic_can_receive(NetClientState *nc)
{
    SofthcaState *s = qemu_get_nic_opaque(nc);

    return !s->iothread || softhca_inbox_room(s);
}

ssize_t softhca_nic_receive(NetClientState *nc, const uint8_t *buf,
                            size_t size)
{
    SofthcaState *s = qemu_get_nic_opaque(nc);

    if (s->iothread) {
        /* 0: the net layer keeps the frame until the inbox has room */
        return softhca_inbox_push(s, buf, size) ? size : 0;
    }
    softhca_work_begin(s);
    softhca_work_spend(s, SOFTHCA_WORK_FRAME(size));
    softhca_port_receive(s, buf, size);
    softhca_work_end(s);
    return size;
}
