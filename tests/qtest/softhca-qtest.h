/*
 * Helpers for softhca's qtests and fuzzing harnesses: find and enable the
 * device, run admin commands, and build the RDMA objects most tests need.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef SOFTHCA_QTEST_H
#define SOFTHCA_QTEST_H

#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/libqos-malloc.h"
#include "hw/softhca/softhca_hw.h"

#define AQ_LOG      3
#define ACQ_LOG     3
#define RAM_TOP     (128 * 1024 * 1024)     /* -m 128 */

typedef struct Hca {
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;
    QPCIBar bar;
    QGuestAllocator alloc;
    uint64_t aq, acq;
    uint32_t aq_tail, acq_head;
    bool acq_phase;
    uint16_t next_id;
    /*
     * Run the main loop until the device is idle, or NULL where QEMU is
     * another process and does that between qtest commands.  An in-process
     * fuzzing harness sets it: a doorbell's work waits for a BH there.
     */
    void (*settle)(QTestState *qts);
} Hca;

/* NIC rings over a -netdev dgram socket that sends to itself. */
typedef struct Nic {
    uint64_t txr, rxr, txbuf, rxbuf;
    uint32_t tx_tail, rx_tail;
} Nic;

#define NIC_LOG     2
#define NIC_BUF     2048
#define NIC_TX_BUF  4096

/* RDMA objects (spec §13, §14). */
typedef struct Rdma {
    Hca h;
    QPCIBar db;                 /* BAR2: doorbell pages */
    uint32_t pd;
    uint64_t eq0, eq1;          /* EQ 0 (async events), EQ 1 (completions) */
    uint64_t attr;              /* a struct shca_qp_attr for MODIFY/QUERY */
} Rdma;

#define RDMA_EQ_LOG 4

/* The attributes of the RC path RESET -> INIT -> RTR -> RTS. */
#define RC_INIT_MASK (SHCA_QP_ATTR_STATE | SHCA_QP_ATTR_ACCESS)
#define RC_RTR_MASK (SHCA_QP_ATTR_STATE | SHCA_QP_ATTR_AV | \
                     SHCA_QP_ATTR_PATH_MTU | SHCA_QP_ATTR_DEST_QPN | \
                     SHCA_QP_ATTR_RQ_PSN | SHCA_QP_ATTR_MAX_DEST_RD_ATOMIC | \
                     SHCA_QP_ATTR_MIN_RNR_TIMER)
#define RC_RTS_MASK (SHCA_QP_ATTR_STATE | SHCA_QP_ATTR_SQ_PSN | \
                     SHCA_QP_ATTR_TIMEOUT | SHCA_QP_ATTR_RETRY_CNT | \
                     SHCA_QP_ATTR_RNR_RETRY | SHCA_QP_ATTR_MAX_RD_ATOMIC)

/*
 * The data path against guest memory (spec §14, §15), still with no guest:
 * a QP whose AV names its own port (dest QPN its own, dgid GID 0, dmac the
 * port's MAC) talks to itself over a dgram netdev that sends to itself.
 */
typedef struct Loop {
    uint8_t type;
    uint8_t sq_shift;           /* SQ stride; the SQ fills one page */
    uint32_t qpn, scq, rcq, key;
    uint64_t scqbuf, rcqbuf, sq, rq;
    uint32_t scq_n, rcq_n;      /* CQEs taken from each CQ */
    uint32_t access;            /* the QP's rights; REMOTE_WRITE unless set */
    uint8_t mac[6];
} Loop;

#define LOOP_CQ_LOG 4
#define LOOP_RQ_SHIFT 5         /* a receive WQE and one SGE */
#define UC_RTR_MASK (RC_RTR_MASK & ~(SHCA_QP_ATTR_MAX_DEST_RD_ATOMIC | \
                                   SHCA_QP_ATTR_MIN_RNR_TIMER))

/*
 * Datagram QPs (spec §17): UD and GSI QPs of one device talk to each
 * other through the dgram netdev that sends to itself, like the loop QPs.
 */
typedef struct Ud {
    uint32_t qpn, scq, rcq;
    uint64_t scqbuf, rcqbuf, sq, rq;
    uint32_t scq_n, rcq_n;
} Ud;

#define UD_SQ_SHIFT 7           /* header, AV and one SGE */
#define UD_SQ_SIZE  (1u << (12 - UD_SQ_SHIFT))
#define UD_QKEY     0x11223344
#define UD_IP       0x0a000001  /* GID 0 */
#define UD_MCAST_IP 0xe0000005  /* 224.0.0.5 */

uint32_t rd(Hca *h, uint32_t reg);
void wr(Hca *h, uint32_t reg, uint32_t val);
void hca_fill(Hca *h, uint64_t addr, uint8_t pattern, size_t len);
void hca_attach(Hca *h, QTestState *qts);
void hca_start(Hca *h, const char *extra);
void hca_detach(Hca *h);
void hca_stop(Hca *h);
bool hca_take_irq(Hca *h, unsigned vector);
uint64_t hca_prop(Hca *h, const char *name);
bool hca_running(QTestState *qts);
char *hca_migration_status(QTestState *qts);
void hca_migrate(Hca *h, const char *extra);
void hca_config_admin(Hca *h, uint64_t aq, uint32_t aq_log,
                      uint64_t acq, uint32_t acq_log);
void hca_enable(Hca *h);
void hca_post(Hca *h, struct shca_aq_entry *cmd);
bool hca_poll(Hca *h, struct shca_acq_entry *cqe);
uint8_t hca_cmd(Hca *h, struct shca_aq_entry *cmd, uint32_t *result);
uint8_t hca_simple(Hca *h, uint8_t opcode, uint32_t handle,
                   uint32_t *result);
uint8_t hca_create_eq(Hca *h, uint32_t eqn, uint16_t vector,
                      uint8_t log_size, uint64_t addr, uint32_t npages);
void nic_start(Hca *h, Nic *n);
void nic_post_rx(Hca *h, Nic *n);
uint8_t nic_send(Hca *h, Nic *n, const void *frame, uint16_t len);
uint16_t nic_wait_rx(Hca *h, Nic *n, uint32_t i);
void ipv4_csum(uint8_t *ip);
size_t make_udp_frame(uint8_t *f, const uint8_t *mac, uint32_t dst_ip,
                      uint16_t dst_port);
char *dgram_loop_netdev(void);
void rdma_init(Rdma *r);
void rdma_start_with(Rdma *r, const char *extra);
void rdma_start(Rdma *r);
struct shca_eqe rdma_eqe(Rdma *r, uint64_t eq, unsigned i);
void rdma_db(Rdma *r, uint32_t page, uint32_t offset, uint32_t val);
void buf_direct(struct shca_buf_desc *d, uint64_t addr,
                uint32_t npages);
uint8_t rdma_create_cq(Rdma *r, uint32_t uctx, uint32_t eqn,
                       uint8_t log_size, uint64_t addr,
                       uint32_t npages, uint32_t *cqn);
uint32_t rdma_cq(Rdma *r, uint32_t uctx, uint8_t log_size,
                 uint64_t *addr);
uint32_t rdma_user_pd(Rdma *r, uint32_t uctx);
void rdma_qp_cmd(Rdma *r, struct shca_aq_entry *cmd, uint32_t uctx,
                 uint8_t type, uint32_t scq, uint32_t rcq,
                 uint64_t sq, uint64_t rq);
uint8_t rdma_modify(Rdma *r, uint32_t qpn, uint32_t mask,
                    const struct shca_qp_attr *a);
uint8_t rdma_query(Rdma *r, uint32_t qpn, struct shca_qp_attr *a);
uint8_t rdma_state(Rdma *r, uint32_t qpn);
struct shca_qp_attr rc_attr(uint8_t state);
void rdma_post_send(Rdma *r, uint64_t sq, uint16_t i, uint64_t wr_id);
void rdma_post_recv(Rdma *r, uint64_t rq, uint16_t i, uint64_t wr_id);
struct shca_cqe rdma_cqe(Rdma *r, uint64_t cq, unsigned slot);
bool rdma_cqe_ready(Rdma *r, uint64_t cqbuf, uint8_t log, uint32_t n,
                    struct shca_cqe *cqe);
void rdma_cq_consumed(Rdma *r, uint64_t cqbuf, uint8_t log, uint32_t n);
void rdma_set_gid_ipv4(Rdma *r, uint32_t index, uint32_t ip);
uint8_t rdma_reg_mr(Rdma *r, uint32_t access, uint64_t iova,
                    uint64_t length, uint32_t first_offset,
                    const struct shca_buf_desc *pages, uint32_t *key);
uint32_t loop_sq_size(const Loop *l);
void loop_create(Rdma *r, Loop *l, uint8_t type, uint8_t sq_shift,
                 uint8_t flags, uint32_t srqn);
void loop_start(Rdma *r, Loop *l, uint8_t type, uint8_t sq_shift);
void loop_nic(Rdma *r, Nic *n);
void loop_connect_rts(Rdma *r, Loop *l);
void loop_connect(Rdma *r, Loop *l, bool init);
void loop_connect_peer(Rdma *r, Loop *l);
void loop_write_send(Rdma *r, Loop *l, uint16_t i,
                     const struct shca_send_wqe *w, const void *tail,
                     size_t tail_len);
void loop_send(Rdma *r, Loop *l, uint16_t i, uint64_t wr_id,
               uint64_t addr, uint32_t len, uint8_t flags);
void loop_recv(Rdma *r, Loop *l, uint16_t i, uint64_t wr_id,
               uint64_t addr, uint32_t len);
bool loop_cqe_ready(Rdma *r, uint64_t cqbuf, uint32_t n);
struct shca_cqe loop_wait_cqe(Rdma *r, uint64_t cqbuf, uint32_t n);
struct shca_cqe loop_send_cqe(Rdma *r, Loop *l);
struct shca_cqe loop_recv_cqe(Rdma *r, Loop *l);
void check_bad_send(Rdma *r, Loop *l, const struct shca_send_wqe *w,
                    const void *tail, size_t tail_len, uint8_t status);
void ud_start_sq(Rdma *r, Ud *u, uint8_t type, uint32_t qkey,
                 uint8_t sq_log);
void ud_start(Rdma *r, Ud *u, uint8_t type, uint32_t qkey);
void ud_write_sends(Rdma *r, const Ud *u, uint8_t sq_log, unsigned n,
                    uint32_t dest_qpn, const struct shca_av *av,
                    const struct shca_sge *sge);

/* --- shared by several test files --------------------------------------- */

/*
 * The far end of the port's link: a UDP socket of the test's own, so that
 * a test sees what leaves the port and can put frames on the wire.
 */
typedef struct Wire {
    int fd;
    int dev_port;               /* where the device's netdev listens */
    char *netdev;               /* the device's -netdev options */
} Wire;

/*
 * --- a network peer the test plays: RoCEv2 frames from 10.0.0.2, the AV
 * of rc_attr(), built here from IBA's rules rather than the device's code.
 */
#define PEER_QPN    0x123456
#define PEER_PSN    0xabcdef            /* rc_attr()'s rq_psn */
#define ROCE_OFF    42                  /* Ethernet, IPv4, UDP */

#define SRQ_LOG     3           /* 8 WQEs */
#define SRQ_SHIFT   5           /* a receive WQE and one SGE */

typedef struct Srq {
    uint32_t srqn;
    uint64_t buf;               /* the ring, then the record */
    uint8_t log_size;
    uint16_t pi;
} Srq;

void wire_open(Wire *w);
size_t wire_recv(Wire *w, uint8_t *buf, size_t size, int wait_ms);
void wire_send(Wire *w, const void *frame, size_t len);
void wire_netdev_again(Wire *w);
void wire_close(Wire *w);
void rdma_stats(Rdma *r, uint64_t *stats);
struct shca_av ud_av(Rdma *r, uint32_t ip);
void ud_send(Rdma *r, Ud *u, uint16_t i, struct shca_send_wqe *w,
             const struct shca_av *av, uint64_t addr, uint32_t len,
             uint32_t key);
/* A signaled UD SEND, wr_id 0x5000 + i (the UD and SRQ tests) */
void ud_send_simple(Rdma *r, Ud *u, uint16_t i, uint32_t ip,
                    uint32_t dqpn, uint32_t qkey, uint64_t addr,
                    uint32_t len, uint32_t key);
uint32_t ud_phys_key(Rdma *r);
void wait_stat(Rdma *r, unsigned stat, uint64_t want);
uint32_t peer_crc32(uint32_t crc, const uint8_t *p, size_t n);
/*
 * The ICRC of IPv4 frame f with roce_len bytes of BTH, extended headers
 * and padded payload: 8 bytes of 1s, the IP and UDP headers and the BTH
 * with their variant fields set to 1s, then the rest.
 */
uint32_t peer_icrc(const uint8_t *f, size_t roce_len);
size_t peer_frame_from(uint8_t *f, const uint8_t *dmac,
                       uint32_t src_ip, size_t roce_len);
size_t peer_frame(uint8_t *f, const uint8_t *dmac, size_t roce_len);
void peer_bth(uint8_t *b, uint8_t opcode, uint32_t dest_qpn,
              uint32_t psn, bool ack_req);
void peer_start(Wire *w, Rdma *r, Loop *l, uint32_t access);
void peer_ack(Wire *w, const uint8_t *dmac, uint32_t qpn, uint32_t psn,
              uint32_t msn);
unsigned peer_requests(Rdma *r, Wire *w, int wait_ms,
                       uint32_t *last_psn);
uint8_t srq_create_cmd(Rdma *r, uint32_t uctx, uint32_t pdn,
                       uint8_t log_size, uint32_t limit, uint64_t buf,
                       uint32_t npages, uint32_t *srqn);
void srq_start(Rdma *r, Srq *q, uint32_t limit);
void srq_post(Rdma *r, Srq *q, uint64_t wr_id, uint64_t addr,
              uint32_t len, uint32_t key);
uint32_t srq_record_ci(Rdma *r, Srq *q);
uint8_t xrc_srq_cmd(Rdma *r, uint32_t pdn, uint32_t xrcdn, uint32_t cqn,
                    uint64_t buf, uint32_t *srqn);
void srq_rc_start(Rdma *r, Srq *q, Loop *l, uint32_t limit, uint64_t *tx,
                  uint64_t *rx);
uint8_t srq_modify(Rdma *r, Srq *q, uint32_t mask, uint32_t limit,
                   uint8_t log_size, uint64_t buf, uint32_t npages);
void check_srq_recv(struct shca_cqe cqe, uint64_t wr_id, uint16_t slot,
                    uint32_t len, uint32_t qpn);
void loop_post_op(Rdma *r, Loop *l, uint16_t i, uint8_t opcode,
                  uint32_t rkey, uint64_t raddr, uint64_t src,
                  uint32_t len);
void awf_post(Rdma *r, Loop *l, uint16_t i, uint8_t opcode,
              uint32_t rkey, uint64_t raddr, uint64_t val_or_len,
              uint8_t feth);
void loop_pair(Rdma *r, Loop *a, Loop *b);
void xrc_connect(Rdma *r, uint32_t qpn, uint32_t dest);
/* An XRC QP: a send QP with an SQ at sq, or a target (sq 0) of a domain */
uint8_t xrc_create_qp(Rdma *r, uint8_t type, uint32_t pdn_or_xrcd,
                      uint32_t cq, uint64_t sq, uint32_t *qpn);

#endif
