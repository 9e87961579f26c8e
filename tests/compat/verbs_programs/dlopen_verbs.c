/* A program that is not linked with libibverbs: it dlopen()s libibverbs.so.1 at run time, as
 * plugin-style programs and language bindings do (UCX, libfabric and MPI's verbs components,
 * ctypes/FFI wrappers), and finds every verb with dlsym(). Run through `softib run`, the
 * library it opens is softib's drop-in; the checks below prove that and then use it: the
 * device list and queries against what softib says about the fabric, then two RC QPs on
 * the same port connected to each other (HCA loopback) moving data with SEND, RDMA WRITE,
 * RDMA READ and both atomics, every byte and every completion checked. Twice: the first time
 * everything is destroyed before dlclose(); the second time (dlopen again) the library is
 * unloaded with the device still open, and the program must go on unharmed.
 *
 * Usage: dlopen_verbs EXPECTED_NODE_GUID EXPECTED_LID   (hex GUID, decimal LID; from softib stat)
 * Exit status 0 when every check held; each failed check prints "FAIL: ..." and exits 1.
 *
 * Only inline wrappers of verbs.h that go through the context's ops table (ibv_post_send,
 * ibv_post_recv, ibv_poll_cq) are used: they need no symbol from the library. The build
 * proves the program has no libibverbs dependency (the test reads its dynamic section).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <endian.h>
#include <inttypes.h>
#include <infiniband/verbs.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(cond, ...)                      \
  do {                                        \
    if (!(cond)) {                            \
      fprintf(stderr, "FAIL: " __VA_ARGS__);  \
      fprintf(stderr, " [%s]\n", #cond);      \
      exit(1);                                \
    }                                         \
  } while (0)

/* The verbs this program resolves by name. */
static struct {
  struct ibv_device** (*get_device_list)(int*);
  void (*free_device_list)(struct ibv_device**);
  const char* (*get_device_name)(struct ibv_device*);
  __be64 (*get_device_guid)(struct ibv_device*);
  struct ibv_context* (*open_device)(struct ibv_device*);
  int (*close_device)(struct ibv_context*);
  int (*query_device)(struct ibv_context*, struct ibv_device_attr*);
  int (*query_port)(struct ibv_context*, uint8_t, struct ibv_port_attr*);
  int (*query_gid)(struct ibv_context*, uint8_t, int, union ibv_gid*);
  struct ibv_pd* (*alloc_pd)(struct ibv_context*);
  int (*dealloc_pd)(struct ibv_pd*);
  struct ibv_mr* (*reg_mr)(struct ibv_pd*, void*, size_t, int);
  int (*dereg_mr)(struct ibv_mr*);
  struct ibv_cq* (*create_cq)(struct ibv_context*, int, void*, struct ibv_comp_channel*, int);
  int (*destroy_cq)(struct ibv_cq*);
  struct ibv_qp* (*create_qp)(struct ibv_pd*, struct ibv_qp_init_attr*);
  int (*modify_qp)(struct ibv_qp*, struct ibv_qp_attr*, int);
  int (*query_qp)(struct ibv_qp*, struct ibv_qp_attr*, int, struct ibv_qp_init_attr*);
  int (*destroy_qp)(struct ibv_qp*);
  const char* (*wc_status_str)(enum ibv_wc_status);
} V;

static void* lib;

static void* sym(const char* name) {
  void* p = dlsym(lib, name);
  CHECK(p != NULL, "dlsym(%s): %s", name, dlerror());
  return p;
}

static void resolve(void) {
  lib = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
  CHECK(lib != NULL, "dlopen(libibverbs.so.1): %s", dlerror());
  /* Which file did the loader pick? softib run puts softib's lib directory first. */
  struct link_map* map = NULL;
  CHECK(dlinfo(lib, RTLD_DI_LINKMAP, &map) == 0 && map != NULL, "dlinfo: %s", dlerror());
  printf("dlopen: %s\n", map->l_name);
  *(void**)&V.get_device_list = sym("ibv_get_device_list");
  *(void**)&V.free_device_list = sym("ibv_free_device_list");
  *(void**)&V.get_device_name = sym("ibv_get_device_name");
  *(void**)&V.get_device_guid = sym("ibv_get_device_guid");
  *(void**)&V.open_device = sym("ibv_open_device");
  *(void**)&V.close_device = sym("ibv_close_device");
  *(void**)&V.query_device = sym("ibv_query_device");
  *(void**)&V.query_port = sym("ibv_query_port");
  *(void**)&V.query_gid = sym("ibv_query_gid");
  *(void**)&V.alloc_pd = sym("ibv_alloc_pd");
  *(void**)&V.dealloc_pd = sym("ibv_dealloc_pd");
  *(void**)&V.reg_mr = sym("ibv_reg_mr");
  *(void**)&V.dereg_mr = sym("ibv_dereg_mr");
  *(void**)&V.create_cq = sym("ibv_create_cq");
  *(void**)&V.destroy_cq = sym("ibv_destroy_cq");
  *(void**)&V.create_qp = sym("ibv_create_qp");
  *(void**)&V.modify_qp = sym("ibv_modify_qp");
  *(void**)&V.query_qp = sym("ibv_query_qp");
  *(void**)&V.destroy_qp = sym("ibv_destroy_qp");
  *(void**)&V.wc_status_str = sym("ibv_wc_status_str");
}

/* ---- the data path ---- */

enum { kBuf = 64 * 1024, kMsg = 20000 /* several packets at any MTU */ };

struct side {
  struct ibv_qp* qp;
  uint8_t* buf;
  struct ibv_mr* mr;
  struct ibv_cq* cq; /* the QP's send and receive CQ */
};

static struct ibv_wc wait_one(struct ibv_cq* cq, uint64_t wr_id) {
  struct ibv_wc wc;
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    int n = ibv_poll_cq(cq, 1, &wc);
    CHECK(n >= 0, "ibv_poll_cq returned %d", n);
    if (n == 1) break;
    clock_gettime(CLOCK_MONOTONIC, &t);
    CHECK(t.tv_sec - t0.tv_sec < 30, "no completion for wr_id %" PRIu64 " within 30 s", wr_id);
  }
  CHECK(wc.status == IBV_WC_SUCCESS, "wr_id %" PRIu64 ": completion %s (%d)", wc.wr_id,
        V.wc_status_str(wc.status), wc.status);
  CHECK(wc.wr_id == wr_id, "completion for wr_id %" PRIu64 ", expected %" PRIu64, wc.wr_id, wr_id);
  return wc;
}

static void post_send(struct side* s, enum ibv_wr_opcode op, uint64_t wr_id, uint32_t off, uint32_t len,
                      uint64_t raddr, uint32_t rkey) {
  struct ibv_sge sge = {.addr = (uintptr_t)(s->buf + off), .length = len, .lkey = s->mr->lkey};
  struct ibv_send_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
                           .send_flags = IBV_SEND_SIGNALED};
  if (op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP) {
    wr.wr.atomic.remote_addr = raddr;
    wr.wr.atomic.rkey = rkey;
  } else {
    wr.wr.rdma.remote_addr = raddr;
    wr.wr.rdma.rkey = rkey;
  }
  struct ibv_send_wr* bad = NULL;
  int rc = ibv_post_send(s->qp, &wr, &bad);
  CHECK(rc == 0, "ibv_post_send(opcode %d): %d", op, rc);
}

static void fill(uint8_t* p, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1103515245u + 12345u;
    p[i] = (uint8_t)(seed >> 16);
  }
}

static void to_rts(struct ibv_qp* qp, uint32_t remote_qpn, uint16_t dlid) {
  struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
                          .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                                             IBV_ACCESS_REMOTE_ATOMIC};
  CHECK(V.modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == 0,
        "modify_qp INIT");
  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = IBV_MTU_1024;
  a.dest_qp_num = remote_qpn;
  a.rq_psn = 0x123456;
  a.max_dest_rd_atomic = 4;
  a.min_rnr_timer = 12;
  a.ah_attr.dlid = dlid;
  a.ah_attr.port_num = 1;
  CHECK(V.modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                               IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) == 0,
        "modify_qp RTR");
  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = 0x123456;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.max_rd_atomic = 4;
  CHECK(V.modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                               IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC) == 0,
        "modify_qp RTS");
  struct ibv_qp_attr q;
  struct ibv_qp_init_attr init;
  CHECK(V.query_qp(qp, &q, IBV_QP_STATE | IBV_QP_DEST_QPN, &init) == 0, "query_qp");
  CHECK(q.qp_state == IBV_QPS_RTS && q.dest_qp_num == remote_qpn, "query_qp: state %d, dest QPN %#x",
        q.qp_state, q.dest_qp_num);
}

static struct {
  struct side sides[2];
  struct ibv_pd* pd;
  struct ibv_context* ctx;
} left_open;

/* One use of the library from dlopen to dlclose. With `tidy`, every object is destroyed and
 * the device closed first; without, the library is unloaded with the device open and its QPs
 * live, as a program unloading a plugin on an error path does. */
static void round_trip(uint64_t want_guid, unsigned want_lid, int tidy) {
  resolve();

  int n = -1;
  struct ibv_device** list = V.get_device_list(&n);
  CHECK(list != NULL && n >= 1 && list[n] == NULL, "ibv_get_device_list: %d devices", n);
  const char* name = V.get_device_name(list[0]);
  CHECK(strcmp(name, "softib0") == 0, "device 0 is \"%s\"", name);
  const uint64_t guid = be64toh(V.get_device_guid(list[0]));
  CHECK(guid == want_guid, "ibv_get_device_guid %#" PRIx64 ", softib stat says %#" PRIx64, guid, want_guid);
  printf("device: %s, node GUID %#" PRIx64 " (%d device(s))\n", name, guid, n);

  struct ibv_context* ctx = V.open_device(list[0]);
  CHECK(ctx != NULL, "ibv_open_device");
  struct ibv_device_attr da;
  memset(&da, 0xa5, sizeof da);
  CHECK(V.query_device(ctx, &da) == 0, "ibv_query_device");
  CHECK(be64toh(da.node_guid) == want_guid, "query_device node_guid %#" PRIx64, be64toh(da.node_guid));
  CHECK(da.phys_port_cnt == 1, "phys_port_cnt %u", da.phys_port_cnt);
  CHECK(da.max_qp > 0 && da.max_qp_wr >= 64 && da.max_cqe >= 64 && da.max_mr_size > 0 && da.max_sge >= 1,
        "query_device limits: max_qp %d max_qp_wr %d max_cqe %d", da.max_qp, da.max_qp_wr, da.max_cqe);
  CHECK(da.atomic_cap != IBV_ATOMIC_NONE && da.max_qp_rd_atom >= 1, "atomic_cap %d, max_qp_rd_atom %d",
        da.atomic_cap, da.max_qp_rd_atom);
  CHECK(da.fw_ver[0] != '\0' && memchr(da.fw_ver, '\0', sizeof da.fw_ver) != NULL, "fw_ver");
  printf("query_device: fw %s, vendor %#x, max_qp %d, max_qp_wr %d, max_cqe %d, atomic_cap %d\n", da.fw_ver,
         da.vendor_id, da.max_qp, da.max_qp_wr, da.max_cqe, da.atomic_cap);

  struct ibv_port_attr pa;
  memset(&pa, 0, sizeof pa);
  CHECK(V.query_port(ctx, 1, &pa) == 0, "ibv_query_port(1)");
  CHECK(pa.state == IBV_PORT_ACTIVE, "port state %d", pa.state);
  CHECK(pa.lid == want_lid && pa.lid != 0, "port LID %u, softib stat says %u", pa.lid, want_lid);
  CHECK(pa.sm_lid != 0, "SM LID 0");
  CHECK(pa.active_mtu >= IBV_MTU_256 && pa.active_mtu <= pa.max_mtu, "active_mtu %d max_mtu %d", pa.active_mtu,
        pa.max_mtu);
  CHECK(pa.link_layer == IBV_LINK_LAYER_UNSPECIFIED || pa.link_layer == IBV_LINK_LAYER_INFINIBAND,
        "link_layer %d", pa.link_layer);
  struct ibv_port_attr none;
  CHECK(V.query_port(ctx, 2, &none) != 0, "ibv_query_port(2) on a one-port CA succeeded");
  union ibv_gid gid;
  CHECK(V.query_gid(ctx, 1, 0, &gid) == 0, "ibv_query_gid(1, 0)");
  CHECK(be64toh(gid.global.subnet_prefix) == 0xfe80000000000000ull && gid.global.interface_id != 0,
        "GID[0] prefix %#" PRIx64, be64toh(gid.global.subnet_prefix));
  printf("query_port: ACTIVE, LID %u, SM LID %u, active MTU %d, GID[0] interface id %#" PRIx64 "\n", want_lid,
         pa.sm_lid, pa.active_mtu, be64toh(gid.global.interface_id));

  struct ibv_pd* pd = V.alloc_pd(ctx);
  CHECK(pd != NULL, "ibv_alloc_pd");
  struct side s[2];
  for (int i = 0; i < 2; ++i) {
    s[i].cq = V.create_cq(ctx, 64, NULL, NULL, 0);
    CHECK(s[i].cq != NULL && s[i].cq->cqe >= 64, "ibv_create_cq");
    s[i].buf = aligned_alloc(4096, kBuf);
    CHECK(s[i].buf != NULL, "aligned_alloc");
    memset(s[i].buf, 0, kBuf);
    s[i].mr = V.reg_mr(pd, s[i].buf, kBuf,
                       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                           IBV_ACCESS_REMOTE_ATOMIC);
    CHECK(s[i].mr != NULL && s[i].mr->addr == s[i].buf && s[i].mr->length == kBuf, "ibv_reg_mr");
    struct ibv_qp_init_attr ia = {.send_cq = s[i].cq, .recv_cq = s[i].cq, .qp_type = IBV_QPT_RC,
                                  .cap = {.max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
                                          .max_recv_sge = 1}};
    s[i].qp = V.create_qp(pd, &ia);
    CHECK(s[i].qp != NULL && s[i].qp->qp_num != 0 && s[i].qp->qp_type == IBV_QPT_RC, "ibv_create_qp");
  }
  to_rts(s[0].qp, s[1].qp->qp_num, (uint16_t)want_lid);
  to_rts(s[1].qp, s[0].qp->qp_num, (uint16_t)want_lid);
  printf("QPs: %#x <-> %#x, RTS, loopback on LID %u\n", s[0].qp->qp_num, s[1].qp->qp_num, want_lid);

  /* SEND: s0 -> s1 into a posted receive. */
  fill(s[0].buf, kMsg, 1);
  struct ibv_sge rsge = {.addr = (uintptr_t)s[1].buf, .length = kBuf, .lkey = s[1].mr->lkey};
  struct ibv_recv_wr rwr = {.wr_id = 100, .sg_list = &rsge, .num_sge = 1}, *rbad = NULL;
  CHECK(ibv_post_recv(s[1].qp, &rwr, &rbad) == 0, "ibv_post_recv");
  post_send(&s[0], IBV_WR_SEND, 1, 0, kMsg, 0, 0);
  struct ibv_wc a = wait_one(s[0].cq, 1), b = wait_one(s[1].cq, 100);
  CHECK(a.opcode == IBV_WC_SEND, "send completion opcode %d", a.opcode);
  CHECK(b.opcode == IBV_WC_RECV && b.byte_len == kMsg && b.qp_num == s[1].qp->qp_num, "receive: opcode %d, %u bytes",
        b.opcode, b.byte_len);
  CHECK(memcmp(s[0].buf, s[1].buf, kMsg) == 0, "SEND: the received bytes differ from the sent ones");
  printf("SEND %d bytes: ok\n", kMsg);

  /* RDMA WRITE: s0's bytes into s1's buffer at an offset. */
  fill(s[0].buf, kMsg, 2);
  post_send(&s[0], IBV_WR_RDMA_WRITE, 2, 0, kMsg, (uintptr_t)(s[1].buf + 4096), s[1].mr->rkey);
  a = wait_one(s[0].cq, 2);
  CHECK(a.opcode == IBV_WC_RDMA_WRITE, "write completion opcode %d", a.opcode);
  CHECK(memcmp(s[0].buf, s[1].buf + 4096, kMsg) == 0, "RDMA WRITE: the target bytes differ");
  printf("RDMA WRITE %d bytes: ok\n", kMsg);

  /* RDMA READ: s1's bytes back into s0 at another offset. */
  fill(s[1].buf + 8192, kMsg, 3);
  post_send(&s[0], IBV_WR_RDMA_READ, 3, 32768, kMsg, (uintptr_t)(s[1].buf + 8192), s[1].mr->rkey);
  a = wait_one(s[0].cq, 3);
  CHECK(a.opcode == IBV_WC_RDMA_READ && a.byte_len == kMsg, "read completion opcode %d, %u bytes", a.opcode,
        a.byte_len);
  CHECK(memcmp(s[0].buf + 32768, s[1].buf + 8192, kMsg) == 0, "RDMA READ: the read bytes differ");
  printf("RDMA READ %d bytes: ok\n", kMsg);

  /* Atomics on an 8-byte word of s1; the original value lands in s0. */
  uint64_t* target = (uint64_t*)(s[1].buf + 60000);
  *target = 40;
  struct ibv_sge asge = {.addr = (uintptr_t)(s[0].buf + 128), .length = 8, .lkey = s[0].mr->lkey};
  struct ibv_send_wr fa = {.wr_id = 4, .sg_list = &asge, .num_sge = 1, .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
                           .send_flags = IBV_SEND_SIGNALED};
  fa.wr.atomic.remote_addr = (uintptr_t)target;
  fa.wr.atomic.rkey = s[1].mr->rkey;
  fa.wr.atomic.compare_add = 2;
  struct ibv_send_wr* bad = NULL;
  CHECK(ibv_post_send(s[0].qp, &fa, &bad) == 0, "post fetch-and-add");
  a = wait_one(s[0].cq, 4);
  CHECK(a.opcode == IBV_WC_FETCH_ADD, "fetch-add completion opcode %d", a.opcode);
  CHECK(*(uint64_t*)(s[0].buf + 128) == 40 && *target == 42, "FETCH_ADD: returned %" PRIu64 ", target %" PRIu64,
        *(uint64_t*)(s[0].buf + 128), *target);
  struct ibv_send_wr cs = fa;
  cs.wr_id = 5;
  cs.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
  cs.wr.atomic.compare_add = 42;
  cs.wr.atomic.swap = 0x0123456789abcdefull;
  CHECK(ibv_post_send(s[0].qp, &cs, &bad) == 0, "post compare-and-swap");
  a = wait_one(s[0].cq, 5);
  CHECK(a.opcode == IBV_WC_COMP_SWAP, "compare-swap completion opcode %d", a.opcode);
  CHECK(*(uint64_t*)(s[0].buf + 128) == 42 && *target == 0x0123456789abcdefull,
        "CMP_AND_SWP: returned %" PRIu64 ", target %#" PRIx64, *(uint64_t*)(s[0].buf + 128), *target);
  printf("FETCH_ADD and CMP_AND_SWP: ok\n");

  V.free_device_list(list);
  if (!tidy) {
    /* What the program still holds (it would release it all later, or at exit). */
    memcpy(left_open.sides, s, sizeof s);
    left_open.pd = pd;
    left_open.ctx = ctx;
    CHECK(dlclose(lib) == 0, "dlclose: %s", dlerror());
    printf("dlclose with the device open: ok\n");
    return;
  }
  for (int i = 0; i < 2; ++i) {
    CHECK(V.destroy_qp(s[i].qp) == 0, "ibv_destroy_qp");
    CHECK(V.dereg_mr(s[i].mr) == 0, "ibv_dereg_mr");
    free(s[i].buf);
    CHECK(V.destroy_cq(s[i].cq) == 0, "ibv_destroy_cq");
  }
  CHECK(V.dealloc_pd(pd) == 0, "ibv_dealloc_pd");
  CHECK(V.close_device(ctx) == 0, "ibv_close_device");
  CHECK(dlclose(lib) == 0, "dlclose: %s", dlerror());
  printf("dlclose after closing everything: ok\n");
}

int main(int argc, char** argv) {
  CHECK(argc == 3, "usage: dlopen_verbs EXPECTED_NODE_GUID EXPECTED_LID");
  const uint64_t want_guid = strtoull(argv[1], NULL, 16);
  const unsigned want_lid = (unsigned)strtoul(argv[2], NULL, 10);
  setvbuf(stdout, NULL, _IONBF, 0);
  round_trip(want_guid, want_lid, 1);
  round_trip(want_guid, want_lid, 0);
  /* The device left open has a progress thread (softib's engine) that runs on after
   * dlclose: give it time to run into whatever dlclose took away. Not a readiness wait. */
  struct timespec pause = {0, 300 * 1000 * 1000};
  nanosleep(&pause, NULL);
  printf("dlopen_verbs: all checks passed\n");
  return 0;
}
