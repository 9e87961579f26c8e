// ShmDirectory: softibd's table of who is where on this host, in shared memory that every
// attached process maps read-only, so that finding the endpoint behind a (DLID, destination
// QPN) is two array reads and no system call (brief §3: "the directory: (LID, QPN) ->
// endpoint").
//
//   DirHeader            magic, version, table sizes, generation (bumped on every change)
//   lid_to_port[0xC000]  unicast LID -> port slot + 1 (0: no attached HCA has this LID)
//   DirHca[max_hcas]     an HCA some process attached: node, GUID, QPN block owners
//   DirPort[max_ports]   an attached HCA's port: state, LID, LMC, SM LID, MTU, P_Keys, GIDs
//   DirEndpoint[...]     an attached process's endpoint: id, pid, HCA slot, alive
//
// QPNs are per HCA (IBA 10.2.1) and softib hands them out in blocks: softibd gives each
// endpoint a block of kQpnBlock numbers when it attaches (block 0 starts at 0x11, as rxe's
// first QPN), so the owner of a QPN is `block_owner[qpn / kQpnBlock]`.
//
// Writers: softibd only, one thread. Each record that changes as a whole (a port) is written
// under a sequence lock: readers retry while `seq` is odd or changed (read_port()). Endpoint
// and block words are single atomics.
//
// Thread: readers anywhere, any thread; the writer is softibd's loop.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <optional>

#include "base/gid.hpp"
#include "base/ids.hpp"
#include "base/result.hpp"
#include "link/shm_region.hpp"
#include "verbs/caps.hpp"

namespace softib::link {

inline constexpr uint32_t kDirectoryMagic = 0x44424953;  // "SIBD"
inline constexpr uint16_t kDirectoryVersion = 2;  // 2: ports carry link layer and IPv4 address
inline constexpr uint32_t kQpnBlock = 1u << 16;           // QPNs per endpoint block
inline constexpr uint32_t kQpnBlocks = (1u << 24) / kQpnBlock;  // 256 endpoints per HCA
inline constexpr uint32_t kFirstQpn = 0x11;               // QP0 and QP1 are the special QPs
static_assert(kQpnBlock - kFirstQpn == verbs::kQpsPerProcess, "max_qp is the smallest block");
inline constexpr uint32_t kLidTableSize = 0xC000;         // unicast LIDs 1..0xBFFF
inline constexpr uint32_t kMaxPkeys = 64;
inline constexpr uint32_t kMaxGids = 4;
inline constexpr uint8_t kLinkLayerInfiniBand = 1;  // IBV_LINK_LAYER_INFINIBAND
inline constexpr uint8_t kLinkLayerEthernet = 2;    // IBV_LINK_LAYER_ETHERNET: a RoCE port

struct DirHeader {
  uint32_t magic;
  uint16_t version;
  uint16_t reserved;
  uint32_t max_hcas;
  uint32_t max_ports;
  uint32_t max_endpoints;
  uint32_t reserved2;
  uint64_t lid_offset;
  uint64_t hca_offset;
  uint64_t port_offset;
  uint64_t endpoint_offset;
  uint64_t total_bytes;
  alignas(64) std::atomic<uint64_t> generation;
};

struct DirHca {
  std::atomic<uint32_t> used;   // 0 free, 1 in use
  uint32_t node;                // the fabric's node index
  uint64_t node_guid;
  std::array<std::atomic<uint32_t>, kQpnBlocks> block_owner;  // endpoint id, 0 free
};

// What a port looks like to a verbs program (ibv_query_port), as softibd's fabric holds it.
struct PortSnapshot {
  uint32_t hca = 0;         // DirHca slot
  uint8_t port_num = 0;
  uint8_t state = 1;        // IBA PortState: 1 Down, 2 Init, 3 Armed, 4 Active
  uint8_t phys_state = 2;   // IBA PortPhysicalState: 2 Polling, 3 Disabled, 5 LinkUp
  uint8_t lmc = 0;
  uint16_t lid = 0;
  uint16_t sm_lid = 0;
  uint8_t sm_sl = 0;
  uint8_t max_mtu = 5;      // IBA MTU codes: 1 = 256 ... 5 = 4096
  uint8_t active_mtu = 5;
  uint8_t active_width = 2; // IBA LinkWidthActive bits: 1 1x, 2 4x, 4 8x, 8 12x
  uint8_t active_speed = 1; // IBA LinkSpeedActive: 1 SDR, 2 DDR, 4 QDR; extended in ext_speed
  uint8_t ext_speed = 0;
  uint8_t init_type_reply = 0;
  uint8_t num_pkeys = 0;
  uint8_t num_gids = 0;     // PortInfo GUIDCap: the GID table's length (index 0 assigned)
  uint8_t subnet_timeout = 0;
  uint8_t vl_cap = 4;       // PortInfo VLCap: 1 VL0, 2 VL0-1, 3 VL0-3, 4 VL0-7, 5 VL0-14
  uint32_t cap_mask = 0;
  uint16_t cap_mask2 = 0;   // PortInfo CapabilityMask2
  uint16_t qkey_violations = 0;
  uint16_t pkey_violations = 0;
  uint64_t port_guid = 0;
  uint64_t gid_prefix = 0;
  uint8_t link_layer = kLinkLayerInfiniBand;
  uint32_t ipv4 = 0;        // RoCE: the port's IPv4 address (host order), its GID 1
  std::array<uint16_t, kMaxPkeys> pkeys{};
  friend bool operator==(const PortSnapshot&, const PortSnapshot&) = default;
};

// A port's GID table as verbs shows it. InfiniBand: [0] the subnet prefix and the port GUID
// (GUIDCap entries, the rest empty: alias GUIDs no SM assigns here). RoCE (Ethernet link
// layer, as rxe over a netdev with an IPv6 link-local and an IPv4 address): [0] fe80::/64
// with the port GUID as interface id, [1] ::ffff:a.b.c.d; both RoCE v2.
// nullopt past the table's end; an empty entry is the zero GID.
std::optional<Gid> port_gid(const PortSnapshot& s, uint32_t index);
inline uint32_t gid_table_len(const PortSnapshot& s) { return std::max<uint32_t>(s.num_gids, 1); }

struct DirPort {
  std::atomic<uint32_t> seq;   // odd while softibd writes
  std::atomic<uint32_t> used;
  PortSnapshot snap;           // read only through read_port()
};

struct DirEndpoint {
  std::atomic<uint32_t> id;     // 0 free
  std::atomic<uint32_t> alive;  // 1 while its process's session with softibd is open
  uint32_t pid;
  uint32_t hca;                 // DirHca slot
};

struct DirectoryLimits {
  uint32_t max_hcas = 4096;
  uint32_t max_ports = 8192;
  uint32_t max_endpoints = 4096;
};

// Where a frame to (DLID, QPN) goes.
struct Destination {
  uint32_t port_slot;
  uint32_t endpoint;  // 0 when no endpoint owns the QPN's block
};

class ShmDirectory {
 public:
  // softibd's side.
  static Result<ShmDirectory> create(const DirectoryLimits& limits = {});
  // A process's side: a directory received from softibd. Checks the layout against the size.
  static Result<ShmDirectory> attach(ShmRegion region);

  ShmDirectory(ShmDirectory&&) noexcept = default;
  ShmDirectory& operator=(ShmDirectory&&) noexcept = default;

  const ShmRegion& region() const { return region_; }
  const DirHeader& header() const { return *reinterpret_cast<const DirHeader*>(region_.data()); }
  uint64_t generation() const { return header().generation.load(std::memory_order_acquire); }
  // The word itself, for a watcher that compares it with what it saw (Engine::set_step_hook).
  const std::atomic<uint64_t>& generation_word() const { return header().generation; }

  // ---- readers ----
  std::optional<uint32_t> port_of_lid(Lid lid) const;
  std::optional<Destination> find(Lid dlid, Qpn qpn) const;
  // RoCE address resolution: the LID softibd gave the attached port one of whose GIDs is
  // `gid` (a RoCE port's LID is the link's internal address, never shown to programs).
  std::optional<Lid> lid_of_gid(const Gid& gid) const;
  // A consistent copy of a port (sequence lock).
  PortSnapshot read_port(uint32_t slot) const;
  const DirEndpoint& endpoint_slot(uint32_t slot) const;
  // The endpoint with this id, if it is alive.
  std::optional<uint32_t> endpoint_pid(uint32_t id) const;
  bool endpoint_alive(uint32_t id) const;
  uint32_t hca_node(uint32_t slot) const { return hca(slot).node; }

  // ---- softibd ----
  // The slot of the HCA for `node`, taking a free one the first time. ResourceExhausted when
  // the table is full.
  Result<uint32_t> hca_slot(uint32_t node, uint64_t node_guid);
  std::optional<uint32_t> find_hca(uint32_t node) const;
  Result<uint32_t> port_slot(uint32_t hca_slot, uint8_t port_num);
  std::optional<uint32_t> find_port(uint32_t hca_slot, uint8_t port_num) const;
  // Writes a port's state and moves its LIDs in the LID table.
  void write_port(uint32_t slot, const PortSnapshot& snap);
  // A new endpoint on an HCA with its first QPN block. ResourceExhausted when the endpoint
  // table or the HCA's blocks are full.
  struct NewEndpoint {
    uint32_t id;
    uint32_t block;
  };
  Result<NewEndpoint> add_endpoint(uint32_t hca_slot, uint32_t pid);
  // The endpoint is gone: its QPN blocks return to the HCA and it is marked dead.
  void remove_endpoint(uint32_t id);
  void bump() { mut_header().generation.fetch_add(1, std::memory_order_acq_rel); }

 private:
  explicit ShmDirectory(ShmRegion region) : region_(std::move(region)) {}
  DirHeader& mut_header() const { return *reinterpret_cast<DirHeader*>(region_.data()); }
  std::atomic<uint16_t>& lid_entry(uint32_t lid) const;
  DirHca& hca(uint32_t slot) const;
  DirPort& port(uint32_t slot) const;
  DirEndpoint& endpoint(uint32_t slot) const;
  void set_lids(uint16_t base, uint8_t lmc, uint16_t value);

  ShmRegion region_;
  uint32_t next_endpoint_id_ = 1;
};

}  // namespace softib::link
