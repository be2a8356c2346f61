/*
 * softhca: an RDMA host channel adapter with one RoCEv2 port
 *
 * PCI and QOM glue: BARs, MSI-X, properties, reset and the netdev.  The
 * register block, the admin queue, event queues and the NIC function live
 * in their own files; the interface is specified in spec/softhca.md.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bitmap.h"
#include "qemu/module.h"
#include "qapi/error.h"
#include "hw/pci/msix.h"
#include "hw/pci/pcie.h"
#include "hw/qdev-properties.h"
#include "softhca-compat.h"
#include "softhca-rdma.h"
#include "softhca-migration.h"
#include "trace.h"

#define SOFTHCA_MIN_VECTORS     (SHCA_VEC_FIRST_EQ + 1)
#define SOFTHCA_MAX_VECTORS     64
#define SOFTHCA_MAX_DB_PAGES    4096
#define SOFTHCA_PCIE_CAP_OFFSET 0xa0

/* The port's link went up or down: PORT_CHANGE on every EQ (spec §7). */
static void softhca_link_changed_engine(void *opaque)
{
    SofthcaState *s = opaque;
    bool up = !qemu_get_queue(s->nic)->link_down;

    trace_softhca_link(up);
    softhca_eq_post_all(s, SHCA_EQE_PORT_CHANGE, 1,
                        up ? SHCA_PORT_LINK_UP : 0);
}

static void softhca_link_status_changed(NetClientState *nc)
{
    SofthcaState *s = qemu_get_nic_opaque(nc);

    softhca_engine_call(s, softhca_link_changed_engine, s);
}

static NetClientInfo softhca_net_info = {
    .type = NET_CLIENT_DRIVER_NIC,
    .size = sizeof(NICState),
    .can_receive = softhca_nic_can_receive,
    .receive = softhca_nic_receive,
    .link_status_changed = softhca_link_status_changed,
};

static void softhca_reset_engine(void *opaque)
{
    softhca_regs_reset(opaque);
}

static bool softhca_check_props(SofthcaState *s, Error **errp)
{
    if (s->vectors < SOFTHCA_MIN_VECTORS || s->vectors > SOFTHCA_MAX_VECTORS) {
        error_setg(errp, "softhca: vectors must be %u..%u",
                   SOFTHCA_MIN_VECTORS, SOFTHCA_MAX_VECTORS);
        return false;
    }
    if (s->db_pages < 2 || s->db_pages > SOFTHCA_MAX_DB_PAGES ||
        !is_power_of_2(s->db_pages)) {
        error_setg(errp, "softhca: db-pages must be a power of 2, 2..%u",
                   SOFTHCA_MAX_DB_PAGES);
        return false;
    }
    return softhca_fault_check_props(s, errp);
}

static void softhca_realize(PCIDevice *pdev, Error **errp)
{
    SofthcaState *s = SOFTHCA(pdev);
    DeviceState *dev = DEVICE(pdev);

    if (!softhca_check_props(s, errp)) {
        return;
    }

    pdev->config[PCI_INTERRUPT_PIN] = 0;    /* MSI-X only */

    if (msix_init_exclusive_bar(pdev, s->vectors, SHCA_BAR_MSIX, errp)) {
        return;
    }
    for (unsigned i = 0; i < s->vectors; i++) {
        msix_vector_use(pdev, i);
    }

    if (pci_is_express(pdev)) {
        if (pcie_endpoint_cap_init(pdev, SOFTHCA_PCIE_CAP_OFFSET) < 0) {
            error_setg(errp, "softhca: cannot add the PCIe capability");
            msix_uninit_exclusive_bar(pdev);
            return;
        }
        pcie_cap_flr_init(pdev);
    }

    softhca_iothread_init(s, softhca_port_receive);
    memory_region_init_io(&s->regs, OBJECT(s), &softhca_regs_ops, s,
                          "softhca-regs", SHCA_REGS_SIZE);
    pci_register_bar(pdev, SHCA_BAR_REGS, PCI_BASE_ADDRESS_SPACE_MEMORY,
                     &s->regs);
    softhca_db_init(s);
    pci_register_bar(pdev, SHCA_BAR_DB, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->db);

    s->pd_bits = SOFTHCA_MAX_PD + 1;
    s->pd_map = bitmap_new(s->pd_bits);
    s->uctx_bits = s->db_pages;
    s->uctx_map = bitmap_new(s->uctx_bits);
    s->cqs = g_new0(SofthcaCq, SOFTHCA_MAX_CQ);
    s->qps = g_new0(SofthcaQp, SOFTHCA_QP_TABLE);
    s->mrs = g_new0(SofthcaMr, SOFTHCA_MR_TABLE);
    s->srqs = g_new0(SofthcaSrq, SOFTHCA_MAX_SRQ + 1);
    s->xrcd_bits = SOFTHCA_MAX_XRCD + 1;
    s->xrcd_map = bitmap_new(s->xrcd_bits);
    softhca_fault_init(s);
    softhca_tp_init(s);
    softhca_loopback_init(s, softhca_port_receive);
    softhca_admin_init(s);
    softhca_nic_init(s);
    softhca_work_init(s);

    qemu_macaddr_default_if_unset(&s->conf.macaddr);
    s->nic = qemu_new_nic(&softhca_net_info, &s->conf,
                          object_get_typename(OBJECT(s)), dev->id,
                          &dev->mem_reentrancy_guard, s);
    qemu_format_nic_info_str(qemu_get_queue(s->nic), s->conf.macaddr.a);

    softhca_regs_reset(s);
}

/*
 * The engine's bottom halves and timers go in its own thread, which runs
 * none of them afterwards.
 */
static void softhca_exit_engine(void *opaque)
{
    SofthcaState *s = opaque;

    softhca_regs_reset(s);
    softhca_fault_exit(s);
    softhca_tp_exit(s);
    softhca_loopback_exit(s);
    softhca_admin_exit(s);
    softhca_nic_exit(s);
    softhca_db_exit(s);
    softhca_iothread_stop(s);
}

static void softhca_exit(PCIDevice *pdev)
{
    SofthcaState *s = SOFTHCA(pdev);

    softhca_work_exit(s);
    softhca_engine_call(s, softhca_exit_engine, s);
    softhca_iothread_exit(s);
    qemu_del_nic(s->nic);
    g_free(s->pd_map);
    g_free(s->uctx_map);
    g_free(s->cqs);
    g_free(s->qps);
    g_free(s->mrs);
    g_free(s->srqs);
    g_free(s->xrcd_map);
    msix_unuse_all_vectors(pdev);
    msix_uninit_exclusive_bar(pdev);
}

/* A Function Level Reset runs the reset of CTRL and RESET (spec §10). */
static void softhca_write_config(PCIDevice *pdev, uint32_t addr,
                                 uint32_t val, int len)
{
    pci_default_write_config(pdev, addr, val, len);
    if (pci_is_express(pdev)) {
        pcie_cap_flr_write_config(pdev, addr, val, len);
    }
}

static void softhca_reset_hold(Object *obj, ResetType type)
{
    SofthcaState *s = SOFTHCA(obj);

    trace_softhca_reset("device");
    softhca_engine_call(s, softhca_reset_engine, s);
}

#define DEFINE_SOFTHCA_FAULT_PROP(name, dir, kind) \
    DEFINE_PROP_UINT32(name, SofthcaState, \
                       fault.path[SOFTHCA_FAULT_##dir] \
                           .per_mille[SOFTHCA_FAULT_##kind], 0)

static const Property softhca_properties[] = {
    DEFINE_NIC_PROPERTIES(SofthcaState, conf),
    DEFINE_PROP_UINT32("vectors", SofthcaState, vectors, 8),
    DEFINE_PROP_UINT32("db-pages", SofthcaState, db_pages, 256),
    /* the engine's thread (spec §12.1); without it, the main loop */
    DEFINE_PROP_LINK("iothread", SofthcaState, iothread, TYPE_IOTHREAD,
                     IOThread *),
    /* Until the data path is complete: CAPS.QP and the §13 commands. */
    DEFINE_PROP_BOOL("x-caps-qp", SofthcaState, caps_qp, true),
    /* queue every doorbell for the bottom half, as a lockless write does */
    DEFINE_PROP_BOOL("x-doorbell-handoff", SofthcaState, db_handoff, false),
    /* For a peer running rdma_rxe of Linux 6.12 (spec §12, §16). */
    DEFINE_PROP_BOOL("x-rxe-flush-icrc", SofthcaState, rxe_flush_icrc, false),
    /* Host memory for the transport state of all QPs (spec §19). */
    DEFINE_PROP_SIZE("transport-mem", SofthcaState, tp_mem_max,
                     SOFTHCA_TRANSPORT_MEM_DEFAULT),
    /* Fault injection on the RoCEv2 frames, per mille (spec §12). */
    DEFINE_SOFTHCA_FAULT_PROP("fault-tx-drop", TX, DROP),
    DEFINE_SOFTHCA_FAULT_PROP("fault-tx-dup", TX, DUP),
    DEFINE_SOFTHCA_FAULT_PROP("fault-tx-reorder", TX, REORDER),
    DEFINE_SOFTHCA_FAULT_PROP("fault-rx-drop", RX, DROP),
    DEFINE_SOFTHCA_FAULT_PROP("fault-rx-dup", RX, DUP),
    DEFINE_SOFTHCA_FAULT_PROP("fault-rx-reorder", RX, REORDER),
    DEFINE_PROP_UINT64("fault-seed", SofthcaState, fault.seed, 0),
};

static void softhca_instance_init(Object *obj)
{
    SofthcaState *s = SOFTHCA(obj);

    /* what of transport-mem the QPs have reserved, for the monitor */
    object_property_add_uint64_ptr(obj, "x-transport-mem-reserved",
                                   &s->tp_mem, OBJ_PROP_FLAG_READ);
    /* the most work one callback did, in units of spec §19.3 */
    object_property_add_uint64_ptr(obj, "x-work-max", &s->work_max,
                                   OBJ_PROP_FLAG_READ);
    /* how often the engine's bottom halves were woken */
    object_property_add_uint64_ptr(obj, "x-wakeups", &s->wakeups,
                                   OBJ_PROP_FLAG_READ);
}

static void softhca_class_init(ObjectClass *klass, SofthcaClassData *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    ResettableClass *rc = RESETTABLE_CLASS(klass);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(klass);

    pc->realize = softhca_realize;
    pc->exit = softhca_exit;
    pc->config_write = softhca_write_config;
    pc->vendor_id = SHCA_PCI_VENDOR_ID;
    pc->device_id = SHCA_PCI_DEVICE_ID;
    pc->revision = SHCA_PCI_REVISION;
    pc->class_id = PCI_CLASS_NETWORK_ETHERNET;
    pc->subsystem_vendor_id = PCI_SUBVENDOR_ID_REDHAT_QUMRANET;
    pc->subsystem_id = PCI_SUBDEVICE_ID_QEMU;

    rc->phases.hold = softhca_reset_hold;

    dc->desc = "softhca RDMA adapter (RoCEv2)";
    dc->vmsd = &vmstate_softhca;
    device_class_set_props(dc, softhca_properties);
    set_bit(DEVICE_CATEGORY_NETWORK, dc->categories);
}

static const TypeInfo softhca_info = {
    .name = TYPE_SOFTHCA,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(SofthcaState),
    .instance_init = softhca_instance_init,
    .class_init = softhca_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_PCIE_DEVICE },
        { }
    },
};

static void softhca_register_types(void)
{
    type_register_static(&softhca_info);
}

type_init(softhca_register_types)
