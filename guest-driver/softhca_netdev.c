// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The net_device of the port over the device's NIC function (spec §6): a TX
 * and an RX ring of 16-byte descriptors pointing to DMA-mapped skbs, and
 * NAPI driven by MSI-X vector 1.
 *
 * Ring indexes: the driver posts at tail and reclaims at head; the slots in
 * [head, tail) belong to the device.  One slot always stays empty, since the
 * device takes TAIL == HEAD for an empty ring.
 *
 * Interrupts (NIC_IRQ): the device clears EN when it raises the vector.  A
 * poll first acknowledges PENDING, then cleans the rings, then writes EN
 * alone: anything signalled after the acknowledgment leaves PENDING set,
 * and the EN write then raises the vector again at once.
 */

#include <linux/dma-mapping.h>
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/if_vlan.h>
#include <linux/interrupt.h>

#include "softhca.h"

#define SOFTHCA_NIC_RING_MASK		(SOFTHCA_NIC_RING_SIZE - 1)
#define SOFTHCA_NIC_DESC_BYTES		(SOFTHCA_NIC_RING_SIZE * SHCA_NIC_DESC_SIZE)
/* Wake a stopped TX queue once this many descriptors are free again. */
#define SOFTHCA_NIC_TX_WAKE		(SOFTHCA_NIC_RING_SIZE / 4)

static struct softhca_dev *softhca_ndev_to_sdev(struct net_device *ndev)
{
	struct softhca_netdev_priv *priv = netdev_priv(ndev);

	return priv->sdev;
}

static struct softhca_nic *softhca_ndev_to_nic(struct net_device *ndev)
{
	struct softhca_netdev_priv *priv = netdev_priv(ndev);

	return &priv->nic;
}

static u32 softhca_nic_ring_free(u32 head, u32 tail)
{
	return SOFTHCA_NIC_RING_MASK - ((tail - head) & SOFTHCA_NIC_RING_MASK);
}

static void softhca_nic_write_mac(struct softhca_dev *sdev, const u8 *addr)
{
	softhca_wr32(sdev, SHCA_REG_MAC_LO,
		     addr[0] | addr[1] << 8 | addr[2] << 16 | (u32)addr[3] << 24);
	softhca_wr32(sdev, SHCA_REG_MAC_HI, addr[4] | addr[5] << 8);
}

static void softhca_nic_read_mac(struct softhca_dev *sdev, u8 *addr)
{
	u32 lo = softhca_rd32(sdev, SHCA_REG_MAC_LO);
	u32 hi = softhca_rd32(sdev, SHCA_REG_MAC_HI);

	addr[0] = lo;
	addr[1] = lo >> 8;
	addr[2] = lo >> 16;
	addr[3] = lo >> 24;
	addr[4] = hi;
	addr[5] = hi >> 8;
}

static void softhca_nic_count(struct softhca_nic_ring *ring, unsigned int len)
{
	u64_stats_update_begin(&ring->syncp);
	ring->packets++;
	ring->bytes += len;
	u64_stats_update_end(&ring->syncp);
}

/* TX */

static netdev_tx_t softhca_nic_xmit(struct sk_buff *skb,
				    struct net_device *ndev)
{
	struct softhca_dev *sdev = softhca_ndev_to_sdev(ndev);
	struct softhca_nic *nic = softhca_ndev_to_nic(ndev);
	struct softhca_nic_ring *tx = &nic->tx;
	struct device *dma = &sdev->pdev->dev;
	struct shca_nic_txd *txd;
	dma_addr_t addr;
	u32 tail = tx->tail;

	if (unlikely(skb->len < ETH_HLEN || skb->len > SHCA_NIC_FRAME_MAX)) {
		DEV_STATS_INC(ndev, tx_dropped);
		dev_kfree_skb_any(skb);
		return NETDEV_TX_OK;
	}

	if (unlikely(!softhca_nic_ring_free(READ_ONCE(tx->head), tail))) {
		/* The queue is stopped before the ring fills: not reached. */
		netif_stop_queue(ndev);
		return NETDEV_TX_BUSY;
	}

	addr = dma_map_single(dma, skb->data, skb->len, DMA_TO_DEVICE);
	if (unlikely(dma_mapping_error(dma, addr))) {
		DEV_STATS_INC(ndev, tx_dropped);
		dev_kfree_skb_any(skb);
		return NETDEV_TX_OK;
	}

	tx->skb[tail] = skb;
	tx->buf_dma[tail] = addr;
	txd = (struct shca_nic_txd *)tx->desc + tail;
	txd->addr = cpu_to_le64(addr);
	txd->len = cpu_to_le16(skb->len);
	memset(txd->rsvd, 0, sizeof(txd->rsvd));
	txd->flags = 0;
	skb_tx_timestamp(skb);

	tail = (tail + 1) & SOFTHCA_NIC_RING_MASK;
	WRITE_ONCE(tx->tail, tail);
	/* writel() orders the descriptor before the doorbell. */
	softhca_wr32(sdev, SHCA_REG_NIC_TX_TAIL, tail);

	if (!softhca_nic_ring_free(READ_ONCE(tx->head), tail)) {
		netif_stop_queue(ndev);
		/* Pairs with the barrier in softhca_nic_tx_clean(). */
		smp_mb();
		if (softhca_nic_ring_free(READ_ONCE(tx->head), tail) >=
		    SOFTHCA_NIC_TX_WAKE)
			netif_start_queue(ndev);
	}

	return NETDEV_TX_OK;
}

static void softhca_nic_tx_clean(struct softhca_nic *nic, int budget)
{
	struct net_device *ndev = nic->netdev;
	struct device *dma = &softhca_ndev_to_sdev(ndev)->pdev->dev;
	struct softhca_nic_ring *tx = &nic->tx;
	u32 tail = READ_ONCE(tx->tail);
	u32 head = tx->head;
	struct shca_nic_txd *txd;
	struct sk_buff *skb;
	u8 flags;

	while (head != tail) {
		txd = (struct shca_nic_txd *)tx->desc + head;
		flags = READ_ONCE(txd->flags);
		if (!(flags & SHCA_NIC_DESC_DONE))
			break;

		skb = tx->skb[head];
		tx->skb[head] = NULL;
		dma_unmap_single(dma, tx->buf_dma[head], skb->len,
				 DMA_TO_DEVICE);
		if (flags & SHCA_NIC_DESC_ERR)
			DEV_STATS_INC(ndev, tx_errors);
		else
			softhca_nic_count(tx, skb->len);
		napi_consume_skb(skb, budget);
		head = (head + 1) & SOFTHCA_NIC_RING_MASK;
	}

	if (head == tx->head)
		return;
	WRITE_ONCE(tx->head, head);
	/* Pairs with the barrier in softhca_nic_xmit(). */
	smp_mb();
	if (netif_queue_stopped(ndev) &&
	    softhca_nic_ring_free(head, READ_ONCE(tx->tail)) >=
	    SOFTHCA_NIC_TX_WAKE)
		netif_wake_queue(ndev);
}

/* RX */

static struct sk_buff *softhca_nic_rx_alloc(struct softhca_nic *nic,
					    dma_addr_t *addr, gfp_t gfp)
{
	struct device *dma = &softhca_ndev_to_sdev(nic->netdev)->pdev->dev;
	struct sk_buff *skb;

	skb = __netdev_alloc_skb_ip_align(nic->netdev, nic->rx.buf_len, gfp);
	if (!skb)
		return NULL;

	*addr = dma_map_single(dma, skb->data, nic->rx.buf_len,
			       DMA_FROM_DEVICE);
	if (dma_mapping_error(dma, *addr)) {
		dev_kfree_skb_any(skb);
		return NULL;
	}
	return skb;
}

/* Post a mapped buffer at the tail; the caller writes the doorbell. */
static void softhca_nic_rx_post(struct softhca_nic *nic, struct sk_buff *skb,
				dma_addr_t addr)
{
	struct softhca_nic_ring *rx = &nic->rx;
	struct shca_nic_rxd *rxd = (struct shca_nic_rxd *)rx->desc + rx->tail;

	rx->skb[rx->tail] = skb;
	rx->buf_dma[rx->tail] = addr;
	rxd->addr = cpu_to_le64(addr);
	rxd->buf_len = cpu_to_le16(rx->buf_len);
	rxd->len = 0;
	memset(rxd->rsvd, 0, sizeof(rxd->rsvd));
	rxd->flags = 0;
	rx->tail = (rx->tail + 1) & SOFTHCA_NIC_RING_MASK;
}

/*
 * Each received buffer is replaced before it goes up the stack; without a
 * replacement the frame is dropped and its buffer posted again, so the
 * ring never runs dry.
 */
static int softhca_nic_rx(struct softhca_nic *nic, int budget)
{
	struct net_device *ndev = nic->netdev;
	struct softhca_dev *sdev = softhca_ndev_to_sdev(ndev);
	struct softhca_nic_ring *rx = &nic->rx;
	struct shca_nic_rxd *rxd;
	struct sk_buff *skb, *fresh;
	dma_addr_t addr, fresh_addr;
	int done = 0;
	u32 len;

	while (done < budget && rx->head != rx->tail) {
		rxd = (struct shca_nic_rxd *)rx->desc + rx->head;
		if (!(READ_ONCE(rxd->flags) & SHCA_NIC_DESC_DONE))
			break;
		/* Read the length only after the DONE flag. */
		dma_rmb();
		len = le16_to_cpu(rxd->len);

		skb = rx->skb[rx->head];
		addr = rx->buf_dma[rx->head];
		rx->skb[rx->head] = NULL;
		rx->head = (rx->head + 1) & SOFTHCA_NIC_RING_MASK;
		done++;

		if (unlikely(len < ETH_HLEN || len > rx->buf_len)) {
			DEV_STATS_INC(ndev, rx_length_errors);
			softhca_nic_rx_post(nic, skb, addr);
			continue;
		}

		fresh = softhca_nic_rx_alloc(nic, &fresh_addr, GFP_ATOMIC);
		if (unlikely(!fresh)) {
			DEV_STATS_INC(ndev, rx_dropped);
			softhca_nic_rx_post(nic, skb, addr);
			continue;
		}
		softhca_nic_rx_post(nic, fresh, fresh_addr);

		dma_unmap_single(&sdev->pdev->dev, addr, rx->buf_len,
				 DMA_FROM_DEVICE);
		skb_put(skb, len);
		skb->protocol = eth_type_trans(skb, ndev);
		softhca_nic_count(rx, len);
		napi_gro_receive(&nic->napi, skb);
	}

	if (done)
		softhca_wr32(sdev, SHCA_REG_NIC_RX_TAIL, rx->tail);
	return done;
}

static int softhca_nic_poll(struct napi_struct *napi, int budget)
{
	struct softhca_nic *nic = container_of(napi, struct softhca_nic, napi);
	struct softhca_dev *sdev = softhca_ndev_to_sdev(nic->netdev);
	int done = 0;

	softhca_wr32(sdev, SHCA_REG_NIC_IRQ, SHCA_NIC_IRQ_PENDING);
	softhca_nic_tx_clean(nic, budget);
	if (budget)
		done = softhca_nic_rx(nic, budget);

	if (done < budget && napi_complete_done(napi, done))
		softhca_wr32(sdev, SHCA_REG_NIC_IRQ, SHCA_NIC_IRQ_EN);
	return done;
}

static irqreturn_t softhca_nic_irq(int irq, void *data)
{
	struct softhca_nic *nic = data;

	napi_schedule(&nic->napi);
	return IRQ_HANDLED;
}

/* Bring-up and teardown of the rings */

static void softhca_nic_free_bufs(struct softhca_nic *nic)
{
	struct device *dma = &softhca_ndev_to_sdev(nic->netdev)->pdev->dev;
	struct softhca_nic_ring *tx = &nic->tx;
	struct softhca_nic_ring *rx = &nic->rx;
	u32 i;

	for (i = 0; i < SOFTHCA_NIC_RING_SIZE; i++) {
		if (tx->skb[i]) {
			dma_unmap_single(dma, tx->buf_dma[i], tx->skb[i]->len,
					 DMA_TO_DEVICE);
			dev_kfree_skb_any(tx->skb[i]);
			tx->skb[i] = NULL;
		}
		if (rx->skb[i]) {
			dma_unmap_single(dma, rx->buf_dma[i], rx->buf_len,
					 DMA_FROM_DEVICE);
			dev_kfree_skb_any(rx->skb[i]);
			rx->skb[i] = NULL;
		}
	}
}

static int softhca_nic_up(struct softhca_nic *nic)
{
	struct net_device *ndev = nic->netdev;
	struct softhca_dev *sdev = softhca_ndev_to_sdev(ndev);
	struct softhca_nic_ring *tx = &nic->tx;
	struct softhca_nic_ring *rx = &nic->rx;
	struct sk_buff *skb;
	dma_addr_t addr;

	memset(tx->desc, 0, SOFTHCA_NIC_DESC_BYTES);
	memset(rx->desc, 0, SOFTHCA_NIC_DESC_BYTES);
	tx->head = 0;
	tx->tail = 0;
	rx->head = 0;
	rx->tail = 0;
	rx->buf_len = ndev->mtu + SOFTHCA_NIC_RX_OVERHEAD;

	while (softhca_nic_ring_free(rx->head, rx->tail)) {
		skb = softhca_nic_rx_alloc(nic, &addr, GFP_KERNEL);
		if (!skb) {
			softhca_nic_free_bufs(nic);
			return -ENOMEM;
		}
		softhca_nic_rx_post(nic, skb, addr);
	}

	softhca_wr64(sdev, SHCA_REG_NIC_TX_BASE_LO, tx->desc_dma);
	softhca_wr32(sdev, SHCA_REG_NIC_TX_LOG_SIZE, SOFTHCA_NIC_RING_LOG_SIZE);
	softhca_wr64(sdev, SHCA_REG_NIC_RX_BASE_LO, rx->desc_dma);
	softhca_wr32(sdev, SHCA_REG_NIC_RX_LOG_SIZE, SOFTHCA_NIC_RING_LOG_SIZE);
	/* Enabling resets the device's HEAD and TAIL to 0. */
	softhca_wr32(sdev, SHCA_REG_NIC_CTRL, SHCA_NIC_TX_EN | SHCA_NIC_RX_EN);
	softhca_wr32(sdev, SHCA_REG_NIC_RX_TAIL, rx->tail);

	napi_enable(&nic->napi);
	softhca_wr32(sdev, SHCA_REG_NIC_IRQ, SHCA_NIC_IRQ_EN);
	return 0;
}

static void softhca_nic_down(struct softhca_nic *nic)
{
	struct softhca_dev *sdev = softhca_ndev_to_sdev(nic->netdev);

	/* A last poll may still re-enable the vector: stop NAPI first. */
	napi_disable(&nic->napi);
	softhca_wr32(sdev, SHCA_REG_NIC_IRQ, 0);
	/* Once disabled, the device touches neither rings nor buffers. */
	softhca_wr32(sdev, SHCA_REG_NIC_CTRL, 0);
	synchronize_irq(pci_irq_vector(sdev->pdev, SHCA_VEC_NIC));
	softhca_nic_free_bufs(nic);
}

/* net_device_ops */

static int softhca_nic_open(struct net_device *ndev)
{
	int err;

	err = softhca_nic_up(softhca_ndev_to_nic(ndev));
	if (err)
		return err;

	softhca_netdev_link_sync(softhca_ndev_to_sdev(ndev));
	netif_start_queue(ndev);
	return 0;
}

static int softhca_nic_stop(struct net_device *ndev)
{
	netif_tx_disable(ndev);
	softhca_nic_down(softhca_ndev_to_nic(ndev));
	return 0;
}

static int softhca_nic_set_mac_address(struct net_device *ndev, void *p)
{
	int err;

	err = eth_prepare_mac_addr_change(ndev, p);
	if (err)
		return err;

	eth_commit_mac_addr_change(ndev, p);
	softhca_nic_write_mac(softhca_ndev_to_sdev(ndev), ndev->dev_addr);
	return 0;
}

/* RX buffers are sized for the MTU: a running interface restarts. */
static int softhca_nic_change_mtu(struct net_device *ndev, int new_mtu)
{
	struct softhca_nic *nic = softhca_ndev_to_nic(ndev);
	bool running = netif_running(ndev);

	if (running) {
		netif_tx_disable(ndev);
		softhca_nic_down(nic);
	}

	WRITE_ONCE(ndev->mtu, new_mtu);
	softhca_wr32(softhca_ndev_to_sdev(ndev), SHCA_REG_MTU, new_mtu);

	if (running) {
		int err = softhca_nic_up(nic);

		if (err)
			return err;
		netif_wake_queue(ndev);
	}
	return 0;
}

static void softhca_nic_get_stats64(struct net_device *ndev,
				    struct rtnl_link_stats64 *stats)
{
	struct softhca_nic *nic = softhca_ndev_to_nic(ndev);
	unsigned int start;

	netdev_stats_to_stats64(stats, &ndev->stats);

	do {
		start = u64_stats_fetch_begin(&nic->rx.syncp);
		stats->rx_packets = nic->rx.packets;
		stats->rx_bytes = nic->rx.bytes;
	} while (u64_stats_fetch_retry(&nic->rx.syncp, start));

	do {
		start = u64_stats_fetch_begin(&nic->tx.syncp);
		stats->tx_packets = nic->tx.packets;
		stats->tx_bytes = nic->tx.bytes;
	} while (u64_stats_fetch_retry(&nic->tx.syncp, start));
}

static const struct net_device_ops softhca_netdev_ops = {
	.ndo_open = softhca_nic_open,
	.ndo_stop = softhca_nic_stop,
	.ndo_start_xmit = softhca_nic_xmit,
	.ndo_set_mac_address = softhca_nic_set_mac_address,
	.ndo_change_mtu = softhca_nic_change_mtu,
	.ndo_get_stats64 = softhca_nic_get_stats64,
	.ndo_validate_addr = eth_validate_addr,
};

/* ethtool: enough for ib_get_eth_speed() to find a speed. */

static void softhca_nic_get_drvinfo(struct net_device *ndev,
				    struct ethtool_drvinfo *info)
{
	struct softhca_dev *sdev = softhca_ndev_to_sdev(ndev);

	strscpy(info->driver, SOFTHCA_DRV_NAME, sizeof(info->driver));
	strscpy(info->bus_info, pci_name(sdev->pdev), sizeof(info->bus_info));
	snprintf(info->fw_version, sizeof(info->fw_version), "%u.%u",
		 sdev->caps.version >> 16, sdev->caps.version & 0xffff);
}

static int softhca_nic_get_link_ksettings(struct net_device *ndev,
					  struct ethtool_link_ksettings *cmd)
{
	ethtool_link_ksettings_zero_link_mode(cmd, supported);
	ethtool_link_ksettings_zero_link_mode(cmd, advertising);
	cmd->base.port = PORT_OTHER;
	cmd->base.autoneg = AUTONEG_DISABLE;
	if (netif_carrier_ok(ndev)) {
		cmd->base.speed = SOFTHCA_NIC_SPEED;
		cmd->base.duplex = DUPLEX_FULL;
	} else {
		cmd->base.speed = SPEED_UNKNOWN;
		cmd->base.duplex = DUPLEX_UNKNOWN;
	}
	return 0;
}

static const struct ethtool_ops softhca_ethtool_ops = {
	.get_drvinfo = softhca_nic_get_drvinfo,
	.get_link = ethtool_op_get_link,
	.get_link_ksettings = softhca_nic_get_link_ksettings,
};

/* Called from the EQ interrupt: the carrier follows PORT_STATUS. */
void softhca_netdev_link_change(struct softhca_dev *sdev, bool up)
{
	if (up)
		netif_carrier_on(sdev->nic->netdev);
	else
		netif_carrier_off(sdev->nic->netdev);
}

/* Read the link state where no PORT_CHANGE event may have told it. */
void softhca_netdev_link_sync(struct softhca_dev *sdev)
{
	softhca_netdev_link_change(sdev,
				   softhca_rd32(sdev, SHCA_REG_PORT_STATUS) &
				   SHCA_PORT_LINK_UP);
}

static int softhca_nic_alloc_desc(struct softhca_dev *sdev,
				  struct softhca_nic *nic)
{
	struct device *dma = &sdev->pdev->dev;

	nic->tx.desc = dma_alloc_coherent(dma, SOFTHCA_NIC_DESC_BYTES,
					  &nic->tx.desc_dma, GFP_KERNEL);
	if (!nic->tx.desc)
		return -ENOMEM;

	nic->rx.desc = dma_alloc_coherent(dma, SOFTHCA_NIC_DESC_BYTES,
					  &nic->rx.desc_dma, GFP_KERNEL);
	if (!nic->rx.desc) {
		dma_free_coherent(dma, SOFTHCA_NIC_DESC_BYTES, nic->tx.desc,
				  nic->tx.desc_dma);
		return -ENOMEM;
	}
	return 0;
}

static void softhca_nic_free_desc(struct softhca_dev *sdev,
				  struct softhca_nic *nic)
{
	struct device *dma = &sdev->pdev->dev;

	dma_free_coherent(dma, SOFTHCA_NIC_DESC_BYTES, nic->rx.desc,
			  nic->rx.desc_dma);
	dma_free_coherent(dma, SOFTHCA_NIC_DESC_BYTES, nic->tx.desc,
			  nic->tx.desc_dma);
}

int softhca_netdev_init(struct softhca_dev *sdev)
{
	struct pci_dev *pdev = sdev->pdev;
	struct softhca_netdev_priv *priv;
	struct softhca_nic *nic;
	struct net_device *ndev;
	u8 addr[ETH_ALEN];
	int err;

	if (!(sdev->caps.caps & SHCA_CAP_NIC)) {
		dev_err(&pdev->dev, "device has no NIC function\n");
		return -ENODEV;
	}

	ndev = alloc_etherdev(sizeof(*priv));
	if (!ndev)
		return -ENOMEM;

	SET_NETDEV_DEV(ndev, &pdev->dev);
	priv = netdev_priv(ndev);
	priv->sdev = sdev;
	nic = &priv->nic;
	nic->netdev = ndev;
	sdev->nic = nic;
	u64_stats_init(&nic->tx.syncp);
	u64_stats_init(&nic->rx.syncp);

	ndev->netdev_ops = &softhca_netdev_ops;
	ndev->ethtool_ops = &softhca_ethtool_ops;
	ndev->priv_flags |= IFF_LIVE_ADDR_CHANGE;
	ndev->min_mtu = ETH_MIN_MTU;
	ndev->max_mtu = min_t(u32, sdev->caps.max_mtu,
			      SHCA_NIC_FRAME_MAX - SOFTHCA_NIC_RX_OVERHEAD);
	if (ndev->max_mtu < ETH_MIN_MTU) {
		dev_err(&pdev->dev, "bad MAX_MTU %u\n", sdev->caps.max_mtu);
		err = -EIO;
		goto err_free_netdev;
	}
	ndev->mtu = min(ndev->mtu, ndev->max_mtu);
	softhca_wr32(sdev, SHCA_REG_MTU, ndev->mtu);

	softhca_nic_read_mac(sdev, addr);
	if (is_valid_ether_addr(addr)) {
		eth_hw_addr_set(ndev, addr);
	} else {
		eth_hw_addr_random(ndev);
		softhca_nic_write_mac(sdev, ndev->dev_addr);
		dev_warn(&pdev->dev, "invalid MAC %pM, using %pM\n", addr,
			 ndev->dev_addr);
	}

	err = softhca_nic_alloc_desc(sdev, nic);
	if (err)
		goto err_free_netdev;

	netif_napi_add(ndev, &nic->napi, softhca_nic_poll);

	snprintf(sdev->irq_name[SHCA_VEC_NIC], sizeof(sdev->irq_name[0]),
		 "softhca-nic@pci:%s", pci_name(pdev));
	err = request_irq(pci_irq_vector(pdev, SHCA_VEC_NIC), softhca_nic_irq,
			  0, sdev->irq_name[SHCA_VEC_NIC], nic);
	if (err)
		goto err_napi_del;

	netif_carrier_off(ndev);
	err = register_netdev(ndev);
	if (err)
		goto err_free_irq;

	return 0;

err_free_irq:
	free_irq(pci_irq_vector(pdev, SHCA_VEC_NIC), nic);
err_napi_del:
	netif_napi_del(&nic->napi);
	softhca_nic_free_desc(sdev, nic);
err_free_netdev:
	sdev->nic = NULL;
	free_netdev(ndev);
	return err;
}

void softhca_netdev_destroy(struct softhca_dev *sdev)
{
	struct softhca_nic *nic = sdev->nic;
	struct net_device *ndev = nic->netdev;

	unregister_netdev(ndev);
	free_irq(pci_irq_vector(sdev->pdev, SHCA_VEC_NIC), nic);
	netif_napi_del(&nic->napi);
	softhca_nic_free_desc(sdev, nic);
	sdev->nic = NULL;
	free_netdev(ndev);
}
