// Devices and contexts: ibv_get_device_list, ibv_open_device, the queries, asynchronous
// events and the sysfs helpers. Semantics are libibverbs' (rdma-core v44 verbs.c, device.c):
// the int verbs return 0 or an errno (some -1, where libibverbs does), the pointer verbs NULL
// with errno set.
#include <infiniband/verbs.h>

#include <endian.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include <fmt/format.h>

#include "compat/verbs/export.hpp"
#include "compat/verbs/objects.hpp"
#include "verbs/caps.hpp"

namespace softib::compat {

int fail(int err) {
  errno = err;
  return err;
}

int fail(const Status& s) { return fail(s.to_errno()); }

namespace {

// ---- the device registry ----

std::mutex devices_mu;
std::vector<std::unique_ptr<Device>>& devices() {
  static auto* d = new std::vector<std::unique_ptr<Device>>();  // lives as long as the process
  return *d;
}

Device* device_for(const provider::DeviceInfo& info, int index) {
  for (auto& d : devices())
    if (d->info.node_guid == info.node_guid && d->info.name == info.name) {
      d->info = info;
      d->index = index;
      return d.get();
    }
  auto d = std::make_unique<Device>();
  d->info = info;
  d->index = index;
  d->dev.node_type = IBV_NODE_CA;
  d->dev.transport_type = IBV_TRANSPORT_IB;
  fmt::format_to_n(d->dev.name, sizeof d->dev.name - 1, "{}", info.name);
  fmt::format_to_n(d->dev.dev_name, sizeof d->dev.dev_name - 1, "uverbs{}", index);
  fmt::format_to_n(d->dev.dev_path, sizeof d->dev.dev_path - 1, "/sys/class/infiniband_verbs/uverbs{}", index);
  fmt::format_to_n(d->dev.ibdev_path, sizeof d->dev.ibdev_path - 1, "/sys/class/infiniband/{}", info.name);
  devices().push_back(std::move(d));
  return devices().back().get();
}

Device* device_of(ibv_device* dev) {
  std::lock_guard lock(devices_mu);
  for (auto& d : devices())
    if (&d->dev == dev) return d.get();
  return nullptr;
}

// ---- queries ----

uint8_t ibv_speed(const link::PortSnapshot& p) {
  // IBA PortInfo LinkSpeedExtActive (1 FDR, 2 EDR, 4 HDR, 8 NDR) wins over LinkSpeedActive
  // (1 SDR, 2 DDR, 4 QDR), as the kernel's ib_query_port does; enum ibv_port_attr speeds.
  switch (p.ext_speed) {
    case 1: return 16;
    case 2: return 32;
    case 4: return 64;
    case 8: return 128;
    default: break;
  }
  return p.active_speed;
}

void fill_port_attr(const provider::PortAttributes& a, ibv_port_attr* out) {
  const link::PortSnapshot& p = a.port;
  *out = ibv_port_attr{};
  out->state = static_cast<ibv_port_state>(p.state);
  out->max_mtu = static_cast<ibv_mtu>(p.max_mtu);
  out->active_mtu = static_cast<ibv_mtu>(p.active_mtu);
  out->gid_tbl_len = a.gid_table_len;
  out->port_cap_flags = p.cap_mask;  // ibv_port_cap_flags are PortInfo:CapabilityMask's bits
  out->port_cap_flags2 = p.cap_mask2;
  out->max_msg_sz = 0x80000000u;     // IBA 9.4: 2^31 bytes
  out->bad_pkey_cntr = p.pkey_violations;
  out->qkey_viol_cntr = p.qkey_violations;
  out->pkey_tbl_len = a.pkey_table_len;
  out->lid = p.lid;
  out->sm_lid = p.sm_lid;
  out->lmc = p.lmc;
  out->max_vl_num = p.vl_cap;  // enum ibv_port_attr's encoding is PortInfo VLCap's
  out->sm_sl = p.sm_sl;
  out->subnet_timeout = p.subnet_timeout;
  out->init_type_reply = p.init_type_reply;
  out->active_width = p.active_width;
  out->active_speed = ibv_speed(p);
  out->phys_state = p.phys_state;
  out->link_layer = p.link_layer == link::kLinkLayerEthernet ? IBV_LINK_LAYER_ETHERNET : IBV_LINK_LAYER_INFINIBAND;
}

void fill_device_attr(const Context& c, ibv_device_attr* out) {
  const verbs::DeviceCaps& k = c.core->caps();
  const provider::DeviceInfo& info = c.core->info();
  *out = ibv_device_attr{};
  fmt::format_to_n(out->fw_ver, sizeof out->fw_ver - 1, "{}", SOFTIB_VERSION);
  out->node_guid = htobe64(info.node_guid.value());
  out->sys_image_guid = htobe64(info.sys_image_guid.value());
  out->max_mr_size = k.max_mr_size;
  out->page_size_cap = k.page_size_cap;
  out->vendor_id = k.vendor_id;
  out->vendor_part_id = k.vendor_part_id;
  out->hw_ver = k.hw_ver;
  out->max_qp = static_cast<int>(k.max_qp);
  out->max_qp_wr = static_cast<int>(k.max_qp_wr);
  out->device_cap_flags = k.device_cap_flags;
  out->max_sge = static_cast<int>(k.max_sge);
  out->max_sge_rd = static_cast<int>(k.max_sge_rd);
  out->max_cq = static_cast<int>(k.max_cq);
  out->max_cqe = static_cast<int>(k.max_cqe);
  out->max_mr = static_cast<int>(k.max_mr);
  out->max_pd = static_cast<int>(k.max_pd);
  out->max_qp_rd_atom = static_cast<int>(k.max_qp_rd_atom);
  out->max_ee_rd_atom = static_cast<int>(k.max_ee_rd_atom);
  out->max_res_rd_atom = static_cast<int>(k.max_res_rd_atom);
  out->max_qp_init_rd_atom = static_cast<int>(k.max_qp_init_rd_atom);
  out->max_ee_init_rd_atom = static_cast<int>(k.max_ee_init_rd_atom);
  out->atomic_cap = static_cast<ibv_atomic_cap>(k.atomic_cap);
  out->max_ee = static_cast<int>(k.max_ee);
  out->max_rdd = static_cast<int>(k.max_rdd);
  out->max_mw = static_cast<int>(k.max_mw);
  out->max_raw_ipv6_qp = static_cast<int>(k.max_raw_ipv6_qp);
  out->max_raw_ethy_qp = static_cast<int>(k.max_raw_ethy_qp);
  out->max_mcast_grp = static_cast<int>(k.max_mcast_grp);
  out->max_mcast_qp_attach = static_cast<int>(k.max_mcast_qp_attach);
  out->max_total_mcast_qp_attach = static_cast<int>(k.max_total_mcast_qp_attach);
  out->max_ah = static_cast<int>(k.max_ah);
  out->max_fmr = static_cast<int>(k.max_fmr);
  out->max_map_per_fmr = static_cast<int>(k.max_map_per_fmr);
  out->max_srq = static_cast<int>(k.max_srq);
  out->max_srq_wr = static_cast<int>(k.max_srq_wr);
  out->max_srq_sge = static_cast<int>(k.max_srq_sge);
  out->max_pkeys = k.max_pkeys;
  out->local_ca_ack_delay = k.local_ca_ack_delay;
  out->phys_port_cnt = k.phys_port_cnt;
}

// verbs_context.query_device_ex: what ibv_query_device_ex (and, through it, ibv_query_device)
// reports. attr_size is the caller's sizeof: older and newer programs differ.
int query_device_ex(ibv_context* context, const ibv_query_device_ex_input* input, ibv_device_attr_ex* attr,
                    size_t attr_size) {
  if (input != nullptr && input->comp_mask != 0) return EINVAL;
  if (attr_size < sizeof(attr->orig_attr)) return EINVAL;
  Context& c = *from(context);
  ibv_device_attr_ex full{};
  fill_device_attr(c, &full.orig_attr);
  // Completion timestamps are CLOCK_MONOTONIC nanoseconds: a 1 GHz "HCA clock" (kHz).
  full.completion_timestamp_mask = ~uint64_t{0};
  full.hca_core_clock = 1000000;
  full.device_cap_flags_ex = c.core->caps().device_cap_flags;
  full.phys_port_cnt_ex = c.core->caps().phys_port_cnt;
  std::memcpy(attr, &full, std::min(attr_size, sizeof full));
  return 0;
}

int query_port(ibv_context* context, uint8_t port_num, ibv_port_attr* attr, size_t attr_len) {
  auto a = core_of(context).query_port(port_num);
  if (!a) return EINVAL;
  ibv_port_attr full;
  fill_port_attr(*a, &full);
  std::memcpy(attr, &full, std::min(attr_len, sizeof full));
  return 0;
}

int query_rt_values(ibv_context*, ibv_values_ex* values) {
  if ((values->comp_mask & ~uint32_t{IBV_VALUES_MASK_RAW_CLOCK}) != 0) return EINVAL;
  if (values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK) {
    // The HCA clock of completion timestamps (query_device_ex: 1 GHz, CLOCK_MONOTONIC).
    const int64_t ns = SteadyClock::instance().now().time_since_epoch().count();
    values->raw_clock.tv_sec = 0;
    values->raw_clock.tv_nsec = ns;
  }
  return 0;
}

// ---- the ops no program can reach through softib ----

void* compat_unsupported() {
  errno = EOPNOTSUPP;
  return nullptr;
}

int compat_query_device(ibv_context* context, ibv_device_attr* attr) {
  fill_device_attr(*from(context), attr);
  return 0;
}

int compat_query_port(ibv_context* context, uint8_t port, _compat_ibv_port_attr* attr) {
  return query_port(context, port, reinterpret_cast<ibv_port_attr*>(attr), kCompatPortAttrSize);
}

ibv_mw* alloc_mw(ibv_pd*, ibv_mw_type) { return fail_null<ibv_mw>(EOPNOTSUPP); }
int bind_mw(ibv_qp*, ibv_mw*, ibv_mw_bind*) { return EOPNOTSUPP; }
int dealloc_mw(ibv_mw*) { return EOPNOTSUPP; }

std::string gid_string(const Gid& g) {
  std::string s;
  for (size_t i = 0; i < 16; i += 2) fmt::format_to(std::back_inserter(s), "{}{:02x}{:02x}", i ? ":" : "", g.raw()[i], g.raw()[i + 1]);
  return s;
}

// The sysfs files programs read through ibv_read_sysfs_file (ibv_devinfo: board_id), served
// for the devices softib shows; anything else is read from the real file system.
bool virtual_sysfs(const char* dir, const char* file, std::string* out) {
  std::lock_guard lock(devices_mu);
  for (auto& d : devices()) {
    const std::string ibdev = d->dev.ibdev_path;
    if (ibdev != dir) continue;
    const provider::DeviceInfo& i = d->info;
    const std::string f = file;
    if (f == "board_id") *out = fmt::format("SOFTIB_{}", i.node_id);
    else if (f == "node_desc") *out = i.description;
    else if (f == "fw_ver") *out = SOFTIB_VERSION;
    else if (f == "hca_type") *out = "softib";
    else if (f == "hw_rev") *out = fmt::format("{:#x}", i.revision);
    else if (f == "node_type") *out = "1: CA";
    else if (f == "node_guid") *out = gid_string(Gid(0, i.node_guid)).substr(20);
    else if (f == "sys_image_guid") *out = gid_string(Gid(0, i.sys_image_guid)).substr(20);
    else return false;
    return true;
  }
  return false;
}

}  // namespace

void install_context_ops(Context& c) {
  verbs_context& v = c.vctx;
  ibv_context_ops& ops = v.context.ops;
  using Compat = void* (*)();
  ops._compat_query_device = compat_query_device;
  ops._compat_query_port = compat_query_port;
  for (Compat* slot : {&ops._compat_alloc_pd, &ops._compat_dealloc_pd, &ops._compat_reg_mr, &ops._compat_rereg_mr,
                       &ops._compat_dereg_mr, &ops._compat_create_cq, &ops._compat_cq_event, &ops._compat_resize_cq,
                       &ops._compat_destroy_cq, &ops._compat_create_srq, &ops._compat_modify_srq,
                       &ops._compat_query_srq, &ops._compat_destroy_srq, &ops._compat_create_qp,
                       &ops._compat_query_qp, &ops._compat_modify_qp, &ops._compat_destroy_qp, &ops._compat_create_ah,
                       &ops._compat_destroy_ah, &ops._compat_attach_mcast, &ops._compat_detach_mcast,
                       &ops._compat_async_event})
    *slot = compat_unsupported;
  ops.alloc_mw = alloc_mw;
  ops.bind_mw = bind_mw;
  ops.dealloc_mw = dealloc_mw;
  install_data_ops(ops);
  install_resource_ops(c);
  v.query_port = query_port;
  v.query_device_ex = query_device_ex;
  v.query_rt_values = query_rt_values;
  v.sz = sizeof(verbs_context);
  v.context.abi_compat = __VERBS_ABI_IS_EXTENDED;
}

}  // namespace softib::compat

using namespace softib;
using namespace softib::compat;

// ---- devices ----

SOFTIB_EXPORT ibv_device** ibv_get_device_list(int* num_devices) {
  if (num_devices != nullptr) *num_devices = 0;
  auto list = provider::list_devices(provider::Options::from_environment());
  if (!list) {
    static std::once_flag warned;
    std::call_once(warned, [&] {
      std::fprintf(stderr, "softib: %s\n", list.error().message().c_str());
    });
    errno = list.error().to_errno();
    return nullptr;
  }
  auto** out = static_cast<ibv_device**>(std::calloc(list->size() + 1, sizeof(ibv_device*)));
  if (out == nullptr) return fail_null<ibv_device*>(ENOMEM);
  std::lock_guard lock(devices_mu);
  for (size_t i = 0; i < list->size(); ++i) out[i] = &device_for((*list)[i], static_cast<int>(i))->dev;
  if (num_devices != nullptr) *num_devices = static_cast<int>(list->size());
  return out;
}

SOFTIB_EXPORT void ibv_free_device_list(ibv_device** list) { std::free(list); }

SOFTIB_EXPORT const char* ibv_get_device_name(ibv_device* device) { return device->name; }

SOFTIB_EXPORT int ibv_get_device_index(ibv_device* device) {
  Device* d = device_of(device);
  return d == nullptr ? -1 : d->index;
}

SOFTIB_EXPORT __be64 ibv_get_device_guid(ibv_device* device) {
  Device* d = device_of(device);
  return d == nullptr ? 0 : htobe64(d->info.node_guid.value());
}

SOFTIB_EXPORT ibv_context* ibv_open_device(ibv_device* device) {
  Device* d = device_of(device);
  if (d == nullptr) return fail_null<ibv_context>(ENODEV);
  auto core = provider::Context::open(d->info, provider::Options::from_environment());
  if (!core) return fail_null<ibv_context>(core.error());
  auto* c = new Context();
  c->device = d;
  c->core = std::move(*core);
  c->vctx.priv = nullptr;
  ibv_context& ctx = c->vctx.context;
  ctx.device = device;
  ctx.cmd_fd = -1;  // there is no kernel device; nothing reads it
  ctx.async_fd = c->core->async_fd();
  ctx.num_comp_vectors = 1;
  pthread_mutex_init(&ctx.mutex, nullptr);
  install_context_ops(*c);
  return &ctx;
}

SOFTIB_EXPORT int ibv_close_device(ibv_context* context) {
  Context* c = from(context);
  pthread_mutex_destroy(&context->mutex);
  delete c;
  return 0;
}

SOFTIB_EXPORT ibv_context* ibv_import_device(int) { return fail_null<ibv_context>(EOPNOTSUPP); }

SOFTIB_EXPORT int ibv_query_device(ibv_context* context, ibv_device_attr* attr) {
  fill_device_attr(*from(context), attr);
  return 0;
}

// The exported ibv_query_port is for programs compiled against a verbs.h without the inline
// ___ibv_query_port: it writes the legacy prefix only (compat-facts.md A.3).
SOFTIB_EXPORT int ibv_query_port(ibv_context* context, uint8_t port_num, _compat_ibv_port_attr* attr) {
  return query_port(context, port_num, reinterpret_cast<ibv_port_attr*>(attr), kCompatPortAttrSize);
}

SOFTIB_EXPORT int ibv_query_gid(ibv_context* context, uint8_t port_num, int index, ibv_gid* gid) {
  auto g = core_of(context).query_gid(port_num, static_cast<uint32_t>(index));
  if (!g || index < 0) return -1;
  std::memcpy(gid->raw, g->raw().data(), 16);
  return 0;
}

SOFTIB_EXPORT int ibv_query_gid_type(ibv_context* context, uint8_t port_num, unsigned int index,
                                     ibv_gid_type_sysfs* type) {
  auto t = core_of(context).query_gid_type(port_num, index);
  if (!t) return -1;
  // What the port's sysfs gid_attrs/types says: "IB/RoCE v1" on InfiniBand, "RoCE v2".
  *type = *t == provider::GidType::kRoceV2 ? IBV_GID_TYPE_SYSFS_ROCE_V2 : IBV_GID_TYPE_SYSFS_IB_ROCE_V1;
  return 0;
}

SOFTIB_EXPORT int _ibv_query_gid_ex(ibv_context* context, uint32_t port_num, uint32_t gid_index,
                                        ibv_gid_entry* entry, uint32_t flags, size_t entry_size) {
  if (flags != 0 || entry_size < sizeof(ibv_gid_entry) || port_num > 255) return EINVAL;
  auto g = core_of(context).query_gid(static_cast<uint8_t>(port_num), gid_index);
  if (!g) return EINVAL;
  if (g->is_zero()) return ENODATA;  // an empty entry of the table (libibverbs' answer)
  *entry = ibv_gid_entry{};
  std::memcpy(entry->gid.raw, g->raw().data(), 16);
  entry->gid_index = gid_index;
  entry->port_num = port_num;
  auto t = core_of(context).query_gid_type(static_cast<uint8_t>(port_num), gid_index);
  entry->gid_type = t && *t == provider::GidType::kRoceV2 ? IBV_GID_TYPE_ROCE_V2 : IBV_GID_TYPE_IB;
  entry->ndev_ifindex = 0;
  return 0;
}

SOFTIB_EXPORT ssize_t _ibv_query_gid_table(ibv_context* context, ibv_gid_entry* entries, size_t max_entries,
                                           uint32_t flags, size_t entry_size) {
  if (flags != 0 || entry_size < sizeof(ibv_gid_entry)) return -EINVAL;
  provider::Context& c = core_of(context);
  size_t n = 0;
  for (uint8_t port = 1; port <= c.info().num_ports; ++port) {
    auto a = c.query_port(port);
    if (!a) return -EINVAL;
    for (uint32_t i = 0; i < a->gid_table_len; ++i) {
      auto g = c.query_gid(port, i);
      if (!g) return -EINVAL;
      if (g->is_zero()) continue;  // the table lists valid entries only
      if (n == max_entries) return -EINVAL;
      auto* e = reinterpret_cast<ibv_gid_entry*>(reinterpret_cast<uint8_t*>(entries) + n * entry_size);
      if (_ibv_query_gid_ex(context, port, i, e, 0, entry_size) != 0) return -EINVAL;
      ++n;
    }
  }
  return static_cast<ssize_t>(n);
}

SOFTIB_EXPORT int ibv_query_pkey(ibv_context* context, uint8_t port_num, int index, __be16* pkey) {
  if (index < 0) return -1;
  auto k = core_of(context).query_pkey(port_num, static_cast<uint32_t>(index));
  if (!k) return -1;
  *pkey = htobe16(k->value());
  return 0;
}

SOFTIB_EXPORT int ibv_get_pkey_index(ibv_context* context, uint8_t port_num, __be16 pkey) {
  for (int i = 0;; ++i) {
    __be16 k;
    if (ibv_query_pkey(context, port_num, i, &k) != 0) return -1;
    if (k == pkey) return i;
  }
}

// ---- asynchronous events ----

SOFTIB_EXPORT int ibv_get_async_event(ibv_context* context, ibv_async_event* event) {
  Context& c = *from(context);
  auto e = c.core->get_async_event();
  if (!e) {
    errno = e.error().to_errno();
    return -1;
  }
  event->event_type = static_cast<ibv_event_type>(e->type);
  event->element = {};
  switch (e->type) {
    case verbs::AsyncEventType::kCqErr: {
      Cq* cq = static_cast<Cq*>(e->object);
      event->element.cq = ibv_cq_ex_to_cq(&cq->cq);
      pthread_mutex_lock(&cq->cq.mutex);
      ++cq->async_events_reported;
      pthread_mutex_unlock(&cq->cq.mutex);
      break;
    }
    case verbs::AsyncEventType::kSrqErr:
    case verbs::AsyncEventType::kSrqLimitReached: {
      Srq* srq = static_cast<Srq*>(e->object);
      event->element.srq = &srq->srq;
      pthread_mutex_lock(&srq->srq.mutex);
      ++srq->async_events_reported;
      pthread_mutex_unlock(&srq->srq.mutex);
      break;
    }
    case verbs::AsyncEventType::kPortActive:
    case verbs::AsyncEventType::kPortErr:
    case verbs::AsyncEventType::kLidChange:
    case verbs::AsyncEventType::kPkeyChange:
    case verbs::AsyncEventType::kSmChange:
    case verbs::AsyncEventType::kClientReregister:
    case verbs::AsyncEventType::kGidChange: event->element.port_num = e->port_num; break;
    case verbs::AsyncEventType::kDeviceFatal: break;
    default: {
      Qp* qp = static_cast<Qp*>(e->object);
      event->element.qp = &qp->qpx.qp_base;
      pthread_mutex_lock(&qp->qpx.qp_base.mutex);
      ++qp->async_events_reported;
      pthread_mutex_unlock(&qp->qpx.qp_base.mutex);
      break;
    }
  }
  return 0;
}

SOFTIB_EXPORT void ibv_ack_async_event(ibv_async_event* event) {
  auto count = [](pthread_mutex_t* mu, pthread_cond_t* cond, uint32_t* completed) {
    pthread_mutex_lock(mu);
    ++*completed;
    pthread_cond_signal(cond);
    pthread_mutex_unlock(mu);
  };
  switch (event->event_type) {
    case IBV_EVENT_CQ_ERR: {
      ibv_cq* cq = event->element.cq;
      count(&cq->mutex, &cq->cond, &cq->async_events_completed);
      break;
    }
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
    case IBV_EVENT_COMM_EST:
    case IBV_EVENT_SQ_DRAINED:
    case IBV_EVENT_PATH_MIG:
    case IBV_EVENT_PATH_MIG_ERR:
    case IBV_EVENT_QP_LAST_WQE_REACHED: {
      ibv_qp* qp = event->element.qp;
      count(&qp->mutex, &qp->cond, &qp->events_completed);
      break;
    }
    case IBV_EVENT_SRQ_ERR:
    case IBV_EVENT_SRQ_LIMIT_REACHED: {
      ibv_srq* srq = event->element.srq;
      count(&srq->mutex, &srq->cond, &srq->events_completed);
      break;
    }
    default: break;
  }
}

// ---- sysfs ----

SOFTIB_EXPORT const char* ibv_get_sysfs_path() {
  static const std::string path = [] {
    std::string p = "/sys";
    if (getuid() == geteuid())
      if (const char* env = std::getenv("SYSFS_PATH")) p = env;
    while (!p.empty() && p.back() == '/') p.pop_back();
    return p;
  }();
  return path.c_str();
}

SOFTIB_EXPORT int ibv_read_sysfs_file(const char* dir, const char* file, char* buf, size_t size) {
  if (size == 0) return -1;
  std::string value;
  if (virtual_sysfs(dir, file, &value)) {
    if (value.size() >= size) return -1;  // would not fit with its NUL (libibverbs fails too)
    std::memcpy(buf, value.c_str(), value.size() + 1);
    return static_cast<int>(value.size());
  }
  const std::string path = fmt::format("{}/{}", dir, file);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t len = ::read(fd, buf, size);
  ::close(fd);
  if (len > 0) {
    if (buf[len - 1] == '\n') {
      buf[--len] = '\0';
    } else if (static_cast<size_t>(len) < size) {
      buf[len] = '\0';
    } else {
      return -1;
    }
  }
  return static_cast<int>(len);
}

// The private ibv_read_ibdev_sysfs_file takes rdma-core's verbs_sysfs_dev, which softib's
// devices do not have (providers call it; no provider runs on softib).
SOFTIB_EXPORT int ibv_read_ibdev_sysfs_file(char*, size_t, void*, const char*, ...) {
  errno = EINVAL;
  return -1;
}
