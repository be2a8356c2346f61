// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Bad datagrams between two nodes (spec §17.2).  The server has a UD QP
 * with Q_Key 0x11111111; the client (the side with a HOST argument), from
 * a UD QP of its own, sends it
 *
 *   1. -b datagrams with a wrong Q_Key (0x11111112), tagged 'B';
 *   2. three datagrams to the peer's QP1 (GSI Q_Key) that are not MADs:
 *      100 bytes, 256 bytes of base version 0x7f, 300 bytes;
 *   3. with -r IFACE (IPv4 GIDs), hand-built RoCEv2 frames sent through
 *      an AF_PACKET socket on IFACE, the RDMA port's netdev: datagrams
 *      for the server's QP with a bad IPv4 header checksum, a bad IPv4
 *      total length and a bad ICRC, tagged 'R', then one that is right in
 *      every byte, tagged 'P' (it shows the others fail for their fault);
 *   4. -n datagrams with the right Q_Key, tagged 'G' and numbered;
 *
 * then says "done" over TCP.  The server must receive exactly the 'P'
 * datagram (with -r) and the -n good ones, in order, each with a GRH and
 * the client's QPN as source, and none of the others.  The counters of
 * the dropped datagrams (the device's rx_bad_qkey, rx_bad_mad, rx_dropped;
 * the IP stack's for headers the device does not take as RoCEv2) are the
 * caller's to check.
 *
 *   ud-bad-input [-d DEV] [-g IDX] [-p PORT] [-n GOOD] [-b BAD]
 *                [-r IFACE] [HOST]
 *
 * Exits 0 if every check passed, 1 if one failed, 2 on a setup error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <netpacket/packet.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "guest-util.h"

#define QKEY		0x11111111u
#define BAD_QKEY	0x11111112u
#define GSI_QKEY	0x80010000u	/* bit 31: the sending QP's own Q_Key */
#define GRH_BYTES	40
#define MSG_MAX		512
#define SLOT		(GRH_BYTES + MSG_MAX)
#define GOOD_LEN	64

struct peer_info {
	uint32_t qpn;
	uint8_t gid[16];
};

static const char *dev_name = "softhca0";
static const char *host, *raw_iface;
static int gid_index, tcp_port = 18515, sock, n_good = 20, n_bad = 20;
static int failures;

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static struct ibv_mr *mr;
static uint8_t *buf;
static union ibv_gid gid;

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			printf("FAIL: ");				\
			printf(__VA_ARGS__);				\
			printf("\n");					\
			failures++;					\
		}							\
	} while (0)

static void xfer(void *p, size_t len, bool out)
{
	if (guest_xfer(sock, p, len, out))
		guest_die("peer socket: %s", strerror(errno));
}

static void tcp_setup(void)
{
	sock = !host ? guest_tcp_accept(tcp_port) :
		 guest_tcp_connect(host, tcp_port);
	if (sock < 0)
		guest_die("no TCP connection on port %d: %s", tcp_port,
		    strerror(errno));
}

/* A UD QP in RTS with Q_Key qkey. */
static void setup(uint32_t qkey, int depth)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = depth, .max_recv_wr = depth,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = qkey,
	};

	ctx = guest_open_device(dev_name);
	if (!ctx)
		guest_die("cannot open %s", dev_name);
	if (ibv_query_gid(ctx, 1, gid_index, &gid))
		guest_die("query gid %d", gid_index);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 2 * depth, NULL, NULL, 0);
	buf = calloc(depth, SLOT);
	if (!pd || !cq || !buf)
		guest_die("alloc");
	mr = ibv_reg_mr(pd, buf, (size_t)depth * SLOT, IBV_ACCESS_LOCAL_WRITE);
	init.send_cq = cq;
	init.recv_cq = cq;
	qp = ibv_create_qp(pd, &init);
	if (!mr || !qp)
		guest_die("reg_mr/create_qp: %s", strerror(errno));
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		guest_die("to INIT");
	attr.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE))
		guest_die("to RTR");
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN))
		guest_die("to RTS");
}

static void post_recv(int slot)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf + (size_t)slot * SLOT,
			       .length = SLOT, .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	if (ibv_post_recv(qp, &wr, &bad))
		guest_die("post_recv");
}

/* One datagram of len bytes from buf's first slot, completed. */
static void send_one(struct ibv_ah *ah, uint32_t qpn, uint32_t qkey,
		     uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = len,
			       .lkey = mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = ah, .remote_qpn = qpn, .remote_qkey = qkey },
	}, *bad;
	struct ibv_wc wc;
	double end = guest_now() + 5;
	int n;

	if (ibv_post_send(qp, &wr, &bad))
		guest_die("post_send: %s", strerror(errno));
	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0 && guest_now() < end)
		;
	if (n != 1)
		guest_die("send to QP %#x: no completion in 5 s", qpn);
	CHECK(wc.status == IBV_WC_SUCCESS, "send to QP %#x: %s", qpn,
	      ibv_wc_status_str(wc.status));
}

/* --- hand-built RoCEv2 frames (spec §16, §17) --------------------------- */

enum raw_fault { RAW_IP_CSUM, RAW_IP_LEN, RAW_ICRC, RAW_NONE };

#define ETH_LEN		14
#define IP4_LEN		20
#define UDP_LEN		8
#define BTH_LEN		12
#define DETH_LEN	8
#define ICRC_LEN	4

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

static uint16_t ip4_csum(const uint8_t *h)
{
	uint32_t sum = 0;

	for (int i = 0; i < IP4_LEN; i += 2)
		sum += h[i] << 8 | h[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

/* CRC-32 of IEEE 802.3 continued from crc (zlib's convention). */
static uint32_t crc32_le(uint32_t crc, const uint8_t *p, size_t len)
{
	crc = ~crc;
	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = crc >> 1 ^ (0xedb88320u & -(crc & 1));
	}
	return ~crc;
}

/*
 * The ICRC of the frame f of len bytes: over 8 bytes of ones standing for
 * the LRH, the IP, UDP and BTH headers with the fields a router may change
 * masked to ones, and the rest up to the ICRC.
 */
static uint32_t icrc(const uint8_t *f, size_t len)
{
	static const uint8_t lrh[8] = { 0xff, 0xff, 0xff, 0xff,
					0xff, 0xff, 0xff, 0xff };
	uint8_t m[IP4_LEN + UDP_LEN + BTH_LEN];
	uint32_t crc;

	memcpy(m, f + ETH_LEN, sizeof(m));
	m[1] = 0xff;				/* TOS */
	m[8] = 0xff;				/* TTL */
	m[10] = m[11] = 0xff;			/* header checksum */
	m[IP4_LEN + 6] = m[IP4_LEN + 7] = 0xff;	/* UDP checksum */
	m[IP4_LEN + UDP_LEN + 4] = 0xff;	/* BTH reserved byte */
	crc = crc32_le(0, lrh, sizeof(lrh));
	crc = crc32_le(crc, m, sizeof(m));
	return crc32_le(crc, f + ETH_LEN + sizeof(m),
			len - ETH_LEN - sizeof(m) - ICRC_LEN);
}

/*
 * A UD SEND_ONLY of GOOD_LEN bytes of tag from our QP to the peer's, as an
 * Ethernet frame from smac/sip to dmac/dip, spoilt by fault; its length.
 */
static size_t raw_frame(uint8_t *f, const uint8_t *smac, const uint8_t *dmac,
			const uint8_t *sip, const uint8_t *dip, uint32_t dqpn,
			char tag, enum raw_fault fault)
{
	uint8_t *ip = f + ETH_LEN, *udp = ip + IP4_LEN, *bth = udp + UDP_LEN;
	uint8_t *deth = bth + BTH_LEN, *data = deth + DETH_LEN;
	size_t roce = BTH_LEN + DETH_LEN + GOOD_LEN + ICRC_LEN;
	size_t len = ETH_LEN + IP4_LEN + UDP_LEN + roce;
	uint32_t crc;

	memset(f, 0, len);
	memcpy(f, dmac, 6);
	memcpy(f + 6, smac, 6);
	put16(f + 12, 0x0800);
	ip[0] = 0x45;
	put16(ip + 2, IP4_LEN + UDP_LEN + roce +
		      (fault == RAW_IP_LEN ? 100 : 0));
	put16(ip + 6, 0x4000);			/* DF */
	ip[8] = 64;
	ip[9] = 17;				/* UDP */
	memcpy(ip + 12, sip, 4);
	memcpy(ip + 16, dip, 4);
	put16(ip + 10, ip4_csum(ip) ^ (fault == RAW_IP_CSUM ? 0x0101 : 0));
	put16(udp, 0xc000);
	put16(udp + 2, 4791);
	put16(udp + 4, UDP_LEN + roce);
	bth[0] = 0x64;				/* UD SEND_ONLY */
	put16(bth + 2, 0xffff);			/* P_Key */
	put32(bth + 4, dqpn & 0xffffff);
	put32(deth, QKEY);
	put32(deth + 4, qp->qp_num);
	memset(data, tag, GOOD_LEN);
	crc = icrc(f, len) ^ (fault == RAW_ICRC ? 1 : 0);
	for (int i = 0; i < ICRC_LEN; i++)
		data[GOOD_LEN + i] = crc >> (8 * i);
	return len;
}

/* The MAC of IPv4 address ip in the ARP table: the TCP peer's is there. */
static bool arp_lookup(const uint8_t *ip, uint8_t *mac)
{
	char want[INET_ADDRSTRLEN], line[256], addr[64], hw[64];
	FILE *arp = fopen("/proc/net/arp", "r");
	bool found = false;

	inet_ntop(AF_INET, ip, want, sizeof(want));
	while (arp && !found && fgets(line, sizeof(line), arp))
		found = sscanf(line, "%63s %*s %*s %63s", addr, hw) == 2 &&
			!strcmp(addr, want) &&
			sscanf(hw, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0],
			       &mac[1], &mac[2], &mac[3], &mac[4],
			       &mac[5]) == 6;
	if (arp)
		fclose(arp);
	return found;
}

/* Step 3: the spoilt frames, then the right one. */
static void send_raw(const struct peer_info *peer)
{
	static const uint8_t v4_prefix[12] = { [10] = 0xff, [11] = 0xff };
	struct sockaddr_ll to = { .sll_family = AF_PACKET, .sll_halen = 6 };
	uint8_t smac[6], dmac[6], f[256];
	struct ifreq ifr = { 0 };
	int fd;

	if (memcmp(gid.raw, v4_prefix, 12) || memcmp(peer->gid, v4_prefix, 12))
		guest_die("-r needs IPv4 GIDs");
	fd = socket(AF_PACKET, SOCK_RAW, 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", raw_iface);
	to.sll_ifindex = if_nametoindex(raw_iface);
	if (fd < 0 || !to.sll_ifindex || ioctl(fd, SIOCGIFHWADDR, &ifr))
		guest_die("raw socket on %s: %s", raw_iface, strerror(errno));
	memcpy(smac, ifr.ifr_hwaddr.sa_data, 6);
	if (!arp_lookup(peer->gid + 12, dmac))
		guest_die("no ARP entry for the peer");
	memcpy(to.sll_addr, dmac, 6);
	for (enum raw_fault fault = RAW_IP_CSUM; fault <= RAW_NONE; fault++) {
		size_t len = raw_frame(f, smac, dmac, gid.raw + 12,
				       peer->gid + 12, peer->qpn,
				       fault == RAW_NONE ? 'P' : 'R', fault);

		if (sendto(fd, f, len, 0, (struct sockaddr *)&to,
			   sizeof(to)) != (ssize_t)len)
			guest_die("raw send: %s", strerror(errno));
	}
	close(fd);
}

static void client(void)
{
	struct peer_info peer;
	struct ibv_ah_attr ah_attr = {
		.is_global = 1, .port_num = 1,
		.grh = { .sgid_index = gid_index, .hop_limit = 64 },
	};
	static const uint32_t mad_len[] = { 100, 256, 300 };
	struct ibv_ah *ah;
	char c = 'd';
	int i;

	/* The Q_Key of QP1 is sent by the rule of bit 31: make it ours. */
	setup(GSI_QKEY, 4);
	tcp_setup();
	xfer(&peer, sizeof(peer), false);
	memcpy(ah_attr.grh.dgid.raw, peer.gid, 16);
	ah = ibv_create_ah(pd, &ah_attr);
	if (!ah)
		guest_die("create_ah: %s", strerror(errno));

	memset(buf, 'B', GOOD_LEN);
	for (i = 0; i < n_bad; i++)
		send_one(ah, peer.qpn, BAD_QKEY, GOOD_LEN);
	for (i = 0; i < 3; i++) {
		for (uint32_t b = 0; b < mad_len[i]; b++)
			buf[b] = b * 7 + i;
		buf[0] = 0x7f; /* base version: not 1 */
		send_one(ah, 1, GSI_QKEY, mad_len[i]);
	}
	if (raw_iface)
		send_raw(&peer);
	for (i = 0; i < n_good; i++) {
		memset(buf, 'G', GOOD_LEN);
		memcpy(buf + 1, &i, sizeof(i));
		send_one(ah, peer.qpn, QKEY, GOOD_LEN);
	}
	printf("client: sent %d bad-Q_Key, 3 non-MAD, %s%d good datagrams\n",
	       n_bad, raw_iface ? "3 bad and 1 good raw, " : "", n_good);
	xfer(&c, 1, true);
	xfer(&c, 1, false);
	ibv_destroy_ah(ah);
}

static void server(void)
{
	int raw = !!raw_iface, depth = n_good + n_bad + 8, got = 0, bad = 0;
	int i, n;
	struct peer_info me;
	uint32_t peer_qpn;
	struct ibv_wc wc;
	double end;
	char c;

	setup(QKEY, depth);
	for (i = 0; i < depth; i++)
		post_recv(i);
	me.qpn = qp->qp_num;
	memcpy(me.gid, gid.raw, 16);
	tcp_setup();
	xfer(&me, sizeof(me), true);
	xfer(&c, 1, false);

	/*
	 * The client's sends have completed: the datagrams have left it.  With
	 * -r the right raw frame comes first.
	 */
	end = guest_now() + 5;
	while (got < n_good + raw && guest_now() < end) {
		n = ibv_poll_cq(cq, 1, &wc);
		if (n <= 0)
			continue;
		uint8_t *d = buf + wc.wr_id * SLOT + GRH_BYTES;
		char tag = raw && !got ? 'P' : 'G';
		int seq = got - raw;

		if (tag == 'G')
			memcpy(&seq, d + 1, sizeof(seq));
		if (wc.status != IBV_WC_SUCCESS || d[0] != tag) {
			bad++;
			CHECK(0, "received status %s, tag %c",
			      ibv_wc_status_str(wc.status), d[0]);
			continue;
		}
		peer_qpn = wc.src_qp;
		CHECK(seq == got - raw, "datagram %d arrived as number %d", seq,
		      got - raw);
		CHECK(wc.byte_len == GRH_BYTES + GOOD_LEN, "byte_len %u",
		      wc.byte_len);
		CHECK(wc.wc_flags & IBV_WC_GRH, "no GRH flag");
		CHECK(wc.qp_num == qp->qp_num, "qp_num %#x", wc.qp_num);
		CHECK(peer_qpn > 1, "src_qp %#x", peer_qpn);
		got++;
	}
	/* Nothing else may come in. */
	usleep(200000);
	while ((n = ibv_poll_cq(cq, 1, &wc)) > 0) {
		bad++;
		CHECK(0, "an extra datagram, status %s",
		      ibv_wc_status_str(wc.status));
	}
	CHECK(got == n_good + raw, "received %d of %d good datagrams", got,
	      n_good + raw);
	printf("server: received %d good datagrams, %d others\n", got, bad);
	xfer(&c, 1, true);
}

int main(int argc, char **argv)
{
	int op;

	while ((op = getopt(argc, argv, "d:g:p:n:b:r:")) != -1) {
		switch (op) {
		case 'd':
			dev_name = optarg;
			break;
		case 'g':
			gid_index = atoi(optarg);
			break;
		case 'p':
			tcp_port = atoi(optarg);
			break;
		case 'n':
			n_good = atoi(optarg);
			break;
		case 'b':
			n_bad = atoi(optarg);
			break;
		case 'r':
			raw_iface = optarg;
			break;
		default:
			fprintf(stderr, "usage: %s [-d DEV] [-g IDX] [-p PORT] "
				"[-n GOOD] [-b BAD] [-r IFACE] [HOST]\n", argv[0]);
			return 2;
		}
	}
	if (optind < argc)
		host = argv[optind];
	if (n_good < 1 || n_bad < 0 || n_good + n_bad > 4000)
		guest_die("-n 1.., -b 0.., together at most 4000");
	if (host)
		client();
	else
		server();
	return failures ? 1 : 0;
}
