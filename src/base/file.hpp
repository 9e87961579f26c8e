// Whole-file reads and writes with errors that name the file.
#pragma once

#include <string>
#include <string_view>

#include "base/result.hpp"

namespace softib {

// The file's bytes. Errors: NotFound when it does not exist ("cannot open <what> \"path\""),
// other errno-mapped codes for read failures. `what` names the file's role, e.g. "net file".
Result<std::string> read_file(const std::string& path, std::string_view what = "file");

// Replaces the file atomically: writes path.tmp, flushes it and renames it over path, so a
// reader (or a crash) sees the old contents or the new, never a mix.
Result<void> write_file_atomic(const std::string& path, std::string_view text);

}  // namespace softib
