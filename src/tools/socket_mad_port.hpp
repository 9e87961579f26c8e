// An SM's MadPort through softibd: the session is bound to one end port, with agents for
// directed-route and LID-routed SMPs and for the SA, and IsSM set — what OpenSM asks of
// libibumad. Used by `softib sm`.
#pragma once

#include <memory>

#include "ipc/client.hpp"
#include "sm/mad_port.hpp"

namespace softib::tools {

class SocketMadPort final : public sm::MadPort {
 public:
  // Errors: the daemon's (no such port, a class already served there).
  static Result<std::unique_ptr<SocketMadPort>> open(ipc::Connection& c, uint32_t node, uint8_t port);

  Result<void> send(const sm::Mad& mad) override;
  std::optional<sm::Mad> receive() override;

 private:
  explicit SocketMadPort(ipc::Connection& c) : c_(c) {}
  ipc::Connection& c_;
  uint32_t smp_lid_ = 0, smp_dr_ = 0, sa_ = 0;
};

}  // namespace softib::tools
