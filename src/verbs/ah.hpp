// Address handle (IBA 10.2.2.2, 11.2.2): where a UD work request goes.
#pragma once

#include "verbs/mr.hpp"
#include "verbs/qp_attr.hpp"

namespace softib::verbs {

class Ah {
 public:
  Ah(const Pd* pd, const AhAttr& attr) : pd_(pd), attr_(attr) {}
  const Pd* pd() const { return pd_; }
  const AhAttr& attr() const { return attr_; }

 private:
  const Pd* pd_;
  AhAttr attr_;
};

}  // namespace softib::verbs
