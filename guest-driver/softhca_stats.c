// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The device's transport counters (spec §13.4) as port hardware counters,
 * for `rdma statistic show` and /sys/class/infiniband/.../hw_counters.
 */

#include <linux/dma-mapping.h>

#include "softhca.h"

static const struct rdma_stat_desc softhca_stat_descs[] = {
	[SHCA_STAT_TX_PACKETS].name = "tx_packets",
	[SHCA_STAT_RX_PACKETS].name = "rx_packets",
	[SHCA_STAT_RX_DROPPED].name = "rx_dropped",
	[SHCA_STAT_RETRANSMITS].name = "retransmits",
	[SHCA_STAT_TIMEOUTS].name = "timeouts",
	[SHCA_STAT_NAKS_SENT].name = "naks_sent",
	[SHCA_STAT_NAKS_RECEIVED].name = "naks_received",
	[SHCA_STAT_RNR_NAKS_SENT].name = "rnr_naks_sent",
	[SHCA_STAT_RNR_NAKS_RECEIVED].name = "rnr_naks_received",
	[SHCA_STAT_DUPLICATES].name = "duplicates",
	[SHCA_STAT_SEQ_ERRORS].name = "seq_errors",
	[SHCA_STAT_FAULT_DROPPED].name = "fault_dropped",
	[SHCA_STAT_FAULT_DUPLICATED].name = "fault_duplicated",
	[SHCA_STAT_FAULT_REORDERED].name = "fault_reordered",
	[SHCA_STAT_RX_BAD_QKEY].name = "rx_bad_qkey",
	[SHCA_STAT_RX_NO_RECV_WQE].name = "rx_no_recv_wqe",
	[SHCA_STAT_RX_BAD_MAD].name = "rx_bad_mad",
	[SHCA_STAT_LOOPBACK_DROPPED].name = "loopback_dropped",
};

static_assert(ARRAY_SIZE(softhca_stat_descs) == SHCA_STAT_COUNT);

#define SOFTHCA_STATS_BYTES	(SHCA_STAT_COUNT * sizeof(__le64))

/*
 * The datagram counters come with CAPS.DGRAM, LOOPBACK_DROPPED with
 * CAPS.LOOPBACK; a device writes only the counters it has.
 */
static u32 softhca_stat_count(struct softhca_dev *sdev)
{
	if (!softhca_has_dgram(sdev))
		return SHCA_STAT_RX_BAD_QKEY;
	if (!(sdev->caps.caps & SHCA_CAP_LOOPBACK))
		return SHCA_STAT_LOOPBACK_DROPPED;
	return SHCA_STAT_COUNT;
}

struct rdma_hw_stats *softhca_alloc_hw_port_stats(struct ib_device *ibdev,
						  u32 port)
{
	return rdma_alloc_hw_stats_struct(softhca_stat_descs,
					  softhca_stat_count(to_sdev(ibdev)),
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/* One QUERY_STATS reads every counter, whatever @index asks for. */
int softhca_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
			 u32 port, int index)
{
	struct softhca_dev *sdev = to_sdev(ibdev);
	struct device *dma = &sdev->pdev->dev;
	dma_addr_t counters_dma;
	__le64 *counters;
	u32 count = softhca_stat_count(sdev);
	int err;
	u32 i;

	counters = dma_alloc_coherent(dma, SOFTHCA_STATS_BYTES, &counters_dma,
				      GFP_KERNEL);
	if (!counters)
		return -ENOMEM;

	err = softhca_cmd_query_stats(sdev, counters_dma);
	if (err) {
		ibdev_err_ratelimited(ibdev, "QUERY_STATS failed: %d\n", err);
		goto out;
	}

	for (i = 0; i < count; i++)
		stats->value[i] = le64_to_cpu(counters[i]);
	err = count;
out:
	dma_free_coherent(dma, SOFTHCA_STATS_BYTES, counters, counters_dma);
	return err;
}
