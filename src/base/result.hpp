// Result<T, E>: a value or an error (g++ 12 has no std::expected). E defaults to Status;
// decoders use ParseError so that rejecting a malformed packet allocates nothing.
#pragma once

#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

#include "base/assert.hpp"
#include "base/status.hpp"

namespace softib {

// Wraps an error so that Result<T, E> can be built unambiguously even when T and E convert
// into each other: `return Err(status);`.
template <class E>
struct Err {
  E error;
};
template <class E>
Err(E) -> Err<E>;

template <class T, class E = Status>
class [[nodiscard]] Result {
  static_assert(!std::is_same_v<T, E>, "Result<T, E> needs distinct types");

 public:
  using value_type = T;
  using error_type = E;

  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(E error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT: implicit by design
  template <class U>
  Result(Err<U> err) : v_(std::in_place_index<1>, std::move(err.error)) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  // REQUIRES: ok()
  T& value() & {
    SOFTIB_ASSERT(ok());
    return *std::get_if<0>(&v_);
  }
  const T& value() const& {
    SOFTIB_ASSERT(ok());
    return *std::get_if<0>(&v_);
  }
  T&& value() && {
    SOFTIB_ASSERT(ok());
    return std::move(*std::get_if<0>(&v_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  T value_or(T fallback) const& { return ok() ? value() : std::move(fallback); }

  // REQUIRES: !ok()
  const E& error() const {
    SOFTIB_ASSERT(!ok());
    return *std::get_if<1>(&v_);
  }

 private:
  std::variant<T, E> v_;
};

template <class E>
class [[nodiscard]] Result<void, E> {
 public:
  Result() = default;
  Result(E error) : error_(std::move(error)) {}  // NOLINT: implicit by design
  template <class U>
  Result(Err<U> err) : error_(std::move(err.error)) {}  // NOLINT

  bool ok() const { return !error_.has_value(); }
  explicit operator bool() const { return ok(); }
  // REQUIRES: !ok()
  const E& error() const {
    SOFTIB_ASSERT(!ok());
    return *error_;
  }

 private:
  std::optional<E> error_;
};

}  // namespace softib

// Evaluates `expr` (a Result or Status-returning expression); returns its error from the
// enclosing function when it failed.
#define SOFTIB_TRY(expr)                                   \
  do {                                                     \
    auto&& softib_try_result_ = (expr);                    \
    if (!softib_try_result_.ok())                          \
      return ::softib::Err{softib_try_result_.error()};    \
  } while (0)
