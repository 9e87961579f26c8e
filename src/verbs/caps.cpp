// Compile-time pins of the default capabilities (caps.hpp) and of libibverbs' enum values.
#include "verbs/caps.hpp"

namespace softib::verbs {
namespace {

constexpr DeviceCaps kCaps = default_caps();

// The values of enum ibv_device_cap_flags and enum ibv_atomic_cap (<infiniband/verbs.h>).
static_assert(device_cap::kRcRnrNakGen == 4096 && device_cap::kPortActiveEvent == 1024 &&
              device_cap::kSysImageGuid == 2048 && device_cap::kShutdownPort == 256 &&
              device_cap::kMemMgtExtensions == 1u << 21 && device_cap::kManagedFlowSteering == 1u << 29);
static_assert(static_cast<int>(AtomicCap::kHca) == 1);

// rxe's limits (rxe_param.h, rxe.c).
static_assert(kCaps.max_qp_wr == 16384 && kCaps.max_sge == 32 && kCaps.max_sge_rd == 32);
static_assert(kCaps.max_qp_rd_atom == 128 && kCaps.max_qp_init_rd_atom == 128);
static_assert(kCaps.max_cqe == 32767 && kCaps.max_cq == 16384);
static_assert(kCaps.max_srq_sge == 27 && kCaps.max_srq_wr == 16384);
static_assert(kCaps.max_inline_data == 512);
static_assert(kCaps.max_pkeys == 64 && kCaps.local_ca_ack_delay == 15 && kCaps.phys_port_cnt == 1);
static_assert(kCaps.atomic_cap == AtomicCap::kHca);

// Not a real vendor: the OUI no vendor owns (IBA A3.3.1), 24 bits.
static_assert(kCaps.vendor_id == 0xFFFFFF && kCaps.vendor_id <= 0xFFFFFF);

// Only what softib does: nothing the transition table or the missing features rule out.
static_assert((kCaps.device_cap_flags & device_cap::kResizeMaxWr) == 0);  // no transition carries CAP
static_assert((kCaps.device_cap_flags & (device_cap::kMemWindow | device_cap::kMemMgtExtensions |
                                         device_cap::kXrc | device_cap::kAutoPathMig)) == 0);
static_assert(kCaps.max_mw == 0 && kCaps.max_ee == 0 && kCaps.max_ee_rd_atom == 0);

// Internally consistent: a QP's limits fit the device's.
static_assert(kCaps.max_srq_wr <= kCaps.max_qp_wr && kCaps.max_srq_sge <= kCaps.max_sge);
static_assert(kCaps.max_qp_rd_atom <= kCaps.max_res_rd_atom);
static_assert(kCaps.max_mcast_qp_attach <= kCaps.max_total_mcast_qp_attach);

}  // namespace

std::string_view to_string(AtomicCap cap) {
  switch (cap) {
    case AtomicCap::kNone: return "ATOMIC_NONE";
    case AtomicCap::kHca: return "ATOMIC_HCA";
    case AtomicCap::kGlob: return "ATOMIC_GLOB";
  }
  return "?";
}

}  // namespace softib::verbs
