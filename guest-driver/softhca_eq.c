// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The driver's event queue (spec §9): one EQ on the first EQ vector, which
 * carries port state changes to the net_device and to ib_core, and the
 * events of CQs and QPs to their handlers.
 *
 * The EQ lock serializes the interrupt with softhca_eq_sync(): an object
 * leaves its xarray, then a sync, and no handler can still be using it.
 */

#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/log2.h>

#include "softhca.h"

static void softhca_eq_port_change(struct softhca_dev *sdev, u64 data)
{
	bool up = data & SHCA_PORT_LINK_UP;
	struct ib_event event = {
		.device = &sdev->ibdev,
		.element.port_num = SOFTHCA_PORT,
		.event = up ? IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR,
	};

	softhca_netdev_link_change(sdev, up);
	ib_dispatch_event(&event);
}

/* Consume every entry the device has handed over. */
static void softhca_eq_poll(struct softhca_dev *sdev)
{
	struct softhca_eq *eq = &sdev->eq;
	struct shca_eqe *eqe;

	for (;;) {
		eqe = &eq->ring[eq->ci];
		if ((READ_ONCE(eqe->phase) & SHCA_PHASE_BIT) != eq->phase)
			break;
		/* Read the rest of the entry only after its phase. */
		dma_rmb();

		switch (eqe->type) {
		case SHCA_EQE_PORT_CHANGE:
			softhca_eq_port_change(sdev, le64_to_cpu(eqe->data));
			break;
		case SHCA_EQE_COMPLETION:
		case SHCA_EQE_CQ_ERROR:
			softhca_cq_event(sdev, le32_to_cpu(eqe->obj),
					 eqe->type);
			break;
		case SHCA_EQE_QP_FATAL:
		case SHCA_EQE_QP_REQ_ERR:
		case SHCA_EQE_QP_ACCESS_ERR:
		case SHCA_EQE_COMM_EST:
		case SHCA_EQE_SQ_DRAINED:
		case SHCA_EQE_QP_LAST_WQE:
			softhca_qp_event(sdev, le32_to_cpu(eqe->obj),
					 eqe->type);
			break;
		case SHCA_EQE_SRQ_LIMIT:
			softhca_srq_event(sdev, le32_to_cpu(eqe->obj));
			break;
		default:
			dev_warn_ratelimited(&sdev->pdev->dev,
					     "unknown event type %u\n",
					     eqe->type);
			break;
		}

		eq->ci = (eq->ci + 1) & (eq->size - 1);
		if (!eq->ci)
			eq->phase ^= SHCA_PHASE_BIT;
	}
}

static void softhca_eq_arm(struct softhca_dev *sdev)
{
	struct softhca_eq *eq = &sdev->eq;

	softhca_wr32(sdev, SHCA_REG_EQ_DB(eq->eqn),
		     (eq->ci & SHCA_EQ_DB_CI_MASK) | SHCA_EQ_DB_ARM);
}

static bool softhca_eq_pending(struct softhca_eq *eq)
{
	return (READ_ONCE(eq->ring[eq->ci].phase) & SHCA_PHASE_BIT) ==
	       eq->phase;
}

/* Called with the EQ lock held. */
static void softhca_eq_process(struct softhca_dev *sdev)
{
	/*
	 * An event written after the last poll but before the arm raises no
	 * interrupt (the EQ was disarmed then), so look again after arming.
	 */
	do {
		softhca_eq_poll(sdev);
		softhca_eq_arm(sdev);
	} while (softhca_eq_pending(&sdev->eq));
}

static irqreturn_t softhca_eq_irq(int irq, void *data)
{
	struct softhca_dev *sdev = data;

	spin_lock(&sdev->eq.lock);
	softhca_eq_process(sdev);
	spin_unlock(&sdev->eq.lock);

	return IRQ_HANDLED;
}

/*
 * Deliver every event the device has written so far and wait for a
 * handler running elsewhere.  After a DESTROY command no event of the old
 * object is left behind; before an object is published no event of an
 * earlier one with the same number can reach it.
 */
void softhca_eq_sync(struct softhca_dev *sdev)
{
	unsigned long flags;

	spin_lock_irqsave(&sdev->eq.lock, flags);
	softhca_eq_process(sdev);
	spin_unlock_irqrestore(&sdev->eq.lock, flags);
}

int softhca_eq_init(struct softhca_dev *sdev)
{
	struct softhca_eq *eq = &sdev->eq;
	struct pci_dev *pdev = sdev->pdev;
	u32 log_size;
	int err;

	log_size = min_t(u32, SOFTHCA_EQ_LOG_SIZE,
			 ilog2(max_t(u32, sdev->caps.max_eqe, 2)));
	eq->size = BIT(log_size);
	eq->eqn = SOFTHCA_EQN;
	eq->ci = 0;
	eq->phase = SHCA_PHASE_BIT;
	spin_lock_init(&eq->lock);
	if (sdev->caps.max_eq <= eq->eqn ||
	    sdev->caps.num_vectors <= SOFTHCA_EQ_VECTOR)
		return -EIO;

	/* Coherent allocations are page aligned: one DIRECT 4 KiB page. */
	eq->ring = dma_alloc_coherent(&pdev->dev, PAGE_SIZE, &eq->dma,
				      GFP_KERNEL);
	if (!eq->ring)
		return -ENOMEM;

	snprintf(sdev->irq_name[SOFTHCA_EQ_VECTOR], sizeof(sdev->irq_name[0]),
		 "softhca-eq@pci:%s", pci_name(pdev));
	err = request_irq(pci_irq_vector(pdev, SOFTHCA_EQ_VECTOR),
			  softhca_eq_irq, 0, sdev->irq_name[SOFTHCA_EQ_VECTOR],
			  sdev);
	if (err)
		goto err_free_ring;

	err = softhca_cmd_create_eq(sdev, eq->eqn, SOFTHCA_EQ_VECTOR, log_size,
				    eq->dma, PAGE_SHIFT);
	if (err) {
		dev_err(&pdev->dev, "CREATE_EQ failed: %d\n", err);
		goto err_free_irq;
	}

	/* The EQ starts disarmed (spec §5.3). */
	softhca_eq_arm(sdev);
	/* Catch up with a link change that happened before the EQ existed. */
	softhca_netdev_link_sync(sdev);
	return 0;

err_free_irq:
	free_irq(pci_irq_vector(pdev, SOFTHCA_EQ_VECTOR), sdev);
err_free_ring:
	dma_free_coherent(&pdev->dev, PAGE_SIZE, eq->ring, eq->dma);
	return err;
}

void softhca_eq_destroy(struct softhca_dev *sdev)
{
	struct softhca_eq *eq = &sdev->eq;
	struct pci_dev *pdev = sdev->pdev;
	int err;

	err = softhca_cmd_destroy_eq(sdev, eq->eqn);
	free_irq(pci_irq_vector(pdev, SOFTHCA_EQ_VECTOR), sdev);
	/*
	 * Without a successful DESTROY_EQ the device may still write the
	 * ring until the function is disabled: rather leak it than let the
	 * device write into freed memory.
	 */
	if (err) {
		dev_err(&pdev->dev, "DESTROY_EQ failed: %d, leaking its ring\n",
			err);
		return;
	}
	dma_free_coherent(&pdev->dev, PAGE_SIZE, eq->ring, eq->dma);
}
