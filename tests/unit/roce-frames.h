/*
 * RoCEv2 frames sent by Linux Soft-RoCE (rdma_rxe, kernel 6.12.95+deb12,
 * rdma-core 56.1, perftest), with the fields tshark 4.0 decodes in them.
 *
 * Captured between two lab nodes with rxe on virtio-net (node 1 =
 * 10.0.0.1 / fd00::1, node 2 = 10.0.0.2 / fd00::2, MAC 52:54:00:00:00:0N):
 *
 *   LAB_DIR=/tmp/roce-cap LAB_QEMU_ARGS="-object filter-dump,id=cap,\
 *     netdev=fab,file=/tmp/roce-pcap/node%i.pcap,maxlen=2048" \
 *     tests/lab up -n 2 --rxe 1,2
 *   then, server on node 2 (tests/lab exec -b 2 -- CMD) and client on
 *   node 1 (tests/lab exec 1 -- CMD 10.0.0.2), for each CMD of:
 *     ibv_rc_pingpong -d rxe0 -g 1 -n 1 -s 13      (GID 1: ::ffff:10.0.0.N)
 *     ibv_rc_pingpong -d rxe0 -g 2 -n 1 -s 13      (GID 2: fd00::N)
 *     ibv_ud_pingpong -d rxe0 -g 1 -n 1 -s 13
 *     ibv_uc_pingpong -d rxe0 -g 1 -n 1 -s 13
 *     ib_write_bw -d rxe0 -x 1 -s 601 -m 256 -n 5 -F [--write_with_imm]
 *     ib_read_bw -d rxe0 -x 1 -s 601 -m 256 -n 5 -F
 *     ib_atomic_bw -d rxe0 -x 1 -n 5 -F [-A CMP_AND_SWAP]
 *   tests/lab down
 *
 * The fields come from tshark -T fields -e infiniband.bth.opcode ...; its
 * Data length includes the pad bytes, payload_len here does not.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef SOFTHCA_ROCE_FRAMES_H
#define SOFTHCA_ROCE_FRAMES_H

typedef struct RoceFrame {
    const char *name;
    const char *hex;            /* the whole Ethernet frame */
    uint8_t opcode;
    bool se;
    bool mig_req;
    uint8_t pad;
    uint16_t pkey;
    uint32_t dest_qpn;
    bool ack_req;
    uint32_t psn;
    uint64_t va;                /* RETH or AtomicETH */
    uint32_t rkey;
    uint32_t dma_len;
    uint64_t swap_add;
    uint64_t compare;
    uint8_t syndrome;           /* AETH */
    uint32_t msn;
    uint64_t orig;              /* AtomicAckETH */
    uint32_t qkey;              /* DETH */
    uint32_t src_qpn;
    uint32_t imm;
    size_t payload_len;
} RoceFrame;

static const RoceFrame roce_frames[] = {
    {
        .name = "rc-send-only-ipv4",
        .hex =
            "52540000000252540000000108004500003cdb0c400040114ba20a0000010a00"
            "0002c12112b7002800000430ffff00000011801df9447b7b7b7b7b7b7b7b7b7b"
            "7b7b7b0000008193c00f",
        .opcode = 4, .pad = 3, .pkey = 0xffff, .dest_qpn = 0x000011,
        .ack_req = true, .psn = 1964356, .payload_len = 13,
    },
    {
        .name = "rc-ack-ipv4",
        .hex =
            "52540000000152540000000208004500003002a64000401124150a0000020a00"
            "0001c12112b7001c00001100ffff00000011001df9441f0000013024f9f9",
        .opcode = 17, .pad = 0, .pkey = 0xffff, .dest_qpn = 0x000011,
        .psn = 1964356, .syndrome = 0x1f, .msn = 0x1, .payload_len = 0,
    },
    {
        .name = "rc-send-only-ipv6",
        .hex =
            "52540000000252540000000186dd6000000000281140fd000000000000000000"
            "000000000001fd000000000000000000000000000002c14412b7002800000430"
            "ffff0000001280c047b77b7b7b7b7b7b7b7b7b7b7b7b7b000000eeeeafed",
        .opcode = 4, .pad = 3, .pkey = 0xffff, .dest_qpn = 0x000012,
        .ack_req = true, .psn = 12601271, .payload_len = 13,
    },
    {
        .name = "rc-ack-ipv6",
        .hex =
            "52540000000152540000000286dd60000000001c1140fd000000000000000000"
            "000000000002fd000000000000000000000000000001c14412b7001c00001100"
            "ffff0000001200c047b71f0000014b580880",
        .opcode = 17, .pad = 0, .pkey = 0xffff, .dest_qpn = 0x000012,
        .psn = 12601271, .syndrome = 0x1f, .msn = 0x1, .payload_len = 0,
    },
    {
        .name = "ud-send-only",
        .hex =
            "525400000002525400000001080045000044e2e24000401143c40a0000010a00"
            "0002d07812b7003000006430ffff0000001300ec98be11111111000000137b7b"
            "7b7b7b7b7b7b7b7b7b7b7b00000048cb65eb",
        .opcode = 100, .pad = 3, .pkey = 0xffff, .dest_qpn = 0x000013,
        .psn = 15505598, .qkey = 0x11111111, .src_qpn = 0x13,
        .payload_len = 13,
    },
    {
        .name = "uc-send-only",
        .hex =
            "52540000000252540000000108004500003ce703400040113fab0a0000010a00"
            "0002c19012b7002800002430ffff00000014004a346e7b7b7b7b7b7b7b7b7b7b"
            "7b7b7b000000a1c5eb3b",
        .opcode = 36, .pad = 3, .pkey = 0xffff, .dest_qpn = 0x000014,
        .psn = 4863086, .payload_len = 13,
    },
    {
        .name = "rc-write-first",
        .hex =
            "52540000000252540000000108004500013cec1240004011399c0a0000010a00"
            "0002c1b912b7012800000600ffff0000001500083b92000055ab44a8f0000000"
            "064700000259352bf25efd327240b55d978c328899de2bff088be06bf025af1c"
            "837a888767bdb2591cb08b8ef041eb88cd1d1066fb3b6604c6466fb66b1ed2ef"
            "985a76ff17295833d9e4c1c925ac51f2ca6159c59cbfc9620539187157ea60f0"
            "44d6ef5cff488fd82c51a251fdf343c7559c8df15b5654618f6cd2e75732d79b"
            "08c6f7080e87e03ad8828bd576cf9dcb6b2abcc7801028107dfaf7d42cce6f34"
            "94673ca3ee1dddc69f699b153838e0a3629d6ae3ad92f32a8ceafeb8b86eed4c"
            "d529efc346cd89e63624fb6e5ddc11bf797ca2260e95519b7f4f5337bd408492"
            "6a7355b040de96760392e4606ef61fe772c20d80575e1bd7ae6f0e6baf92fe19"
            "0653ca46326048fe31b9",
        .opcode = 6, .pad = 0, .pkey = 0xffff, .dest_qpn = 0x000015,
        .psn = 539538, .va = 0x55ab44a8f000, .rkey = 0x647, .dma_len = 0x259,
        .payload_len = 256,
    },
    {
        .name = "rc-write-middle",
        .hex =
            "52540000000252540000000108004500012cec134000401139ab0a0000010a00"
            "0002c1b912b7011800000700ffff0000001500083b93bd35f2a1956097b44709"
            "76558aceb3a5a56114b3cdc446cbdd4c1ea79250084f85faf11a5b88cfa29245"
            "f71c13abc1b80cd66cd99ab2a477fec31f901327e09921d1b37c59821febc816"
            "07dbc1c994ce9f00a739b24cb0b00fcf4022f620bb18f16f944bf1b336b9ca3e"
            "958b072959a62901dfdb4d8f8b5c5fcb7e55ec3a6ddda902289ab55f547f9de9"
            "0ba412644a3b652916b2b8a10e176c8d6d58c7da3670dc5e0a92bd5e115a471c"
            "fe59814894e671aa992a4ba741b834ae10fb89466b65a576f762d409bd1c25bb"
            "75a6040a8d75b4269f00cde1b8028fc8fd180f697eb4df7516b37ed3cfa48f45"
            "4a934fd70803fda803cb89bbcd1884ca319333af4712d55f159e",
        .opcode = 7, .pad = 0, .pkey = 0xffff, .dest_qpn = 0x000015,
        .psn = 539539, .payload_len = 256,
    },
    {
        .name = "rc-write-last",
        .hex =
            "525400000002525400000001080045000088ec14400040113a4e0a0000010a00"
            "0002c1b912b7007400000830ffff0000001580083b94245dc6a3319547c0da91"
            "5329695b2d660330318cecfea570c9d603fc854a0fa9a7d54cd86a93984525eb"
            "6e8e479bf44acc26d7b8247c28ed522bead775f9801ccecdf538608d7d8579ec"
            "13c087080a532ee10b525d3340af5e0000005006081b",
        .opcode = 8, .pad = 3, .pkey = 0xffff, .dest_qpn = 0x000015,
        .ack_req = true, .psn = 539540, .payload_len = 89,
    },
    {
        .name = "rc-write-last-imm",
        .hex =
            "52540000000252540000000108004500008cec804000401139de0a0000010a00"
            "0002c1e412b7007800000930ffff0000001680f78d6100000000d59f9b8b25f3"
            "ce0839497a37f2120131aa9e939a232428c4ddea4bcf600b6e36aa09c1d0fc90"
            "d836d9526dcb646efd0e0d90a830b4d0f591ba40601b4cce51f6d712c6d4a29e"
            "0a7cf0774754e54463f2d50b2389dc181b9658000000c758948c",
        .opcode = 9, .pad = 3, .pkey = 0xffff, .dest_qpn = 0x000016,
        .ack_req = true, .psn = 16223585, .imm = 0x0, .payload_len = 89,
    },
    {
        .name = "rc-read-request",
        .hex =
            "52540000000252540000000108004500003ceca1400040113a0d0a0000010a00"
            "0002c21112b7002800000c00ffff000000178027df6e0000564fb1cc20000000"
            "0850000002595473d58d",
        .opcode = 12, .pad = 0, .pkey = 0xffff, .dest_qpn = 0x000017,
        .ack_req = true, .psn = 2613102, .va = 0x564fb1cc2000, .rkey = 0x850,
        .dma_len = 0x259, .payload_len = 0,
    },
    {
        .name = "rc-read-response-first",
        .hex =
            "5254000000015254000000020800450001300b0d400040111aae0a0000020a00"
            "0001c21112b7011c00000d00ffff000000170027df6e1f000001b532b75f7238"
            "d228f3644aae30bc3e14e1e1be03cf5c7a6742373cdde29e7097d028f64260c8"
            "6a542cb4025c70407052222f55f18bd058ce0794abe9331b8003437646a43eb0"
            "f86b65fac7d53b38275d677d4ef24da7c0543b6b3d6e87bd72ca33b86e716866"
            "dccd61a4a39cdccaf94347473594eef6e82a612598e8e20ab315c221872b8863"
            "f8e9079b85e3667e26adc55c42b4522adeb350769c32814f484370cf6ef83267"
            "e13a02661d68e44416aaa0585ef2823ca5d2b2410533904d77011ce5f94e4cdb"
            "884f41a6b726eacdd08a252e7ca86a217a1c637f50f3ccc7f4e8acee37f9c9bf"
            "480a65ff304fcd00d9f22e559a987715b5da9405cd61ccc2497812aabf75",
        .opcode = 13, .pad = 0, .pkey = 0xffff, .dest_qpn = 0x000017,
        .psn = 2613102, .syndrome = 0x1f, .msn = 0x1, .payload_len = 256,
    },
    {
        .name = "rc-read-response-middle",
        .hex =
            "52540000000152540000000208004500012c0b0e400040111ab10a0000020a00"
            "0001c21112b7011800000e00ffff000000170027df6fb080717940b983a5b9b4"
            "f586b4ce78e324137b9b283075bc35421d0104677ab4e7eb2d27a5b1cd5e65c2"
            "e419905cfcb46f784f97a8c454de0771df0bd859c0c045ede7ea9eb44803762c"
            "1d078819bbf8910b8f3acfe318d655f7e22d51a2ed968fd5802e89c83100f44e"
            "077c68c274f9cd04339de74b733c43556a94f7572a872caab5b672e6b66635bd"
            "e29d7f57964d5bcaea42155d7f58b3e9ecaa4016316dc0e62332cdd99802967b"
            "9f15d235622dff4c6f15aaee6d5dd75a0718703985311fa863ec81fcee17778d"
            "2c49c38f76c2dbe5d785d445e2ab9feac30f23484042f0a42f71a01d8817abb5"
            "606e44d6301fbb08a58f4d873bec71fefb94473cd737ce631338",
        .opcode = 14, .pad = 0, .pkey = 0xffff, .dest_qpn = 0x000017,
        .psn = 2613103, .payload_len = 256,
    },
    {
        .name = "rc-read-response-last",
        .hex =
            "52540000000152540000000208004500008c0b0f400040111b500a0000020a00"
            "0001c21112b7007800000f30ffff000000170027df701f000001e006a9802331"
            "97cee6f73c2acd6d4a8875ef18c27653aee851a97c98e553d0c55979457daadc"
            "4b91d388bba0f505296af4412c6b94da53e583cf7e69234e2e7cc774f9715045"
            "0224cdbec4c2c3ed2cb82e5823c23276a8b545000000a6a435c4",
        .opcode = 15, .pad = 3, .pkey = 0xffff, .dest_qpn = 0x000017,
        .psn = 2613104, .syndrome = 0x1f, .msn = 0x1, .payload_len = 89,
    },
    {
        .name = "rc-fetch-add",
        .hex =
            "525400000002525400000001080045000048ef314000401137710a0000010a00"
            "0002c24012b7003400001400ffff00000018809931bf000055eea7ca70000000"
            "09d900000000000000010000000000000000c07846f8",
        .opcode = 20, .pad = 0, .pkey = 0xffff, .dest_qpn = 0x000018,
        .ack_req = true, .psn = 10039743, .va = 0x55eea7ca7000,
        .rkey = 0x9d9, .swap_add = 0x1, .compare = 0x0, .payload_len = 0,
    },
    {
        .name = "rc-atomic-ack",
        .hex =
            "5254000000015254000000020800450000380b7e400040111b350a0000020a00"
            "0001c24012b7002400001200ffff00000018009931bf1f0000010d60886caae9"
            "6dd99e910687",
        .opcode = 18, .pad = 0, .pkey = 0xffff, .dest_qpn = 0x000018,
        .psn = 10039743, .syndrome = 0x1f, .msn = 0x1,
        .orig = 0xd60886caae96dd9, .payload_len = 0,
    },
    {
        .name = "rc-compare-swap",
        .hex =
            "525400000002525400000001080045000048f2c04000401133e20a0000010a00"
            "0002c27112b7003400001300ffff00000019804b8452000055b12b0a10000000"
            "0a7e00000000000000000000000000000000fcf6c14d",
        .opcode = 19, .pad = 0, .pkey = 0xffff, .dest_qpn = 0x000019,
        .ack_req = true, .psn = 4949074, .va = 0x55b12b0a1000, .rkey = 0xa7e,
        .swap_add = 0x0, .compare = 0x0, .payload_len = 0,
    },
};

#endif
