// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The admin queue engine (spec §4, §5): a ring of commands the driver
 * writes, a ring of completions the device writes, and MSI-X vector 0.
 *
 * A command takes a slot of the context table; its cmd_id is the slot index
 * in the low bits and a sequence number above them, so a late completion of
 * an abandoned command cannot be taken for the answer to a newer one.
 */

#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/iopoll.h>
#include <linux/slab.h>

#include "softhca.h"

static const char *softhca_fatal_str(u32 code)
{
	switch (code) {
	case SHCA_FATAL_AQ_CONFIG:
		return "admin queue configuration";
	case SHCA_FATAL_AQ_DOORBELL:
		return "admin queue doorbell";
	case SHCA_FATAL_AQ_DMA:
		return "admin queue DMA";
	default:
		return "unknown";
	}
}

static int softhca_aq_status_to_errno(u8 status)
{
	switch (status) {
	case SHCA_AQ_OK:
		return 0;
	case SHCA_AQ_BAD_OPCODE:
		return -EOPNOTSUPP;
	case SHCA_AQ_BAD_PARAM:
		return -EINVAL;
	case SHCA_AQ_BAD_ADDR:
		return -EFAULT;
	case SHCA_AQ_NO_RESOURCES:
		return -ENOMEM;
	case SHCA_AQ_BAD_HANDLE:
		return -ENOENT;
	case SHCA_AQ_BUSY:
		return -EBUSY;
	default:
		return -EIO;
	}
}

/* Returns true, and logs why, if the device is in its fatal state. */
static bool softhca_aq_check_fatal(struct softhca_dev *sdev)
{
	u32 code;

	if (!(softhca_rd32(sdev, SHCA_REG_STATUS) & SHCA_STATUS_FATAL))
		return false;

	code = softhca_rd32(sdev, SHCA_REG_FATAL_CODE);
	dev_err_ratelimited(&sdev->pdev->dev,
			    "device fatal error %u (%s)\n", code,
			    softhca_fatal_str(code));
	return true;
}

static irqreturn_t softhca_aq_irq(int irq, void *data)
{
	struct softhca_dev *sdev = data;
	struct softhca_aq *aq = &sdev->aq;
	u32 mask = BIT(aq->log_size) - 1;
	struct shca_acq_entry *cqe;
	struct softhca_aq_ctx *ctx;
	unsigned int consumed = 0;
	u16 cmd_id;
	u32 idx;

	spin_lock(&aq->lock);
	for (;;) {
		cqe = &aq->cq[aq->cq_head];
		if ((READ_ONCE(cqe->phase) & SHCA_PHASE_BIT) != aq->cq_phase)
			break;
		/* Read the rest of the entry only after its phase. */
		dma_rmb();

		cmd_id = le16_to_cpu(cqe->cmd_id);
		idx = cmd_id & (aq->ctx_count - 1);
		ctx = &aq->ctx[idx];
		if (test_bit(idx, aq->ctx_busy) && ctx->cmd_id == cmd_id) {
			ctx->status = cqe->status;
			ctx->result = le32_to_cpu(cqe->result);
			ctx->result64 = le64_to_cpu(cqe->result64);
			complete(&ctx->done);
		} else {
			dev_err_ratelimited(&sdev->pdev->dev,
					    "completion for unknown cmd_id %#x\n",
					    cmd_id);
		}

		aq->cq_head = (aq->cq_head + 1) & mask;
		if (!aq->cq_head)
			aq->cq_phase ^= SHCA_PHASE_BIT;
		consumed++;
	}
	if (consumed)
		softhca_wr32(sdev, SHCA_REG_ACQ_HEAD, aq->cq_head);
	spin_unlock(&aq->lock);

	return consumed ? IRQ_HANDLED : IRQ_NONE;
}

/*
 * Post @cmd and sleep until its completion.  On success *@result (if not
 * NULL) holds the handle the command allocated.
 */
int softhca_aq_exec(struct softhca_dev *sdev, struct shca_aq_entry *cmd,
		    u32 *result)
{
	struct softhca_aq *aq = &sdev->aq;
	struct softhca_aq_ctx *ctx;
	unsigned long flags;
	u8 opcode = cmd->opcode;
	u32 idx;
	int err;

	down(&aq->avail);

	spin_lock_irqsave(&aq->lock, flags);
	if (aq->dead) {
		spin_unlock_irqrestore(&aq->lock, flags);
		up(&aq->avail);
		return -EIO;
	}
	/* The semaphore guarantees a free slot. */
	idx = find_first_zero_bit(aq->ctx_busy, aq->ctx_count);
	set_bit(idx, aq->ctx_busy);
	ctx = &aq->ctx[idx];
	ctx->cmd_id = idx | (aq->cmd_seq++ << aq->log_size);
	reinit_completion(&ctx->done);

	cmd->flags = 0;
	cmd->rsvd = 0;
	cmd->cmd_id = cpu_to_le16(ctx->cmd_id);
	memcpy(&aq->sq[aq->sq_tail], cmd, sizeof(*cmd));
	aq->sq_tail = (aq->sq_tail + 1) & (BIT(aq->log_size) - 1);
	/* writel() orders the entry in coherent memory before the doorbell. */
	softhca_wr32(sdev, SHCA_REG_AQ_TAIL, aq->sq_tail);
	spin_unlock_irqrestore(&aq->lock, flags);

	if (!wait_for_completion_timeout(&ctx->done,
					 msecs_to_jiffies(SOFTHCA_AQ_TIMEOUT_MS))) {
		/*
		 * The slot stays busy: the device may still answer it.  With
		 * a command lost, the queue can no longer be trusted.
		 */
		spin_lock_irqsave(&aq->lock, flags);
		aq->dead = true;
		spin_unlock_irqrestore(&aq->lock, flags);
		if (softhca_aq_check_fatal(sdev))
			return -EIO;
		dev_err_ratelimited(&sdev->pdev->dev,
				    "admin command %#x timed out\n", opcode);
		return -ETIMEDOUT;
	}

	err = softhca_aq_status_to_errno(ctx->status);
	if (!err && result)
		*result = ctx->result;
	if (err)
		dev_dbg(&sdev->pdev->dev, "admin command %#x: status %#x\n",
			opcode, ctx->status);

	spin_lock_irqsave(&aq->lock, flags);
	clear_bit(idx, aq->ctx_busy);
	spin_unlock_irqrestore(&aq->lock, flags);
	up(&aq->avail);

	return err;
}

static int softhca_aq_alloc(struct softhca_dev *sdev)
{
	struct softhca_aq *aq = &sdev->aq;
	struct device *dma = &sdev->pdev->dev;
	u32 entries = BIT(aq->log_size);
	u32 i;

	aq->ctx_count = entries;
	aq->ctx = kcalloc(aq->ctx_count, sizeof(*aq->ctx), GFP_KERNEL);
	if (!aq->ctx)
		return -ENOMEM;
	for (i = 0; i < aq->ctx_count; i++)
		init_completion(&aq->ctx[i].done);

	aq->ctx_busy = bitmap_zalloc(aq->ctx_count, GFP_KERNEL);
	if (!aq->ctx_busy)
		goto err_free_ctx;

	aq->sq = dma_alloc_coherent(dma, entries * SHCA_AQ_ENTRY_SIZE,
				    &aq->sq_dma, GFP_KERNEL);
	if (!aq->sq)
		goto err_free_busy;

	aq->cq = dma_alloc_coherent(dma, entries * sizeof(*aq->cq),
				    &aq->cq_dma, GFP_KERNEL);
	if (!aq->cq)
		goto err_free_sq;

	return 0;

err_free_sq:
	dma_free_coherent(dma, entries * SHCA_AQ_ENTRY_SIZE, aq->sq,
			  aq->sq_dma);
err_free_busy:
	bitmap_free(aq->ctx_busy);
err_free_ctx:
	kfree(aq->ctx);
	return -ENOMEM;
}

static void softhca_aq_free(struct softhca_dev *sdev)
{
	struct softhca_aq *aq = &sdev->aq;
	struct device *dma = &sdev->pdev->dev;
	u32 entries = BIT(aq->log_size);

	dma_free_coherent(dma, entries * sizeof(*aq->cq), aq->cq, aq->cq_dma);
	dma_free_coherent(dma, entries * SHCA_AQ_ENTRY_SIZE, aq->sq,
			  aq->sq_dma);
	bitmap_free(aq->ctx_busy);
	kfree(aq->ctx);
}

/* Bring-up handshake, spec §4 steps 3 to 5; MSI-X is already enabled. */
int softhca_aq_init(struct softhca_dev *sdev)
{
	struct softhca_aq *aq = &sdev->aq;
	struct pci_dev *pdev = sdev->pdev;
	u32 status;
	int err;

	aq->log_size = min_t(u32, SOFTHCA_AQ_LOG_SIZE, sdev->caps.max_aq_log);
	if (aq->log_size < SHCA_RING_LOG_MIN) {
		dev_err(&pdev->dev, "bad MAX_AQ_LOG %u\n", sdev->caps.max_aq_log);
		return -EIO;
	}
	aq->sq_tail = 0;
	aq->cq_head = 0;
	aq->cq_phase = SHCA_PHASE_BIT;
	aq->dead = false;
	spin_lock_init(&aq->lock);
	/* At most min(AQ, ACQ) - 1 commands outstanding. */
	sema_init(&aq->avail, BIT(aq->log_size) - 1);

	err = softhca_aq_alloc(sdev);
	if (err)
		return err;

	snprintf(sdev->irq_name[SHCA_VEC_ADMIN], sizeof(sdev->irq_name[0]),
		 "softhca-aq@pci:%s", pci_name(pdev));
	err = request_irq(pci_irq_vector(pdev, SHCA_VEC_ADMIN), softhca_aq_irq,
			  0, sdev->irq_name[SHCA_VEC_ADMIN], sdev);
	if (err)
		goto err_free;

	softhca_wr64(sdev, SHCA_REG_AQ_BASE_LO, aq->sq_dma);
	softhca_wr64(sdev, SHCA_REG_ACQ_BASE_LO, aq->cq_dma);
	softhca_wr32(sdev, SHCA_REG_AQ_LOG_SIZE, aq->log_size);
	softhca_wr32(sdev, SHCA_REG_ACQ_LOG_SIZE, aq->log_size);
	softhca_wr32(sdev, SHCA_REG_CTRL, SHCA_CTRL_EN);

	/* The device decides before the CTRL write completes; allow slack. */
	err = readl_poll_timeout(sdev->regs + SHCA_REG_STATUS, status,
				 status & (SHCA_STATUS_RDY | SHCA_STATUS_FATAL),
				 1000, 1000000);
	if (err || !(status & SHCA_STATUS_RDY)) {
		if (!softhca_aq_check_fatal(sdev))
			dev_err(&pdev->dev, "device not ready, STATUS %#x\n",
				status);
		err = -EIO;
		goto err_disable;
	}

	return 0;

err_disable:
	softhca_wr32(sdev, SHCA_REG_CTRL, 0);
	free_irq(pci_irq_vector(pdev, SHCA_VEC_ADMIN), sdev);
err_free:
	softhca_aq_free(sdev);
	return err;
}

/*
 * Clearing CTRL.EN drops every device object and stops all DMA (spec §4
 * step 6), after which the rings can be freed.
 */
void softhca_aq_destroy(struct softhca_dev *sdev)
{
	softhca_wr32(sdev, SHCA_REG_CTRL, 0);
	free_irq(pci_irq_vector(sdev->pdev, SHCA_VEC_ADMIN), sdev);
	softhca_aq_free(sdev);
}
