#include "mad/method.hpp"

#include <array>
#include <utility>

namespace softib::mad {
namespace {

constexpr std::array<std::pair<Method, std::string_view>, 16> kNames{{
    {Method::kGet, "Get"},
    {Method::kSet, "Set"},
    {Method::kSend, "Send"},
    {Method::kTrap, "Trap"},
    {Method::kReport, "Report"},
    {Method::kTrapRepress, "TrapRepress"},
    {Method::kGetTable, "GetTable"},
    {Method::kGetTraceTable, "GetTraceTable"},
    {Method::kGetMulti, "GetMulti"},
    {Method::kDelete, "Delete"},
    {Method::kGetResp, "GetResp"},
    {Method::kReportResp, "ReportResp"},
    {Method::kGetTableResp, "GetTableResp"},
    {Method::kGetTraceTableResp, "GetTraceTableResp"},
    {Method::kGetMultiResp, "GetMultiResp"},
    {Method::kDeleteResp, "DeleteResp"},
}};

// "0x00" .. "0xff" for unnamed values, built once.
constexpr auto kHex = [] {
  std::array<std::array<char, 4>, 256> t{};
  constexpr std::string_view digits = "0123456789abcdef";
  for (size_t i = 0; i < 256; ++i) t[i] = {'0', 'x', digits[i >> 4], digits[i & 15]};
  return t;
}();

}  // namespace

std::string_view to_string(Method m) {
  for (const auto& [method, name] : kNames)
    if (method == m) return name;
  const auto& h = kHex[static_cast<uint8_t>(m)];
  return {h.data(), h.size()};
}

}  // namespace softib::mad
