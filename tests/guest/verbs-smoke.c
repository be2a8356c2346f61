// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Runs in a softhca guest: opens softhca0 through the provider and checks
 * what a verbs program sees before any QP exists: device and port
 * attributes, RoCE v2 GIDs, protection domains in several contexts.
 * Prints one line per failed check and exits non-zero if any failed.
 *
 *   verbs-smoke [DEVICE [GID]]     DEVICE defaults to softhca0; GID, an
 *                                  address that must be in the GID table
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "guest-util.h"

#define NUM_PDS 64


static void check_device(struct ibv_context *ctx)
{
	struct ibv_device_attr_ex attr;
	struct ibv_port_attr port;

	GUEST_CHECK(!ibv_query_device_ex(ctx, NULL, &attr), "query_device_ex");
	GUEST_CHECK(attr.orig_attr.vendor_id == 0x1af4, "vendor 0x%x",
	      attr.orig_attr.vendor_id);
	GUEST_CHECK(attr.orig_attr.vendor_part_id == 0x10f0, "part 0x%x",
	      attr.orig_attr.vendor_part_id);
	GUEST_CHECK(attr.orig_attr.phys_port_cnt == 1, "%u ports",
	      attr.orig_attr.phys_port_cnt);
	GUEST_CHECK(attr.orig_attr.max_pd >= NUM_PDS, "max_pd %d",
	      attr.orig_attr.max_pd);

	GUEST_CHECK(!ibv_query_port(ctx, 1, &port), "query_port");
	GUEST_CHECK(port.state == IBV_PORT_ACTIVE, "state %s",
	      ibv_port_state_str(port.state));
	GUEST_CHECK(port.link_layer == IBV_LINK_LAYER_ETHERNET, "link layer %u",
	      port.link_layer);
	GUEST_CHECK(port.gid_tbl_len > 0, "gid_tbl_len %d", port.gid_tbl_len);
}

/* Every GID must be RoCE v2, and the expected address must be among them. */
static void check_gids(struct ibv_context *ctx, const char *want)
{
	struct ibv_gid_entry entries[32];
	char text[INET6_ADDRSTRLEN];
	ssize_t n;
	int found = 0;

	n = ibv_query_gid_table(ctx, entries, 32, 0);
	GUEST_CHECK(n > 0, "query_gid_table returned %zd", n);
	for (ssize_t i = 0; i < n; i++) {
		GUEST_CHECK(entries[i].gid_type == IBV_GID_TYPE_ROCE_V2,
		      "GID %u type %u", entries[i].gid_index,
		      entries[i].gid_type);
		inet_ntop(AF_INET6, entries[i].gid.raw, text, sizeof(text));
		if (want && !strcmp(text, want))
			found = 1;
	}
	GUEST_CHECK(!want || found, "no GID %s", want);
}

static void check_pds(struct ibv_context *ctx, struct ibv_context *ctx2)
{
	struct ibv_pd *pds[NUM_PDS];

	for (int i = 0; i < NUM_PDS; i++) {
		pds[i] = ibv_alloc_pd(i % 2 ? ctx2 : ctx);
		GUEST_CHECK(pds[i], "alloc_pd %d", i);
	}
	for (int i = 0; i < NUM_PDS; i++)
		if (pds[i])
			GUEST_CHECK(!ibv_dealloc_pd(pds[i]), "dealloc_pd %d", i);
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "softhca0";
	const char *gid = argc > 2 ? argv[2] : NULL;
	struct ibv_context *ctx, *ctx2;

	ctx = guest_open_device(name);
	ctx2 = guest_open_device(name);
	if (!ctx || !ctx2) {
		printf("FAIL cannot open %s twice\n", name);
		return 1;
	}
	check_device(ctx);
	check_gids(ctx, gid);
	check_pds(ctx, ctx2);
	GUEST_CHECK(!ibv_close_device(ctx2), "close");
	GUEST_CHECK(!ibv_close_device(ctx), "close");
	if (!guest_failures)
		printf("verbs-smoke: %s OK\n", name);
	return guest_failures ? 1 : 0;
}
