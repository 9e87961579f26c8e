#include "link/shm_directory.hpp"

#include <cstring>
#include <new>

#include <fmt/format.h>

namespace softib::link {

namespace {

constexpr uint64_t align64(uint64_t v) { return (v + 63) / 64 * 64; }

struct Layout {
  uint64_t lid, hca, port, endpoint, total;
};

Layout layout_for(uint32_t hcas, uint32_t ports, uint32_t endpoints) {
  Layout l{};
  l.lid = align64(sizeof(DirHeader));
  l.hca = align64(l.lid + uint64_t{kLidTableSize} * sizeof(std::atomic<uint16_t>));
  l.port = align64(l.hca + uint64_t{hcas} * sizeof(DirHca));
  l.endpoint = align64(l.port + uint64_t{ports} * sizeof(DirPort));
  l.total = align64(l.endpoint + uint64_t{endpoints} * sizeof(DirEndpoint));
  return l;
}

}  // namespace

Result<ShmDirectory> ShmDirectory::create(const DirectoryLimits& limits) {
  if (limits.max_hcas == 0 || limits.max_ports == 0 || limits.max_endpoints == 0)
    return Status(Code::kInvalidArgument, "directory: empty tables");
  const Layout l = layout_for(limits.max_hcas, limits.max_ports, limits.max_endpoints);
  auto region = ShmRegion::create("softib-directory", l.total);
  if (!region) return region.error();
  // Zero-filled memory is a valid empty directory: every atomic starts at 0.
  auto* h = new (region->data()) DirHeader{};
  h->magic = kDirectoryMagic;
  h->version = kDirectoryVersion;
  h->max_hcas = limits.max_hcas;
  h->max_ports = limits.max_ports;
  h->max_endpoints = limits.max_endpoints;
  h->lid_offset = l.lid;
  h->hca_offset = l.hca;
  h->port_offset = l.port;
  h->endpoint_offset = l.endpoint;
  h->total_bytes = l.total;
  return ShmDirectory(std::move(*region));
}

Result<ShmDirectory> ShmDirectory::attach(ShmRegion region) {
  if (region.size() < sizeof(DirHeader)) return Status(Code::kInvalidArgument, "directory: region too small");
  const auto* h = reinterpret_cast<const DirHeader*>(region.data());
  if (h->magic != kDirectoryMagic || h->version != kDirectoryVersion)
    return Status(Code::kInvalidArgument, fmt::format("directory: bad magic {:#x} or version {}", h->magic, h->version));
  const Layout l = layout_for(h->max_hcas, h->max_ports, h->max_endpoints);
  if (h->lid_offset != l.lid || h->hca_offset != l.hca || h->port_offset != l.port || h->endpoint_offset != l.endpoint ||
      h->total_bytes != l.total || region.size() < l.total)
    return Status(Code::kInvalidArgument, "directory: layout does not match its size");
  return ShmDirectory(std::move(region));
}

std::atomic<uint16_t>& ShmDirectory::lid_entry(uint32_t lid) const {
  SOFTIB_ASSERT(lid < kLidTableSize);
  return reinterpret_cast<std::atomic<uint16_t>*>(region_.data() + header().lid_offset)[lid];
}

DirHca& ShmDirectory::hca(uint32_t slot) const {
  SOFTIB_ASSERT(slot < header().max_hcas);
  return reinterpret_cast<DirHca*>(region_.data() + header().hca_offset)[slot];
}

DirPort& ShmDirectory::port(uint32_t slot) const {
  SOFTIB_ASSERT(slot < header().max_ports);
  return reinterpret_cast<DirPort*>(region_.data() + header().port_offset)[slot];
}

DirEndpoint& ShmDirectory::endpoint(uint32_t slot) const {
  SOFTIB_ASSERT(slot < header().max_endpoints);
  return reinterpret_cast<DirEndpoint*>(region_.data() + header().endpoint_offset)[slot];
}

std::optional<Gid> port_gid(const PortSnapshot& s, uint32_t index) {
  if (index >= gid_table_len(s)) return std::nullopt;
  if (index == 0) return Gid(s.gid_prefix, Guid(s.port_guid));
  if (index == 1 && s.link_layer == kLinkLayerEthernet) return Gid::from_ipv4(s.ipv4);
  return Gid();
}

// ---- readers ----

std::optional<uint32_t> ShmDirectory::port_of_lid(Lid lid) const {
  const uint16_t l = lid.value();
  if (l == 0 || l >= kLidTableSize) return std::nullopt;
  const uint16_t v = lid_entry(l).load(std::memory_order_acquire);
  if (v == 0 || v > header().max_ports) return std::nullopt;
  return v - 1u;
}

std::optional<Destination> ShmDirectory::find(Lid dlid, Qpn qpn) const {
  const auto p = port_of_lid(dlid);
  if (!p) return std::nullopt;
  // The HCA slot is written before the LID entry is published and never changes for a port.
  const uint32_t h = port(*p).snap.hca;
  if (h >= header().max_hcas) return std::nullopt;
  const uint32_t owner = hca(h).block_owner[qpn.value() / kQpnBlock].load(std::memory_order_acquire);
  return Destination{*p, owner};
}

std::optional<Lid> ShmDirectory::lid_of_gid(const Gid& gid) const {
  for (uint32_t i = 0; i < header().max_ports; ++i) {
    if (port(i).used.load(std::memory_order_acquire) == 0) break;  // slots are taken in order
    const PortSnapshot s = read_port(i);
    if (s.lid == 0) continue;
    for (uint32_t g = 0; g < gid_table_len(s); ++g) {
      if (port_gid(s, g) == gid) return Lid(s.lid);
    }
  }
  return std::nullopt;
}

PortSnapshot ShmDirectory::read_port(uint32_t slot) const {
  const DirPort& p = port(slot);
  for (;;) {
    const uint32_t s1 = p.seq.load(std::memory_order_acquire);
    if (s1 & 1) continue;
    PortSnapshot copy;
    // A byte copy of a record being written may tear; the sequence check below discards it.
    std::memcpy(static_cast<void*>(&copy), static_cast<const void*>(&p.snap), sizeof copy);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (p.seq.load(std::memory_order_relaxed) == s1) return copy;
  }
}

const DirEndpoint& ShmDirectory::endpoint_slot(uint32_t slot) const { return endpoint(slot); }

bool ShmDirectory::endpoint_alive(uint32_t id) const {
  if (id == 0) return false;
  const DirEndpoint& e = endpoint(id % header().max_endpoints);
  return e.id.load(std::memory_order_acquire) == id && e.alive.load(std::memory_order_acquire) != 0;
}

std::optional<uint32_t> ShmDirectory::endpoint_pid(uint32_t id) const {
  if (!endpoint_alive(id)) return std::nullopt;
  return endpoint(id % header().max_endpoints).pid;
}

// ---- softibd ----

std::optional<uint32_t> ShmDirectory::find_hca(uint32_t node) const {
  for (uint32_t i = 0; i < header().max_hcas; ++i) {
    const DirHca& h = hca(i);
    if (h.used.load(std::memory_order_relaxed) == 0) break;  // slots are taken in order
    if (h.node == node) return i;
  }
  return std::nullopt;
}

Result<uint32_t> ShmDirectory::hca_slot(uint32_t node, uint64_t node_guid) {
  if (auto s = find_hca(node)) return *s;
  for (uint32_t i = 0; i < header().max_hcas; ++i) {
    DirHca& h = hca(i);
    if (h.used.load(std::memory_order_relaxed) != 0) continue;
    h.node = node;
    h.node_guid = node_guid;
    h.used.store(1, std::memory_order_release);
    return i;
  }
  return Status(Code::kResourceExhausted, "directory: too many HCAs attached");
}

std::optional<uint32_t> ShmDirectory::find_port(uint32_t hca_slot, uint8_t port_num) const {
  for (uint32_t i = 0; i < header().max_ports; ++i) {
    const DirPort& p = port(i);
    if (p.used.load(std::memory_order_relaxed) == 0) break;
    if (p.snap.hca == hca_slot && p.snap.port_num == port_num) return i;
  }
  return std::nullopt;
}

Result<uint32_t> ShmDirectory::port_slot(uint32_t hca_slot, uint8_t port_num) {
  if (auto s = find_port(hca_slot, port_num)) return *s;
  for (uint32_t i = 0; i < header().max_ports; ++i) {
    DirPort& p = port(i);
    if (p.used.load(std::memory_order_relaxed) != 0) continue;
    p.seq.store(p.seq.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    p.snap = PortSnapshot{};
    p.snap.hca = hca_slot;
    p.snap.port_num = port_num;
    p.seq.store(p.seq.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    p.used.store(1, std::memory_order_release);
    return i;
  }
  return Status(Code::kResourceExhausted, "directory: too many ports attached");
}

void ShmDirectory::set_lids(uint16_t base, uint8_t lmc, uint16_t value) {
  if (base == 0) return;
  const uint32_t count = 1u << std::min<uint8_t>(lmc, 7);
  for (uint32_t l = base & ~(count - 1); l < (base & ~(count - 1)) + count && l < kLidTableSize; ++l) {
    if (l == 0) continue;
    lid_entry(l).store(value, std::memory_order_release);
  }
}

void ShmDirectory::write_port(uint32_t slot, const PortSnapshot& snap) {
  DirPort& p = port(slot);
  const PortSnapshot old = p.snap;
  PortSnapshot next = snap;
  next.hca = old.hca;  // a port never moves to another HCA
  next.port_num = old.port_num;
  p.seq.store(p.seq.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  p.snap = next;
  p.seq.store(p.seq.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  if (old.lid != next.lid || old.lmc != next.lmc) {
    set_lids(old.lid, old.lmc, 0);
    set_lids(next.lid, next.lmc, static_cast<uint16_t>(slot + 1));
  }
  bump();
}

Result<ShmDirectory::NewEndpoint> ShmDirectory::add_endpoint(uint32_t hca_slot, uint32_t pid) {
  const uint32_t max = header().max_endpoints;
  DirHca& h = hca(hca_slot);
  uint32_t block = kQpnBlocks;
  for (uint32_t b = 0; b < kQpnBlocks; ++b) {
    if (h.block_owner[b].load(std::memory_order_relaxed) == 0) {
      block = b;
      break;
    }
  }
  if (block == kQpnBlocks) return Status(Code::kResourceExhausted, "directory: every QPN block of the HCA is taken");
  for (uint32_t tries = 0; tries < max; ++tries) {
    const uint32_t id = next_endpoint_id_;
    next_endpoint_id_ = next_endpoint_id_ == UINT32_MAX ? 1 : next_endpoint_id_ + 1;
    DirEndpoint& e = endpoint(id % max);
    if (e.id.load(std::memory_order_relaxed) != 0) continue;
    e.pid = pid;
    e.hca = hca_slot;
    e.alive.store(1, std::memory_order_relaxed);
    e.id.store(id, std::memory_order_release);
    h.block_owner[block].store(id, std::memory_order_release);
    bump();
    return NewEndpoint{id, block};
  }
  return Status(Code::kResourceExhausted, "directory: too many endpoints");
}

void ShmDirectory::remove_endpoint(uint32_t id) {
  DirEndpoint& e = endpoint(id % header().max_endpoints);
  if (e.id.load(std::memory_order_relaxed) != id) return;
  e.alive.store(0, std::memory_order_release);
  DirHca& h = hca(e.hca);
  for (auto& owner : h.block_owner) {
    uint32_t expected = id;
    owner.compare_exchange_strong(expected, 0, std::memory_order_acq_rel);
  }
  e.id.store(0, std::memory_order_release);
  bump();
}

}  // namespace softib::link
