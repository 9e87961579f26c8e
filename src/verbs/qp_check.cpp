#include "verbs/qp_check.hpp"

#include <array>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "verbs/qp_transition.hpp"

namespace softib::verbs {
namespace {

using namespace attr;

// How a value is bounded by its limit.
enum class Bound : uint8_t {
  kAtMost,  // value <= limit
  kBelow,   // value < limit (an index into a table of `limit` entries)
  kPort,    // 1 <= value <= limit (a port number)
  kMtu,     // 1 <= value <= limit (an enum ibv_mtu code)
  kSubset,  // value has no bit outside limit (flags)
};

// One value check of Modify QP: when `bit` is in the mask (and `applies`, if set, holds), the
// field's value must be within the limit. The rows run in order; the first failure is the
// error. `source` says where Linux makes the same check.
struct ValueRule {
  uint32_t bit;
  std::string_view field;       // as struct ibv_qp_attr names it
  Bound bound;
  std::string_view limit_name;  // what the limit is, for the message
  std::string_view source;
  uint64_t (*value)(const QpAttr&);
  uint64_t (*limit)(const DeviceCaps&, const PortLimits&);
  bool (*applies)(const QpAttr&) = nullptr;
};

constexpr uint64_t port_count(const DeviceCaps&, const PortLimits& p) { return p.phys_port_cnt; }
constexpr uint64_t pkey_table(const DeviceCaps&, const PortLimits& p) { return p.pkey_table_len; }
constexpr uint64_t gid_table(const DeviceCaps&, const PortLimits& p) { return p.gid_table_len; }
template <uint64_t kLimit>
constexpr uint64_t constant(const DeviceCaps&, const PortLimits&) {
  return kLimit;
}
constexpr bool primary_global(const QpAttr& a) { return a.ah_attr.is_global; }
constexpr bool alternate_global(const QpAttr& a) { return a.alt_ah_attr.is_global; }

// clang-format off
constexpr auto kValueRules = std::to_array<ValueRule>({
  // Ports first, as uverbs checks them before the driver sees anything.
  {kPort, "port_num", Bound::kPort, "phys_port_cnt", "uverbs modify_qp, rxe_qp_chk_attr, mlx4",
   [](const QpAttr& a) -> uint64_t { return a.port_num; }, port_count},
  {kAv, "ah_attr.port_num", Bound::kPort, "phys_port_cnt", "uverbs modify_qp",
   [](const QpAttr& a) -> uint64_t { return a.ah_attr.port_num; }, port_count},
  {kAltPath, "alt_port_num", Bound::kPort, "phys_port_cnt", "uverbs modify_qp, rxe_qp_chk_attr",
   [](const QpAttr& a) -> uint64_t { return a.alt_port_num; }, port_count},
  {kAltPath, "alt_ah_attr.port_num", Bound::kPort, "phys_port_cnt", "uverbs modify_qp",
   [](const QpAttr& a) -> uint64_t { return a.alt_ah_attr.port_num; }, port_count},

  {kPkeyIndex, "pkey_index", Bound::kBelow, "pkey_table_len",
   "mlx4_ib_modify_qp; ib_core security.c (ib_get_cached_pkey)",
   [](const QpAttr& a) -> uint64_t { return a.pkey_index; }, pkey_table},
  {kAccessFlags, "qp_access_flags", Bound::kSubset, "access flags a softib QP takes",
   "rxe_qp_chk_attr (RXE_ACCESS_SUPPORTED_QP)",
   [](const QpAttr& a) -> uint64_t { return a.qp_access_flags; }, constant<kQpAccessSupported>},

  // The primary path.
  {kAv, "ah_attr.grh.sgid_index", Bound::kBelow, "gid_table_len",
   "rxe_av_chk_attr; ib_core rdma_fill_sgid_attr",
   [](const QpAttr& a) -> uint64_t { return a.ah_attr.grh.sgid_index; }, gid_table, primary_global},
  {kAv, "ah_attr.grh.flow_label", Bound::kAtMost, "20-bit field", "softib: the GRH field's width",
   [](const QpAttr& a) -> uint64_t { return a.ah_attr.grh.flow_label; }, constant<0xFFFFF>, primary_global},
  {kAv, "ah_attr.sl", Bound::kAtMost, "4-bit field", "softib: the LRH field's width",
   [](const QpAttr& a) -> uint64_t { return a.ah_attr.sl; }, constant<15>},
  {kPathMtu, "path_mtu", Bound::kMtu, "max_mtu of the port", "rxe_qp_chk_attr, mlx4",
   [](const QpAttr& a) -> uint64_t { return static_cast<uint8_t>(a.path_mtu); },
   [](const DeviceCaps&, const PortLimits& p) -> uint64_t { return static_cast<uint8_t>(p.max_mtu); }},

  // The alternate path.
  {kAltPath, "alt_pkey_index", Bound::kBelow, "pkey_table_len", "ib_core security.c (alternate path)",
   [](const QpAttr& a) -> uint64_t { return a.alt_pkey_index; }, pkey_table},
  {kAltPath, "alt_ah_attr.grh.sgid_index", Bound::kBelow, "gid_table_len", "rxe_av_chk_attr",
   [](const QpAttr& a) -> uint64_t { return a.alt_ah_attr.grh.sgid_index; }, gid_table, alternate_global},
  {kAltPath, "alt_ah_attr.grh.flow_label", Bound::kAtMost, "20-bit field", "softib: the GRH field's width",
   [](const QpAttr& a) -> uint64_t { return a.alt_ah_attr.grh.flow_label; }, constant<0xFFFFF>,
   alternate_global},
  {kAltPath, "alt_ah_attr.sl", Bound::kAtMost, "4-bit field", "softib: the LRH field's width",
   [](const QpAttr& a) -> uint64_t { return a.alt_ah_attr.sl; }, constant<15>},
  {kAltPath, "alt_timeout", Bound::kAtMost, "5-bit field", "rxe_qp_chk_attr",
   [](const QpAttr& a) -> uint64_t { return a.alt_timeout; }, constant<31>},

  // Reliability and RDMA READ/atomic depth.
  {kTimeout, "timeout", Bound::kAtMost, "5-bit field", "rxe_qp_chk_attr",
   [](const QpAttr& a) -> uint64_t { return a.timeout; }, constant<31>},
  {kRetryCnt, "retry_cnt", Bound::kAtMost, "3-bit field", "softib: the field's width (rxe takes any)",
   [](const QpAttr& a) -> uint64_t { return a.retry_cnt; }, constant<7>},
  {kRnrRetry, "rnr_retry", Bound::kAtMost, "3-bit field, 7 = infinite",
   "softib: the field's width (rxe takes any)",
   [](const QpAttr& a) -> uint64_t { return a.rnr_retry; }, constant<7>},
  {kMinRnrTimer, "min_rnr_timer", Bound::kAtMost, "5-bit code of IBA table 45",
   "softib: the AETH field's width",
   [](const QpAttr& a) -> uint64_t { return a.min_rnr_timer; }, constant<31>},
  {kMaxQpRdAtomic, "max_rd_atomic", Bound::kAtMost, "max_qp_init_rd_atom",
   "mlx4_ib_modify_qp; rxe_qp_chk_attr (against max_qp_rd_atom, equal in rxe)",
   [](const QpAttr& a) -> uint64_t { return a.max_rd_atomic; },
   [](const DeviceCaps& c, const PortLimits&) -> uint64_t { return c.max_qp_init_rd_atom; }},
  {kMaxDestRdAtomic, "max_dest_rd_atomic", Bound::kAtMost, "max_qp_rd_atom", "mlx4_ib_modify_qp",
   [](const QpAttr& a) -> uint64_t { return a.max_dest_rd_atomic; },
   [](const DeviceCaps& c, const PortLimits&) -> uint64_t { return c.max_qp_rd_atom; }},
  {kPathMigState, "path_mig_state", Bound::kAtMost, "enum ibv_mig_state", "softib: the enum's range",
   [](const QpAttr& a) -> uint64_t { return static_cast<uint8_t>(a.path_mig_state); }, constant<2>},
});
// clang-format on

// Every attribute with a bounded value has a rule; rules only for standard bits.
constexpr bool every_bounded_attribute_has_a_rule() {
  constexpr uint32_t kBounded = kPort | kAv | kAltPath | kPkeyIndex | kAccessFlags | kPathMtu | kTimeout |
                                kRetryCnt | kRnrRetry | kMinRnrTimer | kMaxQpRdAtomic | kMaxDestRdAtomic |
                                kPathMigState;
  uint32_t covered = 0;
  for (const ValueRule& r : kValueRules) {
    if ((r.bit & (r.bit - 1)) != 0 || (r.bit & ~kStandardAttrBits) != 0) return false;
    covered |= r.bit;
  }
  return covered == kBounded;
}
static_assert(every_bounded_attribute_has_a_rule());

// The capacity checks of ibv_create_qp (rxe_qp_chk_cap), in rxe's order.
struct CapRule {
  std::string_view field;       // as struct ibv_qp_cap names it
  std::string_view limit_name;  // the ibv_device_attr field
  bool receive;                 // a receive queue limit: not checked when an SRQ serves the QP
  uint32_t (*value)(const QpCap&);
  uint32_t (*limit)(const DeviceCaps&);
};

// clang-format off
constexpr auto kCapRules = std::to_array<CapRule>({
  {"max_send_wr", "max_qp_wr", false,
   [](const QpCap& c) { return c.max_send_wr; }, [](const DeviceCaps& d) { return d.max_qp_wr; }},
  {"max_send_sge", "max_sge", false,
   [](const QpCap& c) { return c.max_send_sge; }, [](const DeviceCaps& d) { return d.max_sge; }},
  {"max_recv_wr", "max_qp_wr", true,
   [](const QpCap& c) { return c.max_recv_wr; }, [](const DeviceCaps& d) { return d.max_qp_wr; }},
  {"max_recv_sge", "max_sge", true,
   [](const QpCap& c) { return c.max_recv_sge; }, [](const DeviceCaps& d) { return d.max_sge; }},
  {"max_inline_data", "max_inline_data", false,
   [](const QpCap& c) { return c.max_inline_data; }, [](const DeviceCaps& d) { return d.max_inline_data; }},
});
// clang-format on

constexpr bool valid_state(QpState s) { return static_cast<uint8_t>(s) < kQpStateCount; }
constexpr bool implemented(QpType t) { return t == QpType::kRc || t == QpType::kUc || t == QpType::kUd; }

Status invalid(std::string message) { return Status(Code::kInvalidArgument, std::move(message)); }

std::string mtu_text(uint64_t code) {
  return code >= 1 && code <= 5 ? fmt::format("{} ({})", code, 128u << code) : fmt::format("{}", code);
}

// The message of a failed value rule, or empty when the value is within bounds.
std::string violation(const ValueRule& r, uint64_t value, uint64_t limit) {
  switch (r.bound) {
    case Bound::kAtMost:
      if (value <= limit) return {};
      return fmt::format("{} {} exceeds {} ({})", r.field, value, limit, r.limit_name);
    case Bound::kBelow:
      if (value < limit) return {};
      return fmt::format("{} {} is not below {} ({})", r.field, value, limit, r.limit_name);
    case Bound::kPort:
      if (value >= 1 && value <= limit) return {};
      return fmt::format("{} {} is not a port: 1..{} ({})", r.field, value, limit, r.limit_name);
    case Bound::kMtu:
      if (value < 1 || value > 5) return fmt::format("{} {} is not an MTU code (1..5 = 256..4096)", r.field, value);
      if (value <= limit) return {};
      return fmt::format("{} {} exceeds {} {}", r.field, mtu_text(value), r.limit_name, mtu_text(limit));
    case Bound::kSubset:
      if ((value & ~limit) == 0) return {};
      return fmt::format("{} {:#x} has bits {:#x} outside {:#x} ({})", r.field, value, value & ~limit, limit,
                         r.limit_name);
  }
  return {};
}

// ib_modify_qp_is_ok, restated to say what is wrong.
Status check_transition(QpState from, QpState to, QpType type, uint32_t mask, bool port_implied) {
  const std::string where = fmt::format("modify {}->{}", to_string(from), to_string(to));
  Status status;
  if ((mask & kCurState) != 0 && !cur_state_allowed_from(from)) {
    status = invalid(where + ": CUR_STATE is allowed only from RTR, RTS, SQD or SQE");
  } else if (const TransitionRule* rule = find_transition(from, to); rule == nullptr) {
    status = invalid(where + ": not a legal transition");
  } else {
    const AttrMasks m = *rule->masks(type);
    const uint32_t missing = m.required & ~mask;
    const uint32_t extra = mask & ~m.allowed();
    if (missing != 0 || extra != 0) {
      std::string message = where + ":";
      if (missing != 0) message += " missing " + describe_mask(missing);
      if (missing != 0 && extra != 0) message += ";";
      if (extra != 0)
        message += fmt::format(" not allowed on {}: {}", packet::to_string(type), describe_mask(extra));
      if (port_implied && (extra & kPort) != 0) message += " (PORT implied by AV outside INIT->RTR)";
      status = invalid(std::move(message));
    }
  }
  // The restatement and the table's own function agree, always.
  SOFTIB_ASSERT(status.ok() == modify_is_ok(from, to, type, mask));
  return status;
}

}  // namespace

uint32_t effective_modify_mask(const QpAttr& attr, uint32_t mask) {
  const bool to_rtr = (mask & kState) != 0 && attr.qp_state == QpState::kRtr;
  if ((mask & kAv) != 0 && (mask & kPort) == 0 && !to_rtr) return mask | kPort;
  return mask;
}

Status check_modify(const QpAttr& attr, uint32_t mask, QpState cur, QpType type, const DeviceCaps& caps,
                    const PortLimits& port) {
  SOFTIB_ASSERT(valid_state(cur));
  if (!implemented(type))
    return Status(Code::kUnsupported, fmt::format("modify: {} QPs are not supported", packet::to_string(type)));
  if ((mask & ~kStandardAttrBits) != 0)
    return Status(Code::kUnsupported,
                  fmt::format("modify: attribute mask {} is not supported", describe_mask(mask & ~kStandardAttrBits)));
  if ((mask & kState) != 0 && !valid_state(attr.qp_state))
    return invalid(fmt::format("modify: qp_state {} is not a QP state", static_cast<unsigned>(attr.qp_state)));
  if ((mask & kCurState) != 0 && !valid_state(attr.cur_qp_state))
    return invalid(fmt::format("modify: cur_qp_state {} is not a QP state", static_cast<unsigned>(attr.cur_qp_state)));

  // uverbs: an AV outside INIT->RTR moves the primary port too; both numbers must agree. The
  // alternate path's two port numbers must always agree.
  const uint32_t eff_mask = effective_modify_mask(attr, mask);
  const bool port_implied = eff_mask != mask;
  const bool to_rtr = (mask & kState) != 0 && attr.qp_state == QpState::kRtr;
  if ((mask & (kAv | kPort)) == (kAv | kPort) && !to_rtr && attr.port_num != attr.ah_attr.port_num)
    return invalid(fmt::format("modify: port_num {} is not ah_attr.port_num {}", attr.port_num, attr.ah_attr.port_num));
  if ((mask & kAltPath) != 0 && attr.alt_port_num != attr.alt_ah_attr.port_num)
    return invalid(fmt::format("modify: alt_port_num {} is not alt_ah_attr.port_num {}", attr.alt_port_num,
                               attr.alt_ah_attr.port_num));

  // The transition, from the state CUR_STATE names (as rxe, mlx4 and mlx5 take it) to the one
  // STATE names, or to the same state.
  const QpState from = (eff_mask & kCurState) != 0 ? attr.cur_qp_state : cur;
  const QpState to = (eff_mask & kState) != 0 ? attr.qp_state : from;
  if (Status s = check_transition(from, to, type, eff_mask, port_implied); !s.ok()) return s;
  // softib does not let a claim override the state it knows. rxe does (it trusts
  // cur_qp_state); hardware hands the claimed transition to its firmware, which refuses it
  // for a QP in another state.
  if (from != cur)
    return invalid(fmt::format("modify {}->{}: cur_qp_state is {} but the QP is in {}", to_string(from),
                               to_string(to), to_string(from), to_string(cur)));

  // The values.
  QpAttr effective = attr;
  if (port_implied) effective.port_num = attr.ah_attr.port_num;
  for (const ValueRule& rule : kValueRules) {
    if ((eff_mask & rule.bit) == 0) continue;
    if (rule.applies != nullptr && !rule.applies(effective)) continue;
    const std::string problem = violation(rule, rule.value(effective), rule.limit(caps, port));
    if (!problem.empty()) return invalid(fmt::format("modify {}->{}: {}", to_string(from), to_string(to), problem));
  }
  return {};
}

Status check_create(const QpInitAttr& init, const DeviceCaps& caps) {
  if (!implemented(init.qp_type))
    return Status(Code::kUnsupported,
                  fmt::format("create QP: {} QPs are not supported", packet::to_string(init.qp_type)));
  for (const CapRule& rule : kCapRules) {
    if (rule.receive && init.use_srq) continue;
    const uint32_t value = rule.value(init.cap);
    const uint32_t limit = rule.limit(caps);
    if (value > limit)
      return invalid(fmt::format("create QP: {} {} exceeds {} {}", rule.field, value, rule.limit_name, limit));
  }
  return {};
}

}  // namespace softib::verbs
