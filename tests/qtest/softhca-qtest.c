/*
 * Helpers for softhca's qtests and fuzzing harnesses (softhca-qtest.h).
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include <poll.h>
#include "libqos/pci-pc.h"
#include "libqos/malloc-pc.h"
#include "qemu/bswap.h"
#include "hw/pci/pci_regs.h"
#include "softhca-qtest.h"

uint32_t rd(Hca *h, uint32_t reg)
{
    return qpci_io_readl(h->dev, h->bar, reg);
}

void wr(Hca *h, uint32_t reg, uint32_t val)
{
    qpci_io_writel(h->dev, h->bar, reg, val);
}

static void save_fn(QPCIDevice *dev, int devfn, void *data)
{
    *(QPCIDevice **)data = dev;
}

/*
 * Fill guest memory like qtest_memset(), in memwrites: QEMU 10.0's
 * in-process fuzzing wrapper of qtest_memset() never frees the buffer it
 * fills, which over a fuzzing run of hours is gigabytes.
 */
void hca_fill(Hca *h, uint64_t addr, uint8_t pattern, size_t len)
{
    uint8_t buf[4096];

    memset(buf, pattern, sizeof(buf));
    while (len) {
        size_t n = MIN(len, sizeof(buf));

        qtest_memwrite(h->qts, addr, buf, n);
        addr += n;
        len -= n;
    }
}

/* Find the device on the machine qts runs, and enable it and MSI-X. */
void hca_attach(Hca *h, QTestState *qts)
{
    memset(h, 0, sizeof(*h));
    h->qts = qts;
    pc_alloc_init(&h->alloc, h->qts, 0);
    h->bus = qpci_new_pc(h->qts, &h->alloc);
    qpci_device_foreach(h->bus, SHCA_PCI_VENDOR_ID, SHCA_PCI_DEVICE_ID,
                        save_fn, &h->dev);
    g_assert(h->dev);
    qpci_device_enable(h->dev);
    h->bar = qpci_iomap(h->dev, SHCA_BAR_REGS, NULL);
    qpci_msix_enable(h->dev);   /* vectors start masked: events pend */
}

void hca_start(Hca *h, const char *extra)
{
    hca_attach(h, qtest_initf("-machine q35 -m 128 -nodefaults "
                              "-device softhca,id=hca%s",
                              extra ? extra : ""));
}

/* Let go of the device, leaving the machine running. */
void hca_detach(Hca *h)
{
    qpci_msix_disable(h->dev);
    g_free(h->dev);
    qpci_free_pc(h->bus);
    alloc_destroy(&h->alloc);
}

void hca_stop(Hca *h)
{
    hca_detach(h);
    qtest_quit(h->qts);
}

/*
 * Poll QMP query-migrate on qts (either side) until the migration has
 * ended; its final status, and QEMU's reason as a test message if any.
 */
char *hca_migration_status(QTestState *qts)
{
    for (int tries = 0; tries < 3000; tries++) {
        QDict *rsp = qtest_qmp(qts, "{'execute': 'query-migrate'}");
        QDict *ret = qdict_get_qdict(rsp, "return");
        const char *st = ret && qdict_haskey(ret, "status") ?
                         qdict_get_str(ret, "status") : "none";

        if (!strcmp(st, "completed") || !strcmp(st, "failed") ||
            !strcmp(st, "cancelled")) {
            char *done = g_strdup(st);

            if (qdict_haskey(ret, "error-desc")) {
                g_test_message("migration %s: %s", st,
                               qdict_get_str(ret, "error-desc"));
            }
            qobject_unref(rsp);
            return done;
        }
        qobject_unref(rsp);
        g_usleep(10 * 1000);
    }
    g_assert_not_reached();
}

bool hca_running(QTestState *qts)
{
    QDict *rsp = qtest_qmp(qts, "{'execute': 'query-status'}");
    bool running = qdict_get_bool(qdict_get_qdict(rsp, "return"), "running");

    qobject_unref(rsp);
    return running;
}

/*
 * Migrate the machine h drives to a new QEMU with the same device, whose
 * options end with extra (a -netdev of its own: the old one holds its
 * port), and drive that one.  The guest's memory, the device's BARs and
 * MSI-X table, and the test's allocator carry over.  A machine that ran
 * runs on the other side; a stopped one stays stopped.
 */
void hca_migrate(Hca *h, const char *extra)
{
    g_autofree char *dir = g_dir_make_tmp("softhca-migrate-XXXXXX", NULL);
    g_autofree char *path = g_strdup_printf("%s/sock", dir);
    g_autofree char *uri = g_strdup_printf("unix:%s", path);
    bool running = hca_running(h->qts);
    g_autofree char *status = NULL;
    QTestState *to;

    to = qtest_initf("-machine q35 -m 128 -nodefaults "
                     "-device softhca,id=hca%s -incoming %s",
                     extra ? extra : "", uri);
    qtest_qmp_assert_success(h->qts, "{'execute': 'migrate', "
                             "'arguments': {'uri': %s}}", uri);
    status = hca_migration_status(h->qts);
    g_assert_cmpstr(status, ==, "completed");
    if (running) {
        qtest_qmp_eventwait(to, "RESUME");
    } else {
        g_free(status);
        status = hca_migration_status(to);
        g_assert_cmpstr(status, ==, "completed");
    }
    qtest_quit(h->qts);
    qpci_free_pc(h->bus);
    h->qts = to;
    h->bus = qpci_new_pc(to, &h->alloc);
    h->dev->bus = h->bus;
    unlink(path);
    rmdir(dir);
}

/* An integer QOM property of the device, "hca". */
uint64_t hca_prop(Hca *h, const char *name)
{
    QDict *rsp = qtest_qmp(h->qts, "{'execute': 'qom-get', 'arguments': "
                           "{'path': '/machine/peripheral/hca', "
                           "'property': %s}}", name);
    uint64_t v;

    g_assert(qdict_haskey(rsp, "return"));
    v = qdict_get_int(rsp, "return");
    qobject_unref(rsp);
    return v;
}

/* Clear a pending, masked vector: unmask (it fires), then mask again. */
bool hca_take_irq(Hca *h, unsigned vector)
{
    uint64_t ctrl = h->dev->msix_table_off + vector * PCI_MSIX_ENTRY_SIZE +
                    PCI_MSIX_ENTRY_VECTOR_CTRL;
    bool pending = qpci_msix_pending(h->dev, vector);

    qpci_io_writel(h->dev, h->dev->msix_table_bar, ctrl, 0);
    qpci_io_writel(h->dev, h->dev->msix_table_bar, ctrl,
                   PCI_MSIX_ENTRY_CTRL_MASKBIT);
    return pending;
}

void hca_config_admin(Hca *h, uint64_t aq, uint32_t aq_log,
                      uint64_t acq, uint32_t acq_log)
{
    wr(h, SHCA_REG_AQ_BASE_LO, aq);
    wr(h, SHCA_REG_AQ_BASE_HI, aq >> 32);
    wr(h, SHCA_REG_ACQ_BASE_LO, acq);
    wr(h, SHCA_REG_ACQ_BASE_HI, acq >> 32);
    wr(h, SHCA_REG_AQ_LOG_SIZE, aq_log);
    wr(h, SHCA_REG_ACQ_LOG_SIZE, acq_log);
}

void hca_enable(Hca *h)
{
    h->aq = guest_alloc(&h->alloc, SHCA_AQ_ENTRY_SIZE << AQ_LOG);
    h->acq = guest_alloc(&h->alloc, sizeof(struct shca_acq_entry) << ACQ_LOG);
    hca_fill(h, h->acq, 0, sizeof(struct shca_acq_entry) << ACQ_LOG);
    h->aq_tail = h->acq_head = 0;
    h->acq_phase = true;
    hca_config_admin(h, h->aq, AQ_LOG, h->acq, ACQ_LOG);
    wr(h, SHCA_REG_CTRL, SHCA_CTRL_EN);
    g_assert_cmphex(rd(h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
}

void hca_post(Hca *h, struct shca_aq_entry *cmd)
{
    cmd->cmd_id = cpu_to_le16(h->next_id++);
    qtest_memwrite(h->qts, h->aq + h->aq_tail * SHCA_AQ_ENTRY_SIZE, cmd,
                   sizeof(*cmd));
    h->aq_tail = (h->aq_tail + 1) & ((1 << AQ_LOG) - 1);
    wr(h, SHCA_REG_AQ_TAIL, h->aq_tail);
}

/* Take the next completion if the device has written it. */
bool hca_poll(Hca *h, struct shca_acq_entry *cqe)
{
    if (h->settle) {
        h->settle(h->qts);
    }
    qtest_memread(h->qts, h->acq + h->acq_head * sizeof(*cqe), cqe,
                  sizeof(*cqe));
    if ((cqe->phase & SHCA_PHASE_BIT) != h->acq_phase) {
        return false;
    }
    h->acq_head = (h->acq_head + 1) & ((1 << ACQ_LOG) - 1);
    if (h->acq_head == 0) {
        h->acq_phase = !h->acq_phase;
    }
    wr(h, SHCA_REG_ACQ_HEAD, h->acq_head);
    return true;
}

/* Run one command; return its status, and its result through *result. */
uint8_t hca_cmd(Hca *h, struct shca_aq_entry *cmd, uint32_t *result)
{
    struct shca_acq_entry cqe;
    uint16_t id = h->next_id;

    hca_post(h, cmd);
    /* a long command goes on from the device's bottom half (spec §19.3) */
    for (int tries = 0; !hca_poll(h, &cqe); tries++) {
        g_assert_cmpint(tries, <, 100000);
    }
    g_assert_cmpuint(le16_to_cpu(cqe.cmd_id), ==, id);
    if (result) {
        *result = le32_to_cpu(cqe.result);
    }
    return cqe.status;
}

uint8_t hca_simple(Hca *h, uint8_t opcode, uint32_t handle,
                   uint32_t *result)
{
    struct shca_aq_entry cmd = { .opcode = opcode };

    cmd.handle.handle = cpu_to_le32(handle);
    return hca_cmd(h, &cmd, result);
}

uint8_t hca_create_eq(Hca *h, uint32_t eqn, uint16_t vector,
                      uint8_t log_size, uint64_t addr, uint32_t npages)
{
    struct shca_aq_entry cmd = { .opcode = SHCA_AQ_CREATE_EQ };

    cmd.create_eq.eqn = cpu_to_le32(eqn);
    cmd.create_eq.vector = cpu_to_le16(vector);
    cmd.create_eq.log_size = log_size;
    cmd.create_eq.buf.addr = cpu_to_le64(addr);
    cmd.create_eq.buf.npages = cpu_to_le32(npages);
    cmd.create_eq.buf.page_shift = 12;
    cmd.create_eq.buf.flags = SHCA_BUF_DIRECT;
    return hca_cmd(h, &cmd, NULL);
}

void nic_start(Hca *h, Nic *n)
{
    n->txr = guest_alloc(&h->alloc, 4096);
    n->rxr = guest_alloc(&h->alloc, 4096);
    n->txbuf = guest_alloc(&h->alloc, NIC_TX_BUF);
    n->rxbuf = guest_alloc(&h->alloc, NIC_BUF << NIC_LOG);
    hca_fill(h, n->txr, 0, 4096);
    hca_fill(h, n->rxr, 0, 4096);
    n->tx_tail = n->rx_tail = 0;
    wr(h, SHCA_REG_NIC_TX_BASE_LO, n->txr);
    wr(h, SHCA_REG_NIC_TX_BASE_HI, n->txr >> 32);
    wr(h, SHCA_REG_NIC_TX_LOG_SIZE, NIC_LOG);
    wr(h, SHCA_REG_NIC_RX_BASE_LO, n->rxr);
    wr(h, SHCA_REG_NIC_RX_BASE_HI, n->rxr >> 32);
    wr(h, SHCA_REG_NIC_RX_LOG_SIZE, NIC_LOG);
    wr(h, SHCA_REG_NIC_CTRL, SHCA_NIC_TX_EN | SHCA_NIC_RX_EN);
    wr(h, SHCA_REG_NIC_IRQ, SHCA_NIC_IRQ_EN);
}

void nic_post_rx(Hca *h, Nic *n)
{
    struct shca_nic_rxd rxd = {
        .addr = cpu_to_le64(n->rxbuf + n->rx_tail * NIC_BUF),
        .buf_len = cpu_to_le16(NIC_BUF),
    };

    qtest_memwrite(h->qts, n->rxr + n->rx_tail * sizeof(rxd), &rxd,
                   sizeof(rxd));
    n->rx_tail = (n->rx_tail + 1) & ((1 << NIC_LOG) - 1);
    wr(h, SHCA_REG_NIC_RX_TAIL, n->rx_tail);
}

/* Send a frame; return the descriptor's flags as written back. */
uint8_t nic_send(Hca *h, Nic *n, const void *frame, uint16_t len)
{
    struct shca_nic_txd txd = {
        .addr = cpu_to_le64(n->txbuf),
        .len = cpu_to_le16(len),
    };
    uint64_t slot = n->txr + n->tx_tail * sizeof(txd);

    qtest_memwrite(h->qts, n->txbuf, frame, MIN(len, NIC_TX_BUF));
    qtest_memwrite(h->qts, slot, &txd, sizeof(txd));
    n->tx_tail = (n->tx_tail + 1) & ((1 << NIC_LOG) - 1);
    wr(h, SHCA_REG_NIC_TX_TAIL, n->tx_tail);
    qtest_memread(h->qts, slot, &txd, sizeof(txd));
    return txd.flags;
}

/* Wait (bounded) for RX descriptor i to be done; return its length. */
uint16_t nic_wait_rx(Hca *h, Nic *n, uint32_t i)
{
    struct shca_nic_rxd rxd;

    for (int tries = 0; tries < 500; tries++) {
        qtest_memread(h->qts, n->rxr + i * sizeof(rxd), &rxd, sizeof(rxd));
        if (rxd.flags & SHCA_NIC_DESC_DONE) {
            g_assert_cmpuint(rxd.flags, ==, SHCA_NIC_DESC_DONE);
            return le16_to_cpu(rxd.len);
        }
        g_usleep(10 * 1000);
        qtest_clock_step(h->qts, 1000);
    }
    g_assert_not_reached();
}

/* Write the header checksum of the 20-byte IPv4 header at ip. */
void ipv4_csum(uint8_t *ip)
{
    uint32_t sum = 0;

    stw_be_p(ip + 10, 0);
    for (int i = 0; i < 20; i += 2) {
        sum += lduw_be_p(ip + i);
    }
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    stw_be_p(ip + 10, ~sum);
}

/* Ethernet + IPv4 + UDP to dst_ip:dst_port, padded to 64 bytes. */
size_t make_udp_frame(uint8_t *f, const uint8_t *mac, uint32_t dst_ip,
                      uint16_t dst_port)
{
    memset(f, 0, 64);
    memcpy(f, mac, 6);
    stw_be_p(f + 12, 0x0800);
    f[14] = 0x45;                       /* IPv4, 20-byte header */
    stw_be_p(f + 16, 64 - 14);
    f[22] = 64;                         /* TTL */
    f[23] = 17;                         /* UDP */
    stl_be_p(f + 26, 0x0a000063);       /* 10.0.0.99 */
    stl_be_p(f + 30, dst_ip);
    stw_be_p(f + 34, 4791);
    stw_be_p(f + 36, dst_port);
    stw_be_p(f + 38, 64 - 34);
    ipv4_csum(f + 14);
    return 64;
}

char *dgram_loop_netdev(void)
{
    int port = 20000 + g_random_int_range(0, 40000);

    return g_strdup_printf(",netdev=n0 -netdev dgram,id=n0,"
                           "local.type=inet,local.host=127.0.0.1,"
                           "local.port=%d,remote.type=inet,"
                           "remote.host=127.0.0.1,remote.port=%d",
                           port, port);
}

/* GID index: the IPv4-mapped address ip. */
void rdma_set_gid_ipv4(Rdma *r, uint32_t index, uint32_t ip)
{
    struct shca_aq_entry cmd = { .opcode = SHCA_AQ_SET_GID };

    cmd.set_gid.index = cpu_to_le32(index);
    cmd.set_gid.flags = cpu_to_le32(SHCA_GID_VALID);
    cmd.set_gid.gid[10] = cmd.set_gid.gid[11] = 0xff;
    stl_be_p(cmd.set_gid.gid + 12, ip);
    g_assert_cmpuint(hca_cmd(&r->h, &cmd, NULL), ==, SHCA_AQ_OK);
}

/* Enable the attached device and make a PD, the two EQs and GID 0. */
void rdma_init(Rdma *r)
{
    Hca *h = &r->h;

    hca_enable(h);
    r->db = qpci_iomap(h->dev, SHCA_BAR_DB, NULL);
    g_assert_cmpuint(hca_simple(h, SHCA_AQ_ALLOC_PD, 0, &r->pd), ==,
                     SHCA_AQ_OK);
    r->eq0 = guest_alloc(&h->alloc, 4096);
    r->eq1 = guest_alloc(&h->alloc, 4096);
    hca_fill(h, r->eq0, 0, 4096);
    hca_fill(h, r->eq1, 0, 4096);
    g_assert_cmpuint(hca_create_eq(h, 0, 2, RDMA_EQ_LOG, r->eq0, 1), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(hca_create_eq(h, 1, 3, RDMA_EQ_LOG, r->eq1, 1), ==,
                     SHCA_AQ_OK);
    r->attr = guest_alloc(&h->alloc, 4096);
    /* GID 0: 10.0.0.1, the source of every AV below */
    rdma_set_gid_ipv4(r, 0, 0x0a000001);
}

/* extra: more -device properties and options, as for hca_start() */
void rdma_start_with(Rdma *r, const char *extra)
{
    hca_start(&r->h, extra);
    rdma_init(r);
}

void rdma_start(Rdma *r)
{
    rdma_start_with(r, NULL);
}

/* Event i of an EQ, or type 0 if the device has not written it. */
struct shca_eqe rdma_eqe(Rdma *r, uint64_t eq, unsigned i)
{
    struct shca_eqe eqe;

    qtest_memread(r->h.qts, eq + i * sizeof(eqe), &eqe, sizeof(eqe));
    if (!(eqe.phase & SHCA_PHASE_BIT)) {
        eqe.type = 0;
    }
    return eqe;
}

void rdma_db(Rdma *r, uint32_t page, uint32_t offset, uint32_t val)
{
    qpci_io_writel(r->h.dev, r->db, page * SHCA_DB_PAGE_SIZE + offset, val);
}

/*
 * All of the descriptor: a reserved field left as the stack had it would
 * be BAD_PARAM.
 */
void buf_direct(struct shca_buf_desc *d, uint64_t addr,
                uint32_t npages)
{
    *d = (struct shca_buf_desc) {
        .addr = cpu_to_le64(addr),
        .npages = cpu_to_le32(npages),
        .page_shift = 12,
        .flags = SHCA_BUF_DIRECT,
    };
}

uint8_t rdma_create_cq(Rdma *r, uint32_t uctx, uint32_t eqn,
                       uint8_t log_size, uint64_t addr,
                       uint32_t npages, uint32_t *cqn)
{
    struct shca_aq_entry cmd = { .opcode = SHCA_AQ_CREATE_CQ };

    cmd.create_cq.uctx = cpu_to_le32(uctx);
    cmd.create_cq.eqn = cpu_to_le32(eqn);
    cmd.create_cq.log_size = log_size;
    buf_direct(&cmd.create_cq.buf, addr, npages);
    return hca_cmd(&r->h, &cmd, cqn);
}

/* A CQ of 2^log_size entries in fresh, zeroed pages. */
uint32_t rdma_cq(Rdma *r, uint32_t uctx, uint8_t log_size,
                 uint64_t *addr)
{
    uint32_t npages = ((SHCA_CQE_SIZE << log_size) + 8 + 4095) / 4096;
    uint32_t cqn;

    *addr = guest_alloc(&r->h.alloc, npages * 4096);
    hca_fill(&r->h, *addr, 0, npages * 4096);
    g_assert_cmpuint(rdma_create_cq(r, uctx, 1, log_size, *addr, npages,
                                    &cqn), ==, SHCA_AQ_OK);
    return cqn;
}

/* A new PD of the context uctx, or 0 if the device refuses one. */
uint32_t rdma_user_pd(Rdma *r, uint32_t uctx)
{
    uint32_t pdn = 0;

    hca_simple(&r->h, SHCA_AQ_ALLOC_PD, uctx, &pdn);
    return pdn;
}

/* CREATE_QP of the context uctx, with the kernel's PD or a new one of uctx */
void rdma_qp_cmd(Rdma *r, struct shca_aq_entry *cmd, uint32_t uctx,
                 uint8_t type, uint32_t scq, uint32_t rcq,
                 uint64_t sq, uint64_t rq)
{
    struct shca_aq_create_qp *c = &cmd->create_qp;

    *cmd = (struct shca_aq_entry) { .opcode = SHCA_AQ_CREATE_QP };
    c->uctx = cpu_to_le32(uctx);
    c->pdn = cpu_to_le32(uctx ? rdma_user_pd(r, uctx) : r->pd);
    c->send_cqn = cpu_to_le32(scq);
    c->recv_cqn = cpu_to_le32(rcq);
    c->type = type;
    c->sq_log_size = 4;
    c->sq_wqe_shift = 6;
    buf_direct(&c->sq, sq, 1);
    if (rq) {
        c->rq_log_size = 4;
        c->rq_wqe_shift = 5;
        buf_direct(&c->rq, rq, 1);
    }
}

uint8_t rdma_modify(Rdma *r, uint32_t qpn, uint32_t mask,
                    const struct shca_qp_attr *a)
{
    struct shca_aq_entry cmd = { .opcode = SHCA_AQ_MODIFY_QP };

    qtest_memwrite(r->h.qts, r->attr, a, sizeof(*a));
    cmd.qp_attr.qpn = cpu_to_le32(qpn);
    cmd.qp_attr.attr_mask = cpu_to_le32(mask);
    cmd.qp_attr.attr_addr = cpu_to_le64(r->attr);
    return hca_cmd(&r->h, &cmd, NULL);
}

uint8_t rdma_query(Rdma *r, uint32_t qpn, struct shca_qp_attr *a)
{
    struct shca_aq_entry cmd = { .opcode = SHCA_AQ_QUERY_QP };
    uint8_t status;

    hca_fill(&r->h, r->attr, 0xee, sizeof(*a));
    cmd.qp_attr.qpn = cpu_to_le32(qpn);
    cmd.qp_attr.attr_addr = cpu_to_le64(r->attr);
    status = hca_cmd(&r->h, &cmd, NULL);
    qtest_memread(r->h.qts, r->attr, a, sizeof(*a));
    return status;
}

uint8_t rdma_state(Rdma *r, uint32_t qpn)
{
    struct shca_qp_attr a;

    g_assert_cmpuint(rdma_query(r, qpn, &a), ==, SHCA_AQ_OK);
    return a.state;
}

/* The attributes of the RC path RESET -> INIT -> RTR -> RTS. */

struct shca_qp_attr rc_attr(uint8_t state)
{
    struct shca_qp_attr a = {
        .state = state,
        .path_mtu = 3,
        .timeout = 14,
        .retry_cnt = 7,
        .rnr_retry = 6,
        .min_rnr_timer = 12,
        .max_rd_atomic = 4,
        .max_dest_rd_atomic = 8,
        .dest_qpn = cpu_to_le32(0x123456),
        .rq_psn = cpu_to_le32(0xabcdef),
        .sq_psn = cpu_to_le32(0x000100),
        .access = cpu_to_le32(SHCA_ACCESS_REMOTE_WRITE |
                              SHCA_ACCESS_REMOTE_READ),
        .av.hop_limit = 64,
        .av.flow_label = cpu_to_le32(0x12345),
        .av.udp_sport = cpu_to_le16(0xc000),
    };

    memcpy(a.av.dmac, "\x52\x54\x00\x12\x34\x99", 6);
    a.av.dgid[10] = a.av.dgid[11] = 0xff;
    stl_be_p(a.av.dgid + 12, 0x0a000002);
    return a;
}

/* Write send WQE (or receive WQE) index i of a 2^4-entry queue. */
void rdma_post_send(Rdma *r, uint64_t sq, uint16_t i, uint64_t wr_id)
{
    struct shca_send_wqe w = {
        .wr_id = cpu_to_le64(wr_id),
        .opcode = SHCA_WR_SEND,
        .flags = SHCA_WQE_SIGNALED,
    };

    qtest_memwrite(r->h.qts, sq + (i & 15) * 64, &w, sizeof(w));
}

void rdma_post_recv(Rdma *r, uint64_t rq, uint16_t i, uint64_t wr_id)
{
    struct shca_recv_wqe w = { .wr_id = cpu_to_le64(wr_id) };

    qtest_memwrite(r->h.qts, rq + (i & 15) * 32, &w, sizeof(w));
}

struct shca_cqe rdma_cqe(Rdma *r, uint64_t cq, unsigned slot)
{
    struct shca_cqe cqe;

    qtest_memread(r->h.qts, cq + slot * sizeof(cqe), &cqe, sizeof(cqe));
    return cqe;
}

uint8_t rdma_reg_mr(Rdma *r, uint32_t access, uint64_t iova,
                    uint64_t length, uint32_t first_offset,
                    const struct shca_buf_desc *pages, uint32_t *key)
{
    struct shca_aq_entry cmd = { .opcode = SHCA_AQ_REG_MR };

    cmd.reg_mr.pdn = cpu_to_le32(r->pd);
    cmd.reg_mr.access = cpu_to_le32(access);
    cmd.reg_mr.iova = cpu_to_le64(iova);
    cmd.reg_mr.length = cpu_to_le64(length);
    cmd.reg_mr.first_offset = cpu_to_le32(first_offset);
    if (pages) {
        cmd.reg_mr.pages = *pages;
    }
    return hca_cmd(&r->h, &cmd, key);
}

uint32_t loop_sq_size(const Loop *l)
{
    return 1u << (12 - l->sq_shift);
}

/*
 * With SHCA_QP_F_SQ_RECORD in flags, the record is the SQ's second page;
 * with SHCA_QP_F_SRQ the QP receives through SRQ srqn and has no RQ.
 */
void loop_create(Rdma *r, Loop *l, uint8_t type, uint8_t sq_shift,
                 uint8_t flags, uint32_t srqn)
{
    struct shca_aq_entry cmd;

    memset(l, 0, sizeof(*l));
    l->type = type;
    l->access = SHCA_ACCESS_REMOTE_WRITE;
    l->sq_shift = sq_shift;
    stl_le_p(l->mac, rd(&r->h, SHCA_REG_MAC_LO));
    stw_le_p(l->mac + 4, rd(&r->h, SHCA_REG_MAC_HI));
    l->scq = rdma_cq(r, 0, LOOP_CQ_LOG, &l->scqbuf);
    l->rcq = rdma_cq(r, 0, LOOP_CQ_LOG, &l->rcqbuf);
    l->sq = guest_alloc(&r->h.alloc, flags ? 8192 : 4096);
    l->rq = guest_alloc(&r->h.alloc, 4096);
    rdma_qp_cmd(r, &cmd, 0, type, l->scq, l->rcq, l->sq,
                flags & SHCA_QP_F_SRQ ? 0 : l->rq);
    cmd.create_qp.sq_log_size = 12 - sq_shift;
    cmd.create_qp.sq_wqe_shift = sq_shift;
    cmd.create_qp.flags = flags;
    cmd.create_qp.srqn = cpu_to_le16(srqn);
    if (flags & SHCA_QP_F_SQ_RECORD) {
        buf_direct(&cmd.create_qp.sq, l->sq, 2);
    }
    g_assert_cmpuint(hca_cmd(&r->h, &cmd, &l->qpn), ==, SHCA_AQ_OK);
    /* one MR over all of RAM: SGE addresses are guest-physical */
    g_assert_cmpuint(rdma_reg_mr(r, SHCA_ACCESS_PHYS | SHCA_ACCESS_LOCAL_WRITE,
                                 0, RAM_TOP, 0, NULL, &l->key), ==,
                     SHCA_AQ_OK);
}

void loop_start(Rdma *r, Loop *l, uint8_t type, uint8_t sq_shift)
{
    loop_create(r, l, type, sq_shift, 0, 0);
}

/* The NIC function with two RX buffers, for tests that use its rings. */
void loop_nic(Rdma *r, Nic *n)
{
    nic_start(&r->h, n);
    nic_post_rx(&r->h, n);
    nic_post_rx(&r->h, n);
}

/* INIT -> RTR -> RTS with attributes a (RTR's; the state is set here). */
static void loop_rtr_rts(Rdma *r, Loop *l, struct shca_qp_attr *a)
{
    bool rc = l->type == SHCA_QPT_RC;

    a->state = SHCA_QPS_RTR;
    a->access = cpu_to_le32(l->access);
    g_assert_cmpuint(rdma_modify(r, l->qpn, rc ? RC_RTR_MASK : UC_RTR_MASK,
                                 a), ==, SHCA_AQ_OK);
    a->state = SHCA_QPS_RTS;
    g_assert_cmpuint(rdma_modify(r, l->qpn, rc ? RC_RTS_MASK :
                                 SHCA_QP_ATTR_STATE | SHCA_QP_ATTR_SQ_PSN,
                                 a), ==, SHCA_AQ_OK);
}

/* INIT -> RTR -> RTS, to the QP dest of this port (itself or another). */
static void loop_connect_rts_to(Rdma *r, Loop *l, uint32_t dest)
{
    struct shca_qp_attr a = rc_attr(SHCA_QPS_RTR);

    a.dest_qpn = cpu_to_le32(dest);
    a.sq_psn = a.rq_psn;        /* the PSN its peer, or itself, expects */
    a.timeout = 8;              /* 1 ms: retransmit soon under faults */
    a.av.dgid[10] = a.av.dgid[11] = 0xff;
    stl_be_p(a.av.dgid + 12, 0x0a000001);
    memcpy(a.av.dmac, l->mac, 6);
    loop_rtr_rts(r, l, &a);
}

/* INIT -> RTR -> RTS, to itself. */
void loop_connect_rts(Rdma *r, Loop *l)
{
    loop_connect_rts_to(r, l, l->qpn);
}

/*
 * RESET -> INIT -> RTR -> RTS to the peer rc_attr() names (10.0.0.2, its
 * QPN and PSNs), with the rights l->access.
 */
void loop_connect_peer(Rdma *r, Loop *l)
{
    struct shca_qp_attr a = rc_attr(SHCA_QPS_RTR);

    loop_connect(r, l, true);
    loop_rtr_rts(r, l, &a);
}

/* RESET (if it is not) -> INIT, and -> RTR -> RTS to itself unless init. */
void loop_connect(Rdma *r, Loop *l, bool init)
{
    struct shca_qp_attr a = rc_attr(SHCA_QPS_RESET);

    g_assert_cmpuint(rdma_modify(r, l->qpn, SHCA_QP_ATTR_STATE, &a), ==,
                     SHCA_AQ_OK);
    a = rc_attr(SHCA_QPS_INIT);
    a.access = cpu_to_le32(l->access);
    g_assert_cmpuint(rdma_modify(r, l->qpn, RC_INIT_MASK, &a), ==,
                     SHCA_AQ_OK);
    if (!init) {
        loop_connect_rts(r, l);
    }
}

/* Write send WQE i: the header, then tail (SGEs or inline data). */
void loop_write_send(Rdma *r, Loop *l, uint16_t i,
                     const struct shca_send_wqe *w, const void *tail,
                     size_t tail_len)
{
    uint64_t slot = l->sq + ((uint64_t)(i & (loop_sq_size(l) - 1)) <<
                             l->sq_shift);

    g_assert_cmpuint(sizeof(*w) + tail_len, <=, 1u << l->sq_shift);
    hca_fill(&r->h, slot, 0, 1u << l->sq_shift);
    qtest_memwrite(r->h.qts, slot, w, sizeof(*w));
    if (tail_len) {
        qtest_memwrite(r->h.qts, slot + sizeof(*w), tail, tail_len);
    }
}

/* A signaled SEND of len bytes at addr (none if len is 0). */
void loop_send(Rdma *r, Loop *l, uint16_t i, uint64_t wr_id,
               uint64_t addr, uint32_t len, uint8_t flags)
{
    struct shca_send_wqe w = {
        .wr_id = cpu_to_le64(wr_id),
        .opcode = SHCA_WR_SEND,
        .flags = flags,
        .num_sge = len ? 1 : 0,
    };
    struct shca_sge sge = {
        .addr = cpu_to_le64(addr),
        .length = cpu_to_le32(len),
        .lkey = cpu_to_le32(l->key),
    };

    loop_write_send(r, l, i, &w, &sge, len ? sizeof(sge) : 0);
}

void loop_recv(Rdma *r, Loop *l, uint16_t i, uint64_t wr_id,
               uint64_t addr, uint32_t len)
{
    struct shca_recv_wqe w = { .wr_id = cpu_to_le64(wr_id), .num_sge = 1 };
    struct shca_sge sge = {
        .addr = cpu_to_le64(addr),
        .length = cpu_to_le32(len),
        .lkey = cpu_to_le32(l->key),
    };
    uint64_t slot = l->rq + ((uint64_t)(i & 15) << LOOP_RQ_SHIFT);

    qtest_memwrite(r->h.qts, slot, &w, sizeof(w));
    qtest_memwrite(r->h.qts, slot + sizeof(w), &sge, sizeof(sge));
}

/*
 * Whether CQE n of a CQ of 2^log CQEs is there, by the phase rule, and if
 * so the CQE in *cqe (when not NULL); never waits.
 */
bool rdma_cqe_ready(Rdma *r, uint64_t cqbuf, uint8_t log, uint32_t n,
                    struct shca_cqe *cqe)
{
    const uint32_t size = 1u << log;
    uint8_t phase = (n / size) & 1 ? 0 : SHCA_PHASE_BIT;
    struct shca_cqe c = rdma_cqe(r, cqbuf, n % size);

    if ((c.phase & SHCA_PHASE_BIT) != phase) {
        return false;
    }
    if (cqe) {
        *cqe = c;
    }
    return true;
}

/* Tell the device that n CQEs of a CQ of 2^log CQEs are consumed. */
void rdma_cq_consumed(Rdma *r, uint64_t cqbuf, uint8_t log, uint32_t n)
{
    struct shca_cq_record rec = { .ci = cpu_to_le32(n) };

    qtest_memwrite(r->h.qts, cqbuf + ((uint64_t)SHCA_CQE_SIZE << log), &rec,
                   sizeof(rec));
}

/* Whether CQE n of a loop QP's CQ is there, by the phase rule. */
bool loop_cqe_ready(Rdma *r, uint64_t cqbuf, uint32_t n)
{
    return rdma_cqe_ready(r, cqbuf, LOOP_CQ_LOG, n, NULL);
}

/*
 * Wait (bounded, moving the VM clock for retransmissions) for CQE n of a
 * CQ, by the phase rule, and tell the device it is consumed.
 */
struct shca_cqe loop_wait_cqe(Rdma *r, uint64_t cqbuf, uint32_t n)
{
    struct shca_cqe cqe;

    for (int tries = 0; tries < 1000; tries++) {
        if (rdma_cqe_ready(r, cqbuf, LOOP_CQ_LOG, n, &cqe)) {
            rdma_cq_consumed(r, cqbuf, LOOP_CQ_LOG, n + 1);
            return cqe;
        }
        g_usleep(5 * 1000);
        qtest_clock_step(r->h.qts, 200 * 1000);
    }
    g_assert_not_reached();
}

struct shca_cqe loop_send_cqe(Rdma *r, Loop *l)
{
    return loop_wait_cqe(r, l->scqbuf, l->scq_n++);
}

struct shca_cqe loop_recv_cqe(Rdma *r, Loop *l)
{
    return loop_wait_cqe(r, l->rcqbuf, l->rcq_n++);
}

/*
 * n UD SENDs of sge to QP dest_qpn (Q_Key UD_QKEY) through av, written at
 * once to the SQ of u (2^sq_log slots) from slot 0: the last is signaled.
 */
void ud_write_sends(Rdma *r, const Ud *u, uint8_t sq_log, unsigned n,
                    uint32_t dest_qpn, const struct shca_av *av,
                    const struct shca_sge *sge)
{
    const size_t slot = 1u << UD_SQ_SHIFT;
    g_autofree uint8_t *sq = g_malloc0(slot << sq_log);
    struct shca_send_wqe w = {
        .opcode = SHCA_WR_SEND,
        .num_sge = 1,
        .remote_qkey = cpu_to_le32(UD_QKEY),
        .remote_qpn = cpu_to_le32(dest_qpn),
    };

    g_assert_cmpuint(n, <=, 1u << sq_log);
    for (unsigned i = 0; i < n; i++) {
        uint8_t *p = sq + i * slot;

        w.wr_id = cpu_to_le64(i);
        w.flags = i == n - 1 ? SHCA_WQE_SIGNALED : 0;
        memcpy(p, &w, sizeof(w));
        memcpy(p + sizeof(w), av, sizeof(*av));
        memcpy(p + sizeof(w) + sizeof(*av), sge, sizeof(*sge));
    }
    qtest_memwrite(r->h.qts, u->sq, sq, slot << sq_log);
}

/* A UD or GSI QP of the kernel with 2^sq_log send WQEs, in RTS. */
void ud_start_sq(Rdma *r, Ud *u, uint8_t type, uint32_t qkey,
                 uint8_t sq_log)
{
    uint32_t sq_pages = MAX(1, (1u << (sq_log + UD_SQ_SHIFT)) / 4096);
    struct shca_qp_attr a = {
        .state = SHCA_QPS_INIT,
        .qkey = cpu_to_le32(qkey),
    };
    struct shca_aq_entry cmd;

    memset(u, 0, sizeof(*u));
    u->scq = rdma_cq(r, 0, LOOP_CQ_LOG, &u->scqbuf);
    u->rcq = rdma_cq(r, 0, LOOP_CQ_LOG, &u->rcqbuf);
    u->sq = guest_alloc(&r->h.alloc, sq_pages * 4096);
    u->rq = guest_alloc(&r->h.alloc, 4096);
    rdma_qp_cmd(r, &cmd, 0, type, u->scq, u->rcq, u->sq, u->rq);
    cmd.create_qp.sq_log_size = sq_log;
    cmd.create_qp.sq_wqe_shift = UD_SQ_SHIFT;
    buf_direct(&cmd.create_qp.sq, u->sq, sq_pages);
    g_assert_cmpuint(hca_cmd(&r->h, &cmd, &u->qpn), ==, SHCA_AQ_OK);
    g_assert_cmpuint(rdma_modify(r, u->qpn, SHCA_QP_ATTR_STATE |
                                 SHCA_QP_ATTR_QKEY, &a), ==, SHCA_AQ_OK);
    a.state = SHCA_QPS_RTR;
    g_assert_cmpuint(rdma_modify(r, u->qpn, SHCA_QP_ATTR_STATE, &a), ==,
                     SHCA_AQ_OK);
    a.state = SHCA_QPS_RTS;
    a.sq_psn = cpu_to_le32(0xfffffe);   /* wraps after two sends */
    g_assert_cmpuint(rdma_modify(r, u->qpn, SHCA_QP_ATTR_STATE |
                                 SHCA_QP_ATTR_SQ_PSN, &a), ==, SHCA_AQ_OK);
}

/* A UD or GSI QP of the kernel with a one-page SQ, in RTS with Q_Key qkey. */
void ud_start(Rdma *r, Ud *u, uint8_t type, uint32_t qkey)
{
    ud_start_sq(r, u, type, qkey, 12 - UD_SQ_SHIFT);
}

/*
 * Post send WQE w (then tail) and a good SEND behind it to a QP in RTS:
 * the first completes with status, the QP goes to ERR and the second is
 * flushed.
 */
void check_bad_send(Rdma *r, Loop *l, const struct shca_send_wqe *w,
                    const void *tail, size_t tail_len, uint8_t status)
{
    struct shca_cqe cqe;

    loop_connect(r, l, false);
    loop_write_send(r, l, 0, w, tail, tail_len);
    loop_send(r, l, 1, 0xf1, 0, 0, SHCA_WQE_SIGNALED);
    rdma_db(r, 0, SHCA_DB_SQ, 2 << 16 | l->qpn);
    cqe = loop_send_cqe(r, l);
    g_assert_cmpuint(cqe.status, ==, status);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, le64_to_cpu(w->wr_id));
    g_assert_cmpuint(le16_to_cpu(cqe.wqe_index), ==, 0);
    g_assert_cmpuint(cqe.opcode & SHCA_CQE_OP_RECV, ==, 0);
    cqe = loop_send_cqe(r, l);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_WR_FLUSH_ERR);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0xf1);
    g_assert_cmpuint(le16_to_cpu(cqe.wqe_index), ==, 1);
    g_assert_cmpuint(rdma_state(r, l->qpn), ==, SHCA_QPS_ERR);
    g_assert_cmphex(rd(&r->h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
}

/* --- shared by several test files --------------------------------------- */

void wire_open(Wire *w)
{
    struct sockaddr_in a = {
        .sin_family = AF_INET,
        .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
    };
    int rcvbuf = 4 << 20;

    w->fd = socket(AF_INET, SOCK_DGRAM, 0);
    g_assert_cmpint(w->fd, >=, 0);
    /*
     * A requester sends up to 128 frames in one go: with the host's default
     * buffer (208 KiB) a test that reads them a little late, on a busy
     * host, lost a third of them.  (The kernel caps SO_RCVBUF at
     * rmem_max; root, as make test runs, may go past it.)
     */
    if (setsockopt(w->fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
                   sizeof(rcvbuf))) {
        /* without CAP_NET_ADMIN: as much of it as rmem_max allows */
        setsockopt(w->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
    }
    g_assert_cmpint(bind(w->fd, (struct sockaddr *)&a, sizeof(a)), ==, 0);
    w->netdev = NULL;
    wire_netdev_again(w);
}

/* The next frame off the wire within wait_ms: its length, or 0 for none. */
/*
 * The device's -netdev options: a port of its own, the wire's socket at
 * the far end.  Again for a second QEMU (one to migrate to).
 */
void wire_netdev_again(Wire *w)
{
    struct sockaddr_in a;
    socklen_t len = sizeof(a);

    g_assert_cmpint(getsockname(w->fd, (struct sockaddr *)&a, &len), ==, 0);
    g_free(w->netdev);
    w->dev_port = 20000 + g_random_int_range(0, 40000);
    w->netdev = g_strdup_printf(",netdev=n0 -netdev dgram,id=n0,"
                                "local.type=inet,local.host=127.0.0.1,"
                                "local.port=%d,remote.type=inet,"
                                "remote.host=127.0.0.1,remote.port=%d",
                                w->dev_port, ntohs(a.sin_port));
}

size_t wire_recv(Wire *w, uint8_t *buf, size_t size, int wait_ms)
{
    struct pollfd pfd = { .fd = w->fd, .events = POLLIN };
    ssize_t n;

    if (poll(&pfd, 1, wait_ms) != 1) {
        return 0;
    }
    n = recv(w->fd, buf, size, 0);
    g_assert_cmpint(n, >, 0);
    return n;
}

void wire_send(Wire *w, const void *frame, size_t len)
{
    struct sockaddr_in a = {
        .sin_family = AF_INET,
        .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
        .sin_port = htons(w->dev_port),
    };

    g_assert_cmpint(sendto(w->fd, frame, len, 0, (struct sockaddr *)&a,
                           sizeof(a)), ==, len);
}

void wire_close(Wire *w)
{
    close(w->fd);
    g_free(w->netdev);
}

void rdma_stats(Rdma *r, uint64_t *stats)
{
    struct shca_aq_entry cmd = { .opcode = SHCA_AQ_QUERY_STATS };
    uint64_t buf = guest_alloc(&r->h.alloc, 4096);

    cmd.query_stats.addr = cpu_to_le64(buf);
    g_assert_cmpuint(hca_cmd(&r->h, &cmd, NULL), ==, SHCA_AQ_OK);
    for (int i = 0; i < SHCA_STAT_COUNT; i++) {
        stats[i] = qtest_readq(r->h.qts, buf + 8 * i);
    }
    guest_free(&r->h.alloc, buf);
}

/* The AV of the port itself (ip: unicast GID 0, or a multicast group). */
struct shca_av ud_av(Rdma *r, uint32_t ip)
{
    struct shca_av av = { .hop_limit = 64 };

    av.dgid[10] = av.dgid[11] = 0xff;
    stl_be_p(av.dgid + 12, ip);
    if (ip == UD_IP) {
        stl_le_p(av.dmac, rd(&r->h, SHCA_REG_MAC_LO));
        stw_le_p(av.dmac + 4, rd(&r->h, SHCA_REG_MAC_HI));
    } else {
        memcpy(av.dmac, "\x01\x00\x5e\x00\x00\x05", 6);
    }
    return av;
}

/* Post and ring UD send WQE i: header w, then av, then one SGE. */
void ud_send(Rdma *r, Ud *u, uint16_t i, struct shca_send_wqe *w,
             const struct shca_av *av, uint64_t addr, uint32_t len,
             uint32_t key)
{
    uint64_t slot = u->sq + ((uint64_t)(i % UD_SQ_SIZE) << UD_SQ_SHIFT);
    struct shca_sge sge = {
        .addr = cpu_to_le64(addr),
        .length = cpu_to_le32(len),
        .lkey = cpu_to_le32(key),
    };

    w->num_sge = 1;
    qtest_memwrite(r->h.qts, slot, w, sizeof(*w));
    qtest_memwrite(r->h.qts, slot + sizeof(*w), av, sizeof(*av));
    qtest_memwrite(r->h.qts, slot + sizeof(*w) + sizeof(*av), &sge,
                   sizeof(sge));
    rdma_db(r, 0, SHCA_DB_SQ, (uint32_t)(i + 1) << 16 | u->qpn);
}

/* A signaled SEND of len bytes at addr to dqpn with Q_Key qkey. */
void ud_send_simple(Rdma *r, Ud *u, uint16_t i, uint32_t ip,
                    uint32_t dqpn, uint32_t qkey, uint64_t addr,
                    uint32_t len, uint32_t key)
{
    struct shca_send_wqe w = {
        .wr_id = cpu_to_le64(0x5000 + i),
        .opcode = SHCA_WR_SEND,
        .flags = SHCA_WQE_SIGNALED,
        .remote_qpn = cpu_to_le32(dqpn),
        .remote_qkey = cpu_to_le32(qkey),
    };
    struct shca_av av = ud_av(r, ip);

    ud_send(r, u, i, &w, &av, addr, len, key);
}

/* One MR over all of RAM, for the SGEs of the datagram tests. */
uint32_t ud_phys_key(Rdma *r)
{
    uint32_t key;

    g_assert_cmpuint(rdma_reg_mr(r, SHCA_ACCESS_PHYS | SHCA_ACCESS_LOCAL_WRITE,
                                 0, RAM_TOP, 0, NULL, &key), ==, SHCA_AQ_OK);
    return key;
}

/* Wait (bounded) until counter stat reaches want. */
void wait_stat(Rdma *r, unsigned stat, uint64_t want)
{
    uint64_t stats[SHCA_STAT_COUNT];

    for (int tries = 0; tries < 400; tries++) {
        rdma_stats(r, stats);
        if (stats[stat] >= want) {
            g_assert_cmpuint(stats[stat], ==, want);
            return;
        }
        g_usleep(5 * 1000);
        qtest_clock_step(r->h.qts, 1000 * 1000);
    }
    g_assert_not_reached();
}

uint32_t peer_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
    crc = ~crc;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++) {
            crc = crc >> 1 ^ (0xedb88320 & -(crc & 1));
        }
    }
    return ~crc;
}

uint32_t peer_icrc(const uint8_t *f, size_t roce_len)
{
    uint8_t m[8 + 20 + 8 + 12];

    memset(m, 0xff, 8);
    memcpy(m + 8, f + 14, 40);
    m[8 + 1] = 0xff;                    /* TOS */
    m[8 + 8] = 0xff;                    /* TTL */
    memset(m + 8 + 10, 0xff, 2);        /* header checksum */
    memset(m + 8 + 26, 0xff, 2);        /* UDP checksum */
    m[8 + 28 + 4] = 0xff;               /* BTH resv8a */
    return peer_crc32(peer_crc32(0, m, sizeof(m)), f + ROCE_OFF + 12,
                      roce_len - 12);
}

/*
 * Frame f of roce_len bytes of BTH, extended headers and payload (padded
 * to 4 by the caller) at f + ROCE_OFF: the envelope and the ICRC around
 * them (peer_icrc()).
 */
size_t peer_frame_from(uint8_t *f, const uint8_t *dmac,
                       uint32_t src_ip, size_t roce_len)
{
    size_t len = ROCE_OFF + roce_len + 4;

    memcpy(f, dmac, 6);
    memcpy(f + 6, "\x52\x54\x00\x12\x34\x99", 6);
    stw_be_p(f + 12, 0x0800);
    memset(f + 14, 0, 28);
    f[14] = 0x45;
    stw_be_p(f + 16, len - 14);
    stw_be_p(f + 20, 0x4000);           /* DF */
    f[22] = 64;
    f[23] = 17;
    stl_be_p(f + 26, src_ip);
    stl_be_p(f + 30, 0x0a000001);
    stw_be_p(f + 34, 0xc000);
    stw_be_p(f + 36, 4791);
    stw_be_p(f + 38, len - 34);
    ipv4_csum(f + 14);
    stl_le_p(f + ROCE_OFF + roce_len, peer_icrc(f, roce_len));
    return len;
}

size_t peer_frame(uint8_t *f, const uint8_t *dmac, size_t roce_len)
{
    return peer_frame_from(f, dmac, 0x0a000002, roce_len);
}

/* BTH: opcode, no pad, P_Key 0xffff, dest QP, ack request, PSN. */
void peer_bth(uint8_t *b, uint8_t opcode, uint32_t dest_qpn,
              uint32_t psn, bool ack_req)
{
    memset(b, 0, 12);
    b[0] = opcode;
    stw_be_p(b + 2, 0xffff);
    stl_be_p(b + 4, dest_qpn & 0xffffff);
    stl_be_p(b + 8, (ack_req ? 0x80000000u : 0) | (psn & 0xffffff));
}

/*
 * A wire for the peer, a device on it, and an RC QP of the device with the
 * rights access connected to the peer (rc_attr()'s AV, QPN and PSNs).
 */
void peer_start(Wire *w, Rdma *r, Loop *l, uint32_t access)
{
    wire_open(w);
    rdma_start_with(r, w->netdev);
    loop_start(r, l, SHCA_QPT_RC, 7);
    l->access = access;
    loop_connect_peer(r, l);
}

/* An ACK from the peer for PSNs up to psn. */
void peer_ack(Wire *w, const uint8_t *dmac, uint32_t qpn, uint32_t psn,
              uint32_t msn)
{
    uint8_t f[128];
    uint8_t *b = f + ROCE_OFF;

    peer_bth(b, 0x11, qpn, psn, false);
    stl_be_p(b + 12, 0x1f000000 | (msn & 0xffffff));    /* ACK, no credits */
    wire_send(w, f, peer_frame(f, dmac, 16));
}

/*
 * Take the requests the device sends the peer until none came for wait_ms
 * (the VM clock moving on meanwhile): how many, and the PSN of the last.
 */
unsigned peer_requests(Rdma *r, Wire *w, int wait_ms,
                       uint32_t *last_psn)
{
    uint8_t f[4200];
    unsigned n = 0;

    /* wait_ms of silence ends it; every frame starts the wait again */
    for (int t = 0; t < wait_ms; t += 10) {
        size_t len = wire_recv(w, f, sizeof(f), 10);

        if (!len) {
            qtest_clock_step(r->h.qts, 100 * 1000);
            continue;
        }
        if (len >= ROCE_OFF + 16 && lduw_be_p(f + 36) == 4791) {
            *last_psn = ldl_be_p(f + ROCE_OFF + 8) & 0xffffff;
            n++;
        }
        t = 0;
    }
    return n;
}

uint8_t srq_create_cmd(Rdma *r, uint32_t uctx, uint32_t pdn,
                       uint8_t log_size, uint32_t limit, uint64_t buf,
                       uint32_t npages, uint32_t *srqn)
{
    struct shca_aq_entry cmd = { .opcode = SHCA_AQ_CREATE_SRQ };

    cmd.create_srq.uctx = cpu_to_le32(uctx);
    cmd.create_srq.pdn = cpu_to_le32(pdn);
    cmd.create_srq.srq_limit = cpu_to_le32(limit);
    cmd.create_srq.log_size = log_size;
    cmd.create_srq.wqe_shift = SRQ_SHIFT;
    buf_direct(&cmd.create_srq.buf, buf, npages);
    return hca_cmd(&r->h, &cmd, srqn);
}

/* CREATE_SRQ of an XRC SRQ of domain xrcdn in PD pdn, completing to cqn */
uint8_t xrc_srq_cmd(Rdma *r, uint32_t pdn, uint32_t xrcdn, uint32_t cqn,
                    uint64_t buf, uint32_t *srqn)
{
    struct shca_aq_entry cmd = { .opcode = SHCA_AQ_CREATE_SRQ };

    cmd.create_srq.pdn = cpu_to_le32(pdn);
    cmd.create_srq.log_size = SRQ_LOG;
    cmd.create_srq.wqe_shift = SRQ_SHIFT;
    cmd.create_srq.flags = SHCA_SRQ_F_XRC;
    buf_direct(&cmd.create_srq.buf, buf, 1);
    cmd.create_srq.xrcdn = cpu_to_le32(xrcdn);
    cmd.create_srq.cqn = cpu_to_le32(cqn);
    return hca_cmd(&r->h, &cmd, srqn);
}

/* An SRQ of the kernel's PD in a fresh page, armed at limit. */
void srq_start(Rdma *r, Srq *q, uint32_t limit)
{
    memset(q, 0, sizeof(*q));
    q->buf = guest_alloc(&r->h.alloc, 4096);
    q->log_size = SRQ_LOG;
    qtest_memset(r->h.qts, q->buf, 0, 4096);
    g_assert_cmpuint(srq_create_cmd(r, 0, r->pd, SRQ_LOG, limit, q->buf, 1,
                                    &q->srqn), ==, SHCA_AQ_OK);
}

/* Post one receive WQE (one SGE of len bytes at addr) and ring for it. */
void srq_post(Rdma *r, Srq *q, uint64_t wr_id, uint64_t addr,
              uint32_t len, uint32_t key)
{
    struct shca_recv_wqe w = { .wr_id = cpu_to_le64(wr_id), .num_sge = 1 };
    struct shca_sge sge = {
        .addr = cpu_to_le64(addr),
        .length = cpu_to_le32(len),
        .lkey = cpu_to_le32(key),
    };
    uint64_t slot = q->buf + ((uint64_t)(q->pi & ((1u << q->log_size) - 1))
                              << SRQ_SHIFT);

    qtest_memwrite(r->h.qts, slot, &w, sizeof(w));
    qtest_memwrite(r->h.qts, slot + sizeof(w), &sge, sizeof(sge));
    q->pi++;
    rdma_db(r, 0, SHCA_DB_SRQ, (uint32_t)q->pi << 16 | q->srqn);
}

/*
 * An SRQ with limit, an RC QP l that talks to itself and receives through
 * it, and three WQEs of 256 bytes posted from *rx (wr_id 0x500..0x502);
 * *tx holds "shared receive queue" (20 bytes) to send.
 */
void srq_rc_start(Rdma *r, Srq *q, Loop *l, uint32_t limit, uint64_t *tx,
                  uint64_t *rx)
{
    srq_start(r, q, limit);
    loop_create(r, l, SHCA_QPT_RC, 7, SHCA_QP_F_SRQ, q->srqn);
    loop_connect(r, l, false);
    *tx = guest_alloc(&r->h.alloc, 4096);
    *rx = guest_alloc(&r->h.alloc, 4096);
    qtest_memwrite(r->h.qts, *tx, "shared receive queue", 20);
    for (int i = 0; i < 3; i++) {
        srq_post(r, q, 0x500 + i, *rx + i * 256, 256, l->key);
    }
}

/* The device's consumer count in the record behind the ring. */
uint32_t srq_record_ci(Rdma *r, Srq *q)
{
    return qtest_readl(r->h.qts, q->buf + ((1u << q->log_size) << SRQ_SHIFT));
}

uint8_t srq_modify(Rdma *r, Srq *q, uint32_t mask, uint32_t limit,
                   uint8_t log_size, uint64_t buf, uint32_t npages)
{
    struct shca_aq_entry cmd = { .opcode = SHCA_AQ_MODIFY_SRQ };

    cmd.modify_srq.srqn = cpu_to_le32(q->srqn);
    cmd.modify_srq.attr_mask = cpu_to_le32(mask);
    cmd.modify_srq.srq_limit = cpu_to_le32(limit);
    if (mask & SHCA_SRQ_ATTR_MAX_WR) {
        cmd.modify_srq.log_size = log_size;
        buf_direct(&cmd.modify_srq.buf, buf, npages);
    }
    return hca_cmd(&r->h, &cmd, NULL);
}

void check_srq_recv(struct shca_cqe cqe, uint64_t wr_id, uint16_t slot,
                    uint32_t len, uint32_t qpn)
{
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    g_assert_cmphex(cqe.opcode, ==, SHCA_CQE_OP_RECV);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, wr_id);
    g_assert_cmpuint(le16_to_cpu(cqe.wqe_index), ==, slot);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, len);
    g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, qpn);
}

/* WQE i: opcode through rkey at raddr, len bytes from src (none: 0). */
void loop_post_op(Rdma *r, Loop *l, uint16_t i, uint8_t opcode,
                  uint32_t rkey, uint64_t raddr, uint64_t src,
                  uint32_t len)
{
    struct shca_send_wqe w = {
        .wr_id = cpu_to_le64(0xf000 + i),
        .opcode = opcode,
        .flags = SHCA_WQE_SIGNALED,
        .num_sge = 1,
        .remote_addr = cpu_to_le64(raddr),
        .rkey = cpu_to_le32(rkey),
        .imm = cpu_to_le32(rkey),       /* LOCAL_INV, SEND_INV */
    };
    struct shca_sge sge = {
        .addr = cpu_to_le64(src),
        .length = cpu_to_le32(len),
        .lkey = cpu_to_le32(l->key),
    };

    if (opcode == SHCA_WR_LOCAL_INV) {
        w.num_sge = 0;
    }
    loop_write_send(r, l, i, &w, &sge, w.num_sge ? sizeof(sge) : 0);
}

/* RESET -> INIT -> RTR -> RTS, a to b and b to a, each with its access. */
void loop_pair(Rdma *r, Loop *a, Loop *b)
{
    loop_connect(r, a, true);
    loop_connect(r, b, true);
    loop_connect_rts_to(r, a, b->qpn);
    loop_connect_rts_to(r, b, a->qpn);
}

/* A signaled ATOMIC_WRITE of val, or a FLUSH (feth, len), WQE i. */
void awf_post(Rdma *r, Loop *l, uint16_t i, uint8_t opcode,
              uint32_t rkey, uint64_t raddr, uint64_t val_or_len,
              uint8_t feth)
{
    struct shca_send_wqe w = {
        .wr_id = cpu_to_le64(0xf000 + i),
        .opcode = opcode,
        .flags = SHCA_WQE_SIGNALED,
        .feth = feth,
        .remote_addr = cpu_to_le64(raddr),
        .rkey = cpu_to_le32(rkey),
        .compare_add = cpu_to_le64(val_or_len),
    };

    loop_write_send(r, l, i, &w, NULL, 0);
}

/* XRC QPs (spec §13.7): INIT -> RTR -> RTS to QP dest of this port. */
void xrc_connect(Rdma *r, uint32_t qpn, uint32_t dest)
{
    struct shca_qp_attr a = rc_attr(SHCA_QPS_INIT);

    a.access = cpu_to_le32(SHCA_ACCESS_REMOTE_WRITE);
    g_assert_cmpuint(rdma_modify(r, qpn, RC_INIT_MASK, &a), ==, SHCA_AQ_OK);
    a = rc_attr(SHCA_QPS_RTR);
    a.dest_qpn = cpu_to_le32(dest);
    a.sq_psn = a.rq_psn;
    a.timeout = 8;
    a.av.dgid[10] = a.av.dgid[11] = 0xff;
    stl_be_p(a.av.dgid + 12, 0x0a000001);
    stl_le_p(a.av.dmac, rd(&r->h, SHCA_REG_MAC_LO));
    stw_le_p(a.av.dmac + 4, rd(&r->h, SHCA_REG_MAC_HI));
    g_assert_cmpuint(rdma_modify(r, qpn, RC_RTR_MASK, &a), ==, SHCA_AQ_OK);
    a.state = SHCA_QPS_RTS;
    g_assert_cmpuint(rdma_modify(r, qpn, RC_RTS_MASK, &a), ==, SHCA_AQ_OK);
}

uint8_t xrc_create_qp(Rdma *r, uint8_t type, uint32_t pdn_or_xrcd,
                             uint32_t cq, uint64_t sq, uint32_t *qpn)
{
    struct shca_aq_entry cmd;

    rdma_qp_cmd(r, &cmd, 0, type, cq, cq, sq, 0);
    cmd.create_qp.pdn = cpu_to_le32(pdn_or_xrcd);
    /* one page of 32 WQEs of 128 bytes, or no SQ at all */
    cmd.create_qp.sq_log_size = sq ? 5 : 0;
    cmd.create_qp.sq_wqe_shift = sq ? 7 : 0;
    if (!sq) {
        memset(&cmd.create_qp.sq, 0, sizeof(cmd.create_qp.sq));
    }
    return hca_cmd(&r->h, &cmd, qpn);
}
